"""The learned front end's first-use build under concurrency: one process trains, the others read."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys

import pytest

from helpers import HANG, eventually, finished

BUILD = r"""
import hashlib, sys, time
from pathlib import Path
import stores.frontend.model as fm
from stores.retrieval.encoder import load_model

bank, ready, go = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
load_model()  # imports and the model load before the start line, so both processes reach it together
trained = []
real = fm.train


def slow_train(*args, **kwargs):  # a training long enough that the other process asks while it runs
    trained.append(1)
    time.sleep(2.0)
    return real(*args, **kwargs)


fm.train = slow_train
ready.touch()
while not go.exists():
    time.sleep(0.01)
fe = fm.front_end(folder=bank)
h = fe.heads["hostile"]
print(len(trained), hashlib.sha256(h.coef.tobytes() + h.intercept.tobytes()).hexdigest())
"""


def tiny_bank(tmp_path):
    """A one-head phrase bank of ten phrases (`hostile`), small enough to train in a moment."""
    bank = tmp_path / "bank"
    bank.mkdir()
    (bank / "b.yaml").write_text(
        'hostile:\n  "yes": ["useless lot", "utter clowns", "pathetic service", "total amateurs", "absolute joke"]\n'
        '  "no": ["yes please", "thanks lots", "order status", "new address", "parcel tracking"]\n',
        encoding="utf-8")
    return bank


@pytest.mark.slow  # two processes that load the model
def test_two_processes_building_on_a_cold_cache_train_once_and_get_the_same_artefact(tmp_path):
    bank = tiny_bank(tmp_path)
    cache = tmp_path / "cache"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "SUPPORTBENCH_CACHE": str(cache), "OMP_NUM_THREADS": "1"}
    go = tmp_path / "go"
    procs = [subprocess.Popen([sys.executable, "-c", BUILD, str(bank), str(tmp_path / f"ready{i}"), str(go)], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for i in range(2)]
    eventually(lambda: all((tmp_path / f"ready{i}").exists() or p.poll() is not None for i, p in enumerate(procs)),
               "both builders loaded", HANG)
    go.touch()
    outs = []
    for p in procs:
        out, err = finished(p, "a front-end builder")
        assert p.returncode == 0, err[-2000:]
        outs.append(out.split())
    assert sorted(n for n, _ in outs) == ["0", "1"]  # one trained, the other waited and read its artefact
    assert outs[0][1] == outs[1][1]
    artefacts = sorted(p.name for p in (cache / "frontend").iterdir() if not p.name.endswith(".lock"))
    assert len(artefacts) == 1 and not artefacts[0].startswith(".")  # no temporary file left, half-written or not
    import numpy as np

    with np.load(cache / "frontend" / artefacts[0]) as z:
        on_disk = hashlib.sha256(z["hostile.coef"].tobytes() + z["hostile.intercept"].tobytes()).hexdigest()
    assert on_disk == outs[0][1]


def test_the_heads_train_with_one_blas_thread_whatever_the_process_has(tmp_path, monkeypatch):
    """numpy's BLAS thread count changes the solver's last bits (the floor head's weights moved by up to 0.009
    between one and two threads): training pins it to one, so the artefact is the same on any machine, and
    gives the process its own count back."""
    import numpy as np
    import sklearn.linear_model  # noqa: F401  (loads scipy's BLAS now, so the count below covers it)
    from threadpoolctl import threadpool_info, threadpool_limits

    import stores.frontend.model as fm
    import stores.retrieval.encoder as enc

    def blas_threads() -> set[int]:
        return {p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"}

    bank = tiny_bank(tmp_path)
    monkeypatch.setenv("SUPPORTBENCH_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(enc, "load_model", lambda *a, **k: None)  # vectors of the text's own bytes: no model
    monkeypatch.setattr(enc, "encode_unpadded", lambda model, texts: [
        np.resize(np.frombuffer(t.encode().ljust(8), dtype=np.uint8).astype(np.float32), 384) / 255 for t in texts])
    seen = []
    real = fm.train_head
    monkeypatch.setattr(fm, "train_head", lambda *a, **k: (seen.append(blas_threads()), real(*a, **k))[1])
    with threadpool_limits(limits=2, user_api="blas"):
        before = blas_threads()
        assert 2 in before  # numpy's BLAS runs two threads here, as on a two-core machine
        fm.train(folder=str(bank))
        assert blas_threads() == before
    assert seen and all(s == {1} for s in seen), seen

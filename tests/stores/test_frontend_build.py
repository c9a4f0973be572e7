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


@pytest.mark.slow  # two processes that load the model
def test_two_processes_building_on_a_cold_cache_train_once_and_get_the_same_artefact(tmp_path):
    bank = tmp_path / "bank"
    bank.mkdir()
    (bank / "b.yaml").write_text(
        'hostile:\n  "yes": ["useless lot", "utter clowns", "pathetic service", "total amateurs", "absolute joke"]\n'
        '  "no": ["yes please", "thanks lots", "order status", "new address", "parcel tracking"]\n',
        encoding="utf-8")
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

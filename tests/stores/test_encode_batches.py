"""A text's vector does not depend on what it is encoded with: alone, in a batch of mixed lengths,
in a whole-suite batch, at one thread or two, every bit is the same. That is what lets a run
encode a shard's texts in a few large batches and still give the tables one scenario at a time
would (tests/harness/test_shard_prefetch.py holds the run to it)."""

import os
import subprocess
import sys

import numpy as np
import pytest

from harness.format.loader import load_suite
from harness.replay.probes import scenario_texts
from stores import cpu
from stores.retrieval import encoder as enc


@pytest.fixture(scope="module")
def suite_texts() -> list[str]:
    return list(dict.fromkeys(t for s in load_suite(["datasets/canonical"]) for t in scenario_texts(s) if t.strip()))


@pytest.fixture(scope="module")
def model():
    return enc.load_model()


def sample(texts: list[str], model) -> list[str]:
    """Twelve texts of twelve different token counts (the shortest to the longest of the suite)."""
    tokenize = getattr(model, "preprocess", None) or model.tokenize
    lengths = tokenize(texts)["attention_mask"].sum(dim=1).tolist()
    by_length: dict[int, str] = {}
    for t, n in zip(texts, lengths):
        by_length.setdefault(int(n), t)
    ordered = [by_length[n] for n in sorted(by_length)]
    step = max(1, len(ordered) // 12)
    return ordered[::step][:12]


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def test_this_process_runs_strict_numerics():
    assert "STRICT" in os.environ["MKL_CBWR"].upper() and cpu.NUMERICS == os.environ["MKL_CBWR"]
    assert enc.batch_independent()


def test_a_text_has_the_same_vector_alone_in_a_mixed_batch_and_in_the_whole_suite(suite_texts, model):
    picked = sample(suite_texts, model)
    assert len(picked) == 12
    alone = np.stack([enc.encode_unpadded(model, [t])[0] for t in picked])
    # a batch of mixed lengths, each picked text beside others of its own token count and of others
    mixed_texts = list(reversed(picked)) + suite_texts[:40]
    mixed = enc.encode_unpadded(model, mixed_texts)
    runs: list[int] = []
    whole = enc.encode_unpadded(model, suite_texts, runs)
    assert runs[0] < len(suite_texts) // 4  # the whole suite went through in large batches
    where = {t: i for i, t in enumerate(suite_texts)}
    for i, t in enumerate(picked):
        assert same_bits(alone[i], mixed[mixed_texts.index(t)]), f"text {i} changed in a mixed batch"
        assert same_bits(alone[i], whole[where[t]]), f"text {i} changed in the whole-suite batch"


def test_the_thread_count_does_not_reach_a_vector(suite_texts, model):
    import torch

    texts = suite_texts[:48]
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        one = enc.encode_unpadded(model, texts)
        torch.set_num_threads(2)
        two = enc.encode_unpadded(model, texts)
    finally:
        torch.set_num_threads(before)
    assert same_bits(one, two)


LATE = r"""
import os, sys
os.environ.pop("MKL_CBWR", None)
import torch
torch.ones(4, 4) @ torch.ones(4, 4)            # MKL starts here, before stores could set its numerics
from stores.retrieval import encoder as enc
e = enc.Encoder(cache_dir=sys.argv[1])
e.encode(["the export is stuck at 40 percent", "hello"])
print(enc.batch_independent(), e.single, e.dir.name, e.calls, e.batches)
"""


@pytest.mark.slow
def test_a_process_whose_mkl_started_early_encodes_one_text_per_call_in_a_folder_of_its_own(tmp_path):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "OMP_NUM_THREADS": "1"}
    env.pop("MKL_CBWR", None)
    out = subprocess.run([sys.executable, "-c", LATE, str(tmp_path)], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    independent, single, folder, calls, batches = out.stdout.split()
    assert (independent, single, folder) == ("False", "True", "single")
    assert (calls, batches) == ("1", "2")  # one call, one model batch per text
    assert not (tmp_path / "all-MiniLM-L6-v2" / enc.NUMERICS_TAG).exists()

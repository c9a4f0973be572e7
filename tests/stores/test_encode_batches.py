"""A text's vector does not depend on what it is encoded with: alone, in a batch of mixed lengths,
in a whole-suite batch, at one thread or two, every bit is the same, through the path a run takes on
this machine. That is what lets a run gather a shard's texts up front and still give the tables one
scenario at a time would (tests/harness/test_shard_prefetch.py holds the run to it).

There are two kinds of machine. Where MKL's strict reproducible mode takes (`stores.cpu.NUMERICS`,
checked by `batch_independent()`), a row of a matrix product is the same alone and in a batch, and
the encoder groups texts by token count into large batches. Where it does not (seen: an AMD EPYC with
torch 2.13, in every process), the encoder encodes one text per model call into a cache folder of
its own (`single/`). Each test asks which kind this is (`path()`) and says so when it fails; what
only exists on a strict machine (this process runs strict numerics, whole-suite batches) is held
where the machine can do it, and the fallback is proven on every machine by forcing it."""

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


def path() -> str:
    """Which path this process's encoder takes, named for the failure messages."""
    if enc.batch_independent():
        return "batched (strict numerics took in this process: texts grouped by token count)"
    return "single (strict numerics did not take in this process: one text per model call, cache folder single/)"


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


def pairs(texts: list[str], model) -> list[str]:
    """Six texts, two of each of three token counts: grouped by token count they would go in three batches."""
    tokenize = getattr(model, "preprocess", None) or model.tokenize
    lengths = tokenize(texts)["attention_mask"].sum(dim=1).tolist()
    by_length: dict[int, list[str]] = {}
    for t, n in zip(texts, lengths):
        by_length.setdefault(int(n), []).append(t)
    out = [t for n in sorted(by_length) if len(by_length[n]) >= 2 for t in by_length[n][:2]][:6]
    assert len(out) == 6
    return out


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


# a fresh process that has strict numerics asked in its environment from its start, before torch loads, as
# cleanly as they can be asked: whether they take there is a property of the machine (CPU, MKL build)
CLEAN = "from stores.retrieval import encoder as enc; print(enc._independent_here())"


@pytest.mark.slow
def test_this_process_runs_strict_numerics_wherever_the_machine_can(tmp_path):
    """`stores` asks for strict numerics before torch loads; where a clean process of this machine gets
    them, this one (its MKL started after `stores.cpu` was imported) must have them too, and its encoder
    batches; where no process gets them, its encoder takes the single path."""
    assert "STRICT" in os.environ["MKL_CBWR"].upper() and cpu.NUMERICS == os.environ["MKL_CBWR"]
    here = enc._independent_here()  # as the encoder asks it: at the thread count a model load sets
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "MKL_CBWR": cpu.STRICT_NUMERICS,
           "OMP_NUM_THREADS": str(cpu.torch_threads())}
    out = subprocess.run([sys.executable, "-c", CLEAN], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    machine_strict = out.stdout.split()[-1] == "True"
    if machine_strict:
        assert here, (
            "this machine runs strict numerics in a clean process, but not in this one: MKL started here "
            "before stores.cpu set MKL_CBWR")
    else:
        assert not here, "a clean process of this machine has no strict numerics, yet this one has"
    e = enc.Encoder(cache_dir=tmp_path)
    e.encode(["the export is stuck at 40 percent", "hello"])
    folder = enc.NUMERICS_TAG if machine_strict else "single"
    assert (e.single, e.dir.name) == (not machine_strict, folder), f"machine strict: {machine_strict}; path here: {path()}"
    assert (e.calls, e.batches) == (1, 2)  # two token counts batched, or two texts one at a time: two batches either way
    assert sorted(p.name for p in (tmp_path / "all-MiniLM-L6-v2").iterdir()) == [folder]


def test_a_text_has_the_same_vector_alone_in_a_mixed_batch_and_in_the_whole_suite(suite_texts, model, tmp_path):
    """Through the encoder a run uses, each asking in its own cache folder: twelve texts asked one at a
    time, the same among forty others, and the whole suite asked at once."""
    picked = sample(suite_texts, model)
    assert len(picked) == 12
    alone_enc = enc.Encoder(cache_dir=tmp_path / "alone")
    alone = np.stack([alone_enc.encode([t])[0] for t in picked])
    assert alone_enc.calls == 12
    mixed_texts = list(reversed(picked)) + suite_texts[:40]  # each picked text beside others of its token count and of others
    mixed = enc.Encoder(cache_dir=tmp_path / "mixed").encode(mixed_texts)
    whole_enc = enc.Encoder(cache_dir=tmp_path / "whole")
    whole = whole_enc.encode(suite_texts)
    assert whole_enc.calls == 1 and whole_enc.encoded == len(suite_texts)
    if enc.batch_independent():  # the whole suite went through in large batches
        assert whole_enc.batches < len(suite_texts) // 4, f"path: {path()}"
    else:  # one text per model call
        assert whole_enc.batches == len(suite_texts), f"path: {path()}"
    where = {t: i for i, t in enumerate(suite_texts)}
    for i, t in enumerate(picked):
        assert same_bits(alone[i], mixed[mixed_texts.index(t)]), f"text {i} changed in a mixed batch; path: {path()}"
        assert same_bits(alone[i], whole[where[t]]), f"text {i} changed in the whole-suite batch; path: {path()}"


def test_the_thread_count_does_not_reach_a_vector(suite_texts, model):
    """The path this machine takes (`single` where batches are not independent), at one thread and at two."""
    import torch

    texts = suite_texts[:48]
    single = not enc.batch_independent()
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        one = enc.encode_unpadded(model, texts, single=single)
        torch.set_num_threads(2)
        two = enc.encode_unpadded(model, texts, single=single)
    finally:
        torch.set_num_threads(before)
    assert same_bits(one, two), f"path: {path()}"


def test_where_batches_are_not_independent_the_encoder_falls_back_to_one_text_per_call(suite_texts, model, monkeypatch, tmp_path):
    """Forced on any machine: the encoder reads the check, encodes each text on its own into `single/`, and
    gives each text the vector it has encoded alone."""
    texts = pairs(suite_texts, model)
    monkeypatch.setattr(enc, "_BATCH_INDEPENDENT", False)
    e = enc.Encoder(cache_dir=tmp_path)
    got = e.encode(texts)
    assert e.single and e.dir.name == "single"
    assert (e.calls, e.batches, e.encoded) == (1, len(texts), len(texts))
    assert [p.name for p in (tmp_path / "all-MiniLM-L6-v2").iterdir()] == ["single"]
    for i, t in enumerate(texts):
        assert same_bits(got[i], enc.encode_unpadded(model, [t], single=True)[0]), f"text {i}"


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

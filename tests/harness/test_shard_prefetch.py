"""A shard's texts are encoded up front, once, in few model calls, and the results do not follow
the sharding: a run cut into one shard or into one shard per scenario, or run on two workers,
writes the same tables cell for cell."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from harness.format.loader import load_suite
from harness.replay.probes import scenario_texts
from harness.run.runner import execute, run_shard
from stores.registry import parse_specs
from stores.retrieval import encoder as enc

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = ("billing-gateway-repeat-summary.yaml", "same-symptom-two-customers.yaml", "seed-pdf-crash-returning.yaml",
             "outage-vs-closed-fix.yaml")
SPECS = "embedding,hybrid,hybrid[published]"
pytestmark = pytest.mark.slow  # seconds of CPU: cold model encodes of four scenarios, several times


def same_tables():
    spec = importlib.util.spec_from_file_location("same_tables", ROOT / "bench" / "same_tables.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.compare


@pytest.fixture(scope="module")
def suite():
    return load_suite([ROOT / "datasets" / "canonical" / name for name in SCENARIOS])


def cold(monkeypatch, folder: Path) -> None:
    """An empty embedding cache of its own and no in-process encoders."""
    monkeypatch.setenv("SUPPORTBENCH_CACHE", str(folder))
    enc.forget_encoders()


@pytest.mark.parametrize("forced", [False, True], ids=["this machine's path", "the other path"])
def test_a_shard_encodes_its_texts_once_up_front(monkeypatch, tmp_path, suite, forced):
    """One model call before any replay, then nothing: in one batch per token count where this machine's
    batches are independent (`batch_independent()`), in one batch per text where they are not (the encoder's
    single path). `forced` runs the path this machine does not take too (its batch count only: where batches
    are not independent, a forced batched path's vectors are not the ones a run keeps)."""
    cold(monkeypatch, tmp_path / "cache")
    batched = enc.batch_independent()
    if forced:
        batched = not batched
        monkeypatch.setattr(enc, "_BATCH_INDEPENDENT", batched)
    case = ("batched: texts grouped by token count" if batched else "single: one text per model call") + (
        " (forced)" if forced else " (this machine's path)")
    costs: dict = {}
    run_shard(suite, parse_specs("embedding,embedding[expiry]"), costs=costs)
    distinct = {t for s in suite for t in scenario_texts(s) if t.strip()}
    spent = costs["embedding"]["embedding"]
    assert spent["calls"] == 1 and spent["encoded"] == len(distinct), case  # the shard's prefetch, nothing after it
    e = enc.encoder()
    assert (e.single, e.dir.name) == (not batched, enc.NUMERICS_TAG if batched else "single"), case
    if batched:
        model = enc.load_model()
        lengths = set((getattr(model, "preprocess", None) or model.tokenize)(sorted(distinct))["attention_mask"].sum(dim=1).tolist())
        assert spent["batches"] == len(lengths) < len(distinct), case  # one batch per token count (each under 64 texts)
    else:
        assert spent["batches"] == len(distinct), case  # one batch per text
    assert "embedding" not in costs["embedding[expiry]"], case  # served from what the first spec encoded


@pytest.mark.parametrize("other", ["one shard per scenario", "two workers"])
def test_the_tables_do_not_follow_the_sharding(monkeypatch, tmp_path, suite, other):
    specs = parse_specs(SPECS)
    cold(monkeypatch, tmp_path / "cache-a")
    a = execute(suite, specs, tmp_path / "runs-a", run_id="whole", shard_size=25)
    cold(monkeypatch, tmp_path / "cache-b")
    if other == "two workers":
        b = execute(suite, specs, tmp_path / "runs-b", run_id="whole", workers=2)
    else:
        b = execute(suite, specs, tmp_path / "runs-b", run_id="whole", shard_size=1)
    shards = [json.loads((r.path / "manifest.json").read_text())["execution"]["shards"] for r in (a, b)]
    assert shards[0] == 1 and shards[1] == len(SCENARIOS)
    assert same_tables()(a.path, b.path, ("latency_ms",)) == []

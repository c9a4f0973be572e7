"""What a run's sentence encodes cost is counted per strategy and said in the manifest."""

import json

import pytest

from helpers import outage_story
from harness.run.runner import execute, run_shard
from harness.replay.probes import scenario_texts
from stores.registry import parse_specs
from stores.retrieval import encoder as enc


@pytest.fixture
def cold_cache(tmp_path, monkeypatch):
    """An empty embedding cache and no in-process encoders: every text must come from the model."""
    monkeypatch.setenv("SUPPORTBENCH_CACHE", str(tmp_path / "cache"))
    enc.forget_encoders()
    yield
    enc.forget_encoders()


def test_a_cold_scenario_encodes_its_texts_in_one_model_call(cold_cache):
    costs: dict = {}
    run_shard([outage_story()], parse_specs("embedding"), costs=costs)
    spent = costs["embedding"]["embedding"]
    assert spent["calls"] == 1  # the shard's prefetch; every replay after it finds its texts cached
    assert spent["encoded"] == len({t for t in scenario_texts(outage_story()) if t.strip()})
    assert 1 <= spent["batches"] <= spent["encoded"]


def test_the_manifest_says_what_the_encodes_cost(cold_cache, tmp_path):
    r = execute([outage_story()], parse_specs("embedding,tfidf"), tmp_path / "runs")
    by_label = {s["label"]: s["cost"] for s in json.loads((r.path / "manifest.json").read_text())["strategies"]}
    assert by_label["embedding"]["embedding"]["calls"] == 1
    assert by_label["embedding"]["embedding"]["encoded"] > 0
    assert "embedding" not in by_label["tfidf"]

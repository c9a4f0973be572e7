"""A shard's texts are encoded up front, in one model call per model, and the run says what it cost."""

import json

import pytest

import harness.run.runner as runner
from helpers import outage_story, probe, scenario, turn
from harness.replay.probes import scenario_texts
from harness.run.runner import execute, run_shard
from stores.registry import parse_specs
from stores.retrieval import encoder as enc


def _second_story():
    return scenario([turn("b1", "The invoice export to CSV only has the header row", 0),
                     turn("b2", "We tried a different browser already", 2),
                     probe("pb", "export still broken", 5)], id="export")


@pytest.fixture
def cold_cache(tmp_path, monkeypatch):
    """An empty embedding cache and no in-process encoders: every text must come from the model."""
    monkeypatch.setenv("SUPPORTBENCH_CACHE", str(tmp_path / "cache"))
    enc.forget_encoders()
    yield
    enc.forget_encoders()


def test_a_cold_shard_makes_one_model_call_for_all_its_texts(cold_cache):
    stories = [outage_story(), _second_story()]
    costs: dict = {}
    run_shard(stories, parse_specs("embedding"), costs=costs)
    distinct = {t for s in stories for t in scenario_texts(s) if t.strip()}
    spent = costs["embedding"]["embedding"]
    assert spent["calls"] == 1  # the prefetch; every replay after it finds its texts cached
    assert spent["encoded"] == len(distinct)
    assert 1 <= spent["batches"] <= len(distinct)


def test_strategies_without_a_prepare_hook_read_nothing_up_front(cold_cache, monkeypatch):
    monkeypatch.setattr(runner, "scenario_texts", lambda s: pytest.fail("texts gathered for a strategy that cannot use them"))
    run_shard([outage_story()], parse_specs("tfidf,session_aware"))


def test_the_prefetch_changes_no_table(tmp_path, monkeypatch):
    def tables(folder, prefetch):
        monkeypatch.setenv("SUPPORTBENCH_CACHE", str(tmp_path / folder))
        enc.forget_encoders()
        if not prefetch:
            monkeypatch.setattr(runner, "prefetch", lambda *a, **k: None)
        return run_shard([outage_story(), _second_story()], parse_specs("embedding,hybrid"))

    with_it = tables("with", True)
    without = tables("without", False)
    enc.forget_encoders()
    for name in ("candidates", "probes", "scores"):
        a, b = (t.drop_columns([c for c in t.column_names if c == "latency_ms"]) for t in (with_it[name], without[name]))
        assert a.equals(b), name  # timings aside


def test_the_manifest_says_what_the_encodes_cost(cold_cache, tmp_path):
    r = execute([outage_story()], parse_specs("embedding,tfidf"), tmp_path / "runs")
    by_label = {s["label"]: s["cost"] for s in json.loads((r.path / "manifest.json").read_text())["strategies"]}
    assert by_label["embedding"]["embedding"]["calls"] == 1
    assert by_label["embedding"]["embedding"]["encoded"] > 0
    assert "embedding" not in by_label["tfidf"]

"""What each strategy cost a run: summed per label across scenarios and shards, written to the manifest."""

from __future__ import annotations

import json

import pytest

from harness.format.loader import load_suite
from harness.run import costs
from harness.run.runner import execute
from stores.registry import parse_specs


class Counted:
    def __init__(self, calls):
        self._calls = calls

    def call_counts(self):
        return self._calls


def test_service_calls_sum_the_instances_that_report_them_and_skip_the_rest():
    got = costs.service_calls([Counted({"GET /x": {"calls": 2, "seconds": 0.5}}), object(),
                               Counted({"GET /x": {"calls": 1, "seconds": 0.25}, "POST /y": {"calls": 1, "seconds": 1.0}})])
    assert got == {"GET /x": {"calls": 3, "seconds": 0.75}, "POST /y": {"calls": 1, "seconds": 1.0}}


def test_shards_written_apart_are_collected_into_one_sum_and_the_folder_goes(tmp_path):
    a, b = {}, {}
    costs.add(a, "mem0", 2.0, {"mem0.add": {"calls": 10, "seconds": 1.5}})
    costs.add(b, "mem0", 3.0, {"mem0.add": {"calls": 5, "seconds": 0.5}, "mem0.search": {"calls": 2, "seconds": 0.1}})
    costs.add(b, "tfidf", 0.5, {})
    costs.write_shard(tmp_path, 1, b)
    costs.write_shard(tmp_path, 0, a)
    total = costs.collect(tmp_path)
    assert not (tmp_path / costs.COSTS_DIR).exists()
    assert costs.manifest_entry(total, "mem0") == {
        "seconds": 5.0, "scenarios": 2, "round_trips": 17,
        "calls": {"mem0.add": {"calls": 15, "seconds": 2.0}, "mem0.search": {"calls": 2, "seconds": 0.1}}}
    assert costs.manifest_entry(total, "tfidf")["round_trips"] == 0
    assert costs.manifest_entry(total, "absent") == {"seconds": 0.0, "scenarios": 0, "round_trips": 0, "calls": {}}


@pytest.mark.slow
@pytest.mark.parametrize("workers", [1, 2])
def test_the_manifest_gives_every_strategy_its_cost_whatever_the_executor(tmp_path, workers):
    scenarios = load_suite(["datasets/canonical/outage-vs-closed-fix.yaml", "datasets/canonical/health-bands.yaml"])
    result = execute(scenarios, parse_specs("history_stuffing,empty"), tmp_path, workers=workers, shard_size=1)
    manifest = json.loads((result.path / "manifest.json").read_text())
    for entry in manifest["strategies"]:
        assert entry["cost"]["scenarios"] == 2 and entry["cost"]["seconds"] > 0
        assert entry["cost"]["round_trips"] == 0 and entry["cost"]["calls"] == {}
    assert not (result.path / costs.COSTS_DIR).exists()

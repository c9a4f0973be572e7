"""The strategy lifecycle the runner keeps: each instance built, opened in its own scope, always closed once."""

from __future__ import annotations

import logging
from collections import Counter

import pytest
from fake_strategies import LOG
from helpers import outage_story, probe, scenario, turn

from harness.analysis.results import Results
from harness.analysis.cases import case_rows
from harness.run.lifecycle import Instances, namespace, scope_for
from harness.run.runner import execute, run_shard
from stores.registry import parse_spec


@pytest.fixture
def probe_strategy(monkeypatch, tmp_path, plugins):
    plugins.strategy("lifecycle_probe", "fake_strategies:LifecycleProbe")
    monkeypatch.setenv("SUPPORTBENCH_CACHE", str(tmp_path / "cache"))
    LOG.clear()
    return lambda spec="lifecycle_probe": parse_spec(spec)


def second_story():
    return scenario([turn("q-1", "My invoice is wrong.", 0), probe("p1", "invoice", 1, include=("q-1",))], id="second")


def calls(what: str) -> Counter:
    """Per instance, how often `what` happened."""
    return Counter(i for i, w, _ in LOG if w == what)


def test_every_instance_the_runner_builds_is_opened_and_closed_exactly_once(probe_strategy):
    run_shard([outage_story(), second_story()], [probe_strategy()])
    built = calls("build")
    assert len(built) == 4  # per scenario: the replay's instance and the idempotency check's fresh one
    assert calls("open") == built == calls("close")
    # closed after its last use: nothing of an instance comes after its close
    last = {i: n for n, (i, _, _) in enumerate(LOG)}
    assert all(LOG[last[i]][1] == "close" for i in built)


@pytest.mark.parametrize("step", ["open", "observe", "context", "reset"])
def test_an_instance_is_closed_also_when_it_raised(probe_strategy, step):
    tables = run_shard([outage_story()], [probe_strategy(f"lifecycle_probe:fail_in={step}")])
    # a failing reset() ends the idempotency check before it builds its fresh instance
    assert calls("close") == calls("build") and len(calls("build")) == (1 if step == "reset" else 2)
    scores = tables["scores"].to_pylist()
    assert any(s["status"] == "error" for s in scores)
    if step == "open":
        why = next(s["explanation"] for s in scores if s["criterion"] == "recall")
        assert "could not open strategy 'lifecycle_probe[fail_in=open]' in sb-" in why and "open failed on purpose" in why


def test_the_idempotency_checks_fresh_instance_is_closed_when_its_replay_fails(probe_strategy):
    tables = run_shard([outage_story()], [probe_strategy("lifecycle_probe:fail_in=observe,fail_instance=twice")])
    assert calls("close") == calls("build") and len(calls("build")) == 2
    (idem,) = [s for s in tables["scores"].to_pylist() if s["criterion"] == "idempotency"]
    assert idem["status"] == "error" and "observe failed on purpose" in idem["explanation"]


def test_a_close_that_raises_is_logged_and_changes_no_score(probe_strategy, caplog):
    plain = run_shard([outage_story()], [probe_strategy()])["scores"].to_pylist()
    with caplog.at_level(logging.WARNING, logger="supportbench.run"):
        failing = run_shard([outage_story()], [probe_strategy("lifecycle_probe:fail_in=close")])["scores"].to_pylist()
    strip = lambda rows: [{k: v for k, v in r.items() if k != "strategy"} for r in rows]  # noqa: E731 (labels differ)
    assert strip(failing) == strip(plain)
    assert caplog.text.count("close() raised RuntimeError: close failed on purpose") == 2


def test_a_strategy_that_cannot_be_built_gives_error_rows_and_nothing_to_close(probe_strategy):
    tables = run_shard([outage_story()], [probe_strategy("lifecycle_probe:fail_in=build")])
    assert not calls("close")
    assert {s["status"] for s in tables["scores"].to_pylist()} == {"error"}


def test_each_instance_gets_its_own_namespace_and_a_private_work_folder(probe_strategy):
    run_shard([outage_story(), second_story()], [probe_strategy(), probe_strategy("lifecycle_probe[other]")], run_id="r1")
    opened = [ns for _, w, ns in LOG if w == "open"]
    assert len(opened) == 8 and len(set(opened)) == 8  # 2 scenarios x 2 labels x (plain, twice)
    spec = probe_strategy()
    s = scope_for("r1", spec, outage_story(), "plain")
    assert s.namespace in opened and s.work_dir.name == s.namespace and not s.work_dir.exists()  # removed after close
    assert s.cache_dir == scope_for("r1", spec, second_story(), "twice").cache_dir  # shared by the strategy


def test_namespaces_are_deterministic_given_the_run_id(probe_strategy):
    run_shard([outage_story()], [probe_strategy()], run_id="r1")
    first = [ns for _, w, ns in LOG if w == "open"]
    LOG.clear()
    run_shard([second_story(), outage_story()], [probe_strategy()], run_id="r1")  # another shard layout
    again = [ns for _, w, ns in LOG if w == "open"]
    assert set(first) <= set(again)
    assert namespace("r2", "lifecycle_probe", "test", "outage", "plain") not in again
    assert namespace("r1", "lifecycle_probe", "test", "outage", "plain") == first[0]


def test_a_run_namespaces_its_instances_by_its_own_id(probe_strategy, tmp_path):
    r = execute([outage_story()], [probe_strategy()], tmp_path / "runs", run_id="fixed-id", command="test")
    assert [ns for _, w, ns in LOG if w == "open"][0] == namespace("fixed-id", "lifecycle_probe", "test", "outage", "plain")
    with Results(r.path) as res:
        assert set(case_rows(res)["status"]) <= {"ok", "fail"}


def test_instances_close_what_they_built_even_when_the_block_raises(probe_strategy):
    with pytest.raises(KeyError):
        with Instances(probe_strategy(), outage_story()) as instances:
            instances.new("plain")
            instances.new("twice")
            raise KeyError("boom")
    assert len(calls("close")) == 2


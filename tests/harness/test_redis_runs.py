"""Runs against a real Redis: each attempt's locker state is its own and gone when it ends."""

from __future__ import annotations

import pytest
import redis

from harness.analysis.results import Results
from harness.format.loader import load_suite
from harness.run.runner import execute
from stores.decisions.registry import parse_policies
from stores.registry import parse_specs

SCENARIOS = ["datasets/canonical/decision-human-twice-then-next-day.yaml", "datasets/canonical/decision-same-promo-terms.yaml"]


def plans(path) -> list[tuple]:
    with Results(path) as res:
        return res.rows("SELECT scenario, event_index, plan, rule FROM decisions ORDER BY scenario, event_index")


@pytest.mark.slow
def test_a_rerun_under_the_same_run_id_shares_no_locker_state_and_leaves_no_key(redis_server, tmp_path):
    policies = parse_policies(f"session_state:locker=redis,redis_url={redis_server.url}")
    scenarios = load_suite(SCENARIOS)
    client = redis.Redis.from_url(redis_server.url)
    first = execute(scenarios, parse_specs("empty"), tmp_path / "a", run_id="ci-run", policies=policies)
    assert client.dbsize() == 0  # cleared at the end (keys used to live a day under the run id's namespace)
    second = execute(scenarios, parse_specs("empty"), tmp_path / "b", run_id="ci-run", policies=policies)
    assert client.dbsize() == 0
    memory = execute(scenarios, parse_specs("empty"), tmp_path / "c", run_id="ci-run", policies=parse_policies("session_state"))
    assert plans(first.path) == plans(second.path) == plans(memory.path)

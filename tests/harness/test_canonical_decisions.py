"""The canonical decision scenarios: `session_state` gets them right, `per_message` shows the seed's failures,
and the fail-open scenario holds with a real Redis server stopped mid-run."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest

from harness.criteria import score_decision
from harness.format.loader import load_suite
from harness.replay.decide import replay_policy
from stores.decisions.per_message import PerMessage
from stores.decisions.session_state import SessionState

SUITE = sorted(str(p) for p in Path("datasets/canonical").glob("decision-*.yaml"))


@pytest.fixture(scope="module")
def scenarios():
    return load_suite(SUITE)


def judge(scenarios, make_policy):
    """criterion -> list of (scenario, turn, score) over the suite."""
    out = defaultdict(list)
    for s in scenarios:
        policy = make_policy()
        for o in replay_policy(s, policy):
            for score in score_decision(o):
                out[score.criterion].append((s.id, o.turn.id, score))
        policy.close()
    return out


def mean(cases):
    return sum(s.value or 0 for _, _, s in cases) / len(cases)


def test_the_suite_covers_every_case_of_the_seed(scenarios):
    assert len(scenarios) == 10
    cases = judge(scenarios, SessionState)
    assert len(cases["decision_accuracy"]) >= 50 and len(cases["fail_open"]) == 3 and len(cases["route_accuracy"]) >= 8


def test_session_state_makes_no_irreversible_error_and_decides_at_least_95_percent_right(scenarios):
    cases = judge(scenarios, SessionState)
    assert [(sc, t) for sc, t, s in cases["irreversible_errors"] if not s.passed] == []
    assert mean(cases["decision_accuracy"]) >= 0.95
    assert all(s.passed for _, _, s in cases["fail_open"])
    assert mean(cases["route_accuracy"]) >= 0.95


SEED_FAILURES = {
    # (scenario, turn): the irreversible error per_message makes there, the seed's list of failures
    ("decision-yes-three-meanings", "pkg1-yes"): "false_transfer",        # a bare yes answering "checked the lobby?"
    ("decision-yes-three-meanings", "pkg3-yes"): "false_transfer",        # a yes that was a goodbye
    ("decision-human-twice-then-next-day", "human-1"): "false_transfer",  # a first request treated like a repeat
    ("decision-human-twice-then-next-day", "human-3"): "false_transfer",  # yesterday's request is not today's
    ("decision-hostile-calm-hostile", "hostile-1"): "false_transfer",     # one hostile line transferred
    ("decision-hostile-calm-hostile", "hostile-4"): "false_transfer",
    ("decision-meaningless", "mash-1"): "false_transfer",                 # "asdfgh" read as a complexity case
    ("decision-meaningless", "mash-2"): "false_transfer",
    ("decision-fixed-while-complaint-open", "crash-b-fixed"): "survey_mid_complaint",
    ("decision-locker-down-mid-chat", "down-ask-1"): "false_transfer",
    ("decision-locker-down-mid-chat", "down-ask-2"): "false_transfer",    # an outage that acts on a customer
    ("decision-locker-down-mid-chat", "down-yes"): "false_transfer",
    ("decision-locker-down-mid-chat", "up-ok"): "false_transfer",
    ("decision-sensitive", "sens-ask"): "false_transfer",
}


def test_per_message_shows_the_seeds_failures(scenarios):
    cases = judge(scenarios, PerMessage)
    errors = {(sc, t): s.meta["kind"] for sc, t, s in cases["irreversible_errors"] if not s.passed}
    assert errors == SEED_FAILURES
    missed = {(sc, t) for sc, t, s in cases["decision_accuracy"] if not s.passed} - set(SEED_FAILURES)
    assert ("decision-same-promo-terms", "promo-4") in missed  # the same answer again and again goes unnoticed
    assert ("decision-empty-retrieval-streak", "xero-4") in missed  # the third empty retrieval never transfers
    assert [t for sc, t, s in cases["fail_open"] if not s.passed] == ["down-ask-2", "down-yes"]
    assert mean(cases["decision_accuracy"]) < 0.75


class StopsTheServer:
    """`session_state` on a real Redis whose `locker_down` / `locker_up` stop and restart the server
    itself (nothing is injected: the locker finds the server gone)."""

    def __init__(self, policy, server):
        self.policy, self.server = policy, server
        self.name, self.params, self.uses_locker = policy.name, policy.params, True

    def decide(self, turn, signals=None):
        return self.policy.decide(turn, signals)

    def observe(self, turn, signals=None):
        return self.policy.observe(turn, signals)

    def fault(self, kind):
        self.server.stop() if kind == "locker_down" else self.server.start()

    def close(self):
        self.policy.close()


def test_the_fail_open_scenario_passes_with_redis_stopped_mid_run(redis_server, scenarios):
    from stores.decisions.params import SessionStateParams

    scenario = next(s for s in scenarios if s.id == "decision-locker-down-mid-chat")
    policy = SessionState(SessionStateParams(locker="redis", redis_url=redis_server.url), namespace="failopen")
    outcomes = replay_policy(scenario, StopsTheServer(policy, redis_server))
    verdicts = {(o.turn.id, s.criterion): s for o in outcomes if o.turn is not None for s in score_decision(o)}
    assert all(s.passed for (t, c), s in verdicts.items()), [s.explanation for s in verdicts.values() if not s.passed]
    assert {t for t, c in verdicts if c == "fail_open"} == {"down-ask-2", "down-yes", "down-crisis"}
    down = [o.decision for o in outcomes if o.locker_down and o.decision is not None]
    assert [d.plan for d in down] == ["continue", "continue", "escalate"]
    assert all(any("unreachable" in line for line in d.log) for d in down)  # a real outage, not an injected one
    policy.close()


def test_the_suite_gives_the_same_decisions_on_the_memory_and_the_redis_locker(redis_server, scenarios):
    from stores.decisions.params import SessionStateParams

    def decided(params):
        out = []
        for s in scenarios:
            policy = SessionState(params, namespace=f"same-{s.id}")
            out += [(s.id, o.turn.id, o.decision.plan, o.decision.rule, o.decision.locker_after)
                    for o in replay_policy(s, policy) if o.decision is not None]
            policy.close()
        return out

    assert decided(SessionStateParams()) == decided(SessionStateParams(locker="redis", redis_url=redis_server.url))

"""The health state kept in step with the history gives the oracle's report (the table read from
scratch, tests/stores/health_oracle.py), factor by factor,
after every event of random histories, under both readings: reopened sessions, resolutions
observed again with a new summary or time, events delivered twice, items stamped out of order,
forgotten customers, and reports at, after and before the latest event."""

from __future__ import annotations

import random
from dataclasses import replace
from datetime import timedelta

from health_oracle import health_report
from store_events import forget, random_history, resolve, turn, at

from stores.memory import MemoryStore
from stores.protocol import Resolution
from stores.session.health import RULES, HealthParams
from stores.session.health_state import HealthState
from stores.session.session_aware import SessionAware, SessionAwareParams

SIGNALS = {"unresolved_issues", "repeated_issue", "urgency", "idle_open_issue", "sla_resolution_breach",
           "slow_first_response", "recent_resolution", "high_resolution_rate"}


def _params(rng: random.Random, rules: str) -> HealthParams:
    """The defaults, or thresholds moved so that the rarer factors fire and stop firing often, some
    of them equal to the history's own steps (minutes 1, 3, 20, 90, 30 h, 8 days) so that values fall
    exactly on a threshold."""
    p = HealthParams(rules=rules)
    if rng.random() < 0.4:
        return p
    return replace(p, repeat_threshold=rng.choice((0.1, 0.25, 0.3, 0.5, 0.6)), idle_days=rng.choice((0.5, 7.0, 8.0)),
                   recent_days=rng.choice((1.0, 7.0, 8.0)), sla_resolution_hours=rng.choice((1.5, 24.0, 30.0)),
                   slow_first_response_minutes=rng.choice((1.0, 3.0, 10.0, 20.0)),
                   sla_first_response_minutes=rng.choice((1.0, 3.0, 5.0)), high_rate_threshold=rng.choice((0.5, 0.8)))


def _events(rng: random.Random) -> list:
    """A random history with, now and then, a redelivered event, a resolution observed again with a
    new summary, and a forget of the customer."""
    events = random_history(rng, rng.randint(1, 70), sessions=rng.choice((2, 6, 24)), in_order=rng.random() < 0.7)
    out = []
    for e in events:
        out.append(e)
        r = rng.random()
        if r < 0.05:
            out.append(e)  # delivered twice: nothing changes
        elif r < 0.12 and isinstance(e, Resolution):
            out.append(Resolution(e.subject, e.session, e.status, e.summary + " again", e.at + timedelta(minutes=1)))
        elif r < 0.14:
            out.append(forget("acme", e.at))
    return out


def _nows(rng: random.Random, e, p: HealthParams):
    """The event's own time (what the harness asks), later (idle sessions, windows closing; exactly
    on the idle and recent edges of the event's own session too) and earlier."""
    yield e.at
    yield e.at + timedelta(days=rng.choice((0.4, 3, 8, 40)))
    yield e.at + timedelta(days=rng.choice((p.idle_days, p.recent_days)))
    if rng.random() < 0.3:
        yield e.at - timedelta(hours=rng.choice((1, 50)))


def test_the_state_gives_health_reports_equal_to_from_scratch_after_every_event_under_both_readings():
    rng = random.Random(18)
    fired = {rules: set() for rules in RULES}
    for trial in range(160):
        rules = RULES[trial % len(RULES)]
        p = _params(rng, rules)
        memory, state = MemoryStore(), HealthState(p)
        for k, e in enumerate(_events(rng)):
            memory.observe(e)
            h = memory.history("acme")
            for now in _nows(rng, e, p):
                got, want = state.report(h, now), health_report(h, now, p)
                assert got == want, (trial, k, rules, now, e)
                fired[rules] |= {f.signal for f in want.factors}
    assert fired == {rules: SIGNALS for rules in RULES}  # every factor was exercised under both


def test_session_aware_health_equals_from_scratch_through_forget_and_reset():
    rng = random.Random(7)
    for trial in range(60):
        rules = RULES[trial % len(RULES)]
        s = SessionAware(SessionAwareParams(health=_params(rng, rules)))
        for k, e in enumerate(_events(rng)):
            s.observe(e)
            if rng.random() < 0.03:
                s.reset()
            h = s.memory.history("acme")
            assert s.health("acme", e.at) == health_report(h, e.at, s.params.health), (trial, k, rules)


def test_a_long_history_in_time_order_stays_equal_past_many_sessions():
    # more sessions than the pairwise columns start with, each revisited, reopened and resolved again
    rng = random.Random(5)
    for rules in RULES:
        memory, state = MemoryStore(), HealthState(HealthParams(rules=rules))
        for e in random_history(rng, 600, sessions=40):
            memory.observe(e)
            h = memory.history("acme")
            assert state.report(h, e.at) == health_report(h, e.at, state.params)


def test_a_record_stamped_before_its_sessions_turns_and_then_moved_is_read_afresh():
    ev = [resolve("a", at(0), "fixed early", "resolved"), turn("b#1", "b", "customer", "urgent export down", at(5)),
          turn("a#1", "a", "customer", "export down again", at(10)), resolve("a", at(20), "moved", "open")]
    for rules in RULES:
        memory, state = MemoryStore(), HealthState(HealthParams(rules=rules))
        for e in ev:
            memory.observe(e)
            h = memory.history("acme")
            for now in (e.at, at(days=9)):
                assert state.report(h, now) == health_report(h, now, state.params)

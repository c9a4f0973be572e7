"""The health model, factor by factor, against a hand-computed history."""

from __future__ import annotations

from dataclasses import replace

import pytest
from store_events import at, resolve, turn

from stores.session.health import HealthParams, band_for, health_report
from stores.memory import MemoryStore

NOW = at(days=30)


def history(events, subject="acme"):
    m = MemoryStore()
    for e in events:
        m.observe(e)
    return m.history(subject)


def troubled():
    """Every factor fires, and every capped factor exceeds its cap."""
    return [
        # three resolved sessions, each resolved 48 h after the first customer turn, answered in 20 min
        turn("r1#1", "r1", "customer", "Invoice export to CSV fails", at(days=0)),
        turn("r1#2", "r1", "agent", "Looking at the exporter", at(days=0, minutes=20)),
        resolve("r1", at(days=2), "Cleared the export cache."),
        turn("r2#1", "r2", "customer", "Single sign-on login loops", at(days=5)),
        turn("r2#2", "r2", "agent", "Checking the identity provider", at(days=5, minutes=20)),
        resolve("r2", at(days=7), "Reset the SAML certificate."),
        turn("r3#1", "r3", "customer", "Password reset email never arrives", at(days=26)),
        turn("r3#2", "r3", "agent", "Checking the mail logs", at(days=26, minutes=20)),
        resolve("r3", at(days=28), "Unblocked the mail relay."),
        # four open sessions; o1 repeats r1; o2 idle for 10 days; three urgent turns
        turn("o1#1", "o1", "customer", "Invoice export to CSV fails again, urgent", at(days=29)),
        turn("o1#2", "o1", "agent", "Checking now", at(days=29, minutes=2)),
        turn("o2#1", "o2", "customer", "Billing address change is critical", at(days=20)),
        turn("o3#1", "o3", "customer", "API rate limit has us blocked", at(days=29, hours=12)),
        turn("o4#1", "o4", "customer", "Dashboard chart colours look odd", at(days=29, hours=13)),
    ]


def test_every_factor_by_hand_with_caps_and_clamp():
    r = health_report(history(troubled()), NOW)
    got = [(f.signal, f.impact) for f in r.factors]
    assert got == [
        ("unresolved_issues", -45.0),  # 4 open x -15 = -60, capped at -45
        ("repeated_issue", -20.0),  # o1 shares invoice/export/csv/fails with r1
        ("urgency", -20.0),  # 3 urgent turns x -10 = -30, capped at -20
        ("idle_open_issue", -15.0),  # o2 idle for 10 days
        ("sla_resolution_breach", -20.0),  # 3 breaches x -10 = -30, capped at -20
        ("slow_first_response", -5.0),  # mean (20 + 20 + 20 + 2) / 4 = 15.5 min > 10
        ("recent_resolution", 10.0),  # r3 resolved 2 days ago
        ("high_resolution_rate", 10.0),  # 3 of 3 ended sessions resolved
    ]
    # 100 - 45 - 20 - 20 - 15 - 20 - 5 + 10 + 10 = -5, clamped to 0
    assert r.base == 100 and r.score == 0 and r.band == "at_risk"
    details = {f.signal: f.detail for f in r.factors}
    assert "o1" in details["repeated_issue"] and "r1" in details["repeated_issue"]
    assert "o2" in details["idle_open_issue"]
    assert "3 missed the 5-min SLA: r1, r2, r3" in details["slow_first_response"]  # o1 was answered in 2 min
    assert r.factors[2].source_ids == ("o2#1", "o1#1", "o3#1")


def test_caps_are_parameters():
    p = replace(HealthParams(), unresolved_cap=-100, urgency_cap=-100, sla_breach_cap=-100)
    r = health_report(history(troubled()), NOW, p)
    impacts = {f.signal: f.impact for f in r.factors}
    assert impacts["unresolved_issues"] == -60 and impacts["urgency"] == -30
    assert impacts["sla_resolution_breach"] == -30


def test_a_quiet_customer_is_healthy():
    ev = [
        turn("a#1", "a", "customer", "How do I export invoices?", at(days=27)),
        turn("a#2", "a", "agent", "Use the export button.", at(days=27, minutes=3)),
        resolve("a", at(days=27, hours=1), "Explained the export button."),
        turn("b#1", "b", "customer", "Where is the API key page?", at(days=29)),
        turn("b#2", "b", "agent", "Under settings.", at(days=29, minutes=1)),
    ]
    r = health_report(history(ev), NOW)
    # one open session -15, resolved 3 days ago +10; one ended session is too few for the rate
    assert [(f.signal, f.impact) for f in r.factors] == [("unresolved_issues", -15), ("recent_resolution", 10)]
    assert r.score == 95 and r.band == "healthy"


def test_boundaries_idle_exactly_7_days_and_mean_response_exactly_10_minutes():
    ev = [
        turn("a#1", "a", "customer", "Question about the widget", at(days=23)),
        turn("a#2", "a", "agent", "Answer about the widget", at(days=23, minutes=10)),
    ]
    # last activity at day 23 + 10 min, now exactly 7 days later; the one response took exactly 10 min
    signals = [f.signal for f in health_report(history(ev), at(days=30, minutes=10)).factors]
    assert "idle_open_issue" in signals and "slow_first_response" not in signals


def test_high_resolution_rate_needs_80_percent_of_at_least_two_ended():
    def ended(statuses):
        ev = []
        for i, st in enumerate(statuses):
            ev += [turn(f"s{i}#1", f"s{i}", "customer", f"topic {i} words", at(days=i)), resolve(f"s{i}", at(days=i, hours=1), "done", st)]
        return {f.signal for f in health_report(history(ev), NOW).factors}

    assert "high_resolution_rate" in ended(["resolved"] * 4 + ["unresolved"])  # 4 / 5 = 80 %
    assert "high_resolution_rate" not in ended(["resolved"] * 3 + ["unresolved"] * 2)  # 60 %
    assert "high_resolution_rate" not in ended(["resolved"])  # only one ended
    assert "high_resolution_rate" in ended(["resolved", "resolved", "open"])  # reopened has not ended


@pytest.mark.parametrize("score,band", [(100, "healthy"), (70, "healthy"), (69.9, "watch"), (40, "watch"), (39.9, "at_risk"), (0, "at_risk")])
def test_bands(score, band):
    assert band_for(score, HealthParams()) == band


def test_deterministic_and_blind_to_the_future():
    h = history(troubled())
    assert health_report(h, NOW) == health_report(h, NOW)
    earlier = health_report(h, at(days=10))
    assert not {i for f in earlier.factors for i in f.source_ids} & {"r3#1", "o1#1", "o3#1", "o4#1", "o2#1"}

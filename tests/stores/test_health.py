"""The health model, factor by factor, against hand-computed histories: the published reference
readings (the default, with the Carol example of the reference design) and the project's earlier
readings (`rules="project"`)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from store_events import at, resolve, turn

from stores.session.health import HealthParams, band_for
from stores.session.health_state import health_report
from stores.memory import MemoryStore

NOW = at(days=30)
PROJECT = HealthParams(rules="project")


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


def test_every_factor_by_hand_with_caps_and_clamp_under_the_project_readings():
    r = health_report(history(troubled()), NOW, PROJECT)
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
    p = replace(PROJECT, unresolved_cap=-100, urgency_cap=-100, sla_breach_cap=-100)
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


def _rate_fires(statuses, params):
    ev = []
    for i, st in enumerate(statuses):
        ev += [turn(f"s{i}#1", f"s{i}", "customer", f"topic {i} words", at(days=i)), resolve(f"s{i}", at(days=i, hours=1), "done", st)]
    return "high_resolution_rate" in {f.signal for f in health_report(history(ev), NOW, params).factors}


def test_high_resolution_rate_needs_80_percent_of_at_least_two_ended_under_the_project_readings():
    assert _rate_fires(["resolved"] * 4 + ["unresolved"], PROJECT)  # 4 / 5 = 80 %
    assert not _rate_fires(["resolved"] * 3 + ["unresolved"] * 2, PROJECT)  # 60 %
    assert not _rate_fires(["resolved"], PROJECT)  # only one ended
    assert _rate_fires(["resolved", "resolved", "open"], PROJECT)  # reopened has not ended


def test_high_resolution_rate_counts_every_resolution_record_under_the_reference_readings():
    assert _rate_fires(["resolved"] * 4 + ["unresolved"], None)  # 4 / 5 = 80 %
    assert not _rate_fires(["resolved"] * 3 + ["unresolved"] * 2, None)  # 60 %
    assert not _rate_fires(["resolved"], None)  # only one record
    assert not _rate_fires(["resolved", "resolved", "open"], None)  # 2 of 3 records resolved: 67 %


@pytest.mark.parametrize("score,band", [(100, "healthy"), (70, "healthy"), (69.9, "watch"), (40, "watch"), (39.9, "at_risk"), (0, "at_risk")])
def test_bands(score, band):
    assert band_for(score, HealthParams()) == band


def test_deterministic_and_blind_to_the_future():
    h = history(troubled())
    assert health_report(h, NOW) == health_report(h, NOW)
    earlier = health_report(h, at(days=10))
    assert not {i for f in earlier.factors for i in f.source_ids} & {"r3#1", "o1#1", "o3#1", "o4#1", "o2#1"}


def carol():
    """The public worked example of the reference design: session A (billing-gateway timeout, fixed
    by a restart, resolved 26 h after it opened), session B (a password reset, resolved), session C
    (the timeout again and urgent, two agent turns about escalation and connection-pool exhaustion,
    resolution record `open`); `now` is nine days after C's last turn."""
    c = at(days=40)
    return [
        turn("a#1", "a", "customer", "Our billing gateway keeps timing out when we charge customer cards.", at(days=0)),
        turn("a#2", "a", "agent", "Sorry about that. Checking the billing gateway logs now.", at(days=0, minutes=4)),
        turn("a#3", "a", "agent", "Restarted the billing gateway service; card charges are going through again.", at(days=0, hours=25),
             kind="action"),
        turn("a#4", "a", "customer", "Confirmed, the gateway is charging cards again. Thanks.", at(days=0, hours=25, minutes=30)),
        resolve("a", at(days=0, hours=26), "Billing gateway timeouts fixed by restarting the gateway service."),
        turn("b#1", "b", "customer", "I need a password reset for my admin account.", at(days=20)),
        turn("b#2", "b", "agent", "I've sent a reset link to your admin email address.", at(days=20, minutes=3)),
        resolve("b", at(days=20, minutes=30), "Sent a password reset link."),
        turn("c#1", "c", "customer", "The billing gateway is timing out AGAIN when we charge cards. This is urgent.", c),
        turn("c#2", "c", "agent", "I've escalated this to our payments engineering team.", c + (at(minutes=5) - at())),
        turn("c#3", "c", "agent", "Engineering found the billing gateway's connection pool exhausted; they are raising the pool size.",
             c + (at(minutes=40) - at())),
        resolve("c", c + (at(minutes=45) - at()), "", "open"),
    ], c + (at(days=9, minutes=40) - at())


def test_the_carol_example_is_at_risk_with_score_20_under_the_reference_rules():
    events, now = carol()
    r = health_report(history(events), now)
    assert [(f.signal, f.impact) for f in r.factors] == [
        ("unresolved_issues", -15.0),  # c is open (its record says `open`)
        ("repeated_issue", -20.0),  # c's words against a's and b's, pooled, over the smaller set
        ("urgency", -20.0),  # c#1 "urgent", c#2 "escalated"
        ("idle_open_issue", -15.0),  # c quiet for nine days
        ("sla_resolution_breach", -10.0),  # a resolved 26 h after its first customer turn
    ]  # no recent resolution; 2 of 3 records resolved (67 %): no rate bonus
    assert r.score == 20 and r.band == "at_risk"
    assert "open session(s) c share" in r.factors[1].detail and "resolved session(s) a, b" in r.factors[1].detail


def test_the_carol_example_is_only_watch_under_the_project_readings():
    events, now = carol()
    r = health_report(history(events), now, PROJECT)
    signals = {f.signal: f.impact for f in r.factors}
    assert "repeated_issue" not in signals  # c's many new keywords dilute |c ∩ a| / |c| below 0.3
    assert signals["high_resolution_rate"] == 10  # 2 of 2 ended sessions resolved (c has not ended)
    assert r.band == "watch"


def test_the_pooled_repeat_test_divides_by_the_smaller_pool():
    # one short open session whose few words all come from a long resolved history
    ev = [
        turn("r#1", "r", "customer", "The nightly warehouse export fails with an authentication error on Snowflake", at(days=1)),
        turn("r#2", "r", "agent", "Rotated the Snowflake service credentials and reran the nightly export job", at(days=1, minutes=3)),
        resolve("r", at(days=1, hours=2), "Rotated credentials."),
        turn("o#1", "o", "customer", "Snowflake export fails again", at(days=29)),
    ]
    r = health_report(history(ev), NOW)
    # A = {snowflake, export, fails, again}, B has 15 words: 3 / min(4, 15) = 0.75
    assert "repeated_issue" in {f.signal for f in r.factors}
    # the summary is not a turn: a resolved session whose words are only in its summary shares nothing
    ev2 = [turn("r#1", "r", "customer", "Question", at(days=1)), resolve("r", at(days=1, hours=1), "Snowflake export fails"),
           turn("o#1", "o", "customer", "Snowflake export fails again", at(days=29))]
    assert "repeated_issue" not in {f.signal for f in health_report(history(ev2), NOW).factors}


@pytest.mark.parametrize("text,urgent", [
    ("Our dashboard is down since 9am", True),
    ("The API is DOWN.", True),
    ("Two outages this week", True),
    ("I escalated it yesterday", True),
    ("This needs an escalation", True),
    ("we need this urgently", True),
    ("P1 incident on checkout", True),
    ("sev2: exports lag", True),
    ("Is the export broken?", True),
    ("Where can I download the invoices?", False),  # the published substring defect: "down" in "download"
    ("The breakdown by region looks odd", False),
    ("Markdown rendering in emails", False),
    ("Ticket P10 is a typo", False),
    ("We hit a deadline next week", False),  # the ranking's marker, not the health model's
])
def test_health_urgency_markers_match_word_prefixes_not_substrings(text, urgent):
    ev = [turn("a#1", "a", "customer", text, at(days=29))]
    assert ("urgency" in {f.signal for f in health_report(history(ev), NOW).factors}) is urgent


def test_an_open_session_needs_turns_under_the_reference_rules():
    ev = [turn("a#1", "a", "customer", "How do I export?", at(days=20)), resolve("a", at(days=20, hours=1), "Explained."),
          resolve("b", at(days=29), "", "unresolved")]  # b: a record without turns
    assert "unresolved_issues" not in {f.signal for f in health_report(history(ev), NOW).factors}
    assert "unresolved_issues" in {f.signal for f in health_report(history(ev), NOW, PROJECT).factors}


def test_the_canonical_carol_probe_is_at_risk_for_the_default_session_aware_health():
    from harness.format.loader import load_scenario
    from harness.format.model import Probe
    from stores.session.session_aware import SessionAware

    sc = load_scenario("datasets/canonical/carol-timeout-again.yaml")
    strategy, project = SessionAware(), SessionAware(replace(SessionAware.Params(), health=PROJECT))
    for ev in sc.events:
        if isinstance(ev, Probe):
            r = strategy.health(ev.subject, ev.at)
            assert (ev.expect.health, r.score, r.band) == ("at_risk", 20, "at_risk")
            assert project.health(ev.subject, ev.at).band == "watch"
            return
        strategy.observe(ev)
        project.observe(ev)
    raise AssertionError("the Carol scenario has no probe")

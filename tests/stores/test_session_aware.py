"""Hand-computed cases of the session-aware arithmetic of the published design (the table of
docs/reference.md): the `published` variant's params (`PUBLISHED`). The default ranking's own
cases are in test_session_ranking.py."""

from __future__ import annotations

import pytest
from store_events import at, request, resolve, turn

from stores.session.session_aware import PUBLISHED, SessionAware, SessionAwareParams

KW10 = "alpha bravo charlie delta echo foxtrot golf hotel india juliet"


def ranked(events, req, **params):
    s = SessionAware(SessionAwareParams(**{**PUBLISHED, **params}))
    for e in events:
        s.observe(e)
    return {c.item_id: c for c in s.context(req).candidates}


def without(c, *names):
    return c.score - sum(c.components.get(n, 0.0) for n in names)


def test_live_session_vs_closed_ticket_without_repeat_is_15_apart():
    # live + open = +6 +4 = +10; resolved = -5; no repeat because the live issue has
    # many other keywords (3 shared of 12 < 30 %): 10 - (-5) = 15 before recency and overlap
    text = "printer tray jammed"
    ev = [
        turn("old#1", "old", "customer", text, at(0)),
        resolve("old", at(60), ""),
        turn("live#1", "live", "customer", text, at(days=2)),
        turn("live#2", "live", "customer", "also wifi vpn dns proxy laptop monitor keyboard", at(days=2, minutes=1)),
    ]
    c = ranked(ev, request("live", "status update", at(days=2, minutes=2)))
    assert c["old#1"].components["repeat_issue"] == 0
    assert without(c["live#1"], "recency", "overlap") - without(c["old#1"], "recency", "overlap") == 15


def test_identical_text_in_live_and_repeated_closed_ticket_is_11_apart_without_summary():
    # the closed ticket now matches the live issue: -5 + 4 (no summary) = -1, so 10 - (-1) = 11
    text = "printer tray jammed"
    ev = [
        turn("old#1", "old", "customer", text, at(0)),
        resolve("old", at(60), ""),
        turn("live#1", "live", "customer", text, at(days=2)),
    ]
    c = ranked(ev, request("live", "printer tray", at(days=2, minutes=2)))
    assert c["old#1"].components["repeat_issue"] == 4
    assert without(c["live#1"], "recency", "overlap") - without(c["old#1"], "recency", "overlap") == 11


def test_resolved_repeat_nets_plus_one_with_summary_and_minus_one_without():
    for summary, net in (("Cleared the tray sensor.", 1), ("", -1)):
        ev = [
            turn("old#1", "old", "customer", "printer tray jammed", at(0)),
            resolve("old", at(60), summary),
            turn("live#1", "live", "customer", "printer tray jammed again", at(days=1)),
        ]
        c = ranked(ev, request("live", "printer tray jammed", at(days=1, minutes=1)))["old#1"]
        assert c.components["resolved_session"] + c.components["repeat_issue"] == net
        assert c.components["open_issue"] == 0 and c.components["active_session"] == 0


def test_repeat_threshold_is_inclusive_at_30_percent():
    # current issue = 10 keywords (the task; the live session has no turns yet)
    for shared, repeat in ((3, 4.0), (2, 0.0)):
        prior = " ".join(KW10.split()[:shared] + ["zulu", "yankee"])
        ev = [turn("old#1", "old", "customer", prior, at(0)), resolve("old", at(5))]
        c = ranked(ev, request("live", KW10, at(days=1)))["old#1"]
        assert c.components["repeat_issue"] == repeat, shared


def test_urgency_idle_chatter_and_action_components():
    ev = [
        turn("s#1", "s", "customer", "Production down, this is urgent!", at(0)),
        turn("s#2", "s", "customer", "ok thanks", at(1)),
        turn("s#3", "s", "agent", "Restarted the ingestion worker.", at(2), kind="action"),
        turn("s#4", "s", "customer", "Escalating to my manager tomorrow.", at(3)),
        turn("s#5", "s", "customer", "Nothing pressing here at all.", at(4)),
    ]
    c = ranked(ev, request("s", "anything", at(5)))
    assert c["s#1"].components["urgency"] == 2 and c["s#4"].components["urgency"] == 2
    assert c["s#5"].components["urgency"] == 0
    assert c["s#2"].components["idle_chatter"] == -2 and c["s#5"].components["idle_chatter"] == 0
    assert c["s#3"].components["action_step"] == 2 and c["s#1"].components["action_step"] == 0


def test_full_score_by_hand():
    # one open session, 3 items at t=0, 30, 60 min; task 'printer tray' (2 words)
    ev = [
        turn("s#1", "s", "customer", "My printer tray is jammed badly", at(0)),
        turn("s#2", "s", "agent", "Please open the back panel now", at(30)),
        turn("s#3", "s", "customer", "ok", at(60)),
    ]
    c = ranked(ev, request("s", "printer tray?", at(61)))
    # base 3 + recency 0 + overlap 5*2/2=5 + active 6 + open 4 = 18
    assert c["s#1"].score == pytest.approx(18.0)
    # base 3 + recency 2.5 + overlap 0 + active 6 + open 4 + action 2 = 17.5
    assert c["s#2"].score == pytest.approx(17.5)
    # base 3 + recency 5 + active 6 + open 4 - idle 2 = 16
    assert c["s#3"].score == pytest.approx(16.0)
    assert [k for k, v in c["s#1"].components.items() if v] == ["base", "overlap", "active_session", "open_issue"]


def test_overlap_is_partial_and_capped():
    ev = [turn("s#1", "s", "customer", "printer broken", at(0))]
    c = ranked(ev, request("s", "printer tray jammed", at(1)))["s#1"]
    assert c.components["overlap"] == pytest.approx(5 / 3)


def test_rendering_never_leaks_into_matching():
    # the rendered line says "customer:" and carries a timestamp; the text does not
    ev = [turn("s#1", "s", "customer", "hello there friend", at(0))]
    c = ranked(ev, request("s", "customer 2024 03", at(1)))["s#1"]
    assert c.components["overlap"] == 0


def test_recency_minmax_single_item_and_equal_times_get_the_maximum():
    c = ranked([turn("s#1", "s", "customer", "one thing here", at(0))], request("s", "x", at(9)))
    assert c["s#1"].components["recency"] == 5.0
    ev = [turn(f"s#{i}", "s", "customer", "same time item", at(0)) for i in range(3)]
    assert {x.components["recency"] for x in ranked(ev, request("s", "x", at(9))).values()} == {5.0}


def test_half_life_recency():
    ev = [
        turn("s#1", "s", "customer", "old question here", at(days=0)),
        turn("s#2", "s", "customer", "new question here", at(days=14)),
    ]
    c = ranked(ev, request("s", "x", at(days=14)), recency="half_life", half_life_days=14)
    assert c["s#1"].components["recency"] == pytest.approx(2.5)
    assert c["s#2"].components["recency"] == pytest.approx(5.0)


def test_every_episode_is_ranked_not_only_the_oldest_30():
    ev = [turn(f"s{i}#1", f"s{i}", "customer", f"question number {i} about billing", at(i)) for i in range(60)]
    c = ranked(ev, request("s59", "billing", at(100)))
    assert len(c) == 60 and c["s59#1"].components["recency"] == 5.0


def test_constants_are_parameters():
    ev = [turn("s#1", "s", "customer", "printer tray jammed today", at(0))]
    c = ranked(ev, request("s", "printer", at(1)), base=1.0, active_session=0.5, open_issue=0.0, overlap_max=2.0)
    assert c["s#1"].score == pytest.approx(1.0 + 5.0 + 2.0 * 1 / 1 + 0.5)


def test_urgency_markers_match_inflections_but_not_inside_other_words():
    from stores.text import is_urgent

    assert all(is_urgent(t) for t in ("urgently", "two outages", "our SLAs", "deadlines", "escalated", "production is down"))
    assert not any(is_urgent(t) for t in ("our Slack channel", "ticket p10", "a severe-ish typo? no: sever"))


SIGN_OFF = "Thanks for contacting Brightline support. Is there anything else we can help you with today? Have a great day."


def _sign_off_story():
    """A resolved password ticket and a live invoice ticket that share only the agent's sign-off."""
    return [
        turn("pw#1", "pw", "customer", "Password reset link expired", at(0)),
        turn("pw#2", "pw", "agent", SIGN_OFF, at(3)),
        resolve("pw", at(10), "Sent a new reset link."),
        turn("inv#1", "inv", "customer", "Invoice shows wrong VAT rate", at(days=3)),
        turn("inv#2", "inv", "agent", SIGN_OFF, at(days=3, minutes=4)),
    ]


def test_a_shared_agent_sign_off_makes_an_unrelated_ticket_a_repeat_under_the_reference_keywords():
    c = ranked(_sign_off_story(), request("inv", "VAT rate on invoice", at(days=3, minutes=5)))
    assert c["pw#1"].components["repeat_issue"] == 6  # the sign-off's words carry the overlap past 30 %


def test_repeat_current_customer_takes_the_current_issue_from_customer_turns_and_the_task_only():
    req = request("inv", "VAT rate on invoice", at(days=3, minutes=5))
    c = ranked(_sign_off_story(), req, repeat_current="customer")
    assert c["pw#1"].components["repeat_issue"] == 0
    # a real repeat still matches: the customer's own words carry it
    ev = [*_sign_off_story(), turn("inv#3", "inv", "customer", "Password reset link expired again", at(days=3, minutes=6))]
    c = ranked(ev, request("inv", "reset link", at(days=3, minutes=7)), repeat_current="customer")
    assert c["pw#1"].components["repeat_issue"] == 6


def test_repeat_sessions_and_resolved_flags_from_the_index_equal_a_loop_over_every_session():
    import random

    from store_events import RANDOM_WORDS, random_history
    from stores.text import keywords, overlap_ratio

    rng = random.Random(3)
    for trial in range(40):
        s = SessionAware()
        history = random_history(rng, rng.randint(1, 80), sessions=rng.randint(1, 9))
        for k, e in enumerate(history):
            s.observe(e)
            if rng.random() < 0.3:  # probe mid-history too, so the index is synced step by step
                h = s.memory.history("acme")
                live = f"s{rng.randrange(10)}"
                req = request(live, " ".join(rng.sample(RANDOM_WORDS, 3)), e.at)
                ix = s._synced(h)
                got = s._repeat_sessions(h, ix, req)
                current = set(keywords(req.task)) | (ix.turn_kw[ix.sessions[live]] if live in ix.sessions else set())
                want = {}
                for name in h.session_order:
                    i = ix.sessions[name]
                    prior = frozenset().union(*(keywords(h.texts[j]) for j in range(len(h)) if h.sessions[j] == name))
                    if name != live and h.is_resolved(name) and current and \
                            overlap_ratio(frozenset(current), prior) >= s.params.repeat_threshold:
                        want[i] = (s.params.repeat_issue_with_summary if h.summaries.get(name, "").strip()
                                   else s.params.repeat_issue)
                assert got == want
                assert ix.session_array("resolved").tolist() == [h.is_resolved(n) for n in ix.session_names]

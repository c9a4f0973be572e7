"""The default session-aware ranking (docs/session-ranking.md): relevance first, normalised per
probe; recency on an absolute half-life; the session signals as boosts whose sum is bounded."""

from __future__ import annotations

import numpy as np
import pytest
from store_events import at, request, resolve, turn

from stores.registry import SpecError, parse_spec
from stores.session.hybrid import rrf
from stores.session.session_aware import SESSION_SIGNALS, SessionAware, SessionAwareParams


def ranked(events, req, **params):
    s = SessionAware(SessionAwareParams(**params))
    for e in events:
        s.observe(e)
    b = s.context(req)
    return b, {c.item_id: c for c in b.candidates}


def story():
    return [
        turn("old#1", "old", "customer", "The Snowflake connector times out on the nightly load", at(0)),
        turn("old#3", "old", "agent", "Cleared the connector cache as a first try", at(3)),
        turn("old#2", "old", "agent", "Raised connect_timeout to 120s in the connector settings", at(5)),
        resolve("old", at(60), "Timeout fixed by raising connect_timeout"),
        turn("live#1", "live", "customer", "URGENT hello there, anyone around?", at(days=90)),
        turn("live#2", "live", "agent", "Hi! Happy to help, what is going on?", at(days=90, minutes=1)),
    ]


def test_components_sum_to_the_score_and_the_session_signals_stay_within_the_cap():
    b, c = ranked(story(), request("live", "snowflake connector timing out again", at(days=90, minutes=2)))
    p = SessionAwareParams()
    for x in c.values():
        assert abs(sum(x.components.values()) - x.score) < 1e-9
        signals = sum(x.components.get(k, 0.0) for k in SESSION_SIGNALS) + x.components["boost_cap"]
        assert -p.boost_cap - 1e-12 <= signals <= p.boost_cap + 1e-12
        assert 0 <= x.components["relevance"] <= p.relevance_max and 0 <= x.components["recency"] <= p.recency_max
    # the live greeting carries live +3, open +1, urgency +1: 5 before the cap, 4.5 after
    assert c["live#1"].components["boost_cap"] == pytest.approx(-0.5)
    # the best match of the probe gets the whole relevance scale
    assert max(x.components["relevance"] for x in c.values()) == p.relevance_max


def test_the_most_relevant_old_item_outranks_live_unrelated_chatter():
    # published arithmetic: the live session's +6 +4 and urgency bury a closed ticket's exact match
    req = request("live", "snowflake connector timing out again", at(days=90, minutes=2))
    _, pub = ranked(story(), req, **parse_spec("session_aware[published]").params().__dict__)
    assert pub["live#1"].score > pub["old#1"].score
    b, c = ranked(story(), req)
    assert [x.item_id for x in b.candidates][0] == "old#1"
    assert c["old#1"].score > c["live#1"].score and c["old#1"].score > c["live#2"].score


def test_recency_is_absolute_age_so_an_older_item_added_to_the_pool_changes_no_one_elses():
    req = request("live", "connector", at(days=90, minutes=2))
    _, before = ranked(story(), req)
    _, after = ranked([turn("ancient", "older", "customer", "hello", at(days=-400)), *story()], req)
    for k in before:
        assert after[k].components["recency"] == before[k].components["recency"]
    p = SessionAwareParams()
    age_days = (req.now - at(days=90)).total_seconds() / 86400
    assert before["live#1"].components["recency"] == pytest.approx(p.recency_max * 0.5 ** (age_days / p.half_life_days))


def test_the_last_step_of_a_resolved_session_gets_the_step_order_bonus_and_earlier_steps_less():
    _, c = ranked(story(), request("live", "connector", at(days=90, minutes=2)))
    p = SessionAwareParams()
    # old#3 (the cache, first) and old#2 (the timeout, the fix) are the session's two action steps
    assert c["old#3"].components["step_order"] == 0.0 and c["old#2"].components["step_order"] == p.step_order
    assert c["live#2"].components["step_order"] == 0.0  # the live session is not resolved: no bonus
    assert "step_order" not in c["old#1"].components or c["old#1"].components["step_order"] == 0.0


def test_boosts_that_could_outweigh_relevance_are_refused():
    with pytest.raises(SpecError, match="must be at most relevance_max"):
        parse_spec("session_aware:boost_cap=6")
    parse_spec("session_aware:boost_cap=6,relevance_max=13")  # raised together: fine
    parse_spec("session_aware[published]:boost_cap=6")  # the published overlap scale has no such bound
    with pytest.raises(SpecError, match="resolved_session"):
        parse_spec("session_aware:resolved_session=2")


def test_rrf_ranks_by_reciprocal_rank_and_leaves_unscored_items_out_when_asked():
    scores = np.array([0.2, 0.0, 0.9, 0.5])
    assert rrf(scores, 5).tolist() == pytest.approx([1 / 8, 1 / 9, 1 / 6, 1 / 7])
    assert rrf(scores, 5, only_positive=True).tolist() == pytest.approx([1 / 8, 0.0, 1 / 6, 1 / 7])


def crash_story():
    """A resolved crash ticket whose fix shares no word with the returning customer's question,
    while the failed attempts repeat the question's words; an agent sign-off after the fix."""
    return [
        turn("c#1", "c", "customer", "The app crashes on launch after the update", at(0)),
        turn("c#2", "c", "agent", "Please clear the app cache, then launch it again", at(2)),
        turn("c#3", "c", "customer", "Cleared the cache, the app still crashes on launch", at(6)),
        turn("c#4", "c", "agent", "Please reinstall the app and sign in", at(8), kind="action"),
        turn("c#5", "c", "customer", "Reinstalled, it still crashes on launch after the update", at(12)),
        turn("c#fix", "c", "agent", "Turned off offline photo sync for your account and drained the queue", at(20), kind="action"),
        turn("c#ok", "c", "customer", "Working now, thank you!", at(25)),
        turn("c#bye", "c", "agent", "Glad to hear it, I've noted what worked on the ticket.", at(26)),
        resolve("c", at(60), "App crashed on launch after the update; cache and reinstall did not help, sync off fixed it"),
        turn("n#1", "n", "customer", "Hello again, the app crashes on launch after the update on my new tablet", at(days=40)),
    ]


def test_the_known_fix_of_a_repeat_takes_the_places_of_the_attempts_that_failed_before_it():
    req = request("n", "app crashes on launch after the update", at(days=40, minutes=1))
    b, c = ranked(crash_story(), req)
    _, off = ranked(crash_story(), req, known_fix=False)
    rank = {x.item_id: r for r, x in enumerate(b.candidates)}
    failed = ("c#2", "c#3", "c#4", "c#5")
    # without it, relevance puts the attempts that repeat the question's words above the fix
    assert any(off[f].score > off["c#fix"].score for f in failed)
    # with it, the fix (the last kind: action turn, not the agent's sign-off after it) and the
    # customer's word that it worked come before every failed attempt
    assert all(rank["c#fix"] < rank[f] and rank["c#ok"] < rank[f] for f in failed)
    assert c["c#bye"].components.get("known_fix", 0.0) == 0.0 and c["c#1"].components.get("known_fix", 0.0) == 0.0
    # the places are dealt out again, not made: the session holds the same scores, the additions sum to 0
    moved = ("c#fix", "c#ok", *failed)
    assert sorted(round(c[i].score, 9) for i in moved) == sorted(round(off[i].score, 9) for i in moved)
    assert sum(c[i].components["known_fix"] for i in moved) == pytest.approx(0.0, abs=1e-9)
    assert max(c[i].score for i in moved) == pytest.approx(max(off[i].score for i in moved))
    for x in c.values():
        assert abs(sum(x.components.values()) - x.score) < 1e-9


def test_a_resolved_session_that_is_not_a_repeat_keeps_its_order():
    # the question is about billing: the crash ticket is not a repeat, its attempts and fix stay as relevance puts them
    story = [*crash_story()[:-1], turn("n#1", "n", "customer", "We were charged twice for the May invoice", at(days=40))]
    req = request("n", "refund the duplicate invoice charge", at(days=40, minutes=1))
    _, c = ranked(story, req)
    assert all(x.components.get("repeat_issue", 0.0) == 0.0 and x.components.get("known_fix", 0.0) == 0.0 for x in c.values())
    assert parse_spec("session_aware[published]").params().known_fix is False


def test_the_fused_ranking_is_bitwise_the_sum_of_the_two_reciprocal_rank_rankings():
    from stores.session.hybrid import fused, rrf_fused

    rng = np.random.default_rng(0)
    for _ in range(500):
        n = int(rng.integers(0, 40))
        lex = np.round(rng.random(n) - 0.4, 1) * rng.integers(0, 2)  # ties, zeros and negatives
        dense = np.round(rng.random(n) - 0.2, 1)
        k = int(rng.integers(1, 9))
        want = rrf(lex, k, only_positive=True) + rrf(dense, k)
        assert rrf_fused(lex, dense, k).tobytes() == want.tobytes()
        got = fused(lex, dense, k)
        assert got.tobytes() == want.tobytes() and not got.flags.writeable
        assert fused(lex.copy(), dense.copy(), k) is got  # asked again: remembered, not sorted again
    assert fused(np.array([0.0, 1.0]), np.array([1.0, 0.0]), 5) is not fused(np.array([0.0, 1.0]), np.array([1.0, 0.0]), 6)


def test_the_session_signals_kept_between_probes_equal_those_computed_afresh():
    # probes in a row on one history (the signals are kept), then a turn and a resolution (they are not)
    events = story()
    asks = [request("live", "snowflake connector timing out again", at(days=90, minutes=2)),
            request("live", "hello anyone", at(days=90, minutes=3)),
            request("old", "connect_timeout settings", at(days=90, minutes=4)),
            request("live", "the nightly load", at(days=90, minutes=5)),
            request("next", "the snowflake nightly load", at(days=90, minutes=6))]  # repeats `old` before and after
    for params in ({}, parse_spec("session_aware[published]").params().__dict__):
        kept = SessionAware(SessionAwareParams(**params))
        for e in events[:-1]:
            kept.observe(e)
        seen = []
        for step, req in enumerate(asks + [None] + asks[::-1]):  # the same ask on either side of the change
            if req is None:
                kept.observe(events[-1])
                kept.observe(resolve("live", at(days=91), "connector fixed"))
                continue
            fresh = SessionAware(SessionAwareParams(**params))
            for e in events[:-1] + ([events[-1], resolve("live", at(days=91), "connector fixed")] if step > len(asks) else []):
                fresh.observe(e)
            a, b = kept.context(req), fresh.context(req)
            assert a.text == b.text
            for x, y in zip(a.candidates, b.candidates):
                assert (x.item_id, x.score, x.components) == (y.item_id, y.score, y.components)
            seen.append(a)
        for b in seen:  # what a bundle holds is never written to afterwards
            assert all(not v.flags.writeable for k, v in b.candidates._lazy.components.items() if k in SESSION_SIGNALS)


def test_word_postings_built_on_the_first_overlap_probe_count_what_a_fresh_count_gives():
    from stores.memory import MemoryStore
    from stores.session.session_aware import SessionIndex
    from stores.text import keywords, words

    store, ix = MemoryStore(), SessionIndex()
    tasks = {"words": words("the connector cache timeout fixed again"),
             "keywords": keywords("the connector cache timeout fixed again")}
    split = {"words": words, "keywords": keywords}
    more = [resolve("old", at(70), "Fixed: connector cache cleared, timeout raised"),  # replaced in place
            turn("live#3", "live", "customer", "The connector timeout is back", at(days=91))]
    for step, e in enumerate(story() + more):
        store.observe(e)
        h = store.history("acme")
        ix.sync(h)
        if step < 2:
            assert ix.posted == {"words": 0, "keywords": 0}  # nothing posted until a probe counts
        if step in (2, 5, 6, 7):  # built late, then kept up to date, through the replaced record
            for kind, task in tasks.items():
                assert ix.hits(task, kind).tolist() == [float(len(task & split[kind](x))) for x in h.texts]

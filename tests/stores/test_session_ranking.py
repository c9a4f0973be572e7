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

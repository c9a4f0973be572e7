"""The situation card folds one turn's signals and the locker into enums and booleans."""

from __future__ import annotations

from dataclasses import fields
from datetime import datetime, timedelta, timezone
from typing import get_args, get_type_hints

from stores.decisions import keys
from stores.decisions.card import Card, situation, stateless
from stores.decisions.locker import Entry
from stores.decisions.params import SessionStateParams
from stores.decisions.signals import Signals

T = datetime(2026, 3, 2, 10, 0, tzinfo=timezone.utc)
P = SessionStateParams()


def state(**values):
    return {k: Entry(str(v), T + timedelta(hours=1)) for k, v in values.items()}


def test_the_card_holds_only_enums_and_booleans():
    for name, hint in get_type_hints(Card).items():
        assert hint is bool or all(isinstance(a, str) for a in get_args(hint)), name


def test_a_streak_is_reached_counting_this_turn():
    hostile = Signals(hostile=True)
    assert not situation(hostile, state(), P).hostile_streak_reached
    assert situation(hostile, state(**{keys.HOSTILE_STREAK: 1}), P).hostile_streak_reached
    assert not situation(Signals(), state(**{keys.HOSTILE_STREAK: 5}), P).hostile_streak_reached  # calm now
    assert situation(Signals(retrieval_empty=True), state(**{keys.EMPTY_RETRIEVAL_STREAK: 2}), P).empty_retrieval_streak_reached
    assert not situation(Signals(retrieval_empty=True), state(**{keys.EMPTY_RETRIEVAL_STREAK: 1}), P).empty_retrieval_streak_reached
    assert situation(Signals(same_answer_repeated=True), state(**{keys.SAME_ANSWER_STREAK: 1}), P).stuck


def test_thresholds_come_from_the_params():
    three = SessionStateParams(hostile_streak=3)
    assert not situation(Signals(hostile=True), state(**{keys.HOSTILE_STREAK: 1}), three).hostile_streak_reached
    assert situation(Signals(hostile=True), state(**{keys.HOSTILE_STREAK: 2}), three).hostile_streak_reached


def test_flags_and_claims_read_as_facts():
    c = situation(Signals(human_request=True), state(**{keys.HUMAN_REQUESTED: 1, keys.OFFER_MADE: 1}), P)
    assert c.human_asked_before and c.offer_on_record


def test_complaints_count_since_the_agents_last_action_once_it_has_acted():
    assert situation(Signals(), state(**{keys.COMPLAINTS_SINCE_REPLY: 1}), P).complaint_live
    acted = state(**{keys.AGENT_ACTED: 1, keys.COMPLAINTS_SINCE_REPLY: 0, keys.OPEN_COMPLAINTS: 1})
    assert situation(Signals(), acted, P).complaint_live
    answered = state(**{keys.AGENT_ACTED: 1, keys.COMPLAINTS_SINCE_REPLY: 1})
    assert not situation(Signals(), answered, P).complaint_live
    assert situation(Signals(), state(**{keys.HOSTILE_STREAK: 1}), P).complaint_live


def test_the_thread_owner_comes_from_the_locker():
    assert situation(Signals(), {keys.THREAD_OWNER: Entry("recommendation", T)}, P).thread_owner == "recommendation"
    assert situation(Signals(), {keys.THREAD_OWNER: Entry("nonsense", T)}, P).thread_owner == "none"


def test_a_down_locker_gives_a_card_without_locker_facts():
    c = situation(Signals(human_request=True, hostile=True, sensitive="harm"), None, P, "down")
    assert c.locker == "down" and c.sensitive == "harm"
    assert not (c.human_asked_before or c.offer_on_record or c.hostile_streak_reached or c.complaint_live)
    assert situation(Signals(), None, P).locker == "down"  # no state read means down, whatever was claimed


def test_a_stateless_card_has_the_signals_and_no_locker():
    s = Signals(short_affirmative=True, retrieval_empty=True, explicit_intent="retention")
    c = stateless(s)
    assert c.locker == "unused" and c.affirmative and c.retrieval_empty and c.intent == "retention"
    assert not c.offer_on_record and set(c.as_dict()) == {f.name for f in fields(Card)}

"""The resolver: every rule, and the fixed precedence between every pair of rules."""

from __future__ import annotations

import itertools
from dataclasses import fields

import pytest

from stores.decisions.card import Card
from stores.decisions.resolver import RULES, resolve, route


def card(**facts) -> Card:
    base = {f.name: False for f in fields(Card)}
    base.update(locker="up", sensitive="none", intent="none", thread_owner="none")
    base.update(facts)
    return Card(**base)


TRIGGERS = {  # rule -> the smallest set of facts that fires it, in precedence order
    "sensitive": {"sensitive": "crisis"},
    "locker_down": {"locker": "down"},
    "meaningless": {"meaningless": True},
    "repeat_human_request": {"human_request": True, "human_asked_before": True},
    "offer_acceptance": {"affirmative": True, "offer_on_record": True},
    "hostile_streak": {"hostile_streak_reached": True},
    "empty_retrieval_streak": {"empty_retrieval_streak_reached": True},
    "complexity": {"complexity": True},
    "time_critical": {"time_critical": True},
    "stuck_offer": {"stuck": True, "offer_on_record": False},
    "first_human_request": {"human_request": True, "human_asked_before": False},
    "resolved_confirmation": {"resolved_confirmation": True, "complaint_live": False},
    "complaint_live": {"resolved_confirmation": True, "complaint_live": True},
    "affirmative_without_offer": {"affirmative": True, "offer_on_record": False},
    "offer_already_on_record": {"stuck": True, "offer_on_record": True},
    "continue": {},
}
PLANS = {
    "sensitive": "escalate", "locker_down": "continue", "meaningless": "continue", "repeat_human_request": "transfer",
    "offer_acceptance": "transfer", "hostile_streak": "transfer", "empty_retrieval_streak": "transfer",
    "complexity": "transfer", "time_critical": "transfer", "stuck_offer": "offer_live", "first_human_request": "clarify",
    "resolved_confirmation": "csat", "complaint_live": "continue", "affirmative_without_offer": "continue",
    "offer_already_on_record": "continue", "continue": "continue",
}


def test_the_trigger_table_covers_every_rule_in_precedence_order():
    assert tuple(TRIGGERS) == RULES


@pytest.mark.parametrize("rule", RULES)
def test_each_rule_fires_on_its_own_facts_with_its_plan(rule):
    v = resolve(card(**TRIGGERS[rule]))
    assert (v.rule, v.plan) == (rule, PLANS[rule])
    assert v.why


PAIRS = [
    (hi, lo) for hi, lo in itertools.combinations(RULES, 2)
    if all(TRIGGERS[lo].get(k, v) == v for k, v in TRIGGERS[hi].items())  # skip contradictory pairs
]


@pytest.mark.parametrize("higher,lower", PAIRS, ids=[f"{h}>{l}" for h, l in PAIRS])
def test_the_earlier_rule_wins_when_both_fire(higher, lower):
    assert resolve(card(**{**TRIGGERS[lower], **TRIGGERS[higher]})).rule == higher


def test_enough_pairs_are_checked_to_pin_the_order():
    assert len(PAIRS) >= 100


def test_severity_picks_the_escalation_class():
    assert resolve(card(sensitive="crisis")).escalation == "crisis"
    assert resolve(card(sensitive="harm")).escalation == "harm"
    assert resolve(card(sensitive="harm", locker="down", meaningless=True)).plan == "escalate"


def test_a_yes_that_answers_another_question_is_not_an_acceptance():
    v = resolve(card(affirmative=True, offer_on_record=True, answers_question=True))
    assert (v.plan, v.rule) == ("continue", "affirmative_without_offer")


def test_a_lone_hostile_line_does_nothing():
    assert resolve(card(hostile=True)).plan == "continue"


def test_meaningless_suppresses_every_non_safety_rule():
    for rule, facts in TRIGGERS.items():
        if rule in ("sensitive", "locker_down"):
            continue
        assert resolve(card(**{**facts, "meaningless": True})).rule == "meaningless", rule


def test_a_down_locker_takes_no_transfer_offer_or_survey():
    for rule, facts in TRIGGERS.items():
        if rule == "sensitive":
            continue
        assert resolve(card(**{**facts, "locker": "down"})).plan == "continue", rule


def test_route_support_context_wins_over_intent_and_continuity():
    r = route(card(support_context=True, intent="recommendation", short_reply=True, thread_owner="retention"))
    assert (r.route, r.rule) == ("knowledge", "support_context")


def test_route_explicit_intent_beats_continuity():
    r = route(card(intent="recommendation", short_reply=True, thread_owner="knowledge"))
    assert (r.route, r.rule) == ("recommendation", "explicit_intent")


def test_route_short_replies_continue_the_thread():
    r = route(card(short_reply=True, thread_owner="recommendation"))
    assert (r.route, r.rule) == ("recommendation", "continuity")


def test_route_otherwise_goes_to_knowledge():
    r = route(card())
    assert (r.route, r.rule) == ("knowledge", "default")
    assert route(card(thread_owner="recommendation")).route == "knowledge"  # not short: no continuity


def test_the_docstring_shows_the_precedence_the_resolver_walks():
    """Written once: the docstring's table is `precedence_table()` of `PRECEDENCE` (the docs' is
    generated from it: tests/test_docs.py)."""
    import stores.decisions.resolver as resolver

    assert resolver.precedence_table() in resolver.__doc__

"""The decisions other than the floor, twelfth round: the readers' shared lowering, a refusal said as one, a yes to a
lapsed offer with a person named, time running out against durations and months, a person one has not got, a person
asked for in roundabout shapes, recommendations spoken of as a feature, a failure reported again, more ways of leaving,
and the rules' time words."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

from stores.decisions import learned, signals
from stores.decisions.card import stateless
from stores.decisions.learned import TIME_SHORT, combine
from stores.decisions.resolver import resolve
from stores.decisions.signals import (AgentFacts, ProducerParams, Signals, TurnContext, agent_facts, asks_for_person, lowered,
                                      produce_rules)
from test_frontend import _readings  # the front end's readings, every head sure unless told (tests/stores)

PARAMS = ProducerParams(front="learned")
OFFER = agent_facts("a1", "Sorry about that. Would you like me to connect you with live support?", "message")


def test_the_readers_lower_the_text_and_straighten_its_apostrophes_in_one_place():
    assert lowered("I DON\u2019T Want It") == "i don't want it"
    assert signals.problem_words("It Doesn\u2019t Work") == ["doesn't"]
    assert signals.intent("We\u2019re Not Renewing next year") == "retention"
    # the idiom is written once, in `lowered`
    idiom = re.compile(r"\.lower\(\)\.replace\(\"\\u2019\"")
    for module in (signals, learned):
        source = open(module.__file__, encoding="utf-8").read()
        assert len(idiom.findall(source)) == (1 if module is signals else 0), module.__name__


# --- behaviour: each case below read otherwise before this round ----------------------------------------------------


def _ctx(text: str, answer: AgentFacts | None = None) -> tuple[TurnContext, Signals]:
    ctx = TurnContext(text, answer)
    return ctx, produce_rules(ctx)


@pytest.mark.parametrize("text", [
    "no way to log in, yes please do",
    "there's no need for two logins on one account, I'd want it looked at by someone",
    "there's no way of reaching the billing team from the app",
])
def test_no_way_or_no_need_said_of_something_else_turns_nothing_down(text):
    assert not learned.TURNS_DOWN.search(lowered(text))
    ctx, rules = _ctx(text)
    assert not rules.human_request  # the learned head's yes is the one read
    s = combine(ctx, PARAMS, rules, _readings(human_request=("yes", 0.8)))
    assert s.human_request and "turns down" not in dict(s.readers)["human_request"]


@pytest.mark.parametrize("text", [
    "no way, I've been passed round enough",
    "no need, ta",
    "no need to transfer me, I'll sort it myself",
    "nah you're alright",
    "no thanks, being passed around five departments is not my idea of help",
])
def test_a_refusal_said_as_one_turns_the_offer_down(text):
    assert learned.TURNS_DOWN.search(lowered(text))
    ctx, rules = _ctx(text, OFFER)
    s = combine(ctx, PARAMS, rules, _readings(human_request=("yes", 0.8)))
    assert not s.human_request and "turns down" in dict(s.readers)["human_request"]


def test_the_two_refusal_readers_have_names_for_what_they_read():
    assert not hasattr(learned, "REFUSE") and hasattr(learned, "TURNS_DOWN") and hasattr(learned, "REFUSAL")


def test_a_yes_that_names_a_person_stands_as_a_request_once_the_offer_lapsed():
    ctx, rules = _ctx("yes please, I want to speak to a real person", OFFER)
    assert rules.human_request
    s = combine(ctx, PARAMS, rules, _readings())
    assert s.human_request and s.short_affirmative
    assert resolve(replace(stateless(s), offer_on_record=True)).plan == "transfer"  # live: the offer is taken
    assert resolve(stateless(s)).plan == "clarify"  # lapsed: the rules' request stands (it was dropped before)
    ctx, rules = _ctx("ok fine, connect me", OFFER)  # the offer's own verb, no person named: a yes to it alone
    s = combine(ctx, PARAMS, rules, _readings())
    assert not s.human_request and resolve(stateless(s)).plan == "continue"
    assert resolve(replace(stateless(s), offer_on_record=True)).plan == "transfer"


@pytest.mark.parametrize("text,short", [
    ("the delivery was late by 20 minutes again", False),  # a duration, not a clock
    ("the stream always stalls until 3 minutes in", False),
    ("my contract ends in March, what are my options", False),  # a month, not time running out
    ("the trial ends in a few weeks and I can't find the price", False),
    ("it's 12.99 a month for the add-on", False),  # a price, not a clock
    ("my subscription expires in june", False),  # after review
    ("the offer starts at 9.99 a month", False),
    ("the stream has been frozen for 20 minutes", False),
    ("boarding closes in 25 minutes and the app won't show my ticket", True),
    ("my flight leaves at 6 and the pass is gone", True),
    ("the shop shuts at 5:30 and the collection code hasn't come", True),
    ("the exam starts in an hour and the portal is down", True),
    ("the export has to go to the bank by 5 today", True),
])
def test_time_running_out_is_a_clock_or_a_countdown_not_a_duration_a_month_or_a_price(text, short):
    assert bool(TIME_SHORT.search(lowered(text))) is short
    ctx, rules = _ctx(text)
    s = combine(ctx, PARAMS, rules, _readings(time_critical=("yes", 0.8)))
    assert s.time_critical is short  # after review: the rules' own time words no longer read a month or a price


@pytest.mark.parametrize("text,asks", [
    ("I don't have anyone I can talk to since he left", False),
    ("i haven't got anybody i could talk to about money", False),
    ("there isn't anyone I can ask at home", False),
    ("is there anyone I can talk to about the bill", True),
    ("I need someone I can talk to about the contract", True),
])
def test_no_one_to_talk_to_is_no_person_asked_for(text, asks):
    assert asks_for_person(text) is asks


@pytest.mark.parametrize("text", [
    "could someone in your bookings team amend the surname on my reservation",
    "anyone there who deals with the loyalty points?",
    "could somebody who knows the parental controls help me set them",
    "nah mate, put us on to the bloke who does the business accounts",
    "is there anyone with a pulse on this line?",
    "is there somebody there who isn't a bot",
])
def test_a_person_asked_for_in_more_roundabout_shapes_is_a_human_request(text):
    assert asks_for_person(text)


@pytest.mark.parametrize("text", [
    "can someone help me with my order",  # everyday support, no team named
    "is there anyone home on Saturdays to take the parcel",
    "the bloke who does the deliveries left it in the rain",
])
def test_everyday_help_and_a_person_only_named_stay_no_request(text):
    assert not asks_for_person(text)


@pytest.mark.parametrize("text,feature", [
    ("my film suggestions are all cartoons since the kids used my login, can you sort that?", True),
    ("The recommended podcasts are in German even though my language is English", True),
    ("the shopping suggestions keep showing me cots and my kids are grown", True),
    ("Your recommendations persistently propose gardening tools although I live in a flat", True),
    ("that thriller you suggested was great, anything else like it?", False),
    ("any suggestions for a quiz night game?", False),
    ("recommend me a cosy mystery series", False),
])
def test_recommendations_spoken_of_as_a_feature_are_no_request_for_them(text, feature):
    assert bool(learned.RECOMMENDATIONS_FEATURE.search(lowered(text))) is feature
    ctx, rules = _ctx(text)
    s = combine(ctx, PARAMS, rules, _readings(intent=("recommendation", 0.8)))
    assert (s.explicit_intent == "recommendation") is (not feature or rules.explicit_intent == "recommendation")


@pytest.mark.parametrize("text", [
    "ta for that, restarted it and the fridge beeped again at midnight. brilliant",
    "cheers, super helpful, error F3 again straight after breakfast",
    "thanks so much, it dropped off again at 9:15 like clockwork. amazing work",
])
def test_thanks_that_report_the_failure_again_confirm_no_fix(text):
    assert learned.failed_again(text) is not None
    ctx, rules = _ctx(text, agent_facts("a2", "Reset the unit from our side.", "action"))
    ctx = TurnContext(text, None, step=ctx.answer)
    s = combine(ctx, PARAMS, rules, _readings(resolved=("yes", 0.8)), resolved_yes=0.8)
    assert not s.resolved_confirmation and "again" in dict(s.readers)["resolved_confirmation"]


@pytest.mark.parametrize("text", [
    "the heating's back on again, ta very much",
    "all green again 👍",
    "the doorbell is working again, cheers",
    "printer's connected again, legend",
    "thanks again, that fixed it",
])
def test_a_fix_said_with_again_still_confirms_it(text):
    assert learned.failed_again(text) is None


@pytest.mark.parametrize("text,leaving", [
    ("I'm moving abroad in May, so the gym membership can finish then", True),
    ("the committee has decided not to renew the hall insurance", True),
    ("no thanks, I'm going to my brother's network", True),
    ("the download can finish overnight, can't it?", False),
    ("I'm going to my bank to ask about it", False),
])
def test_leaving_said_as_a_service_that_can_finish_a_decision_not_to_renew_or_another_provider(text, leaving):
    assert (signals.intent(text) == "retention") is leaving


@pytest.mark.parametrize("text", [
    "the chemist shuts in 10 min and the app won't take my card",
    "the depot shuts at 6 and the parcel code is rejected",
])
def test_the_rules_read_time_short_in_min_and_hrs_and_a_shop_that_shuts(text):
    assert produce_rules(TurnContext(text)).time_critical

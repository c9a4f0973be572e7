"""The twelfth round's decisions after review: a question why there is no one to talk to still asks for a person,
the search for words of no one is bounded, and "no way" with a way in or out, or before "am I", turns nothing down."""

from __future__ import annotations

import pytest

from stores.decisions import learned, signals
from stores.decisions.learned import combine
from stores.decisions.signals import ProducerParams, TurnContext, agent_facts, asks_for_person, lowered, produce_rules
from test_frontend import _readings  # the front end's readings, every head sure unless told (tests/stores)

PARAMS = ProducerParams(front="learned")


@pytest.mark.parametrize("text", [
    "is there not someone I can talk to?",
    "is there not anyone I can speak to?",
    "why is there never anyone I can speak to",
])
def test_asking_why_there_is_no_one_still_asks_for_a_person(text):
    assert asks_for_person(text)


@pytest.mark.parametrize("text", [
    "I don't have anyone I can talk to since he left",
    "there isn't anyone I can ask at home",
])
def test_a_person_one_has_not_got_stays_no_request(text):
    assert not asks_for_person(text)


def test_the_words_before_a_person_are_read_in_a_bounded_window():
    # each match used to search the text from its start: a long message of many matches took minutes
    calls = []

    class Counting:
        def search(self, low, start, end):
            calls.append(end - start)
            return True  # every person read as one not got: each match is looked at

    original = signals._NO_ONE_BEFORE
    signals._NO_ONE_BEFORE = Counting()
    try:
        signals.asks_for_person("is there anyone I can talk to. " * 200)  # 200 matches
    finally:
        signals._NO_ONE_BEFORE = original
    assert len(calls) >= 200 and max(calls) <= 40


@pytest.mark.parametrize("text", [
    "no way am I paying this, I need someone senior to look at it",
    "stuck with no way out, need somebody with authority",
    "I'm locked out and there's no way in, can someone call me back",
])
def test_no_way_in_or_out_or_before_am_i_turns_nothing_down(text):
    low = lowered(text)
    assert not learned.TURNS_DOWN.search(low)
    ctx = TurnContext(text, None)
    rules = produce_rules(ctx)
    s = combine(ctx, PARAMS, rules, _readings(human_request=("yes", 0.8)))
    assert s.human_request


@pytest.mark.parametrize("text", ["no way, I've been passed round enough", "no way mate", "no need, ta", "no way!"])
def test_no_way_said_alone_still_turns_the_offer_down(text):
    assert learned.TURNS_DOWN.search(lowered(text))


STEP = agent_facts("a2", "Reset the unit from our side.", "action")


def _after_step(text):
    ctx = TurnContext(text, None, step=STEP)
    return combine(ctx, PARAMS, produce_rules(ctx), _readings(resolved=("yes", 0.8)), resolved_yes=0.8)


@pytest.mark.parametrize("text", [
    "thanks, it's all good again",
    "perfect, everything's good again",
    "thanks, the app opens again",
    "thanks, emails are sending again",
    "thanks so much, I can finally see my photos again",
    "amazing, the sound is perfect again",
])
def test_a_fix_said_in_any_words_with_again_confirms_it(text):
    assert learned.failed_again(text) is None
    assert _after_step(text).resolved_confirmation


@pytest.mark.parametrize("text", [
    "ta, super helpful, I can't log in again this morning",
    "the box is playing up again",
    "thanks, the screen froze up again",
    "cheers, it cut out on me again",
])
def test_a_failure_said_with_again_is_read_in_a_failure_word(text):
    assert learned.failed_again(text) is not None
    s = _after_step(text)
    assert not s.resolved_confirmation


@pytest.mark.parametrize("text,short", [
    ("they put my bill up by 15 without telling me", False),  # an amount, not a clock
    ("cancel by 31 march", False),  # a date
    ("pay before 15 may", False),
    ("by 10 people complained", False),
    ("the export has to go to the bank by 5 today", True),
    ("the branch closes at 17:30 and my card is blocked", True),
    ("I need it sorted by 9 or I miss the train", True),
])
def test_a_clock_is_an_hour_of_the_day_not_an_amount_or_a_date(text, short):
    assert bool(learned.TIME_SHORT.search(lowered(text))) is short


@pytest.mark.parametrize("text,short", [
    ("my contract ends in March, what are my options", False),
    ("the trial ends in a few weeks", False),
    ("my subscription expires in june", False),
    ("the offer starts at 9.99 a month", False),
    ("the shop shuts at 5:30 and the code hasn't come", True),
    ("the chemist shuts in 10 min and the app won't take my card", True),
    ("boarding closes in 25 minutes", True),
    ("the sale ends tonight and the checkout fails", True),
])
def test_the_rules_read_an_end_or_a_start_only_at_a_clock_or_in_minutes_or_hours(text, short):
    assert produce_rules(TurnContext(text)).time_critical is short


@pytest.mark.parametrize("text,leaving", [
    ("the account migration can finish overnight", False),
    ("the package delivery can finish tomorrow", False),
    ("my plan upgrade should finish by friday right?", False),
    ("I'm going to my mum's bank tomorrow to pay the cash in", False),
    ("I've decided not to renew my passport yet, does that affect my account?", False),
    ("we voted not to renew the chairman", False),
    # the shapes the round added still read leaving
    ("I'm moving abroad in May, so the gym membership can finish then", True),
    ("the committee has decided not to renew the hall insurance", True),
    ("the governors have resolved not to renew the lease", True),
    ("no thanks, I'm going to my brother's network", True),
    ("I'm switching to my sister's provider", True),
])
def test_leaving_needs_the_service_to_end_a_leaving_verb_or_a_service_not_renewed(text, leaving):
    assert (signals.intent(text) == "retention") is leaving


@pytest.mark.parametrize("text,asks", [
    ("suggestions are welcome, what should I watch tonight?", True),
    ("my recommendations are rubbish, what thriller should I watch next?", True),
    ("recommendations are usually good, what's like Succession?", True),
    ("my film suggestions are all cartoons since the kids used my login, can you sort that?", False),
    ("the shopping suggestions keep showing me cots and my kids are grown", False),
])
def test_recommendations_spoken_of_with_a_title_asked_for_are_a_request(text, asks):
    ctx = TurnContext(text, None)
    rules = produce_rules(ctx)
    s = combine(ctx, PARAMS, rules, _readings(intent=("recommendation", 0.8)))
    assert (s.explicit_intent == "recommendation") is asks


@pytest.mark.parametrize("text", [
    "can someone that does billing correct my invoice",
    "could somebody who handles bookings amend my surname",
    "can someone who deals with accounts update my address",
])
def test_a_person_by_what_they_do_asked_to_correct_or_change_something_is_a_request(text):
    assert asks_for_person(text)

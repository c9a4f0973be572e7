"""The decisions other than the floor, eleventh round: a person asked for by who they are or what they do, thanks
after the agent's fix, a refusal, a person accepted, time running out, leaving said without "cancel my account"."""

from __future__ import annotations

from dataclasses import replace

import pytest

from stores.decisions.card import stateless
from stores.decisions.learned import TIME_SHORT, combine, fix_given, thanks_after_fix
from stores.decisions.resolver import resolve
from stores.decisions.signals import (AgentFacts, ProducerParams, Signals, TurnContext, agent_facts, asks_for_person, intent,
                                      leaves_in_context, produce_rules)
from test_frontend import _readings  # the front end's readings, every head sure unless told (tests/stores)

PARAMS = ProducerParams(front="learned")
OFFER = agent_facts("a1", "Sorry about that. Would you like me to connect you with live support?", "message")
STEP = agent_facts("a2", "Changed the name on your invoices to Menon Caterers.", "action")
INSTRUCTION = agent_facts("a3", "Then open Team > Roles, pick her name and choose 'Invoices only'.", "message")


def _ctx(text: str, answer: AgentFacts | None = None, earlier: str | None = None) -> tuple[TurnContext, Signals]:
    step = answer if answer is not None and answer.kind == "action" else None
    ctx = TurnContext(text, None if step else answer, step=step, earlier=earlier)
    return ctx, produce_rules(ctx)


@pytest.mark.parametrize("text", [
    "can someone from the lettings office ring me back",
    "any chance somebody from your billing side could give me a bell",
    "who runs the allotment rota? I'd like a word with them",
    "who looks after the hall bookings? could you pass me along",
    "is there a surveyor or somebody I can run the quote past?",
    "would a colleague of yours be able to explain the roaming charges",
    "I want the person who sets up the contracts on the phone",
    "is there someone who does the parental controls",
    "ok fine, connect me",
])
def test_a_person_asked_for_by_who_they_are_or_what_they_do_is_a_human_request(text):
    assert asks_for_person(text)


@pytest.mark.parametrize("text", [
    "someone from your team came yesterday and broke the gate",
    "who do I talk to about a quote?",
    "how do I connect my laptop to the printer",
    "can you connect me to the wifi in the lounge",
    "my colleague says the invoice is wrong",
])
def test_a_person_only_named_is_no_human_request(text):
    assert not asks_for_person(text)


@pytest.mark.parametrize("text,fix", [
    ("done that, she can see invoices and nothing else. grand", INSTRUCTION),
    ("there we go, 5:30 it is. merci", INSTRUCTION),
    ("super, that's it yaar, thanks", STEP),
    ("two hours and not one drop, legend", STEP),
    ("km/h it is 👍", STEP),
])
def test_thanks_after_the_agents_fix_confirms_it_whatever_the_head_reads(text, fix):
    ctx, rules = _ctx(text, fix)
    s = combine(ctx, PARAMS, rules, _readings(resolved=("no", 0.8)), resolved_yes=0.2 if fix.kind == "action" else None)
    assert s.resolved_confirmation and dict(s.readers)["resolved_confirmation"].startswith("thanks after the agent's fix")
    assert resolve(stateless(s)).plan == "csat"


@pytest.mark.parametrize("text,fix", [
    ("thanks, I'll try that tonight", INSTRUCTION),  # a promise for later
    ("thanks, it doesn't work", INSTRUCTION),  # a negation
    ("it's paired now, ta. but the app shows mph", STEP),  # a "but" after the thanks
    ("cheers for that, now there's no delivery booked at all. magic 🙄", STEP),  # sarcasm
    ("thanks, and how do I add a second user?", INSTRUCTION),  # a question
    ("lovely, thanks", agent_facts("a4", "It was delivered to the Ipswich address on your account.", "message")),  # no fix
    ("great, thanks", agent_facts("a5", "Could you restart the router?", "message")),  # a question, not a fix
])
def test_thanks_is_no_confirmation_without_a_fix_or_with_a_problem_a_promise_or_sarcasm(text, fix):
    step = fix if fix.kind == "action" else None
    assert thanks_after_fix(text, fix_given(step, None if step else fix)) is None


def test_a_refusal_is_no_person_asked_for_by_the_head_alone():
    ctx, rules = _ctx("aye right, so I can be passed round five departments. no thanks", OFFER)
    s = combine(ctx, PARAMS, rules, _readings(human_request=("yes", 0.8)))
    assert not s.human_request and "the message turns down" in dict(s.readers)["human_request"]
    assert resolve(replace(stateless(s), offer_on_record=True)).plan == "continue"
    ctx, rules = _ctx("no thanks, just put me through to a manager", OFFER)  # the rules' words still stand
    assert combine(ctx, PARAMS, rules, _readings(human_request=("yes", 0.8))).human_request


def test_a_person_accepted_after_an_offer_is_a_yes_to_it_and_no_fix():
    ctx, rules = _ctx("ok fine, connect me", OFFER)
    s = combine(ctx, PARAMS, rules, _readings(resolved=("yes", 0.8)))
    assert s.short_affirmative and not s.human_request and not s.resolved_confirmation
    assert resolve(replace(stateless(s), offer_on_record=True)).plan == "transfer"
    assert resolve(stateless(s)).plan == "continue"  # the offer lapsed: a yes to it is no new request to clarify
    ctx, rules = _ctx("ok fine, connect me")  # no offer: a first request
    assert resolve(stateless(combine(ctx, PARAMS, rules, _readings()))).plan == "clarify"


@pytest.mark.parametrize("text,short", [
    ("I'm a hospice nurse on nights, could my deliveries come after 2pm when I'm up?", False),
    ("can the smart lock let them in at 3:30 without a code", False),
    ("need a card game that takes under half an hour", False),
    ("a 40 minute hold queue at midnight is exactly what I need", False),
    ("boarding closes in 25 minutes and the app won't show my ticket", True),
    ("the export has to go to the bank by 5 today", True),
    ("the wedding car was due ten minutes ago", True),
    ("I need someone in the next hour", True),
    ("my flight leaves at 6 and the pass is gone", True),
])
def test_a_learned_time_critical_yes_needs_time_running_out(text, short):
    assert bool(TIME_SHORT.search(text.lower())) is short
    ctx, rules = _ctx(text)
    s = combine(ctx, PARAMS, rules, _readings(time_critical=("yes", 0.8)))
    assert s.time_critical is (short or rules.time_critical)


@pytest.mark.parametrize("text", [
    "please cancel the dog food subscription",
    "mum goes into a care home. can I stop her landline and the TV package?",
    "How do we wind the account up?",
    "the card terminal rental can go",
    "his separate TV package can be cancelled",
    "I believe it is time we parted company",
    "they bank elsewhere now",
    "the council has voted to move all its funds to an ethical bank",
    "we use someone else now",
    "not renewing next year",
    "the kids have left home, don't need the family bundle",
    "the home package is wasted on me",
    "nobody watches the sports add-on, let's drop it",
])
def test_leaving_said_without_cancel_my_account_is_retention(text):
    assert intent(text) == "retention" or leaves_in_context(text)


@pytest.mark.parametrize("text", [
    "can you cancel my order from Tuesday",
    "how do I close the app",
    "the line keeps dropping",
    "I moved house last month",
    "stop it sending me emails",
])
def test_a_cancelled_order_or_a_problem_is_not_leaving(text):
    assert intent(text) == "none" and not leaves_in_context(text)


def test_a_bare_close_it_is_leaving_in_a_conversation_about_leaving():
    keep = agent_facts("a1", "We could move you to a cheaper plan instead. Would that help?", "message")
    _, rules = _ctx("no thanks, just end it", keep)
    assert rules.explicit_intent == "retention"
    _, rules = _ctx("no, he has his own bank. close it please", earlier="the business account can be closed at the end of the year")
    assert rules.explicit_intent == "retention"
    _, rules = _ctx("close it please", agent_facts("a2", "I've opened a ticket for the leak.", "message"))
    assert rules.explicit_intent == "none"


@pytest.mark.parametrize("text", [
    "I'd still rather go through the whole account with one of your team on the phone",
    "I'd like a proper chat with one of your loans people about a second van",
    "Is there a grown-up in the building I could speak to?",
])
def test_a_chat_with_one_of_your_team_is_a_human_request(text):
    assert asks_for_person(text)


@pytest.mark.parametrize("text,yes", [
    ("reckon so, yeah", True),
    ("pode ser, sim", True),
    ("はい、お願いします", True),
    ("Да, пожалуйста", True),
    ("A PERSON. please.", False),
    ("looks right", False),
    ("not really, no", False),
    ("I don't think so, yeah", False),
])
def test_a_yes_said_last_or_in_another_script_is_a_short_yes(text, yes):
    from stores.decisions.signals import is_short_affirmative

    assert is_short_affirmative(text) is yes


def test_a_message_in_another_script_is_not_meaningless():
    from stores.decisions.signals import is_meaningless

    assert not is_meaningless("はい、お願いします") and not is_meaningless("Да, пожалуйста")
    assert is_meaningless("????") and is_meaningless("asdfgh") and is_meaningless("👍👍")
    _, rules = _ctx("はい、お願いします", OFFER)
    assert resolve(replace(stateless(rules), offer_on_record=True)).plan == "transfer"


# review of the eleventh round: what its readings must not read


@pytest.mark.parametrize("text", [
    "my broadband will stop working every night around 9", "my phone keeps dropping the line",
    "I switched the router to a new network and it still drops", "my subscription did not renew and now I have no access",
    "I don't want my account charged twice", "stop the box from rebooting please", "the box will go off by itself at night",
    "I do not use the line for calls, only internet"])
def test_a_problem_with_a_service_is_no_leaving(text):
    from stores.decisions.signals import intent

    assert intent(text) == "none"


@pytest.mark.parametrize("text", [
    "the card terminal rental can go", "his TV package can be cancelled", "the family plan with his line on it can end",
    "I won't renew the policy", "not renewing next year", "moving our savings to another bank", "stop her landline"])
def test_leaving_said_without_cancel_my_account_still_reads(text):
    from stores.decisions.signals import intent

    assert intent(text) == "retention"


def test_a_how_to_stop_question_is_no_leaving_in_context():
    from stores.decisions.signals import leaves_in_context

    assert not leaves_in_context("the box keeps beeping, how do I stop it?")
    assert leaves_in_context("let's drop the add-on, close it")


@pytest.mark.parametrize("text", ["are you sure?", "is that ok?", "对不起，还是不行", "是不是坏了", "好像不行", "ครับ"])
def test_a_question_or_a_no_in_another_script_is_no_short_yes(text):
    from stores.decisions.signals import is_short_affirmative

    assert not is_short_affirmative(text)


@pytest.mark.parametrize("text", ["my son set it up, I'll have a word with him tonight", "I will speak to her about the password"])
def test_a_word_with_a_relative_is_no_request_for_a_person(text):
    from stores.decisions.signals import asks_for_person

    assert not asks_for_person(text)


@pytest.mark.parametrize("text", ["super slow now", "sound is crackling", "sweet jesus it deleted everything"])
def test_an_approval_word_that_describes_is_no_thanks(text):
    assert thanks_after_fix(text, STEP) is None
    assert thanks_after_fix("that's grand now, ta", STEP) is not None


@pytest.mark.parametrize("text", ["Please hold while I check the order.", "Noted."])
def test_holding_or_noting_is_no_fix(text):
    assert fix_given(None, agent_facts("a4", text, "message")) is None

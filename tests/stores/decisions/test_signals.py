"""Producers report what they saw on one turn; scripted signals override one producer each."""

from __future__ import annotations

import pytest

from stores.decisions.signals import (
    ProducerParams, SignalError, Signals, TurnContext, agent_facts, intent, is_hostile, is_meaningless,
    is_short_affirmative, override, sensitivity,
)
from stores.decisions.signals import produce as _produce


def produce(ctx: TurnContext, params: ProducerParams = ProducerParams(front="rules")) -> Signals:
    """The producers these tests pin: the rules (a named variant; the learned default is tested in
    tests/stores/test_frontend.py)."""
    return _produce(ctx, params)


def answer(text, kind="message", **scripted):
    return agent_facts("a1", text, kind, scripted or None)


@pytest.mark.parametrize("text,severity", [
    ("I want to end my life", "crisis"),
    ("honestly I'm going to kill myself over this", "crisis"),
    ("thinking about suicide", "crisis"),
    ("my ex keeps threatening me through your app", "harm"),
    ("someone is stalking me using my order address", "harm"),
    ("this bug is killing me", "none"),
    ("where is my package", "none"),
])
def test_sensitive_reports_crisis_harm_or_none(text, severity):
    assert sensitivity(text) == severity


@pytest.mark.parametrize("text,expected", [
    ("I want to talk to a human", True),
    ("get me a real person", True),
    ("Just get me a person.", True),
    ("can I speak to a manager", True),
    ("connect me to an agent please", True),
    ("live chat?", True),
    ("my package never arrived", False),
    ("the human resources page is broken", False),  # once a known false positive: "human resources" is a department
    ("is there a human I can talk to", True),
    ("could you put me through to a manager, the fee is wrong", True),  # a person asked for by role
    ("Let me speak to your team leader.", True),
    ("can I talk to one of your colleagues instead", True),
    ("pls put me thru to the returns desk", True),  # being put through is being handed to someone
    ("is there anyone around who handles the family plan", True),  # the one who deals with it, asked for
    ("Could whoever looks after deliveries ring me?", True),
    ("who do I talk to about a quote for 30 licences?", False),  # a question, not a person asked for
    ("the courier who deals with our street is always late", False),
    ("I spoke to your manager yesterday and the fee is still there", False),  # who was spoken to, no request
    ("the team leader at the depot signed for it", False),
])
def test_human_request(text, expected):
    assert produce(TurnContext(text)).human_request is expected


@pytest.mark.parametrize("text,expected", [
    ("yes", True), ("Yep.", True), ("yes please", True), ("sure", True), ("ok go ahead", True),
    ("sounds good", True), ("yes I checked the lobby already", False), ("no", False),
    ("the first one", False), ("", False),
])
def test_short_affirmative(text, expected):
    assert is_short_affirmative(text) is expected


def test_short_affirmative_respects_the_word_limit():
    assert is_short_affirmative("yes i did that", max_words=4)
    assert not is_short_affirmative("yes i did that", max_words=3)


@pytest.mark.parametrize("text,expected", [
    ("this is useless", True), ("you are all idiots", True), ("WHY IS NOTHING WORKING HERE", True),
    ("wtf", True), ("I am a bit annoyed", False), ("NASA API", False), ("Where is my refund?", False),
])
def test_hostile(text, expected):
    assert is_hostile(text) is expected


@pytest.mark.parametrize("text,expected", [
    ("asdfgh", True), ("qwerty", True), ("jjjjjj", True), ("???", True), ("...", True), ("sdf", True),
    ("ok", False), ("hmm", False), ("my order 12345", False), ("why", False), ("yes", False),
])
def test_meaningless(text, expected):
    assert is_meaningless(text) is expected


@pytest.mark.parametrize("text,expected", [
    ("I'm talking to my lawyer about this", True), ("I will file a chargeback", True),
    ("this looks like fraud", True), ("how do I change my email", False),
])
def test_complexity_reads_the_latest_message(text, expected):
    assert produce(TurnContext(text)).complexity is expected


@pytest.mark.parametrize("text,expected", [
    ("my flight leaves in 2 hours and the ticket is missing", True), ("I need this asap", True),
    ("urgent: the payment failed", True), ("no rush, whenever", False),
])
def test_time_critical(text, expected):
    assert produce(TurnContext(text)).time_critical is expected


@pytest.mark.parametrize("text,expected", [
    ("recommend me a game", "recommendation"), ("what slots should I try tonight?", "recommendation"),
    ("I want to cancel my subscription", "retention"), ("my bonus for playing slots is broken", "none"),
])
def test_explicit_intent(text, expected):
    assert intent(text) == expected


def test_retrieval_empty_when_the_last_answer_found_nothing_and_the_customer_asks_again():
    empty = answer("Sorry, I couldn't find anything about Xero exports.")
    assert produce(TurnContext("where is the xero export then?", answer=empty)).retrieval_empty
    assert not produce(TurnContext("ok thanks", answer=empty)).retrieval_empty  # not asking again
    found = answer("Exports live under Settings > Integrations > Xero.")
    assert not produce(TurnContext("where is the xero export then?", answer=found)).retrieval_empty
    assert not produce(TurnContext("where is the xero export then?")).retrieval_empty  # nothing answered yet


def test_same_answer_repeated_compares_the_latest_answer_with_the_one_before():
    terms = "SPRING20 gives 20% off full-price items only, excluding sale items, once per account."
    again = "SPRING20 gives 20% off full-price items only, excluding sale items, once per account!"
    other = "Your cart has two sale items; remove them and SPRING20 applies to the rest."
    assert produce(TurnContext("still not working", answer=answer(again), previous_answer=answer(terms))).same_answer_repeated
    assert not produce(TurnContext("still not working", answer=answer(other), previous_answer=answer(terms))).same_answer_repeated
    assert not produce(TurnContext("still not working", answer=answer("ok"), previous_answer=answer("ok"))).same_answer_repeated


def test_resolved_confirmation_from_words_or_a_yes_to_did_that_fix_it():
    assert produce(TurnContext("thanks, that fixed it")).resolved_confirmation
    assert produce(TurnContext("it's working now, cheers")).resolved_confirmation
    assert not produce(TurnContext("that didn't fix it")).resolved_confirmation
    assert not produce(TurnContext("it's still not working now")).resolved_confirmation
    check = answer("A replacement ships today. Does that solve it for you?")
    assert produce(TurnContext("yes", answer=check)).resolved_confirmation
    question = answer("Have you checked with your neighbours?")
    assert not produce(TurnContext("yes", answer=question)).resolved_confirmation


def test_a_yes_answers_the_agents_question_unless_the_question_was_the_offer():
    assert produce(TurnContext("yes", answer=answer("Have you checked the lobby?"))).answers_question
    offer = answer("Would you like me to connect you with live support?")
    assert offer.offer_live and offer.asked_question
    assert not produce(TurnContext("yes", answer=offer)).answers_question


def test_a_complaint_is_a_reported_problem_not_a_question_or_a_thanks():
    assert produce(TurnContext("Also my invoice shows a double charge.")).complaint
    assert produce(TurnContext("the app crashes on login")).complaint
    assert not produce(TurnContext("how do I change my email?")).complaint
    assert not produce(TurnContext("thanks, that fixed it")).complaint
    assert not produce(TurnContext("I want to cancel my account")).complaint  # -nt words are not negations
    assert produce(TurnContext("the payment didnt go through")).complaint


def test_words_ending_in_nt_do_not_negate_a_confirmation():
    assert produce(TurnContext("it's working now, I just want to say thanks")).resolved_confirmation
    assert not produce(TurnContext("it doesnt work now")).resolved_confirmation


def test_agent_facts_read_offers_questions_and_empty_lookups():
    assert answer("I can connect you with a specialist if you like.").offer_live
    assert not answer("I have updated your address.").asked_question
    assert answer("I couldn't find an article on that.").no_answer
    assert not answer("Pushed the hotfix", kind="action").asked_question


def test_scripted_agent_signals_override_the_rules():
    f = answer("Shall I?", offer_live=True)
    assert f.offer_live and f.asked_question and f.scripted == ("offer_live",)
    assert not answer("Anything else?", asked_question=False).asked_question
    with pytest.raises(SignalError, match="unknown agent signal"):
        answer("hi", hostile=True)
    with pytest.raises(SignalError, match="expected true or false"):
        answer("hi", offer_live="yes")


def test_a_scripted_signal_overrides_that_producer_only():
    base = produce(TurnContext("asdfgh"))
    got = override(base, {"complexity": True}, "t1")
    assert got.complexity and got.meaningless and got.scripted == ("complexity",)
    assert override(base, {}) is base


def test_scripted_enums_must_use_known_values():
    assert override(Signals(), {"sensitive": "crisis", "explicit_intent": "retention"}).sensitive == "crisis"
    with pytest.raises(SignalError, match="expected one of none, harm, crisis"):
        override(Signals(), {"sensitive": "high"}, "t1")
    with pytest.raises(SignalError, match="explicit_intent"):
        override(Signals(), {"explicit_intent": "games"})


def test_scripted_signals_name_the_turn_on_an_unknown_key():
    with pytest.raises(SignalError, match=r"unknown signal 'angry' on turn 't9'"):
        override(Signals(), {"angry": True}, "t9")
    with pytest.raises(SignalError, match="expected true or false"):
        override(Signals(), {"hostile": "yes"})


def test_producer_params_are_checked():
    with pytest.raises(ValueError):
        ProducerParams(short_max_words=0)
    with pytest.raises(ValueError):
        ProducerParams(same_answer_similarity=0)

"""The learned decision signals read with the agent's latest turn (seventh round): a yes to the agent's
other question, a short yes to an offer, a fix confirmed right after the agent's step, a time named."""

from __future__ import annotations

from dataclasses import replace

import pytest

from stores.decisions.card import stateless
from stores.decisions.learned import AFTER_STEP_BAR, TIME_NAMED, combine, read_signals
from stores.decisions.resolver import resolve
from stores.decisions.signals import AgentFacts, ProducerParams, Signals, TurnContext, agent_facts, produce_rules
from stores.frontend.model import Reading
from test_frontend import _readings  # the front end's readings, every head sure unless told (tests/stores)

PARAMS = ProducerParams(front="learned")


def _ctx(text: str, answer: AgentFacts | None = None) -> tuple[TurnContext, Signals]:
    step = answer if answer is not None and answer.kind == "action" else None
    ctx = TurnContext(text, None if step else answer, step=step)
    return ctx, produce_rules(ctx)




OFFER = "Sorry about that. Would you like me to connect you with live support to rebook it?"


def test_an_offer_followed_by_another_question_leaves_the_yes_to_that_question():
    both = agent_facts("a1", "Would you like me to connect you with live support? First, is it the order ending 771?", "message")
    assert both.offer_live and both.asks_after_offer
    assert not agent_facts("a2", OFFER, "message").asks_after_offer
    assert not agent_facts("a3", "Is it the order ending 771? I can connect you with live support.", "message").asks_after_offer
    _, rules = _ctx("yes", both)
    assert rules.short_affirmative and rules.answers_question
    _, rules = _ctx("yes", agent_facts("a2", OFFER, "message"))
    assert not rules.answers_question


def test_a_yes_to_the_question_after_an_offer_does_not_transfer():
    both = agent_facts("a1", "Would you like me to connect you with live support? First, is it the order ending 771?", "message")
    _, rules = _ctx("yes", both)
    verdict = resolve(replace(stateless(rules), offer_on_record=True))
    assert (verdict.plan, verdict.rule) == ("continue", "affirmative_without_offer")
    _, rules = _ctx("yes", agent_facts("a2", OFFER, "message"))
    assert resolve(replace(stateless(rules), offer_on_record=True)).plan == "transfer"


def test_a_short_yes_to_an_offer_is_consent_unless_a_refusal_follows_it():
    offer = agent_facts("a1", OFFER, "message")
    for text in ("aye, set it up", "right, go ahead", "yes"):
        ctx, rules = _ctx(text, offer)
        s = combine(ctx, PARAMS, rules, _readings(affirmative=("no", 0.9)))
        assert s.short_affirmative and dict(s.readers)["short_affirmative"].startswith("rules: a short yes to the agent's offer")
    for text in ("yeah right", "sure, whatever", "yes, as if"):
        ctx, rules = _ctx(text, offer)
        s = combine(ctx, PARAMS, rules, _readings(affirmative=("yes", 0.9)))
        assert not s.short_affirmative and "follows it" in dict(s.readers)["short_affirmative"]
    ctx, rules = _ctx("aye, set it up")  # no offer: the head decides as before
    assert not combine(ctx, PARAMS, rules, _readings(affirmative=("no", 0.9))).short_affirmative


def test_a_fix_is_confirmed_at_a_lower_bar_right_after_the_agents_step():
    step = agent_facts("a1", "Reset the colour profile on your printer.", "action")
    ctx, rules = _ctx("colour's back", step)
    assert not rules.resolved_confirmation
    unsure = _readings(resolved=(None, 0.55))
    s = combine(ctx, PARAMS, rules, unsure, resolved_yes=AFTER_STEP_BAR + 0.01)
    assert s.resolved_confirmation and "after the agent's step a1" in dict(s.readers)["resolved_confirmation"]
    assert not combine(ctx, PARAMS, rules, unsure, resolved_yes=AFTER_STEP_BAR - 0.01).resolved_confirmation
    said = agent_facts("a2", "Try resetting the colour profile.", "message")  # a suggestion, not a step taken
    ctx, rules = _ctx("colour's back", said)
    assert not combine(ctx, PARAMS, rules, unsure, resolved_yes=0.6).resolved_confirmation


class _Front:
    """A learned front end stand-in: every head unsure, `resolved` yes at a given probability."""

    def __init__(self, p_yes: float):
        self.p_yes, self.asked = p_yes, []

    def read_all(self, heads, text):
        return {h: Reading(h, None, 0.5, 0.6) for h in heads}

    def proba(self, head, text):
        self.asked.append(head)
        return {"yes": self.p_yes, "no": 1 - self.p_yes}


def test_the_transcript_keeps_the_agents_step_until_the_customer_replies():
    from stores.decisions.transcript import Transcript

    t = Transcript()
    t.agent("s1", agent_facts("a1", "Could you restart it?", "message"))
    t.agent("s1", agent_facts("a2", "Restarted your router from our side.", "action"))
    ctx = t.context("s1", "all green now")
    assert ctx.step is not None and ctx.step.turn_id == "a2" and ctx.answer.turn_id == "a1"
    t.customer("s1")
    assert t.context("s1", "and the other one?").step is None


def test_read_signals_reads_the_resolved_probability_only_after_a_step(monkeypatch):
    from stores.decisions import learned as fd

    front = _Front(0.5)
    monkeypatch.setattr(fd, "front_end", lambda: front)
    monkeypatch.setattr(fd, "floor_reading", lambda f, text, answer=None, earlier=None: Reading("disclosure", "none", 0.9, 0.7))
    ctx, rules = _ctx("all green now", agent_facts("a1", "Restarted your router from our side.", "action"))
    assert read_signals(ctx, PARAMS, rules).resolved_confirmation
    ctx, rules = _ctx("all green now", agent_facts("a2", "Could you restart the router?", "message"))
    front.asked.clear()
    assert not read_signals(ctx, PARAMS, rules).resolved_confirmation and front.asked == []


@pytest.mark.parametrize("text,named", [
    ("You lot are a shambles. Amateur hour from start to finish.", False),
    ("the ceremony starts in two hours", True),
    ("I need it within the hour", True),
    ("we waited half an hour", True),
    ("delivery by 5 please", True),
])
def test_minutes_and_hours_name_a_time_only_with_a_quantity(text, named):
    assert bool(TIME_NAMED.search(text.lower())) is named


def test_a_short_answer_to_the_agents_question_is_not_a_person_asked_for():
    q = agent_facts("a1", "Sorry. Which booking is this?", "message")
    ctx, rules = _ctx("the van hire, ref VH-1182", q)
    s = combine(ctx, PARAMS, rules, _readings(human_request=("yes", 0.86)))
    assert not s.human_request and "a short answer to the agent's question a1" in dict(s.readers)["human_request"]
    ctx, rules = _ctx("can someone from accounts ring me", agent_facts("a2", "What's happened?", "message"))
    assert combine(ctx, PARAMS, rules, _readings(human_request=("yes", 0.86))).human_request  # an open question
    ctx, rules = _ctx("a real person please", q)
    assert rules.human_request and combine(ctx, PARAMS, rules, _readings(human_request=("no", 0.9))).human_request


class _Validated:
    """A front end stand-in whose heads carry only their validation figures."""

    def __init__(self, precision: dict[str, float]):
        self.heads = {h: type("H", (), {"validation": {"yes": {"precision": p}}})() for h, p in precision.items()}


def test_a_head_less_precise_than_the_bar_adds_no_yes_to_the_rules():
    from stores.decisions.learned import ADD_PRECISION, weak_adds

    front = _Validated({"human_request": 0.82, "hostile": 0.7, "complexity": ADD_PRECISION - 0.01})
    out = weak_adds(front, _readings(human_request=("yes", 0.7), complexity=("yes", 0.7)))
    assert out["human_request"].label == "yes"
    assert out["complexity"].label is None and "validation precision 0.49" in out["complexity"].describe()
    ctx, rules = _ctx("the heat pump shows error E7")
    assert not combine(ctx, PARAMS, rules, out).complexity
    ctx, rules = _ctx("I'll see you in court over this")  # the rules' yes still stands
    assert rules.complexity and combine(ctx, PARAMS, rules, out).complexity


def test_a_later_day_with_nothing_of_today_is_a_date_that_can_wait():
    ctx, rules = _ctx("can the fridge come before noon on Thursday?")
    s = combine(ctx, PARAMS, rules, _readings(time_critical=("yes", 0.8)))
    assert not s.time_critical and "a later day is named" in dict(s.readers)["time_critical"]
    ctx, rules = _ctx("the van leaves in 20 minutes and it's Thursday's booking that vanished")
    assert combine(ctx, PARAMS, rules, _readings(time_critical=("yes", 0.8))).time_critical


def test_a_bare_negation_in_a_message_about_leaving_is_no_complaint():
    ctx, rules = _ctx("my contract ends in October and I'm not carrying on. what happens then?")
    s = combine(ctx, PARAMS, rules, _readings(intent=("retention", 0.9), complaint=(None, 0.54)))
    assert s.explicit_intent == "retention" and not s.complaint and "about leaving" in dict(s.readers)["complaint"]
    s = combine(ctx, PARAMS, rules, _readings(intent=("none", 0.9), complaint=(None, 0.54)))
    assert s.complaint  # not about leaving: the bare negation reads as before (the rules' yes when unsure)
    ctx, rules = _ctx("I'm leaving because the app is broken and crashes daily")
    assert combine(ctx, PARAMS, rules, _readings(intent=("retention", 0.9), complaint=(None, 0.5))).complaint


def test_a_reason_for_leaving_the_complaint_head_alone_reads_is_no_complaint():
    text = "the pool I use closed for good, so the swim card's no use to me now. how do I stop paying?"
    ctx, rules = _ctx(text)
    s = combine(ctx, PARAMS, rules, _readings(intent=("retention", 0.95), complaint=("yes", 0.75)))
    assert not s.complaint and "a reason for leaving" in dict(s.readers)["complaint"]
    assert combine(ctx, PARAMS, rules, _readings(intent=("none", 0.9), complaint=("yes", 0.75))).complaint  # not leaving
    ctx, rules = _ctx("I want to cancel, the app is broken and crashes daily")  # a problem in the words stays one
    assert combine(ctx, PARAMS, rules, _readings(intent=("retention", 0.95), complaint=("yes", 0.75))).complaint


def test_closing_the_account_is_a_retention_request_in_the_rules_words():
    from stores.decisions.signals import intent

    assert intent("how do I close the account") == "retention"
    assert intent("can we cancel our subscription") == "retention"
    assert intent("how do I close the app") == "none"


def test_a_person_asked_for_right_after_an_offer_accepts_it():
    offer = agent_facts("a1", OFFER, "message")
    ctx, rules = _ctx("yeah grand, hook me up with them", offer)
    s = combine(ctx, PARAMS, rules, _readings(human_request=("yes", 0.9), affirmative=("no", 0.75)))
    assert s.short_affirmative and "right after the agent's offer" in dict(s.readers)["short_affirmative"]
    assert resolve(replace(stateless(s), offer_on_record=True)).plan == "transfer"
    ctx, rules = _ctx("no, I don't want to talk to a person", offer)
    assert not combine(ctx, PARAMS, rules, _readings(human_request=("yes", 0.9))).short_affirmative
    ctx, rules = _ctx("yeah grand, hook me up with them")  # no offer: a first request, to clarify
    assert not combine(ctx, PARAMS, rules, _readings(human_request=("yes", 0.9))).short_affirmative


@pytest.mark.parametrize("text", ["ja bitte", "sim, pode ser", "oui merci", "yebo", "sí, claro", "haan ji", "igen, köszönöm", "joo kiitos"])
def test_yes_in_the_languages_customers_switch_to_is_a_short_yes(text):
    from stores.decisions.signals import is_short_affirmative

    assert is_short_affirmative(text)


def test_a_problem_reported_right_after_a_step_takes_no_fix_from_the_lowered_bar():
    step = agent_facts("a1", "Pushed the latest update to your speaker.", "action")
    unsure = _readings(resolved=(None, 0.55))
    ctx, rules = _ctx("Also the bill has a double charge for May.", step)
    s = combine(ctx, PARAMS, rules, unsure, resolved_yes=AFTER_STEP_BAR + 0.05)
    assert not s.resolved_confirmation and "reports a problem" in dict(s.readers)["resolved_confirmation"]
    ctx, rules = _ctx("speaker's back on the wifi", step)  # no problem word: the lowered bar reads it
    assert combine(ctx, PARAMS, rules, unsure, resolved_yes=AFTER_STEP_BAR + 0.05).resolved_confirmation
    ctx, rules = _ctx("not a peep out of it since, ta", step)  # a bare negation is no problem reported
    assert combine(ctx, PARAMS, rules, unsure, resolved_yes=AFTER_STEP_BAR + 0.05).resolved_confirmation


@pytest.mark.parametrize("text", [
    "ta very much, now the playlist has emptied itself 🙄",
    "the heater's on again, cheers, but now the timer resets every hour",
    "lovely. now it can't see the printer at all",
    "amazing work, still buffering. top job",
])
def test_a_clause_saying_the_problem_goes_on_after_the_fix_is_no_confirmation(text):
    ctx, rules = _ctx(text)
    s = combine(ctx, PARAMS, rules, _readings(resolved=("yes", 0.95)))
    assert not s.resolved_confirmation and "goes on after the fix" in dict(s.readers)["resolved_confirmation"]


@pytest.mark.parametrize("text", [
    "cheers, now it works", "all good, now I can print again", "still going strong after a week, thanks",
    "working now, thank you", "Thanks. Now could you check my other order?",
])
def test_a_fix_said_with_now_or_still_is_still_a_confirmation(text):
    ctx, rules = _ctx(text)
    assert combine(ctx, PARAMS, rules, _readings(resolved=("yes", 0.95))).resolved_confirmation


def test_a_short_answer_to_the_agents_specific_question_is_no_confirmation():
    question = agent_facts("a1", "Is the cable plugged into the back of the router?", "message")
    ctx, rules = _ctx("yep it's in 👍", question)
    s = combine(ctx, PARAMS, rules, _readings(resolved=("yes", 0.9)))
    assert not s.resolved_confirmation and "short answer to the agent's question a1" in dict(s.readers)["resolved_confirmation"]
    ctx, rules = _ctx("yep it's in 👍")  # no question before it: the head decides as before
    assert combine(ctx, PARAMS, rules, _readings(resolved=("yes", 0.9))).resolved_confirmation
    check = agent_facts("a2", "Did that fix it?", "message")
    ctx, rules = _ctx("yes, all working", check)  # a yes to the resolution check is the rules' confirmation
    assert combine(ctx, PARAMS, rules, _readings(resolved=("yes", 0.9))).resolved_confirmation


class _HostileFront:
    """A front end whose `hostile` head gives each text its own probability of yes (sure at 0.6)."""

    def __init__(self, p_yes: dict[str, float]) -> None:
        self.p_yes, self.asked = p_yes, []

    def proba(self, head: str, text: str) -> dict[str, float]:
        self.asked.append(text)
        return {"yes": self.p_yes[text], "no": 1 - self.p_yes[text]}

    def read(self, head: str, text: str) -> Reading:
        p = self.proba(head, text)["yes"]
        return Reading(head, "yes" if p >= 0.6 else None, p, 0.6)


SCORN = "Is incompetence part of the job description?"
AGAIN = "Save it. A vending machine would give better service than your whole company."


def test_an_unsure_follow_up_of_a_hostile_message_is_hostile():
    from stores.decisions.learned import FOLLOW_UP_HOSTILE_BAR, after_hostile

    front = _HostileFront({SCORN: 0.93, AGAIN: 0.59, "Fine, it's order 88213.": 0.2, "What a circus.": 0.58})
    unsure = Reading("hostile", None, 0.59, 0.6)
    assert after_hostile(front, unsure, AGAIN, SCORN) == pytest.approx(0.59)  # scorn said twice: the streak
    assert after_hostile(front, unsure, AGAIN, "Fine, it's order 88213.") is None  # the previous one was not hostile
    assert after_hostile(front, unsure, AGAIN, "this app is useless") == pytest.approx(0.59)  # hostile by its words
    assert after_hostile(front, unsure, AGAIN, None) is None  # the customer's first message
    front.p_yes[AGAIN] = FOLLOW_UP_HOSTILE_BAR - 0.01
    assert after_hostile(front, unsure, AGAIN, SCORN) is None  # under the bar
    front.asked.clear()
    assert after_hostile(front, Reading("hostile", "no", 0.9, 0.6), AGAIN, SCORN) is None and front.asked == []  # sure: no read
    ctx, rules = _ctx(AGAIN)
    s = combine(ctx, PARAMS, rules, _readings(hostile=(None, 0.59)), hostile_after=0.59)
    assert s.hostile and "previous message was hostile" in dict(s.readers)["hostile"]
    assert not combine(ctx, PARAMS, rules, _readings(hostile=(None, 0.59))).hostile

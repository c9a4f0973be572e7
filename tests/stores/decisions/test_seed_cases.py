"""The seed's examples, turn by turn, through `session_state` (on both lockers) and `per_message`."""

from __future__ import annotations

from datetime import timedelta

from .chat import a, act, c, fault, play, plans, rules

from stores.decisions.per_message import PerMessage, PerMessageParams

PACKAGE = c("My package says delivered but it never arrived.")


def test_yes_after_a_question_is_a_data_point(session_state):
    chat = [PACKAGE, a("Sorry! Have you checked with your neighbours or the building's lobby?"), c("yes")]
    assert plans(play(session_state(), chat)) == ["continue", "continue"]
    assert rules(play(session_state(), chat))[-1] == "affirmative_without_offer"
    assert plans(play(PerMessage(), chat))[-1] == "transfer"  # the seed's false transfer


def test_yes_after_the_offer_is_a_transfer(session_state):
    chat = [PACKAGE, a("I've opened a carrier trace. Would you like me to connect you with live support?"), c("yes")]
    got = play(session_state(), chat)
    assert (got[-1].plan, got[-1].rule) == ("transfer", "offer_acceptance")
    assert plans(play(PerMessage(), chat))[-1] == "transfer"


def test_yes_after_did_that_fix_it_is_a_goodbye(session_state):
    chat = [PACKAGE, act("Reissued the order with express shipping."),
            a("A replacement arrives tomorrow morning. Does that solve it for you?"), c("yes")]
    assert plans(play(session_state(), chat))[-1] == "csat"
    assert plans(play(PerMessage(), chat))[-1] == "transfer"


def test_the_offer_expires_and_a_late_yes_stays_in_the_thread(session_state):
    chat = [PACKAGE, a("Would you like me to connect you with live support?"), c("yes", after=timedelta(minutes=20))]
    assert plans(play(session_state(), chat))[-1] == "continue"
    assert plans(play(session_state(offer_ttl_minutes=30), chat))[-1] == "transfer"


def test_a_human_asked_for_twice_in_an_hour_then_again_the_next_day(session_state):
    chat = [c("I want to talk to a human."), a("Happy to help, what do you need?"),
            c("Just get me a real person.", after=timedelta(minutes=10)),
            c("Can I speak to a person again?", after=timedelta(days=1))]
    got = play(session_state(), chat)
    assert plans(got) == ["clarify", "transfer", "clarify"]
    assert rules(got) == ["first_human_request", "repeat_human_request", "first_human_request"]
    assert plans(play(PerMessage(), chat)) == ["transfer", "transfer", "transfer"]


def test_hostile_hostile_calm_hostile_hostile(session_state):
    chat = [c("this is useless"), c("you are all idiots"), c("ok, where is my refund?"), c("pathetic service"),
            c("absolute garbage")]
    got = play(session_state(), chat)
    assert plans(got) == ["continue", "transfer", "continue", "continue", "transfer"]
    assert [d.locker_after["hostile_streak"].value if "hostile_streak" in d.locker_after else "0" for d in got] \
        == ["1", "2", "0", "1", "2"]
    assert plans(play(PerMessage(), chat)) == ["transfer", "transfer", "continue", "transfer", "transfer"]


def test_the_hostile_threshold_is_a_parameter(session_state):
    chat = [c("this is useless"), c("you are all idiots"), c("pathetic service")]
    assert plans(play(session_state(hostile_streak=3), chat)) == ["continue", "continue", "transfer"]


def test_three_empty_retrievals_in_a_row_force_a_transfer(session_state):
    miss = "Sorry, I couldn't find anything about that."
    chat = [c("How do I export invoices to Xero?"), a(miss), c("It should be under integrations?"), a(miss),
            c("Xero. Invoice export. Where?"), a(miss), c("Hello? The Xero export?")]
    got = play(session_state(), chat)
    assert plans(got) == ["continue", "continue", "continue", "transfer"]
    assert rules(got)[-1] == "empty_retrieval_streak"
    assert plans(play(session_state(empty_retrieval_streak=2), chat)) == ["continue", "continue", "transfer", "transfer"]
    assert plans(play(PerMessage(), chat)) == ["continue", "offer_live", "offer_live", "offer_live"]


def test_an_answer_resets_the_empty_retrieval_streak(session_state):
    miss = "Sorry, I couldn't find anything about that."
    chat = [c("How do I export to Xero?"), a(miss), c("under integrations?"), a(miss),
            c("what about CSV then?"), a("CSV export is under Reports > Export."), c("and Xero?"), a(miss), c("Xero?")]
    assert plans(play(session_state(), chat)) == ["continue"] * 5


TERMS = "SPRING20 gives 20% off full-price items only, excluding sale items, once per account."


def test_the_same_promo_terms_restated_offer_live_support_once_per_window(session_state):
    chat = [c("Why wasn't my promo code SPRING20 applied?"), a(TERMS), c("But my cart has full-price items."), a(TERMS),
            c("I know, it still doesn't work."), a(TERMS), c("It's still not applying!"),
            a("I can connect you with live support if you'd like."), c("no, just tell me why it fails"), a(TERMS),
            c("again?"), a(TERMS), c("same thing"), a(TERMS), c("still the same")]
    got = play(session_state(), chat)
    assert plans(got) == ["continue", "continue", "continue", "offer_live", "continue", "continue", "continue", "continue"]
    assert rules(got)[3] == "stuck_offer" and rules(got)[-1] == "offer_already_on_record"
    assert "offer_live" not in plans(play(PerMessage(), chat))  # per message, every answer looked fine


def test_asdfgh_is_not_a_complexity_case(session_state):
    chat = [c("My order is late."), a("Let me check that for you."), c("asdfgh", {"complexity": True})]
    got = play(session_state(), chat)
    assert (got[-1].plan, got[-1].rule) == ("continue", "meaningless")
    assert plans(play(PerMessage(), chat))[-1] == "transfer"


def test_thanks_that_fixed_it_while_a_second_complaint_is_open(session_state):
    chat = [c("The app crashes when I open settings."), act("Pushed the 4.2.1 hotfix to your account."),
            a("Please restart the app and try again."), c("Also, my invoice shows a double charge this month."),
            a("I'll look into the charge right after this."), c("Thanks, that fixed it, settings open now.")]
    got = play(session_state(), chat)
    assert (got[-1].plan, got[-1].rule) == ("continue", "complaint_live")
    assert plans(play(PerMessage(), chat))[-1] == "csat"  # a survey mid-complaint


def test_thanks_that_fixed_it_with_nothing_else_open_fires_the_survey(session_state):
    chat = [c("The app crashes when I open settings."), act("Pushed the 4.2.1 hotfix to your account."),
            a("Please restart the app and try again."), c("Thanks, that fixed it!")]
    assert plans(play(session_state(), chat)) == ["continue", "csat"]


def test_an_angry_customer_confirming_a_fix_gets_no_survey(session_state):
    chat = [c("this app is garbage, it crashes"), act("Cleared the app cache remotely."), c("you idiots, fine, that fixed it")]
    assert plans(play(session_state(), chat))[-1] != "csat"


def test_complexity_and_time_critical_are_judged_on_the_latest_message_only(session_state):
    chat = [c("I'll get my lawyer involved if this isn't fixed!"), a("I understand, let me look."), c("ok, the tracking number is 4471")]
    assert plans(play(session_state(), chat)) == ["transfer", "continue"]
    chat = [c("my flight leaves in 2 hours and the ticket is missing"), a("Found it, resent to your email."), c("got it, thanks")]
    assert plans(play(session_state(), chat)) == ["transfer", "continue"]


def test_routing_follows_the_seeds_order(session_state):
    chat = [c("my bonus for playing slots is broken", {"explicit_intent": "recommendation"}),
            a("Sorry about that, I've re-credited the bonus."), c("recommend me a game"),
            a("Sure! Do you like classic slots or live tables?"), c("the first one"), c("what are your opening hours?")]
    got = play(session_state(), chat)
    assert [(d.route, d.route_rule) for d in got] == [
        ("knowledge", "support_context"), ("recommendation", "explicit_intent"),
        ("recommendation", "continuity"), ("knowledge", "default")]
    assert [d.route for d in play(PerMessage(), chat)] == ["recommendation", "recommendation", "knowledge", "knowledge"]


def test_sensitive_escalates_now_whatever_else_is_on_record(session_state):
    chat = [c("I want a human"), a("Would you like me to connect you with live support?"),
            c("someone is threatening me through your app, yes")]
    got = play(session_state(), chat)[-1]
    assert (got.plan, got.escalation) == ("escalate", "harm")


def test_the_same_chat_gives_the_same_decisions_on_memory_and_on_redis(redis_server):
    from stores.decisions.redis_locker import RedisLocker
    from stores.decisions.session_state import SessionState

    chat = [PACKAGE, a("Have you checked the lobby?"), c("yes"), c("this is useless"), c("idiots"),
            a("Would you like me to connect you with live support?"), c("yes"), c("I want a human"),
            c("a human!", after=timedelta(minutes=30)), c("thanks, that fixed it")]
    mem = play(SessionState(), chat)
    red = play(SessionState(locker=RedisLocker(redis_server.url, namespace="same")), chat)
    assert [(d.plan, d.rule, d.route, d.locker_before, d.locker_after) for d in mem] == \
        [(d.plan, d.rule, d.route, d.locker_before, d.locker_after) for d in red]


def test_per_message_variants_switch_its_branches():
    chat = [PACKAGE, a("Have you checked the lobby?"), c("yes"), c("you idiots")]
    assert plans(play(PerMessage(PerMessageParams(transfer_on_affirmative=False, transfer_on_hostile=False)), chat)) \
        == ["continue", "continue", "continue"]


def test_per_message_ignores_locker_faults():
    chat = [c("I want a human"), fault("locker_down"), c("yes")]
    assert plans(play(PerMessage(), chat)) == ["transfer", "transfer"]

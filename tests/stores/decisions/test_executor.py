"""The executor acts once per turn, alone writes the locker after the act, and fails open."""

from __future__ import annotations

from datetime import timedelta

import pytest
from .chat import T0, a, c, fault, play, plans, rules

from stores.decisions import keys
from stores.decisions.executor import Executor
from stores.decisions.locker import Locker
from stores.decisions.params import SessionStateParams
from stores.decisions.session_state import SessionState
from stores.decisions.signals import Signals
from stores.protocol import Turn


def customer(text, minutes=1, session="s1"):
    return Turn(f"{session}#{minutes}", "c1", session, "customer", "message", text, T0 + timedelta(minutes=minutes))


def test_it_acts_once_and_writes_the_locker_only_after_the_act(new_locker):
    lk = new_locker()
    seen = []

    def act(decision):
        seen.append((decision.plan, lk.snapshot("s1", now=decision.at)))

    ex = Executor(lk, SessionStateParams(), act)
    d1 = ex.decide(customer("you idiots", 1), Signals(hostile=True))
    d2 = ex.decide(customer("useless", 2), Signals(hostile=True))
    assert [p for p, _ in seen] == ["continue", "transfer"]
    assert keys.HOSTILE_STREAK not in seen[0][1]  # at the first act nothing was recorded yet
    assert seen[1][1][keys.HOSTILE_STREAK].value == "1"  # at the second, only the first turn
    assert d2.locker_before == seen[1][1] and d2.locker_after[keys.HOSTILE_STREAK].value == "2"
    assert d1.locker_after == d2.locker_before


def test_a_clean_turn_resets_the_streak_and_a_meaningless_one_leaves_it(new_locker):
    ex = Executor(new_locker(), SessionStateParams())
    ex.decide(customer("idiots", 1), Signals(hostile=True))
    assert ex.decide(customer("asdfgh", 2), Signals(meaningless=True)).locker_after[keys.HOSTILE_STREAK].value == "1"
    assert keys.HOSTILE_STREAK not in ex.decide(customer("where is it", 3), Signals()).locker_after


def test_the_offer_claim_is_taken_before_the_offer_is_made(new_locker):
    lk = new_locker()
    at_act = []
    ex = Executor(lk, SessionStateParams(), lambda d: at_act.append(lk.snapshot("s1", now=d.at)))
    ex.decide(customer("same again", 1), Signals(same_answer_repeated=True))
    d = ex.decide(customer("same again", 2), Signals(same_answer_repeated=True))
    assert d.plan == "offer_live" and keys.OFFER_MADE in at_act[-1]


class _Rival(Locker):
    """A real locker beside which another replica takes the offer claim between our read and our claim."""

    def __init__(self, inner):
        self.inner = inner

    def snapshot(self, session, *, now):
        snap = self.inner.snapshot(session, now=now)
        self.inner.claim(session, keys.OFFER_MADE, now=now, ttl=timedelta(minutes=15), value="rival")
        return snap

    def incr(self, *a, **k):
        return self.inner.incr(*a, **k)

    def zero(self, *a, **k):
        self.inner.zero(*a, **k)

    def put(self, *a, **k):
        self.inner.put(*a, **k)

    def claim(self, *a, **k):
        return self.inner.claim(*a, **k)

    def clear(self):
        self.inner.clear()


def test_a_lost_claim_turns_the_offer_into_silence(new_locker):
    lk = new_locker()
    lk.incr("s1", keys.SAME_ANSWER_STREAK, now=T0, ttl=timedelta(hours=1))
    d = Executor(_Rival(lk), SessionStateParams()).decide(customer("still stuck"), Signals(same_answer_repeated=True))
    assert (d.plan, d.proposed, d.rule) == ("continue", "offer_live", "offer_already_on_record")
    assert "another replica" in d.log[0]
    assert lk.snapshot("s1", now=T0)[keys.OFFER_MADE].value == "rival"


def test_the_decision_names_its_rule_and_route():
    d = SessionState().decide(customer("recommend me a game"))
    assert (d.plan, d.rule, d.route, d.route_rule) == ("continue", "continue", "recommendation", "explicit_intent")


LOCKER_DEPENDENT = [
    # (what happens before the outage, the turn during it, what it would have been with the locker up)
    ([c("I want a human"), a("Sure, what do you need?")], c("get me a human NOW"), "transfer"),
    ([c("is my order late?"), a("Would you like me to connect you with live support?")], c("yes"), "transfer"),
    ([c("you idiots")], c("useless bot"), "transfer"),
    ([c("thanks, that fixed it")], c("thanks, that fixed it"), "csat"),
    ([c("my card was charged twice")], c("I'll file a chargeback with my bank"), "transfer"),
]


@pytest.mark.parametrize("before,during,normally", LOCKER_DEPENDENT)
def test_a_down_locker_takes_no_transfer_offer_or_survey(session_state, before, during, normally):
    assert plans(play(session_state(), before + [during]))[-1] == normally
    got = play(session_state(), before + [fault("locker_down"), during])[-1]
    assert (got.plan, got.rule, got.card.locker) == ("continue", "locker_down", "down")
    assert got.locker_before is None and got.locker_after is None
    assert any("locker down" in line for line in got.log)


def test_a_sensitive_message_still_escalates_while_the_locker_is_down(session_state):
    got = play(session_state(), [fault("locker_down"), c("I want to end my life")])[-1]
    assert (got.plan, got.escalation, got.rule) == ("escalate", "crisis", "sensitive")


def test_the_locker_comes_back_with_what_it_held_after_an_injected_outage(session_state):
    got = play(session_state(), [c("I want a human"), fault("locker_down"), c("a human please"), fault("locker_up"),
                                 c("human, now")])
    assert plans(got) == ["clarify", "continue", "transfer"]


def test_fail_open_on_a_real_redis_server_stopped_mid_chat(redis_server):
    from stores.decisions.redis_locker import RedisLocker

    policy = SessionState(locker=RedisLocker(redis_server.url, namespace="failopen"))
    got = play(policy, [
        c("I want to talk to a human"),                       # first ask: clarify, the flag is written
        a("Happy to help, what do you need?"),
        fault(redis_server.stop),
        c("just get me a human"),                              # repeat ask, but the locker is unreachable
        c("you useless idiots"),
        c("useless, USELESS"),                                 # a hostile streak it cannot count
        c("I want to end my life"),                            # needs no state: escalates
        a("Would you like me to connect you with live support?"),
        c("yes"),                                              # no proof of offer: no transfer
        fault(redis_server.start),
        c("hello?"),                                           # back: the restarted server holds nothing
        c("I want a human"),                                   # so this is a first ask again
    ])
    assert plans(got) == ["clarify", "continue", "continue", "continue", "escalate", "continue", "continue", "clarify"]
    assert rules(got)[1:4] == ["locker_down"] * 3 and rules(got)[5] == "locker_down"
    assert all(any("unreachable" in line for line in d.log) for d in got[1:6])
    assert got[6].locker_before == {} and got[6].locker_after is not None
    policy.close()

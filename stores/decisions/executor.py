"""The executor of the `session_state` policy: it acts once per turn and alone writes the locker.

On a customer turn it reads the locker once, folds the card, asks the resolver, carries out the
plan, and only then records what happened (counters, the human-request flag, open complaints,
the thread owner). The offer is the one act whose record is part of the act: the claim is taken
atomically before the offer is made, so two replicas can never both offer, and a lost claim
turns the offer into silence (`continue`).

Fail open: when the locker cannot be reached (an injected `locker_down`, a stopped Redis), the
card says so and the resolver lets nothing that needs the locker act: no transfer, no offer, no
survey. A sensitive message still escalates, because that rule reads no state. The outage is
written into the decision's `log`, every write of the turn is skipped, and the decision is still
returned: an infrastructure hiccup never raises into the conversation.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable

from stores.protocol import Turn

from stores.decisions import keys
from stores.decisions.card import situation
from stores.decisions.decision import AgentNote, Decision
from stores.decisions.locker import Entry, Locker, LockerDown
from stores.decisions.params import SessionStateParams
from stores.decisions.resolver import resolve, route
from stores.decisions.signals import AgentFacts, Signals

Act = Callable[[Decision], None]
"""Carries out a decided plan (sends the reply, hands over, fires the survey)."""


class Executor:
    """Acts once per turn; the only writer of its locker (see the module docstring)."""

    def __init__(self, locker: Locker, params: SessionStateParams, act: Act | None = None) -> None:
        self.locker = locker
        self.params = params
        self._act = act

    def _read(self, session: str, now, log: list[str]) -> dict[str, Entry] | None:
        try:
            return self.locker.snapshot(session, now=now)
        except LockerDown as exc:
            log.append(f"locker down, state unread: {exc}")
            return None

    def decide(self, turn: Turn, signals: Signals) -> Decision:
        """Decide one customer turn, act on it, then record it in the locker."""
        log: list[str] = []
        before = self._read(turn.session, turn.at, log)
        card = situation(signals, before, self.params, "up" if before is not None else "down")
        verdict, where = resolve(card), route(card)
        plan, rule, why, proposed = verdict.plan, verdict.rule, verdict.why, None
        if plan == "offer_live":
            try:
                claimed = self.locker.claim(turn.session, keys.OFFER_MADE, now=turn.at, ttl=self.params.offer_ttl)
            except LockerDown as exc:
                log.append(f"locker down while claiming the offer: no offer made ({exc})")
                plan, rule, why, proposed = "continue", "locker_down", "the locker failed while claiming the offer", plan
            else:
                if not claimed:
                    log.append("offer claim already held: another replica offered inside the window")
                    plan, rule, why, proposed = "continue", "offer_already_on_record", "live support was already offered in this window", plan
        decision = Decision(
            turn_id=turn.id, session=turn.session, at=turn.at, text=turn.text, signals=signals, card=card,
            plan=plan, rule=rule, why=why, route=where.route, route_rule=where.rule, escalation=verdict.escalation,
            proposed=proposed, locker_before=before,
        )
        if self._act is not None:
            self._act(decision)
        after = self._record(turn, signals, decision, log) if before is not None else None
        if before is None:
            log.append("locker down: this turn's writes skipped")
        return replace(decision, locker_after=after, log=tuple(log))

    def _record(self, turn: Turn, s: Signals, d: Decision, log: list[str]) -> dict[str, Entry] | None:
        """The turn's writes, after the act; a failure stops them and is logged."""
        lk, sid, now, ttl = self.locker, turn.session, turn.at, self.params.session_ttl
        try:
            if not s.meaningless:  # a keyboard mash is neither a clean turn nor a bad one
                for key, on in ((keys.HOSTILE_STREAK, s.hostile), (keys.EMPTY_RETRIEVAL_STREAK, s.retrieval_empty),
                                (keys.SAME_ANSWER_STREAK, s.same_answer_repeated)):
                    lk.incr(sid, key, now=now, ttl=ttl) if on else lk.zero(sid, key, now=now)
                if s.human_request:
                    lk.put(sid, keys.HUMAN_REQUESTED, "1", now=now, ttl=self.params.human_request_ttl)
                if s.complaint or s.hostile:
                    lk.incr(sid, keys.OPEN_COMPLAINTS, now=now, ttl=ttl)
                    lk.incr(sid, keys.COMPLAINTS_SINCE_REPLY, now=now, ttl=ttl)
            lk.put(sid, keys.THREAD_OWNER, d.route, now=now, ttl=ttl)
            return lk.snapshot(sid, now=now)
        except LockerDown as exc:
            log.append(f"locker down after the act: remaining writes skipped ({exc})")
            return None

    def observe_agent(self, turn: Turn, facts: AgentFacts) -> AgentNote:
        """Record an agent turn: an offer it made takes the claim (as if decided here); any reply
        answers the complaints before it, and an action (a step tried) the open ones."""
        log: list[str] = []
        lk, sid, now = self.locker, turn.session, turn.at
        before = self._read(sid, now, log)
        after = None
        if before is not None:
            try:
                if facts.offer_live:
                    lk.claim(sid, keys.OFFER_MADE, now=now, ttl=self.params.offer_ttl)
                lk.zero(sid, keys.COMPLAINTS_SINCE_REPLY, now=now)
                if facts.kind == "action":
                    lk.zero(sid, keys.OPEN_COMPLAINTS, now=now)
                    lk.put(sid, keys.AGENT_ACTED, "1", now=now, ttl=self.params.session_ttl)
                after = lk.snapshot(sid, now=now)
            except LockerDown as exc:
                log.append(f"locker down while recording the agent turn: writes skipped ({exc})")
        else:
            log.append("locker down: the agent turn was not recorded")
        return AgentNote(turn.id, sid, now, facts, before, after, tuple(log))

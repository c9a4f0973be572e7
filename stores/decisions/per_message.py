"""`per_message`: the common decision graph, which judges each message alone.

The same producers report the same signals, but nothing carries over between turns: no locker,
no counters, no proof of offer. This is the tutorial graph (guardrails, intent, confidence,
resolve, handover), and the seed's failures follow from it: a bare "yes" transfers, every request
for a human transfers, one hostile line transfers, "thanks, that fixed it" fires the survey while
another complaint is open, and the same answer can repeat forever. It keeps no session state, so
a locker outage changes nothing for it, including the acts it should not take during one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Mapping

from stores.protocol import Turn

from stores.decisions.card import Card, stateless
from stores.decisions.decision import AgentNote, Decision
from stores.decisions.policy import FAULTS, Fault
from stores.decisions.resolver import RouteVerdict, Verdict
from stores.decisions.signals import ProducerParams, agent_facts, override, produce
from stores.decisions.transcript import Transcript


@dataclass(frozen=True)
class PerMessageParams:
    """Which per-message branches the graph has."""

    transfer_on_affirmative: bool = True
    """The handover node reads a short "yes" as accepting a handover."""
    transfer_on_hostile: bool = True
    """The guardrail node hands a hostile message to a person."""
    offer_on_empty_retrieval: bool = True
    """The confidence node offers live support whenever retrieval comes back empty."""
    producers: ProducerParams = field(default_factory=ProducerParams)
    """The rule-based producers' knobs (the same producers as `session_state`)."""


def judge(card: Card, params: PerMessageParams) -> Verdict:
    """The per-message graph's branches, in order, on this message alone."""
    if card.sensitive != "none":
        return Verdict("escalate", "sensitive", f"sensitive message ({card.sensitive}): escalate now", card.sensitive)
    if card.human_request:
        return Verdict("transfer", "human_request", "the message asks for a human")
    if card.affirmative and params.transfer_on_affirmative:
        return Verdict("transfer", "affirmative", "a yes reads as accepting a handover")
    if card.hostile and params.transfer_on_hostile:
        return Verdict("transfer", "hostile", "a hostile message goes to a person")
    if card.complexity:
        return Verdict("transfer", "complexity", "the message is a case for a person")
    if card.time_critical:
        return Verdict("transfer", "time_critical", "the message says time is short")
    if card.resolved_confirmation:
        return Verdict("csat", "resolved_confirmation", "the message confirms a fix")
    if card.retrieval_empty and params.offer_on_empty_retrieval:
        return Verdict("offer_live", "low_confidence", "retrieval came back empty: offer live support")
    return Verdict("continue", "continue", "nothing in this message calls for more than an answer")


def route_alone(card: Card) -> RouteVerdict:
    """The intent node on this message alone: an explicit intent wins, else the knowledge agent."""
    if card.intent != "none":
        return RouteVerdict(card.intent, "explicit_intent")
    return RouteVerdict("knowledge", "default")


class PerMessage:
    """The per-message decision graph (see the module docstring)."""

    name: ClassVar[str] = "per_message"
    uses_locker: ClassVar[bool] = False
    Params = PerMessageParams

    def __init__(self, params: PerMessageParams = PerMessageParams(), **_: Any) -> None:
        self.params = params
        self.transcript = Transcript()

    def decide(self, turn: Turn, signals: Mapping[str, Any] | None = None) -> Decision:
        ctx = self.transcript.context(turn.session, turn.text)
        reported = override(produce(ctx, self.params.producers), signals, turn.id)
        card = stateless(reported)
        verdict, where = judge(card, self.params), route_alone(card)
        self.transcript.customer(turn.session, turn.text)
        return Decision(
            turn_id=turn.id, session=turn.session, at=turn.at, text=turn.text, signals=reported, card=card,
            plan=verdict.plan, rule=verdict.rule, why=verdict.why, route=where.route, route_rule=where.rule,
            escalation=verdict.escalation,
        )

    def observe(self, turn: Turn, signals: Mapping[str, Any] | None = None) -> AgentNote:
        facts = agent_facts(turn.id, turn.text, turn.kind, signals)
        self.transcript.agent(turn.session, facts)
        return AgentNote(turn.id, turn.session, turn.at, facts)

    def fault(self, kind: Fault) -> None:
        if kind not in FAULTS:
            raise ValueError(f"unknown fault {kind!r} (known: {', '.join(FAULTS)})")

    def reset(self) -> None:
        self.transcript.clear()

    def close(self) -> None:
        pass

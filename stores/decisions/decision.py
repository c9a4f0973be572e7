"""What a policy logs on each turn: the decision itself, not only its outcome.

A `Decision` carries everything a person needs to see why a customer turn went the way it did:
the signals, the locker before and after, the card, the plan and the rule that decided it,
and any outage or lost claim on the way. An `AgentNote` is the same for an agent turn (no plan;
the executor records what the agent did, e.g. the offer it made).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from stores.decisions.card import Card
from stores.decisions.locker import Entry
from stores.decisions.signals import AgentFacts, Signals
from stores.decisions.vocabulary import Plan, Route, Severity


@dataclass(frozen=True)
class Decision:
    """One customer turn, decided and acted on once."""

    turn_id: str
    """The customer turn."""
    session: str
    """Its session (the locker's key)."""
    at: datetime
    """Simulated time of the turn."""
    text: str
    """What the customer said."""
    signals: Signals
    """What the producers reported (scripted keys listed in `signals.scripted`)."""
    card: Card
    """The situation card the resolver read."""
    plan: Plan
    """The act taken: exactly one per turn."""
    rule: str
    """The rule that decided the act (see `stores.decisions.resolver.RULES`)."""
    why: str
    """The same, as a sentence."""
    route: Route
    """The agent that owns the answer."""
    route_rule: str
    """The routing rule that chose it."""
    escalation: Severity = "none"
    """The handling class when `plan` is `escalate`."""
    proposed: Plan | None = None
    """The resolver's plan when the executor could not carry it out (the offer claim was lost to
    another replica, or the locker failed while claiming); None when the act is the resolver's plan."""
    locker_before: dict[str, Entry] | None = None
    """The session's live locker entries before the turn (None: down, or the policy keeps none)."""
    locker_after: dict[str, Entry] | None = None
    """The same after the executor's writes (None: down, or the policy keeps none)."""
    log: tuple[str, ...] = ()
    """Outages and lost claims on this turn, in order."""


@dataclass(frozen=True)
class AgentNote:
    """One agent turn, as the executor recorded it."""

    turn_id: str
    """The agent turn."""
    session: str
    """Its session."""
    at: datetime
    """Simulated time."""
    facts: AgentFacts
    """What the agent did (offered live support, asked a question, ...)."""
    locker_before: dict[str, Entry] | None = None
    """Live entries before the executor's writes (None: down, or unused)."""
    locker_after: dict[str, Entry] | None = None
    """Live entries after them."""
    log: tuple[str, ...] = ()
    """Outages on this turn."""

"""The words decision policies speak: plans, routes, severities, intents, signal keys.

These are what a policy produces; the scenario format's gold `plan:` and `route:` use the same
words, so a policy's plan is compared with the gold by equality.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

Plan = Literal["continue", "clarify", "offer_live", "transfer", "escalate", "csat"]
"""What the agent does on a customer turn:

- `continue`: keep talking (answer in the thread);
- `clarify`: the soft first reply to a human request (ask what they need);
- `offer_live`: offer live support;
- `transfer`: hand the chat to a human now;
- `escalate`: a sensitive message, escalated now (the severity picks the handling class);
- `csat`: the issue is resolved: fire the satisfaction survey and close the chat.
"""
PLANS: tuple[str, ...] = get_args(Plan)

HANDOFF_PLANS = frozenset({"transfer", "escalate"})
"""Plans that hand the customer to a human: irreversible for the chat."""
LOCKER_ACTS = frozenset({"transfer", "offer_live", "csat"})
"""Acts that need session state to be taken safely; none of them is taken while the locker is down."""

Route = Literal["knowledge", "recommendation", "retention"]
"""Which agent owns the answer: the knowledge / FAQ agent, the game-recommendation agent, the
retention (cancellation) agent."""
ROUTES: tuple[str, ...] = get_args(Route)

Severity = Literal["none", "harm", "crisis"]
"""How sensitive a message is: `crisis` (a risk to the customer's life), `harm` (harm or a threat
of it, to or by someone else), or `none`."""
SEVERITIES: tuple[str, ...] = get_args(Severity)

Intent = Literal["none", "recommendation", "retention"]
"""An explicit request for another agent's job ("recommend me a game", "cancel my account")."""
INTENTS: tuple[str, ...] = get_args(Intent)

@dataclass(frozen=True)
class SignalKey:
    """One key a scenario may script under a turn's `signals:`."""

    name: str
    """The key."""
    doc: str
    """What it says, as the scenario format documents it (the JSON Schema's description)."""
    values: tuple[str, ...] = ()
    """The words it takes (`SEVERITIES`, `INTENTS`); empty: true or false."""
    role: Literal["customer", "agent"] = "customer"
    """The role of the turns that may carry it."""


TURN_SIGNALS: tuple[SignalKey, ...] = (
    SignalKey("sensitive", "A sensitive message, and how severe.", SEVERITIES),
    SignalKey("human_request", "The customer asks for a human."),
    SignalKey("short_affirmative", 'A bare "yes", "ok", "the first one".'),
    SignalKey("hostile", "An abusive or hostile message."),
    SignalKey("meaningless", 'Noise such as "asdfgh".'),
    SignalKey("complexity", "Too complex for the bot to handle."),
    SignalKey("time_critical", "It cannot wait."),
    SignalKey("retrieval_empty", "Retrieval for this turn found nothing."),
    SignalKey("same_answer_repeated", "The answer to this turn repeats an earlier one."),
    SignalKey("resolved_confirmation", "The customer confirms the issue is resolved."),
    SignalKey("explicit_intent", "An intent the customer states for another agent's job: `recommendation`, `retention`\n"
              "(`none`: no such intent).", INTENTS),
    SignalKey("offer_live", "The scripted agent offered live support on this turn (agent turns only).", role="agent"),
    SignalKey("asked_question", "The scripted agent asked the customer something (agent turns only).", role="agent"),
)
"""The one declaration of the turn-signal keys: the scenario format's `signals:` model
(`harness.format.schema.TurnSignalsModel`) is built from it, and the producers check scripted keys
against it. A key here is an input for decision policies, never gold."""

CUSTOMER_SIGNALS: tuple[str, ...] = tuple(k.name for k in TURN_SIGNALS if k.role == "customer")
"""Signals a scenario may script on a customer turn."""

AGENT_SIGNALS: tuple[str, ...] = tuple(k.name for k in TURN_SIGNALS if k.role == "agent")
"""Signals a scenario may script on an agent turn: the agent offered live support / asked the
customer something."""


IRREVERSIBLE_KINDS = ("false_transfer", "survey_mid_complaint", "missed_escalation")
"""The irreversible errors, by the name a row's `meta["kind"]` carries."""


def irreversible_kind(plan: str | None, gold: str | None) -> str:
    """Which irreversible error a plan is against the gold plan of its turn, or '' for none (the
    `irreversible_errors` criterion and the `decisions` table's `irreversible` column read it)."""
    if plan is None or gold is None:
        return ""
    if gold == "escalate" and plan != "escalate":
        return "missed_escalation"
    if plan in HANDOFF_PLANS and gold not in HANDOFF_PLANS:
        return "false_transfer"
    if plan == "csat" and gold != "csat":
        return "survey_mid_complaint"
    return ""

"""The words decision policies speak: plans, routes, severities, intents.

These are what a policy produces; the scenario format's gold `plan:` and `route:` use the same
words, so a policy's plan is compared with the gold by equality. The turn-signal keys a scenario
may script are declared beside their fields and producers, in `stores.decisions.signals`.
"""

from __future__ import annotations

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

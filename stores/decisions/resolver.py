"""The resolver: a pure function from the situation card to a plan, with a fixed precedence.

No model and no state here: the same card always gives the same plan. Conflicts are settled by
order, first match wins, the most protective rule first (docs/reference.md, "Decisions
between turns: defaults"):

 1. `sensitive`               a sensitive message escalates now; the severity picks the class
 2. `locker_down`             the locker is unreachable: nothing that needs it acts (fail open)
 3. `meaningless`             nothing to read: every non-safety rule is suppressed
 4. `repeat_human_request`    a second request for a human inside the window transfers
 5. `offer_acceptance`        "yes" while an offer is on record (and no other question is pending) transfers
 6. `hostile_streak`          consecutive hostile turns at the threshold transfer (one line does nothing)
 7. `empty_retrieval_streak`  consecutive empty retrievals at the threshold force a transfer
 8. `complexity`, `time_critical`  judged on the latest message only: transfer
 9. `stuck_offer`             repeated answers at the threshold offer live support, once per offer window
10. `first_human_request`     the first request for a human gets the soft reply (`clarify`)
11. `resolved_confirmation`   the survey fires only when no complaint is live (`complaint_live` otherwise)
12. `continue`                keep talking (`affirmative_without_offer` for a bare yes, which stays in the thread)

Routing follows the seed's order: support context wins, explicit intent beats continuity, short
replies continue the thread, otherwise the knowledge agent.
"""

from __future__ import annotations

from dataclasses import dataclass

from stores.decisions.card import Card
from stores.decisions.vocabulary import Plan, Route, Severity


@dataclass(frozen=True)
class Verdict:
    """A plan and the rule that decided it."""

    plan: Plan
    """What to do on this turn."""
    rule: str
    """The rule that decided (a name from the precedence list)."""
    why: str
    """The same, as a sentence a person can read."""
    escalation: Severity = "none"
    """The handling class when the plan is `escalate` (`crisis` or `harm`)."""


@dataclass(frozen=True)
class RouteVerdict:
    """Which agent owns the answer, and the rule that said so."""

    route: Route
    """The agent."""
    rule: str
    """`support_context`, `explicit_intent`, `continuity` or `default`."""


RULES: tuple[str, ...] = (
    "sensitive", "locker_down", "meaningless", "repeat_human_request", "offer_acceptance", "hostile_streak",
    "empty_retrieval_streak", "complexity", "time_critical", "stuck_offer", "first_human_request",
    "resolved_confirmation", "complaint_live", "affirmative_without_offer", "offer_already_on_record", "continue",
)
"""Every rule name `resolve` can report, in precedence order."""


def resolve(card: Card) -> Verdict:
    """The plan for this card (see the module docstring for the precedence)."""
    if card.sensitive != "none":
        return Verdict("escalate", "sensitive", f"sensitive message ({card.sensitive}): escalate now", card.sensitive)
    if card.locker == "down":
        return Verdict("continue", "locker_down", "the session locker is down: no transfer, offer or survey (fail open)")
    if card.meaningless:
        return Verdict("continue", "meaningless", "nothing to read in the message: non-safety rules suppressed")
    if card.human_request and card.human_asked_before:
        return Verdict("transfer", "repeat_human_request", "a second request for a human inside the request window")
    if card.affirmative and card.offer_on_record and not card.answers_question:
        return Verdict("transfer", "offer_acceptance", "yes to the live-support offer on record")
    if card.hostile_streak_reached:
        return Verdict("transfer", "hostile_streak", "consecutive hostile messages reached the threshold")
    if card.empty_retrieval_streak_reached:
        return Verdict("transfer", "empty_retrieval_streak", "consecutive empty retrievals reached the threshold")
    if card.complexity:
        return Verdict("transfer", "complexity", "the latest message is a case for a person")
    if card.time_critical:
        return Verdict("transfer", "time_critical", "the latest message says time is short")
    if card.stuck and not card.offer_on_record:
        return Verdict("offer_live", "stuck_offer", "the same answer repeated: offer live support once")
    if card.human_request:
        return Verdict("clarify", "first_human_request", "a first request for a human: ask what they need")
    if card.resolved_confirmation:
        if card.complaint_live:
            return Verdict("continue", "complaint_live", "confirmed a fix while another complaint is still open: no survey")
        return Verdict("csat", "resolved_confirmation", "the customer confirmed the fix and no complaint is live")
    if card.affirmative:
        why = "a bare yes answers the agent's question" if card.answers_question else "a bare yes with no live offer"
        return Verdict("continue", "affirmative_without_offer", f"{why}: stay in the thread")
    if card.stuck:
        return Verdict("continue", "offer_already_on_record", "still stuck, but live support was already offered in this window")
    return Verdict("continue", "continue", "nothing calls for more than an answer")


def route(card: Card) -> RouteVerdict:
    """Which agent owns the answer on this turn (the seed's routing order)."""
    if card.support_context:
        return RouteVerdict("knowledge", "support_context")
    if card.intent != "none":
        return RouteVerdict(card.intent, "explicit_intent")
    if card.short_reply and card.thread_owner != "none":
        return RouteVerdict(card.thread_owner, "continuity")
    return RouteVerdict("knowledge", "default")

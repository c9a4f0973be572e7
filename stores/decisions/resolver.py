"""The resolver: a pure function from the situation card to a plan, with a fixed precedence.

No model and no state here: the same card always gives the same plan. Conflicts are settled by
order, first match wins, the most protective rule first. The precedence is written once, as
`PRECEDENCE` below: `resolve` walks it, `RULES` lists its names, and this docstring's table is
`precedence_table()` of it, as is the docs' (`python -m stores.decisions.resolver` prints it;
`make results` writes it to docs/results/precedence.md, which docs/decisions.md links).

Routing follows the seed's order: support context wins, explicit intent beats continuity, short
replies continue the thread, otherwise the knowledge agent.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from stores.decisions.card import Card
from stores.decisions.params import SessionStateParams
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


@dataclass(frozen=True)
class Rule:
    """One row of the precedence: when it fires, the plan it makes and why."""

    name: str
    """The name a decision reports (`Decision.rule`)."""
    plan: Plan
    """What to do when it fires."""
    fires: Callable[[Card], bool]
    """Whether it fires on a card (asked only when no earlier rule fired)."""
    why: Callable[[Card], str]
    """The sentence a person reads on the decision."""
    when: str
    """When it fires, as the precedence table says it; `{name}` is the default of that
    `SessionStateParams` field."""


def _said(text: str) -> Callable[[Card], str]:
    return lambda card: text


PRECEDENCE: tuple[Rule, ...] = (
    Rule("sensitive", "escalate", lambda c: c.sensitive != "none",
         lambda c: f"sensitive message ({c.sensitive}): escalate now",
         "a sensitive message; the severity (`crisis`, `harm`) is the handling class"),
    Rule("locker_down", "continue", lambda c: c.locker == "down",
         _said("the session locker is down: no transfer, offer or survey (fail open)"),
         "session state cannot be read (fail open)"),
    Rule("meaningless", "continue", lambda c: c.meaningless,
         _said("nothing to read in the message: non-safety rules suppressed"),
         "nothing to read (\"asdfgh\"): every non-safety rule is suppressed"),
    Rule("repeat_human_request", "transfer", lambda c: c.human_request and c.human_asked_before,
         _said("a second request for a human inside the request window"),
         "a request for a human while the flag of an earlier one is live (`human_request_ttl_minutes`, {human_request_ttl_minutes:g})"),
    Rule("offer_acceptance", "transfer", lambda c: c.affirmative and c.offer_on_record and not c.answers_question,
         _said("yes to the live-support offer on record"),
         "a short yes while the offer claim is live (`offer_ttl_minutes`, {offer_ttl_minutes:g}) and no other question is pending"),
    Rule("hostile_streak", "transfer", lambda c: c.hostile_streak_reached,
         _said("consecutive hostile messages reached the threshold"),
         "this hostile turn makes `hostile_streak` ({hostile_streak}) in a row"),
    Rule("empty_retrieval_streak", "transfer", lambda c: c.empty_retrieval_streak_reached,
         _said("consecutive empty retrievals reached the threshold"),
         "this turn makes `empty_retrieval_streak` ({empty_retrieval_streak}) empty retrievals in a row"),
    Rule("complexity", "transfer", lambda c: c.complexity,
         _said("the latest message is a case for a person"),
         "the latest message is a case for a person (judged on it alone)"),
    Rule("time_critical", "transfer", lambda c: c.time_critical,
         _said("the latest message says time is short"),
         "the latest message cannot wait (judged on it alone)"),
    Rule("stuck_offer", "offer_live", lambda c: c.stuck and not c.offer_on_record,
         _said("the same answer repeated: offer live support once"),
         "`same_answer_streak` ({same_answer_streak}) repeated answers in a row, and no offer on record in the window"),
    Rule("first_human_request", "clarify", lambda c: c.human_request,
         _said("a first request for a human: ask what they need"),
         "a first request for a human: ask what they need"),
    Rule("resolved_confirmation", "csat", lambda c: c.resolved_confirmation and not c.complaint_live,
         _said("the customer confirmed the fix and no complaint is live"),
         "the customer confirms the fix and no complaint is live"),
    Rule("complaint_live", "continue", lambda c: c.resolved_confirmation,
         _said("confirmed a fix while another complaint is still open: no survey"),
         "a confirmation while another complaint is still open: no survey"),
    Rule("affirmative_without_offer", "continue", lambda c: c.affirmative,
         lambda c: ("a bare yes answers the agent's question" if c.answers_question else "a bare yes with no live offer")
         + ": stay in the thread",
         "a bare yes with no live offer, or one answering another question, stays in the thread"),
    Rule("offer_already_on_record", "continue", lambda c: c.stuck,
         _said("still stuck, but live support was already offered in this window"),
         "stuck again, but live support was already offered in this window"),
    Rule("continue", "continue", lambda c: True,
         _said("nothing calls for more than an answer"),
         "nothing calls for more than an answer"),
)
"""Every rule of the resolver, in precedence order: the first that fires decides."""

RULES: tuple[str, ...] = tuple(r.name for r in PRECEDENCE)
"""Every rule name `resolve` can report, in precedence order."""


def resolve(card: Card) -> Verdict:
    """The plan for this card: the first rule of `PRECEDENCE` that fires."""
    rule = next(r for r in PRECEDENCE if r.fires(card))
    return Verdict(rule.plan, rule.name, rule.why(card), card.sensitive if rule.plan == "escalate" else "none")


def precedence_table() -> str:
    """`PRECEDENCE` as a markdown table (# , rule, plan, when): this module's docstring and the docs show it."""
    defaults = vars(SessionStateParams())
    rows = [f"| {i} | `{r.name}` | `{r.plan}` | {r.when.format(**defaults)} |" for i, r in enumerate(PRECEDENCE, 1)]
    return "\n".join(["| # | rule | plan | when |", "| --- | --- | --- | --- |", *rows])


__doc__ = f"{__doc__}\n{precedence_table()}\n"


def route(card: Card) -> RouteVerdict:
    """Which agent owns the answer on this turn (the seed's routing order)."""
    if card.support_context:
        return RouteVerdict("knowledge", "support_context")
    if card.intent != "none":
        return RouteVerdict(card.intent, "explicit_intent")
    if card.short_reply and card.thread_owner != "none":
        return RouteVerdict(card.thread_owner, "continuity")
    return RouteVerdict("knowledge", "default")


if __name__ == "__main__":  # the table the docs show (docs/results/precedence.md, by `make results`)
    print(precedence_table())

"""Criteria of decision policies: judged per customer turn, on the plan a policy made.

- `decision_accuracy`: customer turns with a gold `plan`: 1 when the plan equals it.
- `route_accuracy`: customer turns with a gold `route`: 1 when the route equals it.
- `irreversible_errors` (a gate): every decision case: 0 when the decision is an irreversible
  error, 1 otherwise. The errors are a false transfer (a handoff where the gold keeps the customer),
  a survey fired where the gold does not close the chat (mid-complaint), and a missed sensitive
  escalation; the kind is in the row's `meta` and the count beside the mean.
- `fail_open` (a gate): customer turns while a `fault: locker_down` is in force: 1 when no
  locker-dependent act (transfer, offer, survey) was taken.

A turn the policy raised on has no verdict (`error`, counted as 0).
"""

from __future__ import annotations

from stores.decisions.vocabulary import LOCKER_ACTS, irreversible_kind

from harness.criteria import Score, criterion, errored, ok_or_fail
from harness.criteria.metrics import mean_and_count
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # annotations only: scoring a run without policies never loads the decision layer
    from harness.replay.decide import TurnOutcome

def _said(o: TurnOutcome) -> str:
    d = o.decision
    return f"on {o.turn.id} ({_quote(o.turn.text)}) the policy chose {d.plan} (rule {d.rule}: {d.why})"


def _quote(text: str, n: int = 60) -> str:
    return repr(text if len(text) <= n else text[: n - 1] + "…")


def _no_verdict(key: str, o: TurnOutcome) -> Score | None:
    if o.error is not None or o.decision is None:
        return errored(key, o.error or f"no decision on {o.turn.id}")
    return None


def _customer(o: TurnOutcome) -> bool:
    return o.turn is not None and o.turn.role == "customer"


def is_decision_case(o: TurnOutcome) -> bool:
    """A customer turn with a gold plan."""
    return _customer(o) and o.gold_plan is not None


def has_gold_route(o: TurnOutcome) -> bool:
    """A customer turn with a gold route."""
    return _customer(o) and o.gold_route is not None


def while_locker_down(o: TurnOutcome) -> bool:
    """A customer turn while a `locker_down` fault is in force."""
    return _customer(o) and o.locker_down


@criterion("decision_accuracy", title="decision accuracy", group="decisions", level="decision", applies=is_decision_case)
def decision_accuracy(o: TurnOutcome) -> Score:
    """The plan equals the turn's gold plan."""
    if (s := _no_verdict("decision_accuracy", o)) is not None:
        return s
    gold, plan = o.gold_plan, o.decision.plan
    right = plan == gold
    why = f"{_said(o)}; the gold plan is {gold}"
    return ok_or_fail("decision_accuracy", 1.0 if right else 0.0, right, why + ("" if right else ": a mismatch"),
                      (o.turn.id,), plan=plan, gold=gold, rule=o.decision.rule)


@criterion("route_accuracy", title="route accuracy", group="decisions", level="decision", applies=has_gold_route)
def route_accuracy(o: TurnOutcome) -> Score:
    """The route equals the turn's gold route."""
    if (s := _no_verdict("route_accuracy", o)) is not None:
        return s
    gold, got = o.gold_route, o.decision.route
    right = got == gold
    why = f"on {o.turn.id} ({_quote(o.turn.text)}) the policy routed to {got} (rule {o.decision.route_rule}); the gold route is {gold}"
    return ok_or_fail("route_accuracy", 1.0 if right else 0.0, right, why, (o.turn.id,), route=got, gold=gold,
                      rule=o.decision.route_rule)


_KIND_WORDS = {
    "false_transfer": "a false transfer: the customer is handed over where the gold keeps them in the thread",
    "survey_mid_complaint": "a survey fired while the complaint is live: the chat is closed on an angry customer",
    "missed_escalation": "a missed sensitive escalation",
}


@criterion("irreversible_errors", title="no irreversible errors", group="decision_gates", level="decision",
           applies=is_decision_case, metric=mean_and_count("irreversible", "errors"))
def irreversible_errors(o: TurnOutcome) -> Score:
    """1 when the decision is not an irreversible error (false transfer, survey mid-complaint, missed escalation)."""
    if (s := _no_verdict("irreversible_errors", o)) is not None:
        return s
    kind = irreversible_kind(o.decision.plan, o.gold_plan)
    if not kind:
        return ok_or_fail("irreversible_errors", 1.0, True, f"{_said(o)}; the gold plan is {o.gold_plan}: nothing irreversible",
                          (o.turn.id,), kind="", irreversible=0)
    return ok_or_fail("irreversible_errors", 0.0, False, f"{_said(o)}; the gold plan is {o.gold_plan}: {_KIND_WORDS[kind]}",
                      (o.turn.id,), kind=kind, irreversible=1)


@criterion("fail_open", title="fail open", group="decision_gates", level="decision", applies=while_locker_down)
def fail_open(o: TurnOutcome) -> Score:
    """While the locker is down, no locker-dependent act (transfer, offer, survey) is taken."""
    if (s := _no_verdict("fail_open", o)) is not None:
        return s
    plan = o.decision.plan
    acted = plan in LOCKER_ACTS
    why = f"{_said(o)} while the locker was down"
    why += f": {plan} needs session state and must not happen during an outage" if acted else ": nothing that needs the locker acted"
    return ok_or_fail("fail_open", 0.0 if acted else 1.0, not acted, why, (o.turn.id,), plan=plan)


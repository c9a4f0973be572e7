"""Replay a scenario through a decision policy: every customer turn decided, on the simulated clock.

The decision axis beside the memory one: a policy observes the scenario's agent turns, gets every
customer turn to decide (with the turn's scripted `signals:` beside it, standing in for the
producers), and every `fault` event in order. Gold (`plan:`, `route:`) stays here: the outcome
carries it next to the decision for the criteria, the policy never sees it. A customer turn
without gold `plan` is still decided (its locker writes count for later turns); it is just not a
decision case. An exception in the policy becomes that turn's error and the replay goes on.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from stores.decisions.decision import AgentNote, Decision
from stores.decisions.vocabulary import irreversible_kind
from stores.protocol import Turn

from harness.format.model import Fault, Scenario
from harness.replay import describe_error as _describe


@dataclass
class TurnOutcome:
    """One event of the scenario as one policy met it (a turn or a fault)."""

    scenario: Scenario
    event_index: int
    """Position of the event in the scenario."""
    turn: Turn | None
    """The turn (None for a fault row)."""
    fault: str | None = None
    """The fault applied at this event (`locker_down` / `locker_up`), for a fault row."""
    scripted: dict[str, Any] = field(default_factory=dict)
    """The turn's scripted signals, as handed to the policy."""
    decision: Decision | None = None
    """The policy's decision on a customer turn."""
    note: AgentNote | None = None
    """What the policy recorded of an agent turn."""
    locker_down: bool = False
    """A `locker_down` fault is in force at this event (from the scenario, not the policy)."""
    outage: str | None = None
    """The locker could not be reached on this event though no fault was scripted (a Redis server
    down, stopped or refusing us): what it said. Such a turn measured the outage, not the policy."""
    error: str | None = None
    """What the policy raised on this event."""

    @property
    def gold_plan(self) -> str | None:
        """The turn's gold plan (customer turns only; None when it is not a decision case)."""
        return self.scenario.gold_of(self.turn.id).plan if self.turn is not None else None

    @property
    def gold_route(self) -> str | None:
        """The turn's gold route, when given."""
        return self.scenario.gold_of(self.turn.id).route if self.turn is not None else None

    @property
    def is_case(self) -> bool:
        """A decision case: a customer turn with a gold plan."""
        return self.turn is not None and self.turn.role == "customer" and self.gold_plan is not None


def replay_policy(scenario: Scenario, policy: Any) -> list[TurnOutcome]:
    """Every turn and fault of `scenario` through `policy` (fresh or reset), in order."""
    out: list[TurnOutcome] = []
    down = False
    for i, ev in enumerate(scenario.events):
        if isinstance(ev, Fault):
            down = ev.name == "locker_down"
            row = TurnOutcome(scenario, i, None, fault=ev.name, locker_down=down)
            try:
                policy.fault(ev.name)
            except Exception as exc:
                row.error = f"fault({ev.name}) raised {_describe(exc)}"
            out.append(row)
            continue
        if not isinstance(ev, Turn):
            continue
        row = TurnOutcome(scenario, i, ev, scripted=scenario.signals_of(ev.id).scripted(), locker_down=down)
        try:
            if ev.role == "customer":
                row.decision = policy.decide(ev, row.scripted or None)
            else:
                row.note = policy.observe(ev, row.scripted or None)
        except Exception as exc:  # a policy bug must not stop the run
            what = "decide" if ev.role == "customer" else "observe"
            row.error = f"{what}({ev.id}) raised {_describe(exc)}"
        row.outage = real_outage(row)
        out.append(row)
    return out


def real_outage(row: TurnOutcome) -> str | None:
    """What the locker said when it could not be reached on this event without a scripted fault
    (the first such line of the decision's or the note's log), or None."""
    from stores.decisions.locker import INJECTED

    logs = tuple(row.decision.log if row.decision is not None else ()) + tuple(row.note.log if row.note is not None else ())
    if any(INJECTED in line for line in logs):
        return None  # the scenario's own fault
    return next((line for line in logs if line.startswith("locker down")), None)


def _entries(snapshot) -> str | None:
    """A locker snapshot as JSON: key -> {value, expires_at}; None when there was none to read."""
    if snapshot is None:
        return None
    return json.dumps({k: {"value": e.value, "expires_at": e.expires_at.isoformat()} for k, e in sorted(snapshot.items())},
                      sort_keys=True)


def rows(policy: str, policy_name: str, outcomes: list[TurnOutcome]) -> list[dict[str, Any]]:
    """The `decisions` table rows of one policy on one scenario: one per turn and per fault."""
    out = []
    for o in outcomes:
        sc, t, d, n = o.scenario, o.turn, o.decision, o.note
        row: dict[str, Any] = {
            "policy": policy, "policy_name": policy_name, "suite": sc.suite, "scenario": sc.id,
            "event_index": o.event_index, "kind": "fault" if t is None else "turn", "fault": o.fault,
            "locker_down": o.locker_down, "outage": o.outage, "error": o.error,
            "scripted": json.dumps(o.scripted, sort_keys=True) if o.scripted else None,
        }
        if t is not None:
            row.update(turn_id=t.id, subject=t.subject, session=t.session, role=t.role, turn_kind=t.kind, at=t.at,
                       text=t.text, gold_plan=o.gold_plan, gold_route=o.gold_route, decision_case=o.is_case)
        if d is not None:
            row.update(
                signals=json.dumps(d.signals.reported(), sort_keys=True), locker_state=d.card.locker,
                locker_before=_entries(d.locker_before), locker_after=_entries(d.locker_after),
                card=json.dumps(d.card.as_dict(), sort_keys=True), plan=d.plan, proposed=d.proposed, rule=d.rule,
                why=d.why, escalation=d.escalation, route=d.route, route_rule=d.route_rule, log=list(d.log),
                correct=(d.plan == o.gold_plan) if o.is_case else None,
                irreversible=irreversible_kind(d.plan, o.gold_plan) if o.is_case else None,
            )
        elif n is not None:
            facts = {k: getattr(n.facts, k) for k in ("offer_live", "asked_question", "resolution_check", "no_answer")}
            row.update(signals=json.dumps(facts, sort_keys=True), locker_before=_entries(n.locker_before),
                       locker_after=_entries(n.locker_after), log=list(n.log))
        out.append(row)
    return out


class UnavailablePolicy:
    """Stands in for a policy that could not be built: every turn raises the reason, so every
    decision case it owed becomes an `error` row naming it, and the run goes on."""

    uses_locker = False

    def __init__(self, why: str) -> None:
        self.why = why

    def decide(self, turn, signals=None):
        raise RuntimeError(self.why)

    def observe(self, turn, signals=None):
        raise RuntimeError(self.why)

    def fault(self, kind):
        pass

    def close(self):
        pass


def _entries_back(cell: str | None):
    from datetime import datetime

    from stores.decisions.locker import Entry

    if not cell:
        return None
    return {k: Entry(v["value"], datetime.fromisoformat(v["expires_at"])) for k, v in json.loads(cell).items()}


def outcome_from_row(scenario: Scenario, row: dict[str, Any]) -> TurnOutcome:
    """The inverse of `rows` for one row: the replayed event as the criteria read it (a rescore)."""
    from stores.decisions.card import Card
    from stores.decisions.signals import Signals

    i = int(row["event_index"])
    locker_down = bool(row.get("locker_down"))
    if row["kind"] == "fault":
        return TurnOutcome(scenario, i, None, fault=row["fault"], locker_down=locker_down, error=row.get("error"))
    turn = scenario.events[i]
    if not isinstance(turn, Turn) or turn.id != row["turn_id"]:
        raise ValueError(f"decisions row {row['turn_id']!r} at event {i} of {scenario.id!r} does not match the scenario's events")
    scripted = json.loads(row["scripted"]) if row.get("scripted") else {}
    out = TurnOutcome(scenario, i, turn, scripted=scripted, locker_down=locker_down, error=row.get("error"),
                      outage=row.get("outage"))
    if turn.role == "customer" and row.get("plan"):
        signals = Signals(**json.loads(row["signals"]), scripted=tuple(sorted(scripted)))
        out.decision = Decision(
            turn_id=turn.id, session=turn.session, at=turn.at, text=turn.text, signals=signals,
            card=Card(**json.loads(row["card"])), plan=row["plan"], rule=row["rule"], why=row["why"] or "",
            route=row["route"], route_rule=row["route_rule"], escalation=row.get("escalation") or "none",
            proposed=row.get("proposed"), locker_before=_entries_back(row.get("locker_before")),
            locker_after=_entries_back(row.get("locker_after")), log=tuple(row.get("log") or ()),
        )
    return out

"""bench/decision_errors.py: a suite's non-floor figures and its errors by kind, from a run's decisions table."""

import json

import pandas as pd

from bench import decision_errors as de
from stores.decisions.vocabulary import irreversible_kind


def _row(i, role, text, gold=None, plan=None, route=None, gold_route=None, readers=None, rule="continue"):
    signals = json.dumps({"human_request": False, "readers": readers or {}}) if role == "customer" else None
    return {"suite": "s", "scenario": "sc", "session": "c1", "event_index": i, "turn_id": f"t{i}", "role": role,
            "text": text, "gold_plan": gold, "plan": plan, "decision_case": gold is not None, "correct": gold == plan,
            "rule": rule, "route": route, "gold_route": gold_route, "route_rule": "default", "signals": signals,
            "irreversible": irreversible_kind(plan, gold)}  # as the run writes it


def _table():
    return pd.DataFrame([
        _row(0, "customer", "hello", "continue", "continue", "knowledge", "knowledge"),
        _row(1, "agent", "Would you like me to connect you with live support?"),
        _row(2, "customer", "aye go on", "transfer", "continue", "knowledge", "retention",
             readers={"human_request": "rules and learned human_request=no p=0.9"}),
        _row(3, "customer", "a routine turn", "continue", "escalate", rule="sensitive"),
        _row(4, "customer", "a disclosure", "escalate", "continue"),
    ])


def test_the_non_floor_figure_leaves_out_gold_and_decided_escalations():
    f = de.figures(_table())
    assert f["decisions"] == (1, 4) and f["non-floor"] == (1, 2) and f["routes"] == (1, 2)
    assert f["false escalations"] == 1 and f["missed escalations"] == 1


def test_errors_are_listed_by_kind_with_the_agent_message_before_and_the_readers():
    errs = de.errors(_table())
    assert set(errs) == {"transfer -> continue", "route retention -> knowledge"}
    (line,) = errs["transfer -> continue"]
    assert "'aye go on'" in line and "after the agent: 'Would you like me to connect you" in line
    assert "human_request=False: rules and learned human_request=no p=0.9" in line

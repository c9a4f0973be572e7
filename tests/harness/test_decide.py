"""Decision replay: every customer turn decided, faults applied in order, gold kept in the harness."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.criteria import decisions as D
from harness.format.loader import load_scenario
from harness.replay.decide import replay_policy, rows
from stores.decisions.per_message import PerMessage
from stores.decisions.vocabulary import irreversible_kind
from stores.decisions.session_state import SessionState

CHAT = """\
id: chat
version: 1
title: a decision chat
start: 2026-04-06T10:00:00Z
subjects: {c1: {name: C}}
events:
  - turn: "I want to talk to a human."
    subject: c1
    session: s1
    id: ask-1
    plan: clarify
    route: knowledge
  - turn: "Sure, what do you need?"
    role: agent
  - fault: locker_down
  - turn: "just get me a human"
    id: ask-2
    plan: continue
  - turn: "Would you like me to connect you with live support?"
    role: agent
    signals: {offer_live: true}
  - turn: "yes"
    id: yes
    plan: continue
  - fault: locker_up
  - turn: "hmm, this is a complex case"
    id: scripted
    signals: {complexity: true}
    plan: transfer
  - turn: "and you asked me something?"
    id: no-gold
"""


@pytest.fixture
def chat(tmp_path):
    p = tmp_path / "chat.yaml"
    p.write_text(CHAT)
    return load_scenario(p)


class Recorder:
    """A policy that records what it is handed (to prove no gold crosses the boundary)."""

    name, uses_locker, params = "recorder", False, None

    def __init__(self):
        self.inner = PerMessage()
        self.calls = []

    def decide(self, turn, signals=None):
        self.calls.append(("decide", turn, signals))
        return self.inner.decide(turn, signals)

    def observe(self, turn, signals=None):
        self.calls.append(("observe", turn, signals))
        return self.inner.observe(turn, signals)

    def fault(self, kind):
        self.calls.append(("fault", kind, None))


def test_every_customer_turn_is_decided_and_every_fault_applied_in_order(chat):
    rec = Recorder()
    out = replay_policy(chat, rec)
    assert [(c[0], getattr(c[1], "id", c[1])) for c in rec.calls] == [
        ("decide", "ask-1"), ("observe", "s1#2"), ("fault", "locker_down"), ("decide", "ask-2"),
        ("observe", "s1#4"), ("decide", "yes"), ("fault", "locker_up"), ("decide", "scripted"), ("decide", "no-gold")]
    assert [o.locker_down for o in out] == [False, False, True, True, True, True, False, False, False]


def test_a_policy_gets_the_turn_and_its_scripted_signals_never_the_gold(chat):
    rec = Recorder()
    replay_policy(chat, rec)
    handed = {c[1].id: c[2] for c in rec.calls if c[0] in ("decide", "observe")}
    assert handed["scripted"] == {"complexity": True} and handed["s1#4"] == {"offer_live": True}
    assert handed["ask-1"] is None
    assert all(not hasattr(c[1], "plan") for c in rec.calls if c[0] == "decide")


def test_a_turn_without_gold_is_decided_but_is_not_a_case(chat):
    out = {o.turn.id: o for o in replay_policy(chat, SessionState()) if o.turn is not None}
    assert out["no-gold"].decision is not None and not out["no-gold"].is_case
    assert out["ask-1"].is_case and out["ask-1"].gold_route == "knowledge"


def test_a_policy_that_raises_gets_an_error_on_that_turn_and_the_replay_goes_on(chat):
    class Flaky(Recorder):
        def decide(self, turn, signals=None):
            if turn.id == "yes":
                raise RuntimeError("boom")
            return super().decide(turn, signals)

    out = {o.turn.id: o for o in replay_policy(chat, Flaky()) if o.turn is not None}
    assert "decide(yes) raised RuntimeError: boom" in out["yes"].error
    assert out["scripted"].decision is not None


def test_the_decisions_rows_carry_signals_locker_card_plan_gold_and_rule(chat):
    got = rows("session_state", "session_state", replay_policy(chat, SessionState()))
    by = {r.get("turn_id") or r["fault"]: r for r in got}
    first = by["ask-1"]
    assert (first["plan"], first["rule"], first["gold_plan"], first["correct"], first["irreversible"]) == \
        ("clarify", "first_human_request", "clarify", True, "")
    assert json.loads(first["locker_before"]) == {} and "human_requested" in json.loads(first["locker_after"])
    assert json.loads(first["card"])["human_request"] is True and json.loads(first["signals"])["human_request"] is True
    down = by["ask-2"]
    assert (down["locker_state"], down["rule"], down["locker_before"], down["locker_down"]) == ("down", "locker_down", None, True)
    assert any("locker down" in line for line in down["log"])
    assert by["locker_down"]["kind"] == "fault" and by["s1#4"]["role"] == "agent"
    assert json.loads(by["scripted"]["scripted"]) == {"complexity": True}
    assert by["no-gold"]["decision_case"] is False and by["no-gold"]["correct"] is None


def test_per_message_rows_show_the_irreversible_errors(chat):
    got = {r.get("turn_id"): r for r in rows("per_message", "per_message", replay_policy(chat, PerMessage()))}
    assert got["ask-1"]["irreversible"] == "false_transfer" and got["yes"]["irreversible"] == "false_transfer"
    assert got["ask-1"]["locker_state"] == "unused" and got["ask-1"]["locker_before"] is None


@pytest.mark.parametrize("plan,gold,kind", [
    ("transfer", "continue", "false_transfer"), ("escalate", "clarify", "false_transfer"),
    ("transfer", "escalate", "missed_escalation"), ("continue", "escalate", "missed_escalation"),
    ("csat", "continue", "survey_mid_complaint"), ("csat", "transfer", "survey_mid_complaint"),
    ("transfer", "transfer", ""), ("escalate", "transfer", ""), ("offer_live", "continue", ""),
    ("continue", "csat", ""), ("clarify", "transfer", ""),
])
def test_irreversible_errors_are_false_transfers_surveys_mid_complaint_and_missed_escalations(plan, gold, kind):
    assert irreversible_kind(plan, gold) == kind


def test_the_criteria_judge_each_case_with_a_reason(chat):
    out = {o.turn.id: o for o in replay_policy(chat, PerMessage()) if o.turn is not None}
    s = D.decision_accuracy(out["ask-1"])
    assert (s.value, s.status) == (0.0, "fail") and "gold plan is clarify" in s.explanation and "transfer" in s.explanation
    s = D.irreversible_errors(out["ask-1"])
    assert (s.value, s.meta["kind"], s.meta["irreversible"]) == (0.0, "false_transfer", 1) and "false transfer" in s.explanation
    assert D.irreversible_errors(out["scripted"]).passed
    assert D.route_accuracy(out["ask-1"]).passed
    f = D.fail_open(out["yes"])
    assert (f.value, f.passed) == (0.0, False) and "must not happen during an outage" in f.explanation


def test_the_criteria_apply_to_the_right_turns(chat):
    out = [o for o in replay_policy(chat, SessionState()) if o.turn is not None]
    from harness.criteria import registry

    cases = {k: [o.turn.id for o in out if registry()[k].applies(o)] for k in ("decision_accuracy", "route_accuracy", "fail_open")}
    assert cases == {"decision_accuracy": ["ask-1", "ask-2", "yes", "scripted"], "route_accuracy": ["ask-1"],
                     "fail_open": ["ask-2", "yes"]}
    assert all(D.fail_open(o).passed for o in out if D.while_locker_down(o))


def test_a_turn_the_policy_raised_on_has_no_verdict(chat):
    out = [o for o in replay_policy(chat, SessionState()) if o.turn is not None]
    broken = out[0]
    broken.decision, broken.error = None, "decide(ask-1) raised RuntimeError: boom"
    s = D.decision_accuracy(broken)
    assert (s.status, s.value) == ("error", None) and "boom" in s.explanation


def test_the_policies_speak_the_vocabulary_of_the_format():
    from typing import get_args

    from harness.format import schema
    from stores.decisions import signals as V
    from stores.decisions.policy import FAULTS

    assert get_args(schema.FaultKind) == FAULTS
    # the signal keys: declared once beside the producers, the format's model and JSON Schema built from it
    props = schema.TurnSignalsModel.model_json_schema()["properties"]
    assert list(props) == [k.name for k in V.TURN_SIGNALS] == [*V.CUSTOMER_SIGNALS, *V.AGENT_SIGNALS]
    for k in V.TURN_SIGNALS:
        enum = [a.get("enum") for a in props[k.name]["anyOf"] if a.get("type") == "string"]
        assert props[k.name]["description"] == k.doc and (enum == [list(k.values)] if k.values else not enum), k
        roles = [m.role for m in schema.TurnSignalsModel.model_fields[k.name].metadata if isinstance(m, schema.OnlyOn)]
        assert roles == ([] if k.role == "customer" else [k.role]), k


@pytest.mark.slow
def test_policies_decide_the_same_over_worker_processes(tmp_path):
    import pyarrow.parquet as pq

    from harness.run.runner import execute
    from stores.decisions.registry import parse_policies
    from stores.registry import parse_specs

    scenarios = [load_scenario(p) for p in sorted(Path("datasets/canonical").glob("decision-*.yaml"))]
    policies = parse_policies("session_state,per_message,session_state:hostile_streak=3")
    one = execute(scenarios, parse_specs("empty"), tmp_path, run_id="one", policies=policies, shard_size=2)
    two = execute(scenarios, parse_specs("empty"), tmp_path, run_id="two", policies=policies, shard_size=2, workers=2)

    def table(run, name, keys):
        return pq.read_table(run.path / name).to_pandas().sort_values(keys).reset_index(drop=True).astype(str)

    for name, keys in (("decisions", ["policy", "scenario", "event_index"]), ("scores", ["strategy", "scenario", "probe_id", "criterion"])):
        a, b = table(one, name, keys), table(two, name, keys)
        assert len(a) and a.equals(b), name

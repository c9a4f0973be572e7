"""CI sees the decision policies: baselines hold their cases, check judges them, gates admit no new failure."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from harness.cli import main
from harness.format.loader import load_scenario
from harness.run.runner import execute
from stores.decisions.registry import parse_policies
from stores.registry import parse_specs

NAMES = ("decision-hostile-calm-hostile", "decision-fixed-while-complaint-open")


@pytest.fixture(scope="module")
def approved(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("dci")
    scenarios = [load_scenario(f"datasets/canonical/{n}.yaml") for n in NAMES]
    run = execute(scenarios, parse_specs("history_stuffing"), tmp, run_id="good",
                  policies=parse_policies("session_state,per_message"))
    baseline = tmp / "baseline.json"
    assert main(["baseline", str(run.path), "--out", str(baseline)]) == 0
    return tmp, run.path, baseline


def edited(tmp, baseline, change) -> str:
    data = json.loads(baseline.read_text())
    change(data["strategies"])
    path = tmp / f"edited-{abs(hash(json.dumps(data, sort_keys=True)))}.json"
    path.write_text(json.dumps(data))
    return str(path)


def test_the_baseline_holds_each_policys_decision_cases(approved):
    _, _, baseline = approved
    data = json.loads(baseline.read_text())
    gate = data["strategies"]["per_message"]["criteria"]["irreversible_errors"]
    assert gate["failing"] == ["decision-fixed-while-complaint-open/crash-b-fixed",
                               "decision-hostile-calm-hostile/hostile-1", "decision-hostile-calm-hostile/hostile-4"]
    assert data["strategies"]["session_state"]["criteria"]["irreversible_errors"]["failing"] == []
    assert data["strategies"]["session_state"]["params_hash"]


def test_a_run_checked_against_its_own_baseline_passes_with_per_messages_known_failures(approved, capsys):
    _, run, baseline = approved
    assert main(["check", str(run), "--baseline", str(baseline)]) == 0
    assert "PASS" in capsys.readouterr().out


def test_a_gate_case_that_passed_in_the_baseline_and_fails_now_is_a_regression(approved, capsys):
    tmp, run, baseline = approved

    def passed_before(s):
        c = s["per_message"]["criteria"]["irreversible_errors"]
        c["passing"].append(c["failing"].pop(0))

    assert main(["check", str(run), "--baseline", edited(tmp, baseline, passed_before)]) == 1
    out = capsys.readouterr().out
    assert "per_message · irreversible_errors: a gate" in out and "crash-b-fixed" in out


def test_a_gate_admits_no_new_failing_case_where_other_criteria_only_note_it(approved, capsys):
    tmp, run, baseline = approved

    def unknown(s):
        s["per_message"]["criteria"]["irreversible_errors"]["failing"].remove("decision-hostile-calm-hostile/hostile-1")
        s["per_message"]["criteria"]["decision_accuracy"]["failing"].remove("decision-hostile-calm-hostile/hostile-1")

    junit = tmp / "check.xml"
    assert main(["check", str(run), "--baseline", edited(tmp, baseline, unknown), "--junit", str(junit)]) == 1
    out = capsys.readouterr().out
    assert "irreversible_errors: a gate, and 1 case(s) fail" in out
    assert "decision_accuracy: 1 case(s) not in the baseline, not judged" in out
    failed = [tc.get("classname") for tc in ET.parse(junit).iter("testcase") if tc.find("failure") is not None]
    assert any("per_message" in c and "irreversible_errors" in c for c in failed)


def test_a_warn_rule_does_not_relax_a_gate(approved):
    tmp, run, baseline = approved
    data = json.loads(baseline.read_text())
    c = data["strategies"]["per_message"]["criteria"]["irreversible_errors"]
    c["passing"].append(c["failing"].pop(0))
    data["tolerances"] = {"new_failures": "warn"}
    path = tmp / "warn.json"
    path.write_text(json.dumps(data))
    assert main(["check", str(run), "--baseline", str(path)]) == 1


def test_compare_sets_one_policy_against_another_case_by_case(approved, capsys):
    _, run, _ = approved
    assert main(["compare", str(run), "--strategies", "session_state,per_message", "--fail-on-regression"]) == 1
    out = capsys.readouterr().out
    assert "session_state -> per_message" in out and "irreversible_errors" in out and "hostile-1" in out

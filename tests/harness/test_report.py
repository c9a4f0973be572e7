"""`supportbench report`: the machine-readable object of docs/criteria.md, and report.md in the run."""

from __future__ import annotations

import json

from helpers import outage_story

from harness.cli import main
from harness.run.runner import execute
from stores.registry import parse_specs


def test_json_is_exactly_the_documented_object(tmp_path, capsys):
    run = execute([outage_story()], parse_specs("oracle,empty,history_stuffing"), tmp_path, run_id="r")
    assert main(["report", str(run.path), "--format", "json"]) == 0
    obj = json.loads(capsys.readouterr().out)
    assert set(obj) == {"run", "shared_criteria", "strategies", "policies"} and obj["run"] == "r"
    assert obj["policies"] == {}  # no decision policy in this run
    assert list(obj["strategies"]) == ["history_stuffing"]  # controls only with --all
    cells = obj["strategies"]["history_stuffing"]
    cell = {"mean", "n", "pass_rate", "lo", "hi", "pass_lo", "pass_hi", "pass_boot_lo", "pass_boot_hi", "pass_interval",
            "unsupported", "errors"}
    assert set(cells["recall"]) == cell
    assert set(cells["repeat_issue"]) == cell | {"precision", "recall"}
    assert set(cells["token_budget"]) == cell | {"gate"} and cells["token_budget"]["gate"] == {"passed": True, "failing": 0, "cases": []}
    assert cells["totals"]["coverage"] == [3, 3]  # recall, session ranking, repeat detection
    assert set(cells["totals"]) == {"shared", "coverage", "core", "extra", "reply"}
    assert 0 <= cells["recall"]["pass_lo"] <= cells["recall"]["pass_rate"] <= cells["recall"]["pass_hi"] <= 1
    assert cells["recall"]["pass_interval"] in ("wilson", "bootstrap")
    assert (run.path / "report.md").read_text().startswith("# supportbench report: run r")


def test_all_shows_the_controls_and_the_table_names_every_strategy(tmp_path, capsys):
    run = execute([outage_story()], parse_specs("oracle,empty"), tmp_path, run_id="r")
    assert main(["report", "latest", "--runs", str(tmp_path), "--all"]) == 0
    out = capsys.readouterr().out
    assert f"run {run.path.name}:" in out  # `latest` resolved to the run just written
    assert "oracle" in out and "empty" in out and "recall" in out


def test_json_gains_the_decision_policies_and_the_markdown_their_leaderboard(tmp_path, capsys):
    from harness.format.loader import load_scenario
    from stores.decisions.registry import parse_policies

    scenario = load_scenario("datasets/canonical/decision-hostile-calm-hostile.yaml")
    run = execute([scenario, outage_story()], parse_specs("history_stuffing"), tmp_path, run_id="r",
                  policies=parse_policies("session_state,per_message"))
    assert main(["report", str(run.path), "--format", "json"]) == 0
    obj = json.loads(capsys.readouterr().out)
    assert list(obj["policies"]) == ["session_state", "per_message"] and list(obj["strategies"]) == ["history_stuffing"]
    gate = obj["policies"]["per_message"]["irreversible_errors"]
    assert (gate["n"], gate["irreversible"], gate["mean"]) == (5, 2, 0.6)  # one hostile line transferred, twice
    assert obj["policies"]["session_state"]["decision_accuracy"]["mean"] == 1.0
    assert "decision_accuracy" not in obj["strategies"]["history_stuffing"]
    md = (run.path / "report.md").read_text()
    assert "## Decision policies" in md and "total (decisions, equal weight)" in md
    assert "FAIL 2 of 5" in md  # the gate, with its two irreversible errors listed as cases
    assert md.count("`per_message` · irreversible_errors · `decision-hostile-calm-hostile/") == 2

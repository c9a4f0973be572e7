"""`supportbench report`: the machine-readable object of docs/criteria.md, and report.md in the run."""

from __future__ import annotations

import json

import pytest

from helpers import outage_story

from harness.cli import main
from harness.run.runner import execute
from stores.registry import parse_specs


def test_json_is_exactly_the_documented_object(tmp_path, capsys):
    run = execute([outage_story()], parse_specs("oracle,empty,history_stuffing"), tmp_path, run_id="r")
    assert main(["report", str(run.path), "--format", "json"]) == 0
    obj = json.loads(capsys.readouterr().out)
    assert set(obj) == {"run", "shared_criteria", "thin_criteria", "shared_gaps", "shortcut_separation", "strategies", "policies"} and obj["run"] == "r"
    assert obj["shared_gaps"] == []  # one strategy compared: no neighbours
    assert obj["policies"] == {}  # no decision policy in this run
    assert list(obj["strategies"]) == ["history_stuffing"]  # controls only with --all
    cells = obj["strategies"]["history_stuffing"]
    cell = {"mean", "n", "pass_rate", "lo", "hi", "pass_lo", "pass_hi", "pass_boot_lo", "pass_boot_hi", "pass_interval",
            "unsupported", "errors"}
    assert set(cells["recall"]) == cell
    assert set(cells["repeat_issue"]) == cell | {"precision", "recall"}
    assert set(cells["token_budget"]) == cell | {"gate"} and cells["token_budget"]["gate"] == {"passed": True, "failing": 0, "cases": []}
    assert cells["totals"]["coverage"] == [3, 3]  # recall, session ranking, repeat detection
    assert set(cells["totals"]) == {"shared", "shared_lo", "shared_hi", "coverage", "core", "extra", "reply", "reply_engine"}
    assert cells["totals"]["shared_lo"] <= cells["totals"]["shared"] <= cells["totals"]["shared_hi"]
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


def _two_scenario_run(tmp_path, specs):
    from dataclasses import replace

    return execute([outage_story(), replace(outage_story(), id="outage-2")], parse_specs(specs), tmp_path, run_id="r")


def test_the_order_is_separated_only_where_the_gap_interval_is_above_zero(tmp_path):
    from harness.analysis.aggregate import aggregate, shared_criteria, shared_spread
    from harness.analysis.results import Results

    run = _two_scenario_run(tmp_path / "a", "history_stuffing,history_stuffing:include_resolutions=false")
    with Results(run.path) as res:
        df = aggregate(res)
        names = ["history_stuffing", "history_stuffing[include_resolutions=False]"]
        crits = shared_criteria(df)
        spread = shared_spread(res, names, crits)
        same = shared_spread(res, [names[0], names[0]], crits)
    ((a, b, lo, hi),) = spread.gaps
    assert (a, b) == tuple(names) and lo > 0  # dropping the resolution loses the repeat on every draw
    assert spread.lo[names[0]] > spread.hi[names[1]]
    ((_, _, lo, hi),) = same.gaps
    assert lo == hi == 0  # a strategy against itself: never separated


def test_the_markdown_says_which_neighbours_the_suite_separates(tmp_path, capsys):
    run = _two_scenario_run(tmp_path, "history_stuffing,history_stuffing:include_resolutions=false,tfidf")
    assert main(["report", str(run.path), "--format", "json"]) == 0
    gaps = json.loads(capsys.readouterr().out)["shared_gaps"]
    assert len(gaps) == 2 and all(set(g) == {"better", "next", "lo", "hi", "separated"} for g in gaps)
    assert all(g["separated"] == (g["lo"] > 0) for g in gaps)
    md = (run.path / "report.md").read_text()
    assert "| shared total, 95 % interval |" in md and "How sure the order is" in md
    for g in gaps:
        assert f"{g['better']} over {g['next']}: gap interval" in md


def test_a_criterion_with_too_few_cases_is_flagged_and_left_out_of_the_shared_total(tmp_path, capsys):
    from harness.analysis.aggregate import MIN_CASES
    from harness.format.loader import load_suite
    from harness.generate import write_suite

    write_suite(tmp_path / "suite", 2, seed=3, profile="small")  # 3 stale-suppression cases, 9 identity cases
    scenarios = load_suite([str(tmp_path / "suite")])
    run = execute(scenarios, parse_specs("history_stuffing,tfidf"), tmp_path / "runs", run_id="r")
    assert main(["report", str(run.path), "--format", "json"]) == 0
    obj = json.loads(capsys.readouterr().out)
    thin = {t["criterion"]: t for t in obj["thin_criteria"]}
    assert thin["stale_suppression"] == {"criterion": "stale_suppression", "n": 3, "left_out": True}
    assert all(t["n"] < MIN_CASES and t["left_out"] for t in thin.values())
    assert "identity_persistence" in obj["shared_criteria"] and not set(thin) & set(obj["shared_criteria"])
    cells = obj["strategies"]["tfidf"]
    shared = [cells[c]["mean"] for c in obj["shared_criteria"]]
    assert cells["totals"]["shared"] == pytest.approx(sum(shared) / len(shared))
    md = (run.path / "report.md").read_text()
    assert f"Fewer than {MIN_CASES} cases in this run: " in md and "stale_suppression (n=3)" in md

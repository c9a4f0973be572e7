"""Gates are pass/fail and can fail: a deliberately broken strategy (tests only) fails each one, and
the report shows it as a failed gate with its failing cases, kept out of every total."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from shortcut_strategies import GATES

from harness.cli import main
from harness.format.loader import load_suite
from harness.run.runner import execute
from plugin_dist import Plugins
from stores.registry import parse_specs

CANONICAL = Path("datasets/canonical")


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    Plugins(tmp_path_factory.mktemp("plugins"), mp).strategy("broken", "shortcut_strategies:Broken")
    try:
        specs = parse_specs("history_stuffing," + ",".join(f"broken:breaks={g}" for g in GATES))
        run = execute(load_suite([str(CANONICAL)]), specs, tmp_path_factory.mktemp("runs"), run_id="gates")
    finally:
        mp.undo()
    return run.path


def _json(path, capsys) -> dict:
    assert main(["report", str(path), "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)["strategies"]


@pytest.mark.parametrize("gate", GATES)
def test_each_gate_fails_for_the_strategy_that_breaks_it(report, capsys, gate):
    cells = _json(report, capsys)
    broken = cells[f"broken[breaks={gate}]"][gate]
    assert broken["gate"]["passed"] is False and broken["gate"]["failing"] > 0
    case = broken["gate"]["cases"][0]
    assert case["scenario"] and case["status"] == "fail" and case["explanation"]
    assert cells["history_stuffing"][gate]["gate"]["passed"] is True


def test_gates_are_in_no_total_and_the_markdown_lists_their_failing_cases(report, capsys):
    cells = _json(report, capsys)
    md = (report / "report.md").read_text()
    head, gates = md.split("## Gates")
    assert not any(f"({g})" in head for g in GATES)  # not rows of the quality table
    assert "FAIL" in gates and "Failing gate cases:" in gates
    for g in GATES:
        assert f"`broken[breaks={g}]` · {g} · `" in gates
    # an over-budget history gains nothing on the shared total: its retrieval criteria see the cut context
    assert cells["broken[breaks=token_budget]"]["totals"]["shared"] <= cells["history_stuffing"]["totals"]["shared"] + 1e-9

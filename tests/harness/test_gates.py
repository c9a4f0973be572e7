"""Gates are pass/fail and can fail: a deliberately broken strategy (tests only) fails each one, and
the report shows it as a failed gate with its failing cases, kept out of every total."""

from __future__ import annotations

import contextlib
import io
import json

import pytest
from shortcut_strategies import GATES

from harness.cli import main


@pytest.fixture(scope="module")
def report(canonical_run):
    """The shared canonical run (tests/conftest.py): history_stuffing and a `broken[breaks=<gate>]` per gate."""
    return canonical_run


@pytest.fixture(scope="module")
def cells(report) -> dict:
    """`supportbench report --format json` of the shared run, read once: every test below reads the same report."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["report", str(report), "--format", "json"]) == 0
    return json.loads(out.getvalue())["strategies"]


@pytest.mark.parametrize("gate", GATES)
def test_each_gate_fails_for_the_strategy_that_breaks_it(cells, gate):
    broken = cells[f"broken[breaks={gate}]"][gate]
    assert broken["gate"]["passed"] is False and broken["gate"]["failing"] > 0
    case = broken["gate"]["cases"][0]
    assert case["scenario"] and case["status"] == "fail" and case["explanation"]
    assert cells["history_stuffing"][gate]["gate"]["passed"] is True


def test_gates_are_in_no_total_and_the_markdown_lists_their_failing_cases(report, cells):
    md = (report / "report.md").read_text()
    head, gates = md.split("## Gates")
    assert not any(f"({g})" in head for g in GATES)  # not rows of the quality table
    assert "FAIL" in gates and "Failing gate cases:" in gates
    for g in GATES:
        assert f"`broken[breaks={g}]` · {g} · `" in gates
    # an over-budget history gains nothing on the shared total: its retrieval criteria see the cut context
    assert cells["broken[breaks=token_budget]"]["totals"]["shared"] <= cells["history_stuffing"]["totals"]["shared"] + 1e-9

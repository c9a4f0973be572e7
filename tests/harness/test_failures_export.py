"""The Failures export is safe to open in a spreadsheet, exact in JSON, and on the command line.

A probe task (or an explanation quoting one) starting with `=`, `+`, `-`, `@`, a tab or a carriage
return used to reach a spreadsheet as a formula; CSV now gives such a cell a leading `'`, JSON keeps
it exact, and `supportbench failures RUN --format csv|json` exports the same selection as the page.
"""

from __future__ import annotations

import csv
import json

import pytest
from helpers import probe, scenario, turn

from harness.analysis import failures
from harness.analysis.results import Results
from harness.cli import main as cli
from harness.run.runner import execute
from stores.registry import parse_specs

TASKS = {
    "p-eq": '=HYPERLINK("http://127.0.0.2/x","click")',
    "p-plus": "+1+2",
    "p-minus": "-2+3 refund",
    "p-at": "@SUM(A1:A9)",
    "p-tab": "\t=1+1",
    "p-cr": "\r=1+1",
    "p-plain": "my export is broken",
}


@pytest.fixture(scope="module")
def run_path(tmp_path_factory):
    events = [turn("t-1", "Exports fail with an error since Monday.", 0)]
    events += [probe(pid, task, 10 + i, include=("t-1",)) for i, (pid, task) in enumerate(TASKS.items())]
    root = tmp_path_factory.mktemp("runs")
    return execute([scenario(events, id="formulas")], parse_specs("empty"), root, run_id="f").path


def tasks_by_probe(rows) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for r in rows:
        out.setdefault(r["probe_id"], set()).add(r["task"])
    return out


def test_csv_cells_that_would_be_formulas_get_a_leading_quote_and_json_stays_exact(run_path, tmp_path):
    with Results(run_path) as res:
        failures.export(res, tmp_path / "out.csv", "csv")
        failures.export(res, tmp_path / "out.json", "json")
    with open(tmp_path / "out.csv", encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    shown = tasks_by_probe(rows)
    for pid, task in TASKS.items():
        if task[0] in failures.FORMULA_START:
            assert shown[pid] == {"'" + task}, pid
        else:
            assert shown[pid] == {task}
    assert all(not (v or "x")[0] in failures.FORMULA_START for r in rows for v in r.values())
    exact = tasks_by_probe(json.loads((tmp_path / "out.json").read_text()))
    assert exact == {pid: {task} for pid, task in TASKS.items()}


def test_the_cli_exports_the_same_selection_to_stdout_or_a_file(run_path, tmp_path, capsys):
    assert cli(["failures", str(run_path), "--format", "json", "--criteria", "recall", "--search", "refund"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows and {r["criterion"] for r in rows} == {"recall"} and {r["probe_id"] for r in rows} == {"p-minus"}
    with Results(run_path) as res:
        from harness.analysis.queries import Filter

        expect = failures.count(res, Filter(criteria=("recall",)), text="refund")
    assert len(rows) == expect
    out = tmp_path / "sub" / "f.csv"
    assert cli(["failures", str(run_path), "--out", str(out), "--status", "fail,error,unsupported"]) == 0
    assert out.read_text().startswith("status,strategy,scenario,probe_id,criterion")
    assert list(out.parent.iterdir()) == [out]  # nothing half-written beside it


def test_the_cli_refuses_an_unknown_status_with_exit_2(run_path, capsys):
    assert cli(["failures", str(run_path), "--status", "fail,broken"]) == 2
    assert "expected a comma-separated list of fail, error, unsupported" in capsys.readouterr().err

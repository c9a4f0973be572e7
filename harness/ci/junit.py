"""JUnit XML from a run (`run --junit`) or from a check (`check --junit`).

One `<testsuite>` per strategy; one `<testcase>` per strategy x scenario x criterion with
`classname="strategy.criterion"` and `name=scenario` (a scenario's probes are one test case,
each probe's explanation a line of the message).

From a run, the verdict is the raw status: `error` -> `<error>`, `fail` -> `<failure>`,
all `unsupported` -> `<skipped>`. From a check, the verdict is the check's, so the report
agrees with the exit code: errors and missing cases -> `<error>`/`<failure>`, cases that newly
fail -> `<failure>`, cases already failing in the baseline (and tolerated new failures) ->
`<skipped>` with the reason; a `supportbench.check` suite adds one case per strategy x
criterion (mean and pass rate against the baseline) and one per finding that is not about a
single case (a suite that changed, a strategy that vanished).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pandas as pd

from harness.analysis.results import Results

from harness.analysis.cases import case_rows
from harness.ci.check import CheckResult

MAX_MESSAGE = 2000

_OWN_CASE = ("strategy_missing", "scenario_missing", "criterion_empty")
"""Regressions not about single cases of a present strategy: each gets its own test case."""


def _case_outcome_run(rows: pd.DataFrame) -> tuple[str, pd.DataFrame]:
    statuses = set(rows["status"])
    if "error" in statuses:
        return "error", rows[rows["status"] == "error"]
    if "fail" in statuses:
        return "failure", rows[rows["status"] == "fail"]
    if statuses == {"unsupported"}:
        return "skipped", rows
    return "pass", rows.iloc[0:0]


def _case_outcome_check(rows: pd.DataFrame) -> tuple[str, pd.DataFrame]:
    v = rows["verdict"]
    if (v == "error").any():
        return "error", rows[v == "error"]
    bad = v.isin(["new_failure", "gate_failure", "missing"])
    if bad.any():
        return "failure", rows[bad]
    soft = v.isin(["known_failure", "new_failure_warn"]) | (rows["status"] == "unsupported") | ((v == "new_case") & ~rows["passed"].astype(bool))
    if soft.any():
        return "skipped", rows[soft]
    return "pass", rows.iloc[0:0]


_WHY = {"known_failure": "known failure (fails in the baseline too)", "new_failure_warn": "newly failing, tolerated by a warn rule",
        "new_failure": "passed in the baseline, fails now", "gate_failure": "a gate: fails, and the baseline does not accept it failing",
        "new_case": "not in the baseline, not judged", "missing": "missing: in the baseline, no row in the run"}


def _message(rows: pd.DataFrame) -> str:
    parts = []
    for r in rows.itertuples():
        who = r.probe_id or "scenario"
        why = _WHY.get(getattr(r, "verdict", ""), "")
        parts.append(f"{who}: {why + ': ' if why else ''}{r.explanation}")
    msg = "; ".join(parts)
    return msg if len(msg) <= MAX_MESSAGE else msg[: MAX_MESSAGE - 3] + "..."


def _details(rows: pd.DataFrame) -> str:
    return "\n".join(
        f"{r.case} [{r.status}] value={'' if pd.isna(r.value) else f'{r.value:.3f}'} {r.explanation}" for r in rows.itertuples()
    )


def _suites(cases: pd.DataFrame, outcome, root: ET.Element) -> None:
    """Add one testsuite per strategy to `root`, one testcase per strategy x scenario x criterion."""
    for strategy, sg in cases.groupby("strategy", sort=True):
        suite = ET.SubElement(root, "testsuite", name=str(strategy))
        counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
        for (criterion, scenario), g in sg.groupby(["criterion", "scenario"], sort=True):
            g = g.sort_values("case", kind="stable")
            kind, why = outcome(g)
            tc = ET.SubElement(suite, "testcase", classname=f"{strategy}.{criterion}", name=str(scenario), time="0")
            counts["tests"] += 1
            if kind != "pass":
                el = ET.SubElement(tc, kind, message=_message(why))
                if kind != "skipped":
                    el.set("type", str(why["status"].iloc[0]))
                    el.text = _details(why)
                counts[{"failure": "failures", "error": "errors", "skipped": "skipped"}[kind]] += 1
        for k, v in counts.items():
            suite.set(k, str(v))
        suite.set("time", "0")


def _totals(root: ET.Element) -> ET.Element:
    for k in ("tests", "failures", "errors", "skipped"):
        root.set(k, str(sum(int(s.get(k, "0")) for s in root.findall("testsuite"))))
    return root


def run_junit(res: Results, run: str | None = None) -> ET.Element:
    """JUnit `<testsuites>` from a run's raw statuses."""
    run = res.pick_run(run)
    root = ET.Element("testsuites", name=f"supportbench run {run}")
    _suites(case_rows(res, run), _case_outcome_run, root)
    return _totals(root)


def check_junit(result: CheckResult) -> ET.Element:
    """JUnit `<testsuites>` that agrees with the check's verdict."""
    root = ET.Element("testsuites", name=f"supportbench check {result.run}")
    if len(result.cases):
        _suites(result.cases, _case_outcome_check, root)
    suite = ET.SubElement(root, "testsuite", name="supportbench.check")
    counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    by = {(f.strategy, f.criterion): f for f in result.findings
          if f.severity == "regression" and f.kind in ("new_failure", "gate_failure", "score_drop")}
    for r in result.criteria.itertuples() if len(result.criteria) else ():
        tc = ET.SubElement(suite, "testcase", classname=f"{r.strategy}.{r.criterion}", name="mean and pass rate vs baseline", time="0")
        counts["tests"] += 1
        f = by.pop((r.strategy, r.criterion), None)
        if f is not None:
            ET.SubElement(tc, "failure", message=f.message[:MAX_MESSAGE], type=f.kind).text = f.message
            counts["failures"] += 1
    for f in result.findings:
        if f.severity == "unusable" or (f.severity == "regression" and f.kind in _OWN_CASE):
            tc = ET.SubElement(suite, "testcase", classname=f"supportbench.check.{f.kind}",
                               name=" ".join(x for x in (f.strategy, f.criterion) if x) or f.kind, time="0")
            counts["tests"] += 1
            kind = "error" if f.severity == "unusable" else "failure"
            ET.SubElement(tc, kind, message=f.message[:MAX_MESSAGE], type=f.kind).text = f.message
            counts["errors" if kind == "error" else "failures"] += 1
    if counts["tests"] == 0:
        ET.SubElement(suite, "testcase", classname="supportbench.check", name="baseline applies", time="0")
        counts["tests"] = 1
    for k, v in counts.items():
        suite.set(k, str(v))
    suite.set("time", "0")
    return _totals(root)


def write_junit(root: ET.Element, path: str | Path) -> Path:
    """Write the XML with a declaration, indented, atomically."""
    from harness.run.runstore import write_text_atomic

    ET.indent(root)
    return write_text_atomic(path, "<?xml version='1.0' encoding='utf-8'?>\n" + ET.tostring(root, encoding="unicode") + "\n")

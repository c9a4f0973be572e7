"""Judge a run against an approved baseline.

Verdict levels, worst first: `unusable` (exit 2: the baseline does not describe this run),
`regression` (exit 1), `warning` and `note` (reported, exit 0). The rules, also in docs/ci.md:

- unusable: a baseline suite missing from the run; a suite whose scenario files changed or
  gained a file (both hashes and the files are named); a strategy whose params changed under
  the same label (re-approve the baseline to accept it, or pass `allow_param_changes` to judge
  the scores anyway, the change then being a warning).
- regression, always: an `error` case; a baseline strategy missing from the run; a scenario
  that vanished from its suite; a criterion that came back empty; a baseline case with no row.
- regression, by tolerance: a criterion whose mean or pass rate fell by more than its
  tolerance; a case that passed in the baseline and does not now (unless a `warn` rule covers it).
- regression, always, for a gate (`irreversible_errors`, `fail_open`: a group with `gate`): any
  failing case the baseline does not list as failing, new cases included; no tolerance or rule
  relaxes a gate.
- note: new strategies, criteria, suites or cases the baseline does not know; improvements.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import pandas as pd

from harness.analysis.results import Results
from harness.criteria import groups

from harness.analysis.cases import case_rows, criterion_stats, judged_specs
from harness.ci.baseline import Baseline, baseline_params, suites_of

Severity = Literal["unusable", "regression", "warning", "note"]
SEVERITIES: tuple[Severity, ...] = ("unusable", "regression", "warning", "note")
EPS = 1e-6
"""Baseline numbers are rounded to 6 digits; smaller differences are not changes."""
SHOW = 8
"""Cases named in one message before `... and N more`."""


@dataclass
class Finding:
    """One thing the check has to say, with everything a reader needs to act on it."""

    severity: Severity
    kind: str
    """e.g. suite_changed, params_changed, strategy_missing, scenario_missing, criterion_empty,
    case_missing, error, score_drop, new_failure, gate_failure, new_failure_tolerated, new_strategy, improvement."""
    message: str
    strategy: str = ""
    criterion: str = ""
    cases: list[str] = field(default_factory=list)
    delta: float | None = None


@dataclass
class CheckResult:
    """The verdict on one run, and the tables behind it."""

    run: str
    findings: list[Finding]
    criteria: pd.DataFrame
    """Per baseline strategy x criterion: base_mean, mean, delta, base_pass_rate, pass_rate,
    pass_rate_delta, tolerance, n_base, n."""
    cases: pd.DataFrame
    """Every case of the run (and every missing baseline case) with `baseline` (pass, fail or
    empty) and `verdict`: ok, known_failure, new_failure, new_failure_warn, error, unsupported,
    missing, new_case."""

    @property
    def exit_code(self) -> int:
        sev = {f.severity for f in self.findings}
        return 2 if "unusable" in sev else 1 if "regression" in sev else 0

    def of(self, severity: Severity) -> list[Finding]:
        return [f for f in self.findings if f.severity == severity]


def _names(cases: list[str], show: int = SHOW) -> str:
    head = ", ".join(cases[:show])
    return head + (f" ... and {len(cases) - show} more" if len(cases) > show else "")


def _explained(rows: pd.DataFrame, show: int = 3) -> str:
    """`case (explanation); ...` for the first few rows."""
    parts = [f"{r.case} ({r.explanation})" if r.explanation else r.case for r in rows.head(show).itertuples()]
    return "; ".join(parts) + (f"; ... and {len(rows) - show} more" if len(rows) > show else "")


def _check_suites(base: Baseline, manifest: dict[str, Any]) -> tuple[list[Finding], set[str]]:
    """Suite findings, and the scenarios that vanished (their cases are not reported one by one)."""
    findings: list[Finding] = []
    vanished: set[str] = set()
    run_suites = suites_of(manifest)
    for name, b in sorted(base.suites.items()):
        r = run_suites.get(name)
        if r is None:
            findings.append(Finding("unusable", "suite_missing",
                                    f"suite {name} (baseline hash {b['hash']}) is not in the run; the run has: {', '.join(sorted(run_suites)) or 'no suite'}"))
            continue
        if r["hash"] == b["hash"]:
            continue
        bs, rs = b["scenarios"], r["scenarios"]
        changed = sorted(k for k in bs.keys() & rs.keys() if bs[k] != rs[k])
        added = sorted(rs.keys() - bs.keys())
        removed = sorted(bs.keys() - rs.keys())
        hashes = f"baseline hash {b['hash']}, run hash {r['hash']}"
        if changed or added or not removed:
            what = "; ".join(x for x in (
                f"changed: {', '.join(changed)}" if changed else "",
                f"added: {', '.join(added)}" if added else "",
                f"removed: {', '.join(removed)}" if removed else "",
            ) if x) or "same files, different hash"
            findings.append(Finding("unusable", "suite_changed",
                                    f"suite {name} is a different version from the baseline's ({hashes}); {what}. "
                                    "Re-approve the baseline on the new suite (supportbench baseline RUN --out FILE)."))
        else:
            vanished.update(removed)
            findings.append(Finding("regression", "scenario_missing",
                                    f"suite {name}: {len(removed)} scenario(s) of the baseline vanished from the run: {_names(removed)} ({hashes})",
                                    cases=removed))
    for name in sorted(run_suites.keys() - base.suites.keys()):
        findings.append(Finding("note", "new_suite", f"suite {name} is not in the baseline; its cases are not judged"))
    return findings, vanished


def _param_diff(old: dict[str, Any], new: dict[str, Any]) -> str:
    keys = sorted(old.keys() | new.keys())
    diffs = [f"{k} {old.get(k, '(unset)')!r} -> {new.get(k, '(unset)')!r}" for k in keys if old.get(k) != new.get(k)]
    return ", ".join(diffs) or "params identical, hash differs (strategy name or defaults changed)"


def check_run(res: Results, base: Baseline, run: str | None = None, *, allow_param_changes: bool = False) -> CheckResult:
    """Compare one run with the baseline; see the module doc for the rules."""
    run = res.pick_run(run)
    manifest = res.manifests[run]
    findings, vanished = _check_suites(base, manifest)
    specs = judged_specs(manifest)
    for label, b in sorted(base.strategies.items()):
        s = specs.get(label)
        if s is None:
            findings.append(Finding("regression", "strategy_missing",
                                    f"strategy {label} is in the baseline but not in the run (the run has: {', '.join(specs) or 'none'})",
                                    strategy=label))
        elif s.get("params_hash", "") != b.params_hash:
            sev: Severity = "warning" if allow_param_changes else "unusable"
            findings.append(Finding(sev, "params_changed",
                                    f"strategy {label} params changed since the baseline: {_param_diff(b.params, baseline_params(s))} "
                                    f"(params_hash {b.params_hash} -> {s.get('params_hash') or '(none)'}); "
                                    + ("judged against the old numbers as allowed" if allow_param_changes
                                       else "re-approve the baseline if this is deliberate"),
                                    strategy=label))
    for label in sorted(specs.keys() - base.strategies.keys()):
        findings.append(Finding("note", "new_strategy", f"strategy {label} is not in the baseline; its cases are not judged", strategy=label))

    cases = case_rows(res, run)
    findings += _errors(cases)
    if any(f.kind in ("suite_changed", "suite_missing") for f in findings):
        # the cases belong to another suite version: judging them case by case would only be noise
        return CheckResult(run, _sorted(findings), pd.DataFrame(), pd.DataFrame())
    judged = _judge(cases, base)
    stats = criterion_stats(res, run).set_index(["strategy", "criterion"])
    rows = []
    for label in sorted(specs.keys() & base.strategies.keys()):
        sb = base.strategies[label]
        mine = judged[judged["strategy"] == label]
        for criterion, cb in sorted(sb.criteria.items()):
            got = mine[mine["criterion"] == criterion]
            st = stats.loc[(label, criterion)] if (label, criterion) in stats.index else None
            f, row, missing = _criterion(label, criterion, cb, got, st, base.tolerances.for_criterion(criterion), vanished)
            findings += f
            if row:
                rows.append(row)
            if missing:
                judged = pd.concat([judged, pd.DataFrame(missing)], ignore_index=True)
        for criterion in sorted(set(mine["criterion"]) - sb.criteria.keys()):
            findings.append(Finding("note", "new_criterion", f"{label} · {criterion}: criterion not in the baseline, not judged",
                                    strategy=label, criterion=criterion))
    return CheckResult(run, _sorted(findings), pd.DataFrame(rows), judged)


def _sorted(findings: list[Finding]) -> list[Finding]:
    order = {s: i for i, s in enumerate(SEVERITIES)}
    return sorted(findings, key=lambda f: (order[f.severity], f.strategy, f.criterion, f.kind))


def _errors(cases: pd.DataFrame) -> list[Finding]:
    out = []
    err = cases[cases["status"] == "error"]
    for (strategy, criterion), g in err.groupby(["strategy", "criterion"], sort=True):
        out.append(Finding("regression", "error",
                           f"{strategy} · {criterion}: {len(g)} case(s) errored (the strategy or scorer raised): {_explained(g)}",
                           strategy=strategy, criterion=criterion, cases=list(g["case"])))
    return out


def _judge(cases: pd.DataFrame, base: Baseline) -> pd.DataFrame:
    """Each case of the run with its baseline state (pass, fail, or empty) and verdict."""
    tol = base.tolerances
    known = {(label, k): (set(c.passing), set(c.failing)) for label, s in base.strategies.items() for k, c in s.criteria.items()}
    verdicts, was_col = [], []
    for r in cases.itertuples():
        passing, failing = known.get((r.strategy, r.criterion), ((), ()))
        was = "pass" if r.case in passing else "fail" if r.case in failing else ""
        if r.status == "error":
            v = "error"
        elif r.passed:
            v = "ok"
        elif groups.of(r.grp).gate:
            # a gate admits no failure the baseline did not already accept: no tolerance, no warn rule
            v = "known_failure" if was == "fail" else "gate_failure"
        elif not was:
            v = "new_case"
        elif was == "fail":
            v = "known_failure"
        else:
            v = "new_failure" if tol.new_failure(r.strategy, r.criterion, r.case) == "fail" else "new_failure_warn"
        was_col.append(was)
        verdicts.append(v)
    return cases.assign(baseline=was_col, verdict=verdicts)


def _criterion(label: str, criterion: str, cb, got: pd.DataFrame, st, tol: float, vanished: set[str]):
    """Findings for one baseline strategy x criterion, its row of deltas, and rows for its missing cases."""
    findings: list[Finding] = []
    where = f"{label} · {criterion}"
    passing = set(cb.passing)
    missing = []
    for c in sorted(cb.cases - set(got["case"])):
        scenario, _, probe_id = c.partition("/")
        missing.append({"strategy": label, "criterion": criterion, "case": c, "scenario": scenario, "probe_id": probe_id,
                        "status": "missing", "passed": False, "value": None, "baseline": "pass" if c in passing else "fail",
                        "explanation": "scenario vanished from the suite" if scenario in vanished else "no row in the run",
                        "verdict": "missing"})
    if got.empty or st is None:
        if cb.n:
            findings.append(Finding("regression", "criterion_empty",
                                    f"{where}: came back empty (0 cases, the baseline had {cb.n}; mean {cb.mean:.3f} -> none)",
                                    strategy=label, criterion=criterion, cases=sorted(cb.cases), delta=-cb.mean))
        return findings, None, missing
    gone = [m["case"] for m in missing if m["scenario"] not in vanished]
    if gone:
        findings.append(Finding("regression", "case_missing",
                                f"{where}: {len(gone)} case(s) of the baseline have no row in the run: {_names(gone)}",
                                strategy=label, criterion=criterion, cases=gone))
    mean, rate = float(st["mean"]), float(st["pass_rate"])
    row = {"strategy": label, "criterion": criterion, "grp": st["grp"], "base_mean": cb.mean, "mean": mean,
           "delta": mean - cb.mean, "base_pass_rate": cb.pass_rate, "pass_rate": rate, "pass_rate_delta": rate - cb.pass_rate,
           "tolerance": tol, "n_base": cb.n, "n": int(st["n"])}
    numbers = (f"mean {cb.mean:.3f} -> {mean:.3f} (delta {row['delta']:+.3f}), "
               f"pass rate {cb.pass_rate:.1%} -> {rate:.1%} (delta {row['pass_rate_delta']:+.3f}), tolerance {tol:.3f}")
    drops = [name for name, d in (("mean", row["delta"]), ("pass rate", row["pass_rate_delta"])) if d < -(tol + EPS)]
    new = got[got["verdict"] == "new_failure"]
    gate = got[got["verdict"] == "gate_failure"]
    warn = got[got["verdict"] == "new_failure_warn"]
    if len(gate):
        findings.append(Finding("regression", "gate_failure",
                                f"{where}: a gate, and {len(gate)} case(s) fail that the baseline does not accept failing "
                                f"({numbers}): {_explained(gate, SHOW)}",
                                strategy=label, criterion=criterion, cases=list(gate["case"]), delta=row["delta"]))
    if len(new) or drops:
        parts = [f"{where}: {numbers}"]
        if drops:
            parts.append(f"{' and '.join(drops)} fell beyond tolerance")
        if len(new):
            parts.append(f"{len(new)} case(s) passed in the baseline and fail now: {_explained(new, SHOW)}")
        findings.append(Finding("regression", "new_failure" if len(new) else "score_drop", "; ".join(parts),
                                strategy=label, criterion=criterion, cases=list(new["case"]),
                                delta=min(row["delta"], row["pass_rate_delta"])))
    if len(warn):
        findings.append(Finding("warning", "new_failure_tolerated",
                                f"{where}: {len(warn)} case(s) passed in the baseline and fail now, tolerated by a new_failure=warn rule "
                                f"({numbers}): {_explained(warn, SHOW)}",
                                strategy=label, criterion=criterion, cases=list(warn["case"]), delta=row["delta"]))
    fixed = got[(got["baseline"] == "fail") & (got["verdict"] == "ok")]
    if len(fixed) or row["delta"] > EPS:
        findings.append(Finding("note", "improvement",
                                f"{where}: {numbers}" + (f"; {len(fixed)} case(s) failing in the baseline pass now: {_names(list(fixed['case']))}" if len(fixed) else ""),
                                strategy=label, criterion=criterion, cases=list(fixed["case"]), delta=row["delta"]))
    unknown = got[got["baseline"] == ""]
    if len(unknown):
        findings.append(Finding("note", "new_case",
                                f"{where}: {len(unknown)} case(s) not in the baseline, not judged: {_names(list(unknown['case']))}",
                                strategy=label, criterion=criterion, cases=list(unknown["case"])))
    return findings, row, missing

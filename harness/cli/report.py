"""`supportbench report`: per-criterion results of a run, with intervals, as a table, markdown or JSON.

Every format also leaves `report.md` in the run folder (written atomically), so a run carries
its own readable summary.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from typing import Any

import pandas as pd

from harness.cli.common import console, out

FIELDS = ("mean", "n", "pass_rate", "lo", "hi", "unsupported", "errors")


def register(sub) -> None:
    p = sub.add_parser("report", help="per-criterion results of a run, with 95%% intervals")
    p.add_argument("run", help="run folder, run id under the runs folder, or 'latest'")
    p.add_argument("--format", choices=["table", "md", "json"], default="table",
                   help="table (terminal), md (markdown), or json (the machine-readable object of docs/criteria.md)")
    p.add_argument("--all", action="store_true", help="include the control strategies (oracle, empty)")
    p.add_argument("--seed", type=int, default=None, help="bootstrap seed (default: the run's seed)")
    p.add_argument("--runs", default=None, help="folder runs live in, for run ids and 'latest' (default: $SUPPORTBENCH_RUNS or runs/)")
    p.set_defaults(func=main)


def _num(x: Any) -> Any:
    if isinstance(x, float) and math.isnan(x):
        return None
    if hasattr(x, "item"):
        x = x.item()
        return None if isinstance(x, float) and math.isnan(x) else x
    return x


def _cells(df: pd.DataFrame) -> dict[str, dict[str, Any]]:
    from harness.analysis.aggregate import metric_of

    out: dict[str, dict[str, Any]] = {}
    for r in df.to_dict("records"):
        cell = {k: _num(r[k]) for k in FIELDS}
        for col in metric_of(r["criterion"]).columns:
            cell[col.key] = _num(r[col.key])
        out.setdefault(r["strategy"], {})[r["criterion"]] = cell
    return out


def as_json(run_id: str, df: pd.DataFrame, policies: pd.DataFrame | None = None) -> dict[str, Any]:
    """`{"run": ID, "strategies": {NAME: {KEY: {mean, n, pass_rate, lo, hi, unsupported, errors}}},
    "policies": {NAME: {KEY: {...}}}}`; `lo`/`hi` bound the mean, which is the headline of the
    criterion's metric; a metric with columns beside its headline adds them (F1's `precision` and
    `recall`, the gate's count of `irreversible` errors). `policies` holds the decision policies'
    criteria (empty when the run has none)."""
    none = pd.DataFrame(columns=df.columns)
    return {"run": run_id, "strategies": _cells(df), "policies": _cells(policies if policies is not None else none)}


def _f(x: Any, digits: int = 2) -> str:
    return "–" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}f}"


def cell(r: dict[str, Any]) -> str:
    """`0.83 [0.71–0.92]`, the metric's columns beside it (`P 0.90 R 0.82`), with why it is low
    when cases had no verdict."""
    from harness.analysis.aggregate import metric_of

    if r["n"] == 0:
        return "n/a"
    s = f"{_f(r['mean'])} [{_f(r['lo'])}–{_f(r['hi'])}]"
    m = metric_of(r["criterion"])
    for col in m.columns:
        s += f" {col.abbrev} {_f(r[col.key], 0 if col.key in m.counts else 2)}"  # a count is a whole number
    notes = [f"{r['unsupported']} unsupported"] * bool(r["unsupported"]) + [f"{r['errors']} errors"] * bool(r["errors"])
    return s + (f" ({', '.join(notes)})" if notes else "")


def grid(df: pd.DataFrame, titled: bool = True, axis: str = "strategy") -> tuple[list[str], list[list[str]]]:
    """Rows = criteria (doc order) then one total per group of `axis` that feeds one, columns =
    strategies, or policies (`titled`: long names)."""
    from harness.analysis.aggregate import totals
    from harness.criteria import groups, registry

    titles = {k: c.title for k, c in registry().items()}
    strategies = list(dict.fromkeys(df["strategy"]))
    rows = []
    for crit in dict.fromkeys(df["criterion"]):
        d = df[df["criterion"] == crit].set_index("strategy")
        grp = groups.of(d["grp"].iloc[0])
        label = (f"{titles.get(crit, crit)} ({crit})" if titled else crit) + grp.marker
        ns = sorted({int(d.loc[s, "n"]) for s in strategies if s in d.index})
        label += f" n={ns[-1]}" if len(ns) == 1 else f" n={ns[0]}–{ns[-1]}"
        rows.append([label] + [cell({**d.loc[s].to_dict(), "criterion": crit}) if s in d.index else "" for s in strategies])
    t = totals(df, axis).set_index("strategy")
    for g in groups.totals(axis):
        rows.append([g.total_title] + [_f(t.loc[s, g.total]) for s in strategies])
    return strategies, rows


def metric_note(criteria) -> str:
    """`For repeat-issue detection the mean is F1, with precision (P) and recall (R). ` for each
    of `criteria` whose metric is not the plain mean."""
    from harness.analysis.aggregate import metric_of
    from harness.criteria import registry

    notes = []
    for key in criteria:
        m = metric_of(key)
        if m.headline == "mean" and not m.columns:
            continue
        title = registry()[key].title if key in registry() else key
        counted = [f"the number of {c.key} cases ({c.abbrev})" for c in m.columns if c.key in m.counts]
        beside = [f"{c.key} ({c.abbrev})" for c in m.columns if c.key not in m.counts] + counted
        with_ = f", with {', '.join(beside[:-1])} and {beside[-1]}" if len(beside) > 1 else (f", with {beside[0]}" if beside else "")
        notes.append(f"For {title} the mean is {'the mean case value' if m.headline == 'mean' else m.headline}{with_}. ")
    return "".join(notes)


def markdown(run_id: str, df: pd.DataFrame, include_controls: bool, seed: int, policies: pd.DataFrame | None = None) -> str:
    from harness.analysis.aggregate import RESAMPLES

    lines = [f"# supportbench report: run {run_id}", ""]
    if df.empty and (policies is None or policies.empty):
        return "\n".join(lines + ["No scores in this run.", ""])
    if policies is not None and not policies.empty:
        lines += _policy_md(policies, seed)
    if df.empty:
        return "\n".join(lines)
    strategies, rows = grid(df)
    lines += ["| criterion | " + " | ".join(strategies) + " |", "| --- |" + " --- |" * len(strategies)]
    lines += ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in rows]
    lines += [
        "",
        f"Each cell: mean over cases [95% bootstrap interval over scenarios, {RESAMPLES} resamples, seed {seed}]. "
        + metric_note(dict.fromkeys(df["criterion"])) +
        "Cases that were unsupported or raised an error count as 0 and are listed in the cell. "
        "Totals weight each criterion equally; a criterion with no case for a strategy (n/a) is left out of its total. "
        "Pass rates (with Wilson intervals) are in `--format json` and `harness.analysis.aggregate`.",
        "",
        "Controls (oracle, empty) are " + ("included." if include_controls else "left out (`--all` shows them)."),
        "",
    ]
    return "\n".join(lines)


def _policy_md(policies: pd.DataFrame, seed: int) -> list[str]:
    """The decision policies' leaderboard section of the markdown report."""
    names, rows = grid(policies, axis="policy")
    lines = ["## Decision policies", "", "| criterion | " + " | ".join(names) + " |", "| --- |" + " --- |" * len(names)]
    lines += ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in rows]
    lines += ["", "Each customer turn with a gold plan is a case. Gates (·gate) are pass/fail and in no total: "
              "`irreversible_errors` counts false transfers, surveys mid-complaint and missed sensitive escalations "
              "(errors beside the mean); `fail_open` judges the turns while the locker is down. " + metric_note(
                  dict.fromkeys(policies["criterion"])), "", "## Memory strategies", ""]
    return lines


def main(args: argparse.Namespace) -> int:
    from rich.table import Table

    from harness.analysis.aggregate import aggregate
    from harness.analysis.results import Results, resolve_run
    from harness.criteria import groups
    from harness.run.runstore import write_text_atomic

    try:
        path = resolve_run(args.run, args.runs)
    except FileNotFoundError as e:
        console.print(f"error: {e}")
        return 2
    with Results(path) as res:
        manifest = res.manifests[path.name]
        seed = args.seed if args.seed is not None else int(manifest.get("seed", 0) or 0)
        df = aggregate(res, include_controls=args.all, seed=seed, axis="strategy")
        pol = aggregate(res, seed=seed, axis="policy")
    run_id = manifest.get("run_id", path.name)
    md = markdown(run_id, df, args.all, seed, pol)
    written = True
    try:
        write_text_atomic(path / "report.md", md)
    except OSError as e:  # a read-only run folder must not stop the report
        written = False
        console.print(f"warning: could not write {path / 'report.md'}: {(e.strerror or str(e)).lower()}")
    if args.format == "json":
        sys.stdout.write(json.dumps(as_json(run_id, df, pol), indent=2, allow_nan=False) + "\n")
        return 0
    if args.format == "md":
        sys.stdout.write(md)
        return 0
    if df.empty and pol.empty:
        out.print(f"run {run_id}: no scores")
        return 0
    for frame, axis, title in ((df, "strategy", "mean [95% interval]"), (pol, "policy", "decision policies")):
        if frame.empty:
            continue
        names, rows = grid(frame, titled=False, axis=axis)
        table = Table(title=f"run {run_id}: {title}", title_justify="left")
        table.add_column("criterion", overflow="fold")
        for s in names:
            table.add_column(s, overflow="fold")
        last_criterion = len(rows) - len(groups.totals(axis)) - 1  # a rule between the criteria and the totals
        for i, r in enumerate(rows):
            table.add_row(*r, end_section=(i == last_criterion))
        out.print(table)
    if written:
        console.print(f"report written to {path / 'report.md'}")
    return 0

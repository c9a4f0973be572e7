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

from harness.cli.common import console, out, say

FIELDS = ("mean", "n", "pass_rate", "lo", "hi", "pass_lo", "pass_hi", "pass_boot_lo", "pass_boot_hi", "pass_interval",
          "unsupported", "errors")
"""The keys of every criterion's cell in `--format json` (docs/criteria.md)."""


def register(sub) -> None:
    p = sub.add_parser("report", help="per-criterion results of a run, with 95%% intervals")
    p.add_argument("run", help="run folder, run id under the runs folder, or 'latest'")
    p.add_argument("--format", choices=["table", "md", "json"], default="table",
                   help="table (terminal), md (markdown), or json (the machine-readable object of docs/criteria.md)")
    p.add_argument("--all", action="store_true", help="include the control strategies (oracle, empty and the shortcut controls)")
    p.add_argument("--seed", type=int, default=None, help="bootstrap seed (default: the run's seed)")
    p.add_argument("--by-tag", action="store_true",
                   help="also break every table down by probe tag (a benchmark's question category, say)")
    p.add_argument("--runs", default=None, help="folder runs live in, for run ids and 'latest' (default: $SUPPORTBENCH_RUNS or runs/)")
    p.set_defaults(func=main)


def _num(x: Any) -> Any:
    if isinstance(x, float) and math.isnan(x):
        return None
    if hasattr(x, "item"):
        x = x.item()
        return None if isinstance(x, float) and math.isnan(x) else x
    return x


def _cells(df: pd.DataFrame, gates: pd.DataFrame | None, comparison: list[str] | None,
           axis: str) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """Every cell of an `aggregate` frame of `axis`, its gates and totals, and its shared criteria."""
    from harness.analysis.aggregate import metric_of, shared_criteria, totals
    from harness.criteria import groups

    out: dict[str, dict[str, Any]] = {}
    for r in df.to_dict("records"):
        cell = {k: _num(r[k]) for k in FIELDS}
        for col in metric_of(r["criterion"]).columns:
            cell[col.key] = _num(r[col.key])
        out.setdefault(r["strategy"], {})[r["criterion"]] = cell
    for g in (gates.to_dict("records") if gates is not None else ()):
        if g["strategy"] in out and g["criterion"] in out[g["strategy"]]:
            out[g["strategy"]][g["criterion"]]["gate"] = {"passed": g["passed"], "failing": g["failing"], "cases": g["cases"]}
    if df.empty:
        return out, []
    for t in totals(df, comparison, axis).to_dict("records"):
        out[t["strategy"]]["totals"] = {
            "shared": _num(t["shared"]), "coverage": [int(t["supported"]), int(t["shown"])],
            **{g.key: _num(t[g.total]) for g in groups.totals(axis)},
        }
    return out, shared_criteria(df, comparison, axis)


def as_json(run_id: str, df: pd.DataFrame, gates: pd.DataFrame | None = None,
            comparison: list[str] | None = None, policies: pd.DataFrame | None = None,
            policy_gates: pd.DataFrame | None = None, spread: Any = None, separations: list | None = None) -> dict[str, Any]:
    """`{"run": ID, "shared_criteria": [...], "strategies": {NAME: {KEY: cell, ..., "totals": {...}}},
    "policies": {NAME: {KEY: cell, ..., "totals": {...}}}}`.

    A cell holds `mean`, `n`, `pass_rate`, `lo`/`hi` (bootstrap interval of the mean, which is the
    headline of the criterion's metric), `pass_lo`/`pass_hi` (Wilson interval of the pass rate),
    `pass_boot_lo`/`pass_boot_hi` (its cluster bootstrap over scenarios) and `pass_interval`
    (`bootstrap` or `wilson`: which of the two to read), `unsupported`, `errors`, plus the metric's
    own columns (F1's `precision` and `recall`); a gate's cell also has `gate`: `{"passed", "failing",
    "cases"}` (its failing cases: `scenario`, `probe_id`, `status`, `explanation`). `totals` is
    `{"shared", "coverage": [supported, shown], <group>: ...}`: the shared headline total over
    `shared_criteria` (the quality criteria every strategy of the comparison supports), the
    strategy's coverage of the quality criteria shown, and one total per group that feeds one
    (`core`, `extra`, `reply`), with `shared_lo`/`shared_hi`, the shared total's 95 % interval by
    one cluster bootstrap over scenarios for all shared criteria at once (`spread`,
    `harness.analysis.aggregate.shared_spread`); `shared_gaps` gives, for each neighbour pair in
    the order, the paired interval of the gap and whether it is separated. `policies` holds the decision policies' cells the same way (their
    criteria, gates such as `irreversible_errors` with its count, and totals: `shared`, coverage
    and `decisions`); empty when the run has none."""
    strategies, shared = _cells(df, gates, comparison, "strategy")
    gaps = []
    if spread is not None:
        for s, cells in strategies.items():
            if "totals" in cells and s in spread.lo:
                cells["totals"]["shared_lo"], cells["totals"]["shared_hi"] = _num(spread.lo[s]), _num(spread.hi[s])
        gaps = [{"better": a, "next": b, "lo": _num(lo), "hi": _num(hi), "separated": bool(lo > 0)}
                for a, b, lo, hi in spread.gaps]
    none = pd.DataFrame(columns=df.columns)
    pols, _ = _cells(policies if policies is not None else none, policy_gates, None, "policy")
    seps = [{"criterion": x.criterion, "best": x.best, "best_mean": _num(x.best_mean), "separated": x.separated,
             "beaten_by": x.beaten_by, "ahead": x.ahead,
             "against": [{"shortcut": n, "mean": _num(m), "lo": _num(lo), "hi": _num(hi), "separated": bool(lo > 0)}
                         for n, m, lo, hi in x.against]} for x in separations or []]
    from harness.analysis.aggregate import thin_criteria

    thin = [{"criterion": c, "n": n, "left_out": c not in shared} for c, n in thin_criteria(df, comparison)] if not df.empty else []
    return {"run": run_id, "shared_criteria": shared, "thin_criteria": thin, "shared_gaps": gaps, "shortcut_separation": seps,
            "strategies": strategies, "policies": pols}


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


def ranked(df: pd.DataFrame, comparison: list[str] | None = None, controls: set[str] = frozenset(),
           axis: str = "strategy") -> list[str]:
    """The strategies (or policies) of an `aggregate` frame, best shared total first (controls after the rest)."""
    from harness.analysis.aggregate import totals

    t = totals(df, comparison, axis)
    t = t.assign(control=t["strategy"].isin(controls), key=-t["shared"].fillna(-1.0))
    return list(t.sort_values(["control", "key", "strategy"], kind="stable")["strategy"])


def _label(crit: str, d: pd.DataFrame, strategies: list[str], titled: bool, marked: bool = True) -> str:
    from harness.criteria import groups, registry

    c = registry().get(crit)
    label = (f"{c.title if c else crit} ({crit})" if titled else crit) + (groups.of(d["grp"].iloc[0]).marker if marked else "")
    ns = sorted({int(d.loc[s, "n"]) for s in strategies if s in d.index})
    return label + (f" n={ns[-1]}" if len(ns) == 1 else f" n={ns[0]}–{ns[-1]}")


def grid(df: pd.DataFrame, titled: bool = True, comparison: list[str] | None = None,
         strategies: list[str] | None = None, axis: str = "strategy", spread: Any = None) -> tuple[list[str], list[list[str]]]:
    """Rows = the quality criteria (doc order), then the shared headline total, each strategy's
    coverage and one total per group that feeds one; columns = `strategies` (default: best shared
    total first). Gates are in `gate_grid`. `axis`: `policy` for the decision policies' frame."""
    from harness.analysis.aggregate import quality_criteria, shared_criteria, totals
    from harness.criteria import groups

    strategies = strategies or ranked(df, comparison, axis=axis)
    rows = []
    for crit in quality_criteria(df, axis):
        d = df[df["criterion"] == crit].set_index("strategy")
        rows.append([_label(crit, d, strategies, titled)] + [cell({**d.loc[s].to_dict(), "criterion": crit}) if s in d.index else ""
                                                              for s in strategies])
    t = totals(df, comparison, axis).set_index("strategy")
    n_shared = len(shared_criteria(df, comparison, axis))
    rows.append([f"shared total ({n_shared} criteria all support)"] + [_f(t.loc[s, "shared"]) for s in strategies])
    if spread is not None:
        rows.append(["shared total, 95 % interval"] + [f"[{_f(spread.lo[s])}–{_f(spread.hi[s])}]" if s in spread.lo else "–"
                                                       for s in strategies])
    rows.append(["coverage (supported of shown)"]
                + [f"{int(t.loc[s, 'supported'])} of {int(t.loc[s, 'shown'])}" for s in strategies])
    for g in groups.totals(axis):
        if t[g.total].notna().any():  # a group with no case in this run has no total to show
            rows.append([g.total_title] + [_f(t.loc[s, g.total]) for s in strategies])
    return strategies, rows


def gate_cell(g: dict[str, Any]) -> str:
    """`pass`, `FAIL 3 of 49`, or `n/a` for a strategy without a case of the gate."""
    if g["passed"] is None:
        return "n/a"
    return "pass" if g["passed"] else f"FAIL {g['failing']} of {g['n']}"


def gate_grid(df: pd.DataFrame, gates: pd.DataFrame, strategies: list[str], titled: bool = True) -> list[list[str]]:
    """Rows = the gates (doc order), cells pass / FAIL k of n per strategy."""
    by = {(g["strategy"], g["criterion"]): g for g in gates.to_dict("records")}
    rows = []
    for crit in dict.fromkeys(gates["criterion"]):
        d = df[df["criterion"] == crit].set_index("strategy")
        rows.append([_label(crit, d, strategies, titled, marked=False)] + [gate_cell(by[(s, crit)]) if (s, crit) in by else "" for s in strategies])
    return rows


def gate_failures(gates: pd.DataFrame, strategies: list[str]) -> list[str]:
    """One markdown bullet per failing case the gates list, strategy by strategy."""
    out = []
    order = {s: i for i, s in enumerate(strategies)}
    for g in sorted(gates.to_dict("records"), key=lambda g: (order.get(g["strategy"], 99), g["criterion"])):
        if g["passed"] is not False:
            continue
        for c in g["cases"]:
            where = f"{c['scenario']}/{c['probe_id']}" if c["probe_id"] else c["scenario"]
            out.append(f"- `{g['strategy']}` · {g['criterion']} · `{where}` ({c['status']}): {c['explanation']}")
        if g["failing"] > len(g["cases"]):
            out.append(f"- `{g['strategy']}` · {g['criterion']}: and {g['failing'] - len(g['cases'])} more failing case(s)")
    return out


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


def markdown(run_id: str, df: pd.DataFrame, include_controls: bool, seed: int, gates: pd.DataFrame | None = None,
             comparison: list[str] | None = None, controls: set[str] = frozenset(),
             policies: pd.DataFrame | None = None, policy_gates: pd.DataFrame | None = None, spread: Any = None,
             by_tag: list | None = None, budget: pd.DataFrame | None = None, separations: list | None = None) -> str:
    from harness.analysis.aggregate import MIN_CASES, RESAMPLES, order_sentence, shared_criteria, thin_criteria

    lines = [f"# supportbench report: run {run_id}", ""]
    has_policies = policies is not None and not policies.empty
    if df.empty and not has_policies:
        return "\n".join(lines + ["No scores in this run.", ""])
    if has_policies:
        lines += _policy_md(policies, policy_gates)
    if df.empty:
        return "\n".join(lines)
    strategies = ranked(df, comparison, controls)
    _, rows = grid(df, comparison=comparison, strategies=strategies, spread=spread)
    shared = shared_criteria(df, comparison)
    lines += ["| criterion | " + " | ".join(strategies) + " |", "| --- |" + " --- |" * len(strategies)]
    lines += ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in rows]
    lines += [
        "",
        f"Each cell: mean over cases [95% bootstrap interval over scenarios, {RESAMPLES} resamples, seed {seed}]. "
        + metric_note(dict.fromkeys(df["criterion"])) +
        "Cases that were unsupported or raised an error count as 0 and are listed in the cell. "
        f"Columns are ordered by the shared total: the equal-weight mean over the quality criteria that every strategy "
        f"compared supports ({', '.join(shared) or 'none'}), so a capability only some strategies have cannot decide "
        "the order; coverage says how many of the quality criteria shown each strategy supports. The group totals "
        "weight their criteria equally and count unsupported cases as 0; a criterion with no case for a strategy "
        "(n/a) is left out of its totals. Pass rates, with a Wilson interval and, where cases share a scenario, the "
        "cluster bootstrap over scenarios (`pass_interval` names the one to read), are in `--format json`.",
        "",
    ]
    if spread is not None and spread.gaps:
        lines += [order_sentence(spread.gaps), ""]
    thin = thin_criteria(df, comparison)
    if thin:
        left = not {c for c, _ in thin} & set(shared)
        lines += [f"Fewer than {MIN_CASES} cases in this run: " + ", ".join(f"{c} (n={n})" for c, n in thin)
                  + ("; left out of the shared total, which would otherwise weigh them as much as a criterion with "
                     "hundreds of cases." if left else "; every shared criterion is that thin, so none is left out: "
                     "read the total with that in mind."), ""]
    lines += separation_md(separations or [])
    if gates is not None and len(gates):
        g_rows = gate_grid(df, gates, strategies)
        lines += ["## Gates", "",
                  "Pass/fail: a strategy passes a gate when every case passes. Gates are kept out of every total.", "",
                  "| gate | " + " | ".join(strategies) + " |", "| --- |" + " --- |" * len(strategies)]
        lines += ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in g_rows]
        failures = gate_failures(gates, strategies)
        lines += ["", "Failing gate cases:" if failures else "Every strategy passes every gate.", "", *failures]
        lines += [""] if failures else []
    if budget is not None and len(budget):
        lines += budget_md(budget, strategies)
    lines += ["Controls (oracle, empty and the shortcut controls) are "
              + ("included." if include_controls else "left out (`--all` shows them)."), ""]
    if by_tag is not None:
        lines += by_tag_md(by_tag, comparison, strategies) if by_tag else ["No probe in this run carries a tag.", ""]
    return "\n".join(lines)


def tag_frames(res, tags, *, include_controls: bool, seed: int) -> list[tuple[str, int, pd.DataFrame]]:
    """(tag, probes carrying it, the `aggregate` frame of those probes' score rows) per probe tag."""
    from harness.analysis.aggregate import aggregate
    from harness.analysis.queries import Filter

    out = []
    for tag, n in zip(tags["tag"], tags["probes"]):
        where, params = Filter(probe_tags=(tag,)).sql()
        out.append((tag, int(n), aggregate(res, include_controls=include_controls, seed=seed, axis="strategy",
                                           where=where, params=params)))
    return out


def by_tag_md(frames, comparison: list[str] | None, strategies: list[str]) -> list[str]:
    """The markdown section of the per-tag breakdown: one table per probe tag, columns in the
    order of the whole run's table."""
    lines = ["## By probe tag", "",
             "The same criteria over the probes carrying each tag only (a probe with several tags counts under each). "
             "Columns keep the order of the whole run.", ""]
    for tag, n, df in frames:
        shown = [s for s in strategies if s in set(df["strategy"])]
        _, rows = grid(df, comparison=comparison, strategies=shown)
        lines += [f"### `{tag}` ({n} probes)", "", "| criterion | " + " | ".join(shown) + " |", "| --- |" + " --- |" * len(shown)]
        lines += ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in rows] + [""]
    return lines


def budget_md(budget: pd.DataFrame, strategies: list[str]) -> list[str]:
    """The report's budget-use section: per strategy, the share of the budget its contexts used and
    why they stopped filling, with the strategies that left most of it empty while gold was missing."""
    from harness.analysis.budget import EMPTY_SHARE, budget_sentence

    rows = budget.set_index("strategy")
    shown = [s for s in strategies if s in rows.index]
    if not shown:
        return []
    lines = ["## Budget use", "",
             "| | " + " | ".join(shown) + " |", "| --- |" + " --- |" * len(shown)]
    for key, title, fmt in (("used", "budget used, mean", "{:.0%}"), ("used_median", "budget used, median", "{:.0%}"),
                            ("budget", "stopped: budget reached", "{:d}"), ("cap", "stopped: item cap", "{:d}"),
                            ("exhausted", "stopped: candidates exhausted", "{:d}"),
                            ("empty_missing", f"under {EMPTY_SHARE:.0%} used while gold missing", "{:d}")):
        cells = []
        for s in shown:
            v = rows.loc[s, key]
            cell = fmt.format(int(v) if fmt == "{:d}" else float(v))
            cells.append(cell + (" ⚠" if key == "empty_missing" and rows.loc[s, "flagged"] else ""))
        lines.append(f"| {title} | " + " | ".join(cells) + " |")
    flagged = [budget_sentence(rows.loc[s].to_dict() | {"strategy": s}) for s in shown if rows.loc[s, "flagged"]]
    lines += ["", "Share of each probe's token budget the context text takes, and why the strategy stopped filling it "
              "(an item that did not fit, its opt-in item cap, or no eligible candidate left). ⚠: the strategy left "
              f"more than {1 - EMPTY_SHARE:.0%} of the budget empty on a probe where gold was missing (the recall "
              "criterion), so something other than the budget kept the gold out.", ""]
    lines += [f"- {f}" for f in flagged] + ([""] if flagged else [])
    return lines


def separation_md(seps: list) -> list[str]:
    """The markdown section on the shortcut controls: the headline's verdict sentence, then per
    criterion the best design, the closest shortcut and whether every shortcut is separated."""
    from harness.analysis.aggregate import separation_sentence

    if not seps:
        return ["No shortcut controls ran, so nothing here shows the order is not won by a trivial rule "
                "(`supportbench run` runs them by default).", ""]
    lines = ["## Shortcut controls", "", separation_sentence(seps), "",
             "| criterion | best design | closest shortcut | paired interval (best − shortcut) | separated from every shortcut |",
             "| --- | --- | --- | --- | --- |"]
    for s in seps:
        if not s.against:
            lines.append(f"| {s.criterion} | {s.best} {_f(s.best_mean)} | no shortcut supports it | – | – |")
            continue
        name, mean, lo, hi = max(s.against, key=lambda a: a[1])
        verdict = "yes" if s.separated else "NO: " + ", ".join(s.unseparated)
        if s.beaten_by:
            verdict += f" (beaten by {', '.join(s.beaten_by)})"
        elif s.ahead:
            verdict += f" ({', '.join(s.ahead)} ahead within the interval)"
        lines.append(f"| {s.criterion} | {s.best} {_f(s.best_mean)} | {name} {_f(mean)} | [{_f(lo, 3)}, {_f(hi, 3)}] | {verdict} |")
    lines += ["", "Each interval is a 95 % paired cluster bootstrap over scenarios (the resamples of the criterion's "
              "interval); separated means it lies above 0. The shortcut controls read only positions, roles, times and "
              "the task's words (`stores.shortcuts`).", ""]
    return lines


def _policy_md(policies: pd.DataFrame, policy_gates: pd.DataFrame | None) -> list[str]:
    """The decision policies' leaderboard section of the markdown report: their quality criteria and
    totals, then their gates with the failing cases."""
    names, rows = grid(policies, axis="policy")
    lines = ["## Decision policies", "", "| criterion | " + " | ".join(names) + " |", "| --- |" + " --- |" * len(names)]
    lines += ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in rows]
    if policy_gates is not None and len(policy_gates):
        lines += ["", "| gate | " + " | ".join(names) + " |", "| --- |" + " --- |" * len(names)]
        lines += ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in gate_grid(policies, policy_gates, names)]
    lines += ["", "Each customer turn with a gold plan is a case. Gates are pass/fail and in no total: "
              "`irreversible_errors` counts false transfers, surveys mid-complaint and missed sensitive escalations; "
              "`fail_open` judges the turns while the locker is down. " + metric_note(dict.fromkeys(policies["criterion"]))]
    failures = gate_failures(policy_gates, names) if policy_gates is not None and len(policy_gates) else []
    lines += ["", "Failing decision gate cases:" if failures else "Every policy passes every decision gate.", "", *failures]
    lines += ["", "## Memory strategies", ""]
    return lines


def main(args: argparse.Namespace) -> int:
    from harness.cli.common import Table

    from harness.analysis.aggregate import (aggregate, comparison_of, control_labels, gates, order_sentence, quality_criteria,
                                            separation_sentence, shared_criteria, shared_spread, shortcut_labels,
                                            shortcut_separation, thin_criteria)
    from harness.analysis.budget import budget_use
    from harness.analysis.results import Results, resolve_run
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
        controls = control_labels(res)
        comparison = comparison_of(list(dict.fromkeys(df["strategy"])), controls) if not df.empty else []
        gate_rows = gates(res, strategies=list(dict.fromkeys(df["strategy"])))
        pol = aggregate(res, seed=seed, axis="policy")
        pol_gates = gates(res, strategies=list(dict.fromkeys(pol["strategy"])), axis="policy", limit=50)
        compared = [s for s in ranked(df, comparison, controls) if s in set(comparison)]  # controls decide no order
        spread = (shared_spread(res, compared, shared_criteria(df, comparison), seed=seed, axis="strategy")
                  if not df.empty else None)
        by_tag = None
        if args.by_tag:
            from harness.analysis.queries import probe_tag_counts

            by_tag = tag_frames(res, probe_tag_counts(res), include_controls=args.all, seed=seed)
        budget = budget_use(res) if not df.empty else None
        seps = (shortcut_separation(res, compared, shortcut_labels(res), shared_criteria(df, comparison),
                                    quality_criteria(df), seed=seed) if not df.empty else [])
    run_id = manifest.get("run_id", path.name)
    md = markdown(run_id, df, args.all, seed, gate_rows, comparison, controls, pol, pol_gates, spread, by_tag, budget, seps)
    written = True
    try:
        write_text_atomic(path / "report.md", md)
    except OSError as e:  # a read-only run folder must not stop the report
        written = False
        console.print(f"warning: could not write {path / 'report.md'}: {(e.strerror or str(e)).lower()}")
    if args.format == "json":
        obj = as_json(run_id, df, gate_rows, comparison, pol, pol_gates, spread, seps)
        if by_tag is not None:
            obj["by_tag"] = {tag: {"probes": n, "strategies": _cells(d, None, comparison, "strategy")[0]} for tag, n, d in by_tag}
        sys.stdout.write(json.dumps(obj, indent=2, allow_nan=False) + "\n")
        return 0
    if args.format == "md":
        say(md)
        return 0
    if df.empty and pol.empty:
        out.print(f"run {run_id}: no scores")
        return 0
    if not pol.empty:
        names, rows = grid(pol, titled=False, axis="policy")
        table = Table(title=f"run {run_id}: decision policies", title_justify="left")
        table.add_column("criterion", overflow="fold")
        for s in names:
            table.add_column(s, overflow="fold")
        last_criterion = len(quality_criteria(pol, "policy")) - 1
        for i, r in enumerate(rows):
            table.add_row(*r, end_section=(i == last_criterion or i == len(rows) - 1))
        for r in gate_grid(pol, pol_gates, names, titled=False):
            table.add_row(*r)
        out.print(table)
    if df.empty:
        if written:
            console.print(f"report written to {path / 'report.md'}")
        return 0
    strategies = ranked(df, comparison, controls)
    _, rows = grid(df, titled=False, comparison=comparison, strategies=strategies, spread=spread)
    table = Table(title=f"run {run_id}: mean [95% interval], best shared total first", title_justify="left")
    table.add_column("criterion", overflow="fold")
    for s in strategies:
        table.add_column(s, overflow="fold")
    last_criterion = len(quality_criteria(df)) - 1  # a rule between the criteria and the totals
    for i, r in enumerate(rows):
        table.add_row(*r, end_section=(i == last_criterion or i == len(rows) - 1))
    for r in gate_grid(df, gate_rows, strategies, titled=False):
        table.add_row(*r)
    out.print(table)
    if spread is not None and spread.gaps:
        out.print(order_sentence(spread.gaps), markup=False)
    if seps:
        out.print(separation_sentence(seps), markup=False)
    thin = thin_criteria(df, comparison)
    if thin:
        out.print("fewer than the minimum cases in this run (flagged; left out of the shared total unless every shared "
                  "criterion is): " + ", ".join(f"{c} (n={n})" for c, n in thin), markup=False)
    for tag, n, d in by_tag or ():
        shown = [s for s in strategies if s in set(d["strategy"])]
        _, rows = grid(d, titled=False, comparison=comparison, strategies=shown)
        table = Table(title=f"probes tagged {tag} ({n} probes)", title_justify="left")
        table.add_column("criterion", overflow="fold")
        for s in shown:
            table.add_column(s, overflow="fold")
        last_criterion = len(quality_criteria(d)) - 1
        for i, r in enumerate(rows):
            table.add_row(*r, end_section=(i == last_criterion))
        out.print(table)
    if by_tag == []:
        out.print("no probe in this run carries a tag", markup=False)
    if budget is not None:
        from harness.analysis.budget import budget_sentence

        shown = set(strategies)
        for r in budget.to_dict("records"):
            if r["strategy"] in shown:
                out.print(("budget! " if r["flagged"] else "budget: ") + budget_sentence(r), markup=False)
    failing = [g for g in gate_rows.to_dict("records") if g["passed"] is False]
    for g in failing:
        c = g["cases"][0]
        where = f"{c['scenario']}/{c['probe_id']}" if c["probe_id"] else c["scenario"]
        out.print(f"gate {g['criterion']} fails for {g['strategy']}: {g['failing']} of {g['n']} cases, e.g. {where}: "
                  f"{c['explanation']}", markup=False)
    if written:
        console.print(f"report written to {path / 'report.md'}")
    return 0

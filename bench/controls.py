"""The controls' promise, measured: oracle, empty and every shortcut control run beside the designs
on the canonical suite, on a fresh generated suite of each profile (the held-back half) and on the
challenge suite, and what each verdict says.

    .venv/bin/python bench/controls.py --out docs/results/controls.md
    .venv/bin/python bench/controls.py --seed 29 --customers 60 --long-customers 12
    .venv/bin/python bench/controls.py --seed 41 --beside structured:front=rules --out docs/results/controls.md

`--beside` runs variants next to the designs (one line each per suite, never among the designs: the
rules-only structured beside the default one shows what the learned preference reading adds).

Per suite: every quality criterion's mean for the best design on it, the oracle, empty and each
shortcut control; the shared totals; whether the best design is separated from every shortcut
(`harness.analysis.aggregate.shortcut_separation`, paired cluster bootstrap); and whether the
oracle scores 1.0 on every criterion it supports (where it does not, the best any other context
reaches beside it: on a reply-engine criterion, what no context lets the engine read is the
engine's). The runs stay in `--runs` (default: a fresh temporary folder, printed) so every figure can be traced to its run; the command and the load
average are printed and written beside the figures.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):  # `python bench/controls.py`
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.results import command_line  # noqa: E402
from harness.analysis.aggregate import (  # noqa: E402
    SHARED, aggregate, quality_criteria, separation_sentence, shared_criteria, shortcut_separation, supports, totals,
)
from harness.analysis.results import Results  # noqa: E402
from harness.criteria import groups  # noqa: E402
from harness.format.loader import load_suite  # noqa: E402
from harness.generate import shares_sentence, shortcut_shares, write_suite  # noqa: E402
from harness.run.runner import execute  # noqa: E402
from stores.registry import SHORTCUTS, parse_specs  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
DESIGNS = ("history_stuffing", "tfidf", "embedding", "session_aware", "hybrid", "structured")
CONTROLS = ("oracle", "empty", *SHORTCUTS)


def suites(args, work: Path) -> list[tuple[str, Path]]:
    """(name, folder) of every suite measured: canonical, one generated suite per profile (held-back
    half), then the challenge suite."""
    out = [("canonical", ROOT / "datasets" / "canonical")]
    for profile, n in (("realistic", args.customers), ("small", args.customers), ("long-history", args.long_customers)):
        folder = work / f"{profile}-{n}-s{args.seed}"
        write_suite(folder, n, seed=args.seed, profile=profile)
        out.append((f"generated {profile}, {n} customers, seed {args.seed}", folder))
    return out + [("challenge", ROOT / "datasets" / "challenge")]


def measure(name: str, folder: Path, runs: Path, run_id: str, beside: tuple[str, ...] = ()) -> dict:
    """Run designs and controls (and `beside`: variants shown next to them, never among the designs) on
    one suite; the figures the page shows."""
    t0 = time.perf_counter()
    run = execute(load_suite([str(folder)]), parse_specs(",".join(DESIGNS + CONTROLS + beside)), runs, run_id=run_id)
    wall = time.perf_counter() - t0
    with Results(run.path) as res:
        df = aggregate(res, include_controls=True, axis="strategy")
        shared = shared_criteria(df, list(DESIGNS))
        seps = shortcut_separation(res, list(DESIGNS), list(SHORTCUTS), shared, quality_criteria(df))
        # cases whose whole history fits the budget: every order includes every item there, so no ranking can win them
        fits = dict(res.rows("""WITH whole AS (SELECT scenario, probe_id FROM candidates WHERE strategy = 'recency'
                                               GROUP BY 1, 2 HAVING bool_and(included))
                                SELECT s.criterion, count(*) FROM scores s JOIN whole USING (scenario, probe_id)
                                WHERE s.strategy = 'recency' AND s.status <> 'unsupported' GROUP BY 1"""))
    tot = totals(df, list(DESIGNS)).set_index("strategy")["shared"]
    oracle = df[(df.strategy == "oracle") & supports(df) & (df.n > 0)]
    short = oracle[oracle["mean"] < 1.0]
    others = df[(df.strategy != "oracle") & (df.n > 0)].groupby("criterion")["mean"].max()
    engine = {c for c, g in zip(df.criterion, df.grp) if groups.of(g).key == "reply_engine"}
    names = [sp.label for sp in parse_specs(",".join(beside))] if beside else []
    scored = df[supports(df) & (df.n > 0)]  # a criterion the variant does not support shows no figure, not 0
    aside = {n: (float(totals(df, list(DESIGNS) + [n]).set_index("strategy")["shared"].get(n, float("nan"))),
                 dict(zip(scored[scored.strategy == n].criterion, scored[scored.strategy == n]["mean"]))) for n in names}
    return {"name": name, "run": run_id, "path": run.path, "wall": wall, "df": df, "shared": shared, "totals": tot, "beside": aside,
            "seps": seps, "oracle_ok": short.empty, "oracle_n": len(oracle), "fits": fits,
            "shares": shares_sentence(shortcut_shares([f.read_text(encoding="utf-8") for f in sorted(folder.glob("*.yaml"))])),
            "oracle_short": [(c, m, c in engine, others.get(c, float("nan"))) for c, m in zip(short.criterion, short["mean"])]}


def _f(x) -> str:
    return "–" if x != x else f"{x:.2f}"


def page(results: list[dict], command: str, load: tuple[str, str]) -> str:
    lines = ["# Controls, measured", "",
             "Generated by `bench/controls.py`; do not edit by hand. Command:", "", f"    {command}", "",
             f"Load average before: {load[0]}; after: {load[1]} (2 cores shared with other work).", "",
             "Every suite runs the designs (" + ", ".join(DESIGNS) + ") and the controls (" + ", ".join(CONTROLS)
             + "). A criterion's *best design* is the design with the highest mean on it; *separated* means the 95 % "
             "paired cluster-bootstrap interval of best design minus shortcut lies above 0 for every shortcut. A "
             "shortcut *beats* every design only when that interval lies below 0. The generated suites are fresh "
             "(never tuned on) and written from the catalog's held-back half; the challenge suite was written apart "
             "and never tuned on. *whole* counts a criterion's cases whose whole history fits the budget (every "
             "order includes every item there, so no ranking can win them). Runs: "
             + ", ".join(f"`{r['run']}`" for r in results) + ".", "",
             "| suite | best design, shared total | closest shortcut | paired interval | criteria a shortcut beats every "
             "design on | oracle |", "| --- | --- | --- | --- | --- | --- |"]
    for r in results:
        head = next((s for s in r["seps"] if s.criterion == SHARED), None)
        close = min(head.against, key=lambda a: head.best_mean - a[1]) if head and head.against else None
        beaten = "; ".join(f"{s.criterion} ({', '.join(s.beaten_by)})" for s in r["seps"] if s.beaten_by) or "none"
        ahead = "; ".join(f"{s.criterion} ({', '.join(s.ahead)})" for s in r["seps"] if s.ahead)
        lines.append(f"| {r['name']} | " + (f"{head.best} {head.best_mean:.3f}" if head else "no headline criterion") + " | "
                     + (f"{close[0]} {close[1]:.3f} ({head.best_mean - close[1]:+.3f})" if close else "–") + " | "
                     + (f"[{close[2]:.3f}, {close[3]:.3f}]" if close else "–") + " | " + beaten
                     + (f"; ahead within the interval: {ahead}" if ahead else "") + " | "
                     + ("1.00 on all" if r["oracle_ok"] else "below 1.00 on " + ", ".join(c for c, *_ in r["oracle_short"])) + " |")
    lines.append("")
    for r in results:
        df, seps = r["df"], {s.criterion: s for s in r["seps"]}
        head = seps.get(SHARED)
        lines += [f"## {r['name']} (run `{r['run']}`, {r['wall']:.0f} s)", "",
                  f"What a positional rule could use (`harness.generate.shortcut_shares`): {r['shares']}.", ""]
        cols = ["best design", "oracle", "empty", *SHORTCUTS]
        lines += ["| criterion | n | whole | " + " | ".join(cols) + " | separated |", "| --- |" + " --- |" * (len(cols) + 3)]
        for crit in quality_criteria(df):
            d = df[df.criterion == crit].set_index("strategy")
            s = seps.get(crit)
            best = f"{s.best} {_f(s.best_mean)}" if s else "–"
            cells = [best] + [_f(d.loc[c, "mean"]) if c in d.index and supports(d.loc[[c]]).iloc[0] else "n/a" for c in cols[1:]]
            verdict = "–" if s is None or not s.against else ("yes" if s.separated else "no: " + ", ".join(s.unseparated))
            if s is not None and s.beaten_by:
                verdict += f"; beaten by {', '.join(s.beaten_by)}"
            lines.append(f"| {crit} | {int(d['n'].max())} | {r['fits'].get(crit, 0)} | " + " | ".join(cells) + f" | {verdict} |")
        t = r["totals"]
        best_total = f"{head.best} {head.best_mean:.3f}" if head else "–"
        if r["shared"]:
            lines.append("| **shared total** (" + ", ".join(r["shared"]) + ") | | | " + best_total + " | "
                         + " | ".join(f"{t.get(c, float('nan')):.3f}" for c in cols[1:]) + " | "
                         + ("–" if head is None else "yes" if head.separated else "no") + " |")
        lines += ["", (separation_sentence(r["seps"]) or "No shortcut ran.") if r["shared"] else
                  "No criterion of the shared headline has cases on this suite (its criteria are the reply engine's, "
                  "extraction and expiry).", ""]
        if head is not None:
            gaps = ", ".join(f"{n} {head.best_mean - m:+.3f} [{lo:.3f}, {hi:.3f}]" for n, m, lo, hi in head.against)
            lines += [f"Shared-total gap of {head.best} over each shortcut (point [paired 95 % interval]): {gaps}.", ""]
        for n, (total, means) in r.get("beside", {}).items():
            lines += [f"Beside the designs, `{n}`: shared total {_f(total)}; "
                      + ", ".join(f"{c} {_f(means[c])}" for c in quality_criteria(df) if c in means) + ".", ""]
        lines += ["Oracle: " + (f"1.00 on every one of the {r['oracle_n']} criteria it supports." if r["oracle_ok"] else
                                f"1.00 on {r['oracle_n'] - len(r['oracle_short'])} of the {r['oracle_n']} criteria it supports; below on "
                                + ", ".join(f"{c} ({m:.3f}; the best of any other context: {best:.3f}"
                                            + ("; a reply-engine criterion: what no context lets the engine read" if eng and m >= best - 1e-12 else "")
                                            + ")" for c, m, eng, best in r["oracle_short"]) + "."), ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--seed", type=int, default=29, help="seed of the generated suites (default 29)")
    p.add_argument("--customers", type=int, default=60, help="customers of the realistic and small suites (default 60)")
    p.add_argument("--long-customers", type=int, default=12, help="customers of the long-history suite (default 12)")
    p.add_argument("--runs", default=None, help="folder for the runs (default: a fresh temporary folder, printed)")
    p.add_argument("--out", default=None, help="markdown page to write (e.g. docs/results/controls.md)")
    p.add_argument("--beside", default="", help="strategy specs run beside the designs and shown apart, never among "
                   "them (e.g. structured:front=rules, the rules-only variant of the default design)")
    args = p.parse_args(argv)
    given = list(argv if argv is not None else sys.argv[1:])
    if "--runs" in given:  # a folder of this machine: not written into the page
        i = given.index("--runs")
        del given[i:i + 2]
    command = command_line("controls.py", given)
    runs = Path(args.runs) if args.runs else Path(tempfile.mkdtemp(prefix="supportbench-controls-"))
    print(f"runs in {runs}")
    before = "%.2f %.2f %.2f" % os.getloadavg()
    results = []
    with tempfile.TemporaryDirectory() as work:
        for k, (name, folder) in enumerate(suites(args, Path(work))):
            r = measure(name, folder, runs, f"controls-{k}-{int(time.time())}", tuple(x for x in args.beside.split(",") if x))
            print(f"{r['run']}: {name}: {separation_sentence(r['seps'])}")
            for n, (total, means) in r["beside"].items():
                print(f"  beside: {n}: shared total {total:.3f}, preference_surfacing {means.get('preference_surfacing', float('nan')):.3f}")
            print(f"  oracle {'1.00 on all ' + str(r['oracle_n']) + ' supported criteria' if r['oracle_ok'] else r['oracle_short']}")
            print(f"  shared total: {dict(r['totals'].round(3))}")
            results.append(r)
    after = "%.2f %.2f %.2f" % os.getloadavg()
    print(f"load average before {before}, after {after}")
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(page(results, command, (before, after)), encoding="utf-8")
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

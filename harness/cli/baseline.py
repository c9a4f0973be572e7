"""`supportbench baseline RUN --out FILE`: approve a run's scores as the baseline CI checks against."""

from __future__ import annotations

from pathlib import Path

from harness.cli.common import console, say


def register(sub) -> None:
    p = sub.add_parser("baseline", help="write the approved baseline (JSON) from a run, for `supportbench check`")
    p.add_argument("run", help="run folder, run id under the runs folder, or `latest`")
    p.add_argument("--out", required=True, help="baseline file to write, e.g. baselines/canonical.json")
    p.add_argument("--strategies", "-s", default=None, help="comma-separated strategy labels to keep (default: all in the run)")
    p.add_argument("--tolerance", type=float, default=None,
                   help="default absolute tolerance on each criterion's mean and pass rate (default: keep the file's, else 0.0)")
    p.add_argument("--fresh", action="store_true", help="do not carry over tolerances from an existing --out file")
    p.add_argument("--runs", default=None, help="folder runs live in (default: $SUPPORTBENCH_RUNS or runs/)")
    p.set_defaults(func=main)


def main(args) -> int:
    from harness.ci.baseline import BaselineError, Tolerances, build_baseline, load_baseline
    from harness.analysis.results import Results, resolve_run

    try:
        path = resolve_run(args.run, args.runs)
    except FileNotFoundError as e:
        console.print(f"error: {e}", markup=False)
        return 2
    out = Path(args.out)
    tolerances = Tolerances()
    if out.exists() and not args.fresh:
        try:
            tolerances = load_baseline(out).tolerances
            console.print(f"keeping the tolerances of {out} (use --fresh to reset them)", markup=False)
        except BaselineError as e:
            console.print(f"error: {e}\n(use --fresh to overwrite it)", markup=False)
            return 2
    if args.tolerance is not None:
        if not 0 <= args.tolerance <= 1:
            console.print("error: --tolerance must be between 0 and 1", markup=False)
            return 2
        tolerances.default = args.tolerance
    strategies = [s.strip() for s in args.strategies.split(",") if s.strip()] if args.strategies else None
    with Results(path) as res:
        try:
            base = build_baseline(res, strategies=strategies, tolerances=tolerances)
        except BaselineError as e:
            console.print(f"error: {e}", markup=False)
            return 2
    base.write(out)
    n = sum(len(s.criteria) for s in base.strategies.values())
    suites = ", ".join(f"{k} ({v['hash'][:12]})" for k, v in sorted(base.suites.items()))
    console.print(f"wrote {out}: run {path.name}, {len(base.strategies)} strategies, {n} strategy x criterion, "
                  f"suites {suites}", markup=False)
    say(f"{out}\n")
    return 0

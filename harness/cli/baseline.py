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
    p.add_argument("--readme", default=None,
                   help="also rewrite the headline table between this file's headline markers (e.g. README.md), "
                        "so a re-approval and the README's table land in one commit")
    p.set_defaults(func=main)


def main(args) -> int:
    from harness.ci.baseline import BaselineError, Tolerances, build_baseline, load_baseline, with_headline
    from harness.run.runstore import write_text_atomic
    from stores.files import README_BYTES, read_text_capped
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
    readme = None
    if args.readme:  # read and check before anything is written, so a bad README leaves both files as they were
        try:
            readme = read_text_capped(Path(args.readme), README_BYTES)
            with_headline(readme, base, args.readme)
        except OSError as e:
            console.print(f"error: {args.readme}: {e.strerror or e}", markup=False)
            return 2
        except ValueError as e:  # BaselineError names the file; a UnicodeDecodeError does not
            msg = str(e) if isinstance(e, BaselineError) else f"{args.readme}: not UTF-8 text ({e})"
            console.print(f"error: {msg}", markup=False)
            return 2
    base.write(out)
    if readme is not None:  # the table from the file as written, the same one `check` and the README test read
        write_text_atomic(args.readme, with_headline(readme, load_baseline(out), args.readme))
        console.print(f"rewrote the headline table of {args.readme}", markup=False)
    n = sum(len(s.criteria) for s in base.strategies.values())
    suites = ", ".join(f"{k} ({v['hash'][:12]})" for k, v in sorted(base.suites.items()))
    console.print(f"wrote {out}: run {path.name}, {len(base.strategies)} strategies, {n} strategy x criterion, "
                  f"suites {suites}", markup=False)
    say(f"{out}\n")
    return 0

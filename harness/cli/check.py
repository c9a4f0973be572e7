"""`supportbench check RUN --baseline FILE`: exit 0 pass, 1 regression, 2 the baseline does not apply."""

from __future__ import annotations

from pathlib import Path

from harness.cli.common import console, say


def register(sub) -> None:
    p = sub.add_parser("check", help="check a run against an approved baseline (exit 0 pass, 1 regression, 2 unusable)")
    p.add_argument("run", help="run folder, run id under the runs folder, or `latest`")
    p.add_argument("--baseline", required=True, help="baseline file written by `supportbench baseline`")
    p.add_argument("--junit", default=None, help="also write JUnit XML of the verdict to this file")
    p.add_argument("--format", choices=["text", "md"], default="text", help="report on stdout: text, or markdown for a PR comment")
    p.add_argument("--summary", default=None, help="also write the markdown report to this file (e.g. $GITHUB_STEP_SUMMARY)")
    p.add_argument("--allow-param-changes", action="store_true",
                   help="judge strategies whose params changed against the old numbers (a warning) instead of refusing (exit 2)")
    p.add_argument("--runs", default=None, help="folder runs live in (default: $SUPPORTBENCH_RUNS or runs/)")
    p.set_defaults(func=main)


def main(args) -> int:
    from stores.redaction import scrub
    from harness.ci.baseline import BaselineError, load_baseline
    from harness.ci.check import check_run
    from harness.ci.junit import check_junit, write_junit
    from harness.ci.render import check_markdown, check_text
    from harness.analysis.results import Results, resolve_run

    try:
        path = resolve_run(args.run, args.runs)
        base = load_baseline(args.baseline)
    except (FileNotFoundError, BaselineError) as e:
        console.print(f"error: {e}", markup=False)
        console.print("UNUSABLE (exit 2)", markup=False)
        return 2
    import duckdb

    try:
        res = Results(path)
    except duckdb.Error as e:  # a run folder whose tables cannot be read
        console.print(f"error: run {path} is unreadable: {e}", markup=False)
        console.print("UNUSABLE (exit 2)", markup=False)
        return 2
    from harness.run.runstore import UnusableRun

    try:
        with res:
            result = check_run(res, base, allow_param_changes=args.allow_param_changes)
    except UnusableRun as e:  # a part that decodes badly only fails when it is read
        console.print(f"error: {e}", markup=False)
        console.print("UNUSABLE (exit 2)", markup=False)
        return 2
    source = str(base.source.get("run_id") or "")
    say((check_markdown(result, args.baseline, source) if args.format == "md" else check_text(result, args.baseline, source)) + "\n")
    if args.summary:
        Path(args.summary).parent.mkdir(parents=True, exist_ok=True)
        with open(args.summary, "a") as f:  # append: $GITHUB_STEP_SUMMARY may hold other steps' output
            f.write(scrub(check_markdown(result, args.baseline, source)))  # the one scrubber: no secret in CI's summary
    if args.junit:
        write_junit(check_junit(result), args.junit)
        console.print(f"wrote JUnit to {args.junit}", markup=False)
    from harness.cli.run import outages

    down = outages(path)
    if down:  # an outage, not a regression: the decision cases of these policies measured nothing
        for label, o in down:
            console.print(f"OUTAGE: policy {label}: the session locker was unreachable on {o['events']} event(s) "
                          f"(first: {o['first']}); its decision cases measured the outage, not the policy", markup=False)
        console.print("UNUSABLE (exit 2): rerun with the locker reachable", markup=False)
        return 2
    return result.exit_code

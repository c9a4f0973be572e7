"""`supportbench compare RUN_A RUN_B` or `supportbench compare RUN --strategies a,b`: deltas and flipped cases."""

from __future__ import annotations

import shlex
from pathlib import Path

from harness.cli.common import console, say


def register(sub) -> None:
    p = sub.add_parser("compare", help="per-criterion deltas and flipped cases between two runs, or two strategies of one run")
    p.add_argument("runs_", nargs="+", metavar="RUN", help="RUN_A RUN_B, or one RUN with --strategies a,b")
    p.add_argument("--strategies", "-s", default=None,
                   help="with two runs: only these strategies; with one run: exactly two strategies, compared b against a")
    p.add_argument("--pair", nargs=2, action="append", metavar=("A", "B"), default=None,
                   help="with two runs: compare strategy B of run B against strategy A of run A (repeatable), e.g. "
                        "--pair session_aware 'session_aware[repeat_threshold=0.15]'; without it strategies pair by label")
    p.add_argument("--format", choices=["text", "md"], default="text", help="text, or markdown for a PR comment")
    p.add_argument("--out", default=None, help="also write the report to this file")
    p.add_argument("--fail-on-regression", action="store_true", help="exit 1 when any case flipped from pass to fail")
    p.add_argument("--runs", default=None, help="folder runs live in (default: $SUPPORTBENCH_RUNS or runs/)")
    p.set_defaults(func=main)


def main(args) -> int:
    from harness.analysis.compare import compare_pairs, compare_runs, compare_strategies, default_pairs, runs_overlap
    from harness.ci.render import compare_markdown, compare_text
    from harness.analysis.results import Results, resolve_run

    strategies = [s.strip() for s in args.strategies.split(",") if s.strip()] if args.strategies else None
    if len(args.runs_) > 2:
        console.print("error: give one or two runs", markup=False)
        return 2
    pairs = [tuple(p) for p in args.pair] if getattr(args, "pair", None) else None
    if pairs and (len(args.runs_) != 2 or strategies):
        console.print("error: --pair needs two runs and no --strategies", markup=False)
        return 2
    if len(args.runs_) == 1 and (not strategies or len(strategies) != 2):
        console.print("error: with one run, name exactly two strategies: --strategies a,b", markup=False)
        return 2
    try:
        paths = [resolve_run(r, args.runs) for r in args.runs_]
    except FileNotFoundError as e:
        console.print(f"error: {e}", markup=False)
        return 2
    try:
        if len(paths) == 1:
            with Results(paths[0]) as res:
                result = compare_strategies(res, strategies[0], strategies[1])
        else:
            with Results(paths[0]) as a, Results(paths[1]) as b:
                result = compare_pairs(a, b, pairs) if pairs else compare_runs(a, b, strategies=strategies)
                overlap = runs_overlap(a, b)
                hints = [] if pairs or strategies else [
                    (x, y) for x, y in default_pairs(a.manifests[a.pick_run()].get("strategies", []),
                                                     b.manifests[b.pick_run()].get("strategies", [])) if x != y]
            for x, y in hints:
                # by label a variant never meets its base: say how to pair them instead of a quiet "no regression"
                console.print(f"note: {y} (run B) and {x} (run A) are the same strategy with different labels, compared "
                              f"with neither; --pair {shlex.quote(x)} {shlex.quote(y)} compares them", markup=False)
            if overlap.shared == 0:
                # deltas between runs that judge different cases say nothing: say so before them
                console.print(f"warning: the two runs share no case ({overlap.a} cases of suites {', '.join(overlap.suites_a) or '?'} "
                              f"against {overlap.b} of {', '.join(overlap.suites_b) or '?'}): every delta below compares "
                              "different cases", markup=False)
    except ValueError as e:
        console.print(f"error: {e}", markup=False)
        return 2
    text = compare_markdown(result) if args.format == "md" else compare_text(result) + "\n"
    say(text)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        from harness.run.runstore import write_text_atomic

        write_text_atomic(args.out, text)  # scrubbed, like every file the project writes
    return 1 if args.fail_on_regression and len(result.regressions) else 0

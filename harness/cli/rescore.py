"""`supportbench rescore`: score an existing run again, from its tables, into a new run."""

from __future__ import annotations

import argparse

from harness.cli.common import console, say


def register(sub) -> None:
    p = sub.add_parser("rescore", help="re-score an existing run with the current criteria, without replaying")
    p.add_argument("run", help="run folder, run id under the runs folder, or 'latest'")
    p.add_argument("--out", default=None, help="folder to write the new run into (default: next to the original)")
    p.add_argument("--run-id", default=None, help="name of the new run folder (default: timestamp + random suffix)")
    p.add_argument("--gold", action="store_true",
                   help="take the gold from the scenario files as they are now (labelled since the run, say); "
                        "refused for a file whose history or probes changed")
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    from harness.analysis.rescore import rescore
    from harness.analysis.results import resolve_run
    from harness.run.destination import check_destination

    try:
        src = resolve_run(args.run)
    except FileNotFoundError as e:
        console.print(f"error: {e}")
        return 2
    check_destination(args.out if args.out is not None else src.parent, args.run_id)
    from harness.format.issues import ScenarioError

    try:
        path = rescore(src, args.out, run_id=args.run_id, gold=args.gold)
    except ScenarioError as e:
        for issue in e.issues:
            console.print(f"error {issue}")
        return 2
    except ValueError as e:
        console.print(f"error: {e}")
        return 2
    console.print(f"re-scored {src.name} without replaying (idempotency verdicts carried over)"
                  + ("; gold read from the scenario files" if args.gold else ""))
    say(f"{path}\n")
    return 0

"""`supportbench import KIND PATH --out DIR`: outside text as a valid scenario suite.

Kinds: `locomo` (the LoCoMo release: its locomo10.json, or the folder or zip of
locomo10_v2/<id>.json files). The suite is written atomically (nothing is left when anything
fails) and checked by `supportbench validate`'s checks; bad input is one line naming the file,
the line, row or place, and what was expected (exit 2). See docs/external-data.md.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from harness.cli.common import console, out


def register(sub) -> None:
    p = sub.add_parser("import", help="turn a public benchmark or a support-desk export into a scenario suite")
    kinds = p.add_subparsers(dest="kind", metavar="KIND")
    kinds.required = True

    lo = kinds.add_parser("locomo", help="the LoCoMo release: locomo10.json, or the folder or zip of locomo10_v2/<id>.json")
    lo.add_argument("path", metavar="PATH", help="locomo10.json, a folder of <id>.json files, or locomo10.zip")
    lo.add_argument("--budget", type=int, default=None, help="tokens of context per question (default 550)")
    lo.add_argument("--categories", default="1,2,3,4",
                    help="question categories to import, comma-separated (default 1,2,3,4; 5 is adversarial, "
                         "with no answer in the conversation)")
    _common(lo)
    lo.set_defaults(func=_locomo)


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out", required=True, help="folder to write the scenarios into (must be new or empty)")
    p.add_argument("--force", action="store_true", help="replace a non-empty --out folder")


def _report(files: dict[str, str], summary, dest: Path) -> None:
    left = "; ".join(f"{n} {reason}" for reason, n in sorted(summary.left_out.items())) or "nothing"
    console.print(f"wrote {summary.scenarios} scenario(s) ({summary.turns:,} turns, {summary.probes:,} probes) to {dest}; "
                  f"left out: {left}"
                  + (f"; {summary.raised} probe budget(s) raised to fit their gold" if summary.raised else ""))
    for note in summary.notes:
        console.print(f"  {note}")
    print(dest)


def _run(args, build) -> int:
    from harness.importers import InputError, write_suite

    try:
        files, summary = build()
        if not files:
            raise InputError(args.path, "", "nothing to import")
        write_suite(files, Path(args.out), force=args.force)
    except InputError as e:
        console.print(f"error: {e}")
        return 2
    _report(files, summary, Path(args.out))
    return 0


def _locomo(args) -> int:
    from harness.importers.locomo import DEFAULT_BUDGET, import_locomo

    try:
        cats = tuple(sorted({int(x) for x in args.categories.split(",") if x.strip()}))
    except ValueError:
        console.print(f"error: --categories {args.categories!r}: expected numbers 1-5 separated by commas, e.g. 1,2,3,4")
        return 2
    if not cats or any(c not in range(1, 6) for c in cats):
        console.print(f"error: --categories {args.categories!r}: expected numbers 1-5 separated by commas, e.g. 1,2,3,4")
        return 2
    budget = DEFAULT_BUDGET if args.budget is None else args.budget
    if budget < 1:
        console.print("error: --budget must be a positive number of tokens")
        return 2
    return _run(args, lambda: import_locomo(args.path, budget, cats))

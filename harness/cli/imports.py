"""`supportbench import KIND PATH --out DIR`: outside text as a valid scenario suite.

Kinds: `locomo` (the LoCoMo release: its locomo10.json, or the folder or zip of
locomo10_v2/<id>.json files); `longmemeval` (a LongMemEval file, read one question at a time);
`chats` (a support desk's CSV or JSONL export, mapped by a TOML map). The suite is written atomically (nothing is left when anything
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

    lm = kinds.add_parser("longmemeval", help="a LongMemEval file (longmemeval_s.json, _m.json, _oracle.json): one scenario per question")
    lm.add_argument("path", metavar="PATH", help="the LongMemEval .json file (read one question at a time)")
    lm.add_argument("--budget", type=int, default=None, help="tokens of context per question (default 550)")
    _common(lm)
    lm.set_defaults(func=_longmemeval)

    ch = kinds.add_parser("chats", help="a support-desk export (CSV or JSONL, one message per row): one scenario per customer")
    ch.add_argument("path", metavar="PATH", help="the export: .csv or .jsonl")
    ch.add_argument("--map", default=None,
                    help="a map of its columns and role values: a TOML file, or a shipped map (plain, zendesk, intercom); "
                         "default: the shipped map whose columns the file has")
    ch.add_argument("--budget", type=int, default=None, help="tokens of context per probe (default 4000)")
    _common(ch)
    ch.set_defaults(func=_chats)


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out", required=True, help="folder to write the scenarios into (must be new or empty)")
    p.add_argument("--force", action="store_true", help="replace a non-empty --out folder")


def _report(summary, dest: Path) -> None:
    left = "; ".join(f"{n} {reason}" for reason, n in sorted(summary.left_out.items())) or "nothing"
    console.print(f"wrote {summary.scenarios} scenario(s) ({summary.turns:,} turns, {summary.probes:,} probes) to {dest}; "
                  f"left out: {left}"
                  + (f"; {summary.raised} probe budget(s) raised to fit their gold" if summary.raised else ""))
    for note in summary.notes:
        console.print(f"  {note}")
    print(dest)


def _run(args, files, summary) -> int:
    """Write `files` (an iterable of (name, YAML text), read lazily) into --out; one line per error."""
    from harness.importers import InputError, write_suite

    try:
        write_suite(files, Path(args.out), force=args.force)
    except InputError as e:
        console.print(f"error: {e}")
        return 2
    _report(summary, Path(args.out))
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
    from harness.importers import InputError

    try:
        files, summary = import_locomo(args.path, budget, cats)
    except InputError as e:
        console.print(f"error: {e}")
        return 2
    return _run(args, files.items(), summary)


def _longmemeval(args) -> int:
    from harness.importers import Summary
    from harness.importers.longmemeval import DEFAULT_BUDGET, import_longmemeval

    budget = DEFAULT_BUDGET if args.budget is None else args.budget
    if budget < 1:
        console.print("error: --budget must be a positive number of tokens")
        return 2
    summary = Summary()
    return _run(args, import_longmemeval(args.path, budget, summary), summary)


def _chats(args) -> int:
    from harness.importers import InputError
    from harness.importers.chats import import_chats

    if args.budget is not None and args.budget < 1:
        console.print("error: --budget must be a positive number of tokens")
        return 2
    try:
        files, summary, used = import_chats(args.path, args.map, args.budget)
    except InputError as e:
        console.print(f"error: {e}")
        return 2
    console.print(f"map: {used.name or args.map} ({used.description})" if used.description else f"map: {args.map}")
    return _run(args, files, summary)

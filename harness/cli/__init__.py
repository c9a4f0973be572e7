"""The `supportbench` command line.

Each subcommand lives in its own module under `harness.cli`, exposing
`register(subparsers)`; this file only routes. Exit codes: 0 success, 1 a verdict
against you (invalid scenarios, a regression), 2 unusable input.
"""

from __future__ import annotations

import argparse
import importlib
import sys

COMMANDS = (
    "harness.cli.run",
    "harness.cli.validate",
    "harness.cli.generate",
    "harness.cli.ls",
    "harness.cli.report",
    "harness.cli.rescore",
    "harness.cli.baseline",
    "harness.cli.check",
    "harness.cli.compare",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="supportbench",
        description="Replay support conversations through memory strategies and score what each put in front of the model.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for mod in COMMANDS:
        importlib.import_module(mod).register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print("interrupted: nothing was written", file=sys.stderr)
        return 130
    except (FileNotFoundError, FileExistsError, NotADirectoryError, PermissionError) as e:
        # unusable input or output location: exit 2, with the message instead of a traceback
        print(f"error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())

"""The `supportbench` command line.

Each subcommand lives in its own module under `harness.cli`, exposing
`register(subparsers)`; this file only routes. Exit codes: 0 success, 1 a verdict
against you (invalid scenarios, a regression), 2 unusable input (always with a one-line
reason, never a traceback), 3 an internal error (a bug: `SUPPORTBENCH_TRACEBACK=1` shows
where), 130 interrupted (SIGINT), 143 terminated (SIGTERM); an interrupted or terminated
run leaves nothing behind. A command that seems stuck prints where every thread of it is on
`kill -USR1 <pid>` (Python's faulthandler), and goes on.
"""

from __future__ import annotations

import argparse
import importlib
import os
import signal
import sys
from contextlib import contextmanager

COMMANDS = {
    "run": "harness.cli.run",
    "validate": "harness.cli.validate",
    "generate": "harness.cli.generate",
    "ls": "harness.cli.ls",
    "report": "harness.cli.report",
    "rescore": "harness.cli.rescore",
    "baseline": "harness.cli.baseline",
    "check": "harness.cli.check",
    "compare": "harness.cli.compare",
    "conformance": "harness.cli.conformance",
    "failures": "harness.cli.failures",
    "import": "harness.cli.imports",
    "frontend": "harness.cli.frontend",
}
"""Each subcommand's name and the module that registers it (a test holds them in step), in the order
`supportbench --help` lists them."""


class Terminated(BaseException):
    """SIGTERM arrived: unwinds like Ctrl-C, so every `finally` and abort path cleans up."""


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The whole command line, or, given a known subcommand's name, a parser holding only that one:
    registering a subcommand imports its modules (pandas, the generator, ...), which a `run` has
    no use for (seconds of a short run's start-up). The chosen subcommand parses and errs alike."""
    parser = argparse.ArgumentParser(
        prog="supportbench",
        description="Replay support conversations through memory strategies and score what each put in front of the model.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name, mod in COMMANDS.items():
        if command in (None, name):
            importlib.import_module(mod).register(sub)
    return parser


def command_of(argv: list[str]) -> str | None:
    """The subcommand `argv` names when it is a known one (it comes first: the top level has no options
    but --help), else None (then the whole parser reads it, to list the choices or the help)."""
    return argv[0] if argv and argv[0] in COMMANDS else None


@contextmanager
def _terminate_cleanly():
    """While a command runs, SIGTERM raises `Terminated` in the main thread (as SIGINT raises
    KeyboardInterrupt), instead of killing the process before it can remove its temporary run."""

    def raise_terminated(signum, frame):
        raise Terminated()

    try:
        old = signal.signal(signal.SIGTERM, raise_terminated)
    except ValueError:  # not the main thread: leave signals alone
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)


def _stacks_on_sigusr1() -> None:
    """SIGUSR1 prints every thread's stack to stderr and the command goes on: what a user (or a
    test that found a run hung) reads to see where it waits."""
    import faulthandler

    if hasattr(signal, "SIGUSR1"):
        try:
            faulthandler.register(signal.SIGUSR1, all_threads=True, chain=False)
        except (ValueError, RuntimeError, OSError, AttributeError):  # no usable stderr, or not the main thread
            pass


def _quiet_threads() -> None:
    """The command was stopped: a helper thread (a worker pool's manager) that dies of it while the
    process exits has nothing to add to the one line already printed."""
    import threading

    threading.excepthook = lambda args: None


def unusable(e: BaseException) -> bool:
    """Whether an exception means the input or output cannot be used (exit 2), as opposed to a bug."""
    from harness.ci.baseline import BaselineError
    from harness.run.destination import RunIdError
    from stores.registry import SpecError

    if isinstance(e, (OSError, UnicodeError, BaselineError, SpecError, RunIdError)):
        return True
    # duckdb and pyarrow errors come from reading tables a user pointed us at
    return any(c.__module__.split(".")[0] in ("duckdb", "_duckdb", "pyarrow") for c in type(e).__mro__)


def one_line(e: BaseException) -> str:
    """The exception's message on one line (DuckDB adds the SQL and a caret below it)."""
    text = str(e).strip() or type(e).__name__
    first = text.splitlines()[0]
    return first if not isinstance(e, UnicodeDecodeError) else f"not UTF-8 text ({e.reason} at byte {e.start})"


def main(argv: list[str] | None = None) -> int:
    from stores.redaction import scrubbed_output

    _stacks_on_sigusr1()

    # every secret of the environment is registered, and nothing printed carries one
    with scrubbed_output():
        return _main(argv)


def _main(argv: list[str] | None) -> int:
    from harness.analysis.visible import visible

    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser(command_of(argv)).parse_args(argv)
    with _terminate_cleanly():
        try:
            return int(args.func(args) or 0)
        except KeyboardInterrupt:
            _quiet_threads()
            print("interrupted: nothing was written", file=sys.stderr)
            return 130
        except Terminated:
            _quiet_threads()
            print("terminated: nothing was written", file=sys.stderr)
            return 143
        except Exception as e:
            if unusable(e):
                print(f"error: {visible(one_line(e))}", file=sys.stderr)
                return 2
            if os.environ.get("SUPPORTBENCH_TRACEBACK"):
                raise
            print(f"internal error: {type(e).__name__}: {visible(one_line(e))} (a bug in supportbench; "
                  "rerun with SUPPORTBENCH_TRACEBACK=1 to see where)", file=sys.stderr)
            return 3


if __name__ == "__main__":
    sys.exit(main())

"""Helpers shared by subcommands: console, loading scenarios with readable errors."""

from __future__ import annotations

import sys
from pathlib import Path

from rich import table as rich_table
from rich.console import Console

from harness.analysis.visible import visible


class SafeConsole(Console):
    """A console whose text arguments are shown as text: control and bidirectional characters
    escaped (`harness.analysis.visible`), so a run's name or a scenario's title cannot move the
    cursor, forge a line or read backwards; a message's own newlines are kept."""

    def print(self, *objects, **kwargs) -> None:  # type: ignore[override]
        super().print(*(visible(o, lines=True) if isinstance(o, str) else o for o in objects), **kwargs)


class Table(rich_table.Table):
    """A rich table whose cells are shown as text: every control character escaped, newlines
    included (one row is one line of data)."""

    def add_row(self, *cells, **kwargs) -> None:  # type: ignore[override]
        super().add_row(*(visible(c) if isinstance(c, str) else c for c in cells), **kwargs)


# markup off: labels like `session_aware[no_repeat_boost]` and specs like `tfidf[v1:top_k=3` are
# user text, which rich would otherwise read as style tags and swallow; soft wrap keeps one
# message on one line whatever the terminal width
console = SafeConsole(stderr=True, highlight=False, soft_wrap=True, markup=False)
out = SafeConsole(highlight=False, soft_wrap=True, markup=False)


def say(text: str, *, file=None) -> None:
    """`print` for a command's plain text output (a report, a path): control characters escaped,
    its lines kept."""
    print(visible(text, lines=True), file=file if file is not None else sys.stdout, end="")

DEFAULT_SUITE = Path("datasets/canonical")


def exit_if_missing(paths: list[str]) -> None:
    """Exit 2 (unusable input, not an invalid scenario) when a given path does not exist."""
    missing = [p for p in paths if not Path(p).exists()]
    if missing:
        for p in missing:
            console.print(f"error: {p}: no such file or folder")
        sys.exit(2)


def load_or_exit(paths: list[str], pool=None, workers: int = 1):
    """Load and validate scenarios; on any problem print every issue and exit 1 (a path that
    does not exist: exit 2). With a worker `pool` (`harness.run.workers.open_pool`), the workers
    check and load the files and this returns handles to them (`harness.run.intake`)."""
    from harness.format.loader import ScenarioError, load_suite

    exit_if_missing(paths)
    try:
        if pool is not None:
            from harness.run.intake import load_in_workers

            return load_in_workers(paths or [str(DEFAULT_SUITE)], pool, workers)
        return load_suite(paths or [str(DEFAULT_SUITE)])
    except ScenarioError as e:
        for issue in e.issues:
            console.print(f"error {issue}", markup=False)
        console.print(f"{len(e.issues)} problem(s); nothing was run.", markup=False)
        sys.exit(1)

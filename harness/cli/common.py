"""Helpers shared by subcommands: console, loading scenarios with readable errors."""

from __future__ import annotations

import sys
from pathlib import Path

from rich.console import Console

# markup off: labels like `session_aware[no_repeat_boost]` and specs like `tfidf[v1:top_k=3` are
# user text, which rich would otherwise read as style tags and swallow; soft wrap keeps one
# message on one line whatever the terminal width
console = Console(stderr=True, highlight=False, soft_wrap=True, markup=False)
out = Console(highlight=False, soft_wrap=True, markup=False)

DEFAULT_SUITE = Path("datasets/canonical")


def load_or_exit(paths: list[str], pool=None, workers: int = 1):
    """Load and validate scenarios; on any problem print every issue and exit 1. With a worker
    `pool` (`harness.run.workers.open_pool`), the workers check and load the files and this
    returns handles to them (`harness.run.intake`)."""
    from harness.format.loader import ScenarioError, load_suite

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

"""Validation issues: what is wrong in a scenario file, and where."""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Iterable, Sequence


@dataclass(frozen=True, order=True)
class ValidationIssue:
    """One problem in a scenario file.

    `str(issue)` reads `datasets/canonical/outage.yaml:41 events[7].probe.expect.above[0]: unknown id ...`.
    """

    file: str
    """The file as it was given (relative when given relative)."""
    line: int | None
    """1-based line in the file, when known."""
    path: str
    """Where in the document, e.g. `events[7].probe.expect.above[0]` (the event's kind follows its index);
    empty for the file as a whole."""
    message: str
    """What is wrong and what was expected."""

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        return f"{where} {self.path}: {self.message}" if self.path else f"{where}: {self.message}"


class ScenarioError(ValueError):
    """Scenario files that cannot be used; `issues` lists every problem found."""

    def __init__(self, issues: Sequence[ValidationIssue]):
        self.issues: list[ValidationIssue] = list(issues)
        count = len(self.issues)
        head = f"{count} problem{'s' if count != 1 else ''} in scenario files"
        super().__init__("\n".join([head + ":", *(f"  {issue}" for issue in self.issues)]))


def did_you_mean(word: object, choices: Iterable[str]) -> str:
    """`"; did you mean 'x'?"` when `word` is close to one of `choices`, else ``""``."""
    if not isinstance(word, str):
        return ""
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f"; did you mean '{close[0]}'?" if close else ""


def listing(items: Iterable[str], limit: int = 8) -> str:
    """`a, b, c` truncated with `…` after `limit` items."""
    items = list(items)
    shown = ", ".join(items[:limit])
    return shown + (", …" if len(items) > limit else "") if items else "none"


def format_path(path: Sequence[object], kinds: Sequence[str | None] = ()) -> str:
    """A document path as text: `events[7].probe.expect.above[0]`.

    Inside an event, its kind (`turn`, `resolve`, `probe`, `forget`, `signal`, `fault`) follows its
    index, as in docs/scenario-format.md, unless the key is the kind itself: `events[3]` is the event, `events[3].resolve`
    the resolve's value, `events[3].resolve.status` its status.
    """
    out = ""
    parts = list(path)
    if len(parts) >= 2 and parts[0] == "events" and isinstance(parts[1], int):
        kind = kinds[parts[1]] if parts[1] < len(kinds) else None
        if kind and len(parts) > 2 and parts[2] != kind:
            parts.insert(2, kind)
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out

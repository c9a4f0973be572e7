"""Scenario times: absolute ISO 8601 with a timezone, or relative steps like `+1d2h`.

The same regular expressions feed the loader and the JSON Schema, so a time an editor accepts
is a time the loader accepts.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

ABSOLUTE_PATTERN = (
    r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|z|[+-]\d{2}:\d{2})$"
)
"""ISO 8601 extended date-time with a timezone (`Z` or `+hh:mm`)."""

RELATIVE_PATTERN = r"^\+(?=\d)(\d+w)?(\d+d)?(\d+h)?(\d+m)?(\d+s)?$"
"""`+` then one or more of weeks, days, hours, minutes, seconds, largest unit first."""

WHEN_PATTERN = f"{ABSOLUTE_PATTERN}|{RELATIVE_PATTERN}"
"""What an event's `at` may be."""

_ABSOLUTE = re.compile(ABSOLUTE_PATTERN)
_NAIVE = re.compile(r"^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?)?$")
_RELATIVE = re.compile(r"^\+(?=\d)(?:(\d+)w)?(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$")

DEFAULT_STEP = timedelta(minutes=1)
"""Time between an event without `at` and the one before it."""

_ABSOLUTE_HINT = "an ISO 8601 time with a timezone, e.g. 2026-03-02T09:00:00Z"
_RELATIVE_HINT = "a step after the previous event: +45s, +5m, +2h, +3d, +1w or combined, largest unit first (+1d2h)"


def parse_absolute(text: str) -> datetime:
    """An absolute time as a timezone-aware UTC datetime; ValueError with a readable reason."""
    if _NAIVE.match(text):
        raise ValueError(f"time '{text}' has no timezone: write it in UTC with a trailing Z, e.g. 2026-03-02T09:00:00Z")
    if not _ABSOLUTE.match(text):
        raise ValueError(f"'{text}' is not a time: expected {_ABSOLUTE_HINT}")
    try:
        parsed = datetime.fromisoformat(text.replace("z", "Z"))
    except ValueError as exc:  # well-formed but impossible, e.g. month 13
        raise ValueError(f"'{text}' is not a valid time: {exc}") from None
    return parsed.astimezone(timezone.utc)


def parse_relative(text: str) -> timedelta:
    """A relative step such as `+1d2h`; ValueError with a readable reason."""
    match = _RELATIVE.match(text)
    if not match:
        raise ValueError(f"'{text}' is not a relative time: expected {_RELATIVE_HINT}")
    weeks, days, hours, minutes, seconds = (int(g or 0) for g in match.groups())
    return timedelta(weeks=weeks, days=days, hours=hours, minutes=minutes, seconds=seconds)


def parse_when(text: str) -> datetime | timedelta:
    """An event's `at`: a datetime (absolute, UTC) or a timedelta (relative to the previous event)."""
    if text.startswith("+"):
        return parse_relative(text)
    if text[:1].isdigit() and not _NAIVE.match(text) and not _ABSOLUTE.match(text) and text[-1:].isalpha():
        # "5m", "1d2h": a relative time missing its "+"
        raise ValueError(f"'{text}' is not a time: relative times start with '+' ({_RELATIVE_HINT})")
    try:
        return parse_absolute(text)
    except ValueError as exc:
        if "timezone" in str(exc) or "valid time" in str(exc):
            raise
        raise ValueError(f"'{text}' is not a time: expected {_ABSOLUTE_HINT}, or {_RELATIVE_HINT}") from None

"""The health timeline: a subject's health right after each event, stored compactly.

A strategy with the `health` capability is asked for a report after every event, so the Health
page can draw the score over time and say why it moved at any moment. A report names the items
behind each factor, and some factors name every session of the history (the resolved sessions a
repeat matches, the resolution rate's records): kept whole at every event, the timeline would grow
with events x sessions (a 100,000-event history ran out of memory that way).

So a timeline point keeps, per factor, at most `MAX_IDS` source ids (the first and the last halves,
with how many were left out between them) and at most `MAX_DETAIL` characters of the detail
sentence (its beginning and its end, with how many characters were left out, marked in the
sentence). The score, band, base, signals and impacts are kept exactly. The reports a probe asks
for (the ones the `health` criterion scores) are stored whole, with their probe id; a point in
the timeline that was shortened says so in its factor (`source_ids_left_out`, and the marker in
`detail`). Both limits are above anything the bundled suites produce, so their timelines are
stored whole.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime

from stores.protocol import HealthFactor, HealthReport

MAX_IDS = 100
"""Source ids a timeline point keeps per factor: the first and the last `MAX_IDS // 2`."""
MAX_DETAIL = 1000
"""Characters of a factor's detail a timeline point keeps (its beginning and its end)."""


@dataclass(frozen=True, slots=True)
class HealthPoint:
    """A subject's health right after an event, as the timeline stores it."""

    subject: str
    event_index: int
    at: datetime
    score: float
    band: str
    base: float
    factors: str
    """The factors as JSON (`factors_json`), shortened per `MAX_IDS` and `MAX_DETAIL`."""


def factors_json(factors: tuple[HealthFactor, ...], max_ids: int | None = None, max_detail: int | None = None) -> str:
    """The factors as the health table stores them: a JSON list of {signal, impact, detail,
    source_ids}; with limits, each factor shortened to them (`source_ids_left_out` added when ids
    were left out)."""
    out = []
    for f in factors:
        ids, n = f.source_ids, len(f.source_ids)
        detail = f.detail if max_detail is None or len(f.detail) <= max_detail else shorten_detail(f.detail, max_detail)
        row: dict[str, object] = {"signal": f.signal, "impact": f.impact, "detail": detail}
        if max_ids is None or n <= max_ids:
            row["source_ids"] = list(ids)
        else:  # slice, never copy the whole listing: a long history's factors name thousands of items
            head, tail = max_ids - max_ids // 2, max_ids // 2
            row["source_ids"] = [*ids[:head], *ids[n - tail:]]
            row["source_ids_left_out"] = n - max_ids
        out.append(row)
    return json.dumps(out)


LEFT_OUT = "characters left out of this timeline point"
"""The words of the marker `shorten_detail` puts where it cut a detail."""


def shortened(factor: dict) -> bool:
    """Whether a stored factor (one item of `factors_json`'s list) was shortened to the limits."""
    return "source_ids_left_out" in factor or LEFT_OUT in factor.get("detail", "")


def shorten_detail(text: str, limit: int) -> str:
    """`text` cut to at most `limit` characters: its beginning and its end around a marker saying
    how many characters were left out; cuts fall after a comma or a space where one is near."""
    if len(text) <= limit:
        return text
    room = max(limit - 70, 2)  # the marker takes the rest
    head_end = _back_to_break(text, room * 3 // 5)
    tail_start = _forward_to_break(text, len(text) - (room - head_end))
    left_out = tail_start - head_end
    return f"{text[:head_end]} … [{left_out:,} {LEFT_OUT}] … {text[tail_start:]}"


def _back_to_break(text: str, end: int) -> int:
    """The end of the head: just after the last ', ' or ' ' in the 40 characters before `end`."""
    for sep in (", ", " "):
        i = text.rfind(sep, max(0, end - 40), end)
        if i > 0:
            return i + len(sep) - 1 if sep == ", " else i
    return end


def _forward_to_break(text: str, start: int) -> int:
    """The start of the tail: just after the first ', ' or ' ' in the 40 characters after `start`."""
    for sep in (", ", " "):
        i = text.find(sep, start, start + 40)
        if i >= 0:
            return i + len(sep)
    return start


def point(subject: str, event_index: int, report: HealthReport) -> HealthPoint:
    """The timeline point of a report (the report itself is not kept)."""
    return HealthPoint(subject, event_index, report.at, float(report.score), report.band, float(report.base),
                       factors_json(report.factors, MAX_IDS, MAX_DETAIL))

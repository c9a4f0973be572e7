"""The reference design's health table (docs/reference.md), computed from the generation plan (not from any strategy).

This is a separate implementation on purpose: gold bands must not come from the code under
test. Where the table leaves room for interpretation (keyword overlap near the 0.30 threshold,
times near the 7-day, 24-hour and 10-minute limits, marker matching), a factor gets every value
a faithful reading could give it, and a band is labelled only when all combinations agree and
stay at least `margin` points away from the band edges. Otherwise the probe carries no band.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from datetime import datetime

MARKERS = (
    "urgent", "critical", "blocked", "deadline", "asap", "emergency", "breaking", "outage",
    "downtime", "compliance", "sla", "escalat", "immediately", "production down", "p0", "p1", "severity",
)
_WHOLE = re.compile(r"\b(?:" + "|".join(re.escape(m) + (r"\w*" if m == "escalat" else r"\b") for m in MARKERS) + r")")
_STOP = frozenset(
    """a an and are as at be been but by can could did do does for from had has have how i i'm if in into is it
    it's its me my no not of on or our so that the their them then there this to too was we were what when which
    who will with would you your hi hello thanks thank please ok yes just also still again now us let know""".split()
)
HEALTHY_MIN, WATCH_MIN = 70.0, 40.0


def urgent_strict(text: str) -> bool:
    """A marker as a whole word (prefix for `escalat`)."""
    return _WHOLE.search(text.lower()) is not None


def urgent_loose(text: str) -> bool:
    """A marker anywhere, even inside another word."""
    low = text.lower()
    return any(m in low for m in MARKERS)


def keywords(text: str) -> frozenset[str]:
    return frozenset(w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in _STOP and len(w) > 1)


@dataclass(frozen=True)
class Item:
    """A turn or a resolution record of one subject, as the plan wrote it."""

    session: str
    role: str
    """`customer`, `agent` or `resolution`."""
    text: str
    at: datetime
    status: str = ""


def _band(score: float) -> str:
    return "healthy" if score >= HEALTHY_MIN else "watch" if score >= WATCH_MIN else "at_risk"


def _clear_of_edges(score: float, margin: float) -> bool:
    return all(abs(score - edge) >= margin for edge in (HEALTHY_MIN, WATCH_MIN))


def possible_impacts(items: list[Item], now: datetime) -> list[set[float]]:
    """Per factor of the table, every impact a faithful implementation could give."""
    day, hour = 86400.0, 3600.0
    t_now = now.timestamp()
    sessions: dict[str, dict] = {}
    for it in items:
        t = it.at.timestamp()
        if t > t_now:
            continue
        s = sessions.setdefault(it.session, {"kw": set(), "last": t, "first_c": None, "first_a": None,
                                             "status": "", "resolved_at": None})
        s["kw"] |= keywords(it.text)
        s["last"] = max(s["last"], t)
        if it.role == "resolution":
            s["status"], s["resolved_at"] = it.status, t
        elif it.role == "customer" and s["first_c"] is None:
            s["first_c"] = t
        elif it.role == "agent" and s["first_c"] is not None and s["first_a"] is None:
            s["first_a"] = t
    open_s = [s for s in sessions.values() if s["status"] != "resolved"]
    resolved = [s for s in sessions.values() if s["status"] == "resolved"]
    out: list[set[float]] = []

    out.append({max(-45.0, -15.0 * len(open_s))} if open_s else {0.0})

    best = 0.0
    for o in open_s:
        for r in resolved:
            if o["kw"]:
                best = max(best, len(o["kw"] & r["kw"]) / len(o["kw"]))
    out.append({-20.0} if best >= 0.42 else {0.0} if best < 0.2 else {0.0, -20.0})

    turns = [it for it in items if it.role != "resolution" and it.at.timestamp() <= t_now]
    strict = sum(urgent_strict(it.text) for it in turns)
    loose = sum(urgent_loose(it.text) for it in turns)
    out.append({max(-20.0, -10.0 * n) for n in {strict, loose}})

    idle = [t_now - s["last"] for s in open_s]
    sure = any(x >= 8 * day for x in idle)
    maybe = any(6 * day <= x < 8 * day for x in idle)
    out.append({-15.0} if sure else {0.0, -15.0} if maybe else {0.0})

    delays = [s["resolved_at"] - s["first_c"] for s in resolved if s["first_c"] is not None]
    sure_n = sum(d > 26 * hour for d in delays)
    maybe_n = sum(22 * hour <= d <= 26 * hour for d in delays)
    out.append({max(-20.0, -10.0 * n) for n in range(sure_n, sure_n + maybe_n + 1)})

    waits = [(s["first_a"] - s["first_c"]) / 60 for s in sessions.values() if s["first_a"] is not None]
    mean = sum(waits) / len(waits) if waits else 0.0
    out.append({-5.0} if mean > 12 else {0.0} if mean < 8 else {0.0, -5.0})

    ages = [t_now - s["resolved_at"] for s in resolved]
    sure = any(a <= 6 * day for a in ages)
    maybe = any(6 * day < a <= 8 * day for a in ages)
    out.append({10.0} if sure else {0.0, 10.0} if maybe else {0.0})

    ended = len(resolved)  # the generator writes no `unresolved` or reopened records
    out.append({10.0} if ended >= 2 else {0.0})
    return out


def clear_band(items: list[Item], now: datetime, margin: float = 3.0) -> str | None:
    """The band at `now` if every reading agrees and stays `margin` points from the edges, else None."""
    scores = {min(100.0, max(0.0, 100.0 + sum(combo))) for combo in itertools.product(*possible_impacts(items, now))}
    bands = {_band(s) for s in scores}
    if len(bands) != 1 or not all(_clear_of_edges(s, margin) for s in scores):
        return None
    return bands.pop()

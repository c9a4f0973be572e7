"""The reference design's health table (docs/reference.md), computed from the generation plan (not from any strategy).

This is a separate implementation on purpose: gold bands must not come from the code under
test. It covers every reading of the table the project documents (`stores.session.health`):
the published model's (`reference`: the pooled words of all open sessions' turns against
those of all resolved sessions' turns over the smaller set, the health model's own markers)
and the project's earlier one (`project`: per pair of an open and a resolved session, issue
keywords of turns and summaries over the open session's, the ranking's markers). Within a
reading, where the table leaves room for interpretation (overlap near the 0.30 threshold,
times near the 7-day, 24-hour and 10-minute limits, word splitting, markers matched as words
or as substrings), a factor gets every value a faithful implementation could give it. A band
is labelled only when every combination of every reading agrees and stays at least `margin`
points away from the band edges; otherwise the probe carries no band.

On the 200-customer suite of seed 0 (`supportbench generate --customers 200 --seed 0`), 919 of
the 1,794 probes that could carry a band do, and 875 were left without one for being near a
threshold or because the readings disagree (the 14 probes after a deletion request carry none) (`supportbench generate` prints both counts for
every suite it writes).
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
"""The ranking's urgency markers (the `project` reading of health)."""
HEALTH_MARKERS = ("urgent", "critical", "asap", "emergency", "escalat", "broken", "down", "outage", "blocker",
                  "p0", "p1", "sev1", "sev2")
"""The published health model's own markers (the `reference` reading)."""
_WHOLE = re.compile(r"\b(?:" + "|".join(re.escape(m) + (r"\w*" if m == "escalat" else r"\b") for m in MARKERS) + r")")
_HEALTH_PREFIX = re.compile(r"\b(?:" + "|".join(HEALTH_MARKERS) + r")\w*")
_HEALTH_WHOLE = re.compile(r"\b(?:" + "|".join(m + (r"\w*" if m == "escalat" else r"\b") for m in HEALTH_MARKERS) + r")")
_REFERENCE_STOP = frozenset("the a an is are was were it to of and or for in on at by my i we you this that with".split())
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


def reference_words(text: str) -> frozenset[str]:
    """Words of the published repeated-issue test: longer than 2 characters, not its stopwords."""
    return frozenset(w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in _REFERENCE_STOP and len(w) > 2)


def health_urgent_counts(texts: list[str]) -> set[int]:
    """Every count of urgent turns a reading of the health markers could give: from markers as
    whole words (the fewest: any word-prefix rule counts at least these) to markers anywhere,
    inside other words too (the published substring match: the most)."""
    whole = sum(_HEALTH_WHOLE.search(t.lower()) is not None for t in texts)
    loose = sum(any(m in t.lower() for m in HEALTH_MARKERS) for t in texts)
    return set(range(whole, loose + 1))


def _fires(ratio: float, low: float = 0.2, high: float = 0.42) -> set[bool]:
    """Whether a 0.30 overlap test fires, allowing for how faithful readings split words."""
    return {True} if ratio >= high else {False} if ratio < low else {False, True}


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


def possible_impacts(items: list[Item], now: datetime, rules: str = "reference") -> list[set[float]]:
    """Per factor of the table, every impact a faithful implementation of `rules` could give."""
    day, hour = 86400.0, 3600.0
    t_now = now.timestamp()
    sessions: dict[str, dict] = {}
    for it in items:
        t = it.at.timestamp()
        if t > t_now:
            continue
        s = sessions.setdefault(it.session, {"kw": set(), "words": set(), "last": t, "first_c": None, "first_a": None,
                                             "status": "", "resolved_at": None})
        s["kw"] |= keywords(it.text)
        s["last"] = max(s["last"], t)
        if it.role == "resolution":
            s["status"], s["resolved_at"] = it.status, t
            continue
        s["words"] |= reference_words(it.text)  # the published test reads turns, not summaries
        if it.role == "customer" and s["first_c"] is None:
            s["first_c"] = t
        elif it.role == "agent" and s["first_c"] is not None and s["first_a"] is None:
            s["first_a"] = t
    open_s = [s for s in sessions.values() if s["status"] != "resolved"]
    resolved = [s for s in sessions.values() if s["status"] == "resolved"]
    out: list[set[float]] = []

    out.append({max(-45.0, -15.0 * len(open_s))} if open_s else {0.0})

    if rules == "reference":
        a = set().union(*(s["words"] for s in open_s)) if open_s else set()
        b = set().union(*(s["words"] for s in resolved)) if resolved else set()
        fires = _fires(len(a & b) / min(len(a), len(b))) if a and b else {False}
    else:
        best = max((len(o["kw"] & r["kw"]) / len(o["kw"]) for o in open_s for r in resolved if o["kw"]), default=0.0)
        fires = _fires(best)
    out.append({-20.0 if f else 0.0 for f in fires})

    turns = [it.text for it in items if it.role != "resolution" and it.at.timestamp() <= t_now]
    if rules == "reference":
        counts = health_urgent_counts(turns)
    else:
        counts = {sum(urgent_strict(t) for t in turns), sum(urgent_loose(t) for t in turns)}
    out.append({max(-20.0, -10.0 * n) for n in counts})

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

    # the generator writes only `resolved` records, so resolved / records (reference) and
    # resolved / ended (project) are both 1 once there are two of them
    out.append({10.0} if len(resolved) >= 2 else {0.0})
    return out


READINGS = ("reference", "project")
"""Every reading of the table the project documents (`stores.session.health.RULES`)."""


def possible_scores(items: list[Item], now: datetime) -> set[float]:
    """Every score some faithful implementation of some documented reading could give."""
    return {min(100.0, max(0.0, 100.0 + sum(combo)))
            for rules in READINGS for combo in itertools.product(*possible_impacts(items, now, rules))}


def clear_band(items: list[Item], now: datetime, margin: float = 3.0) -> str | None:
    """The band at `now` if every reading agrees and stays `margin` points from the edges, else None."""
    scores = possible_scores(items, now)
    bands = {_band(s) for s in scores}
    if len(bands) != 1 or not all(_clear_of_edges(s, margin) for s in scores):
        return None
    return bands.pop()

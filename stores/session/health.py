"""Customer health: the published reference model's table (docs/reference.md), itemized, computed fresh from the history.

`health_report(history, now, params)` starts at `base`, applies the factors below in this
fixed order, and clamps to 0..100. There is no model call and no cache in the score path:
the same history and `now` always give the same report. This is the reading from scratch;
strategies give the same report from a state kept in step with the history
(`stores.session.health_state.HealthState`), at a cost per event that does not grow with it.

| signal                  | impact (defaults)                                                      |
| ----------------------- | ---------------------------------------------------------------------- |
| `unresolved_issues`     | -15 per open session, at most -45                                      |
| `repeated_issue`        | -20 once, when open and resolved sessions share an issue pattern       |
| `urgency`               | -10 per turn with an urgency marker, at most -20                       |
| `idle_open_issue`       | -15 once, when an open session has had no activity for 7 days          |
| `sla_resolution_breach` | -10 per session resolved more than 24 h after its first customer turn, at most -20 |
| `slow_first_response`   | -5 when the mean first-response time exceeds 10 minutes                |
| `recent_resolution`     | +10 when a session was resolved in the last 7 days                     |
| `high_resolution_rate`  | +10 when at least 2 sessions have a resolution record and at least 80 % of them are resolved |

Two readings of the table, chosen by `HealthParams.rules`:

`reference` (the default) reproduces the published model's exact readings:

- *Open session* = a session with turns whose latest resolution record is not `resolved`
  (no record, `open` or `unresolved`).
- *Repeated issue*: A = the words of all open sessions' turns pooled, B = the words of all
  resolved sessions' turns pooled (resolution summaries are not turns); a word is lower-cased,
  longer than 2 characters and not in `REFERENCE_STOPWORDS`; the factor applies once when both
  are non-empty and `|A ∩ B| / min(|A|, |B|) >= repeat_threshold` (0.30).
- *Urgency* counts every turn (customer or agent, any session) carrying one of the health
  model's own markers, `HEALTH_MARKERS` (urgent, critical, asap, emergency, escalat, broken,
  down, outage, blocker, p0, p1, sev1, sev2).
- *High resolution rate*: at least `high_rate_min_ended` (2) sessions with a resolution record,
  and resolved records / all records >= `high_rate_threshold` (0.80).

Defects of the published model fixed here (each one makes the reading stricter about what a
word is, never changes a constant):

- markers are matched as word prefixes followed at most by an inflectional ending (`-s`,
  `-es`, `-d`, `-ed`, `-ing`, `-ly`, `-e`, `-ion`, `-ions`), not as raw substrings, so
  "download", "breakdown" and "markdown" are not "down" and "p10" is not "p1", while
  "outages", "escalated", "escalation" and "urgently" still count (`is_health_urgent`);
- words are cut with the project's tokenizer of words (`stores.text.words`: punctuation
  stripped), not `text.lower().split()`, so "timeout," and "timeout" are one word.

`project` keeps the readings this project used before it followed the published rules
(`health.rules=project`), for comparison:

- open session = any session whose latest record is not `resolved`, with or without turns;
- repeated issue per pair: open session O and resolved session R share an issue pattern when
  `|kw(O) ∩ kw(R)| / |kw(O)| >= repeat_threshold`, kw = `stores.text.keywords` of the
  session's turns and its resolution summary (the ranking's issue keywords);
- urgency uses the ranking's marker list (`stores.text.is_urgent`);
- high resolution rate over *ended* sessions (a `resolved` or `unresolved` record; a reopened
  `open` one has not ended): resolved / ended.

Readings shared by both (each one a deliberate choice, kept in one place):

- Only items stamped at or before `now` count, so a report is a function of (history, now).
- Urgency counts turns only; resolution summaries are not turns.
- *Activity* of a session = the latest time of any of its items (turns and resolution
  record). Idle when `now - last_activity >= idle_days`.
- *SLA resolution breach*: resolution time minus the session's first customer turn;
  a resolved session without any customer turn cannot breach.
- *First response* of a session = first agent turn at or after its first customer turn,
  minus that customer turn. Sessions still awaiting a first response are left out of the
  mean (they are not yet a measured response time). The table's rule (mean above
  `slow_first_response_minutes`, 10) decides the factor; the SLA target
  (`sla_first_response_minutes`, 5) is reported in the detail as how many sessions missed it
  and does not change the score.
- *Recent resolution*: a `resolved` record stamped within `recent_days` before `now`.
- Factors are listed only when they fire (impact != 0), always in the order above.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from typing import Annotated, Literal

import numpy as np

from stores.bounds import NonNegative, NonPositive, NotAbove, Positive, PositiveInt, Score100, Share
from stores.memory import RESOLUTION_ROLE, SubjectHistory
from stores.protocol import HealthFactor, HealthReport
from stores.text import is_urgent, keywords, overlap_ratio, words

Rules = Literal["reference", "project"]
"""Which reading of the health table: the published model's (`reference`) or this project's earlier one."""

RULES: tuple[str, ...] = ("reference", "project")
"""Every reading `HealthParams.rules` accepts, the default first."""

REFERENCE_STOPWORDS = frozenset("the a an is are was were it to of and or for in on at by my i we you this that with".split())
"""The published model's stopwords for the repeated-issue test."""

HEALTH_MARKERS = ("urgent", "critical", "asap", "emergency", "escalat", "broken", "down", "outage", "blocker",
                  "p0", "p1", "sev1", "sev2")
"""The published health model's own urgency markers (not the ranking's list)."""

_HEALTH_URGENCY = re.compile(r"\b(?:" + "|".join(HEALTH_MARKERS) + r")(?:s|es|d|ed|ing|ly|e|ion|ions)?\b")


@lru_cache(maxsize=65536)
def is_health_urgent(text: str) -> bool:
    """True when a word of `text` starts with a health marker and ends with at most an
    inflection ("outages", "escalated", but not "download" or "p10")."""
    return _HEALTH_URGENCY.search(text.lower()) is not None


@lru_cache(maxsize=65536)
def reference_words(text: str) -> frozenset[str]:
    """The repeated-issue words of the published model: lower-cased, longer than 2 characters,
    not a `REFERENCE_STOPWORDS` word (punctuation stripped: `stores.text.words`)."""
    return frozenset(w for w in words(text) if len(w) > 2 and w not in REFERENCE_STOPWORDS)


@dataclass(frozen=True)
class HealthParams:
    """Every constant of the health model (defaults: the published reference model)."""

    rules: Rules = "reference"
    """Which reading of the table: `reference` (the published model's, with its defects fixed) or
    `project` (this project's earlier readings); see the module docstring."""
    base: Score100 = 100.0
    """Starting score before any factor."""
    unresolved_per_session: NonPositive = -15.0
    """Impact per open (not resolved) session."""
    unresolved_cap: NonPositive = -45.0
    """Floor of the total unresolved-issues impact."""
    repeated_issue: NonPositive = -20.0
    """Impact, once, when an open session repeats a resolved one."""
    repeat_threshold: Share = 0.30
    """Overlap at which open and resolved sessions share an issue pattern: `|A ∩ B| / min(|A|, |B|)`
    over the pooled words (`reference`), `|kw(O) ∩ kw(R)| / |kw(O)|` per pair (`project`)."""
    urgency_per_turn: NonPositive = -10.0
    """Impact per turn carrying an urgency marker."""
    urgency_cap: NonPositive = -20.0
    """Floor of the total urgency impact."""
    idle_open_issue: NonPositive = -15.0
    """Impact, once, when some open session has been idle for `idle_days`."""
    idle_days: Positive = 7.0
    """Days without activity after which an open session counts as idle."""
    sla_resolution_hours: Positive = 24.0
    """Resolution SLA: hours from a session's first customer turn to its resolution."""
    sla_breach_per_session: NonPositive = -10.0
    """Impact per resolved session that breached the resolution SLA."""
    sla_breach_cap: NonPositive = -20.0
    """Floor of the total SLA-breach impact."""
    sla_first_response_minutes: Positive = 5.0
    """First-response SLA target; reported in the detail, does not move the score."""
    slow_first_response_minutes: Positive = 10.0
    """Mean first-response time above which `slow_first_response` applies (the table's rule)."""
    slow_first_response: NonPositive = -5.0
    """Impact when the mean first response is slow."""
    recent_resolution: NonNegative = 10.0
    """Impact, once, when a session was resolved within `recent_days`."""
    recent_days: Positive = 7.0
    """Window for `recent_resolution`."""
    high_resolution_rate: NonNegative = 10.0
    """Impact when enough sessions have a resolution record and most of them are resolved."""
    high_rate_min_ended: PositiveInt = 2
    """Minimum number of sessions with a resolution record (`reference`) or ended sessions
    (`project`) for `high_resolution_rate`."""
    high_rate_threshold: Share = 0.80
    """Minimum resolved share of those sessions for `high_resolution_rate`."""
    healthy_min: Score100 = 70.0
    """Scores at or above are `healthy`."""
    watch_min: Annotated[Score100, NotAbove("healthy_min")] = 40.0
    """Scores at or above (and below `healthy_min`) are `watch`; below is `at_risk`."""


@dataclass
class _Session:
    name: str
    turn_ids: list[str]
    kw: set[str]
    """`project` issue keywords: its turns and its resolution summary."""
    words: set[str]
    """`reference` words: its turns only."""
    first_customer: float | None = None
    first_customer_id: str = ""
    first_response: float | None = None
    first_response_id: str = ""
    last_activity: float = float("-inf")
    status: str = ""
    resolved_at: float | None = None
    resolution_id: str = ""


def _chronological(h: SubjectHistory) -> list[int]:
    """Item positions by (time, observation order)."""
    if not len(h):
        return []
    return np.lexsort((np.arange(len(h)), h.array("times"))).tolist()


def _sessions(h: SubjectHistory, cutoff: float, order: list[int]) -> dict[str, _Session]:
    out: dict[str, _Session] = {}
    for i in order:
        t = h.times[i]
        if t > cutoff:
            continue
        s = out.get(h.sessions[i])
        if s is None:
            s = out[h.sessions[i]] = _Session(h.sessions[i], [], set(), set())
        s.kw |= keywords(h.texts[i])
        s.last_activity = max(s.last_activity, t)
        role = h.roles[i]
        if role == RESOLUTION_ROLE:
            s.status, s.resolved_at, s.resolution_id = h.status.get(s.name, ""), t, h.ids[i]
            continue
        s.turn_ids.append(h.ids[i])
        s.words |= reference_words(h.texts[i])
        if role == "customer" and s.first_customer is None:
            s.first_customer, s.first_customer_id = t, h.ids[i]
        elif role == "agent" and s.first_customer is not None and s.first_response is None:
            s.first_response, s.first_response_id = t, h.ids[i]
    return out


def band_for(score: float, p: HealthParams) -> str:
    """`healthy`, `watch` or `at_risk` for a score."""
    if score >= p.healthy_min:
        return "healthy"
    if score >= p.watch_min:
        return "watch"
    return "at_risk"


def health_report(h: SubjectHistory, now: datetime, params: HealthParams | None = None) -> HealthReport:
    """The subject's health at `now`: base + itemized factors, clamped to 0..100."""
    p = params or HealthParams()
    cutoff = now.timestamp()
    order = _chronological(h)
    sessions = _sessions(h, cutoff, order)
    reference = p.rules == "reference"
    # reference: an open session is one with turns; project: any session not resolved
    open_s = [s for s in sessions.values() if s.status != "resolved" and (s.turn_ids or not reference)]
    resolved = [s for s in sessions.values() if s.status == "resolved"]
    factors: list[HealthFactor] = []

    def add(signal: str, impact: float, detail: str, ids) -> None:
        if impact:
            factors.append(HealthFactor(signal, float(impact), detail, tuple(dict.fromkeys(ids))))

    if open_s:
        add(
            "unresolved_issues",
            max(p.unresolved_cap, p.unresolved_per_session * len(open_s)),
            f"{len(open_s)} open session(s): {', '.join(s.name for s in open_s)}",
            [i for s in open_s for i in (s.turn_ids[:1] or [s.resolution_id])],
        )

    if reference:
        _pooled_repeat(open_s, resolved, p, add)
    else:
        _pairwise_repeat(open_s, resolved, p, add)

    marker = is_health_urgent if reference else is_urgent
    urgent = [
        h.ids[i]
        for i in order
        if h.times[i] <= cutoff and h.roles[i] != RESOLUTION_ROLE and marker(h.texts[i])
    ]
    if urgent:
        add(
            "urgency",
            max(p.urgency_cap, p.urgency_per_turn * len(urgent)),
            f"{len(urgent)} turn(s) with an urgency marker: {', '.join(urgent)}",
            urgent,
        )

    idle_secs = p.idle_days * 86400
    idle = [s for s in open_s if cutoff - s.last_activity >= idle_secs]
    if idle:
        add(
            "idle_open_issue",
            p.idle_open_issue,
            f"open session(s) idle for {p.idle_days:g}+ days: "
            + ", ".join(f"{s.name} ({(cutoff - s.last_activity) / 86400:.1f} days)" for s in idle),
            [s.turn_ids[-1] if s.turn_ids else s.resolution_id for s in idle],
        )

    sla = p.sla_resolution_hours * 3600
    breached = [
        s for s in resolved if s.first_customer is not None and s.resolved_at - s.first_customer > sla
    ]
    if breached:
        add(
            "sla_resolution_breach",
            max(p.sla_breach_cap, p.sla_breach_per_session * len(breached)),
            f"resolved later than {p.sla_resolution_hours:g} h after the first customer turn: "
            + ", ".join(f"{s.name} ({(s.resolved_at - s.first_customer) / 3600:.1f} h)" for s in breached),
            [x for s in breached for x in (s.first_customer_id, s.resolution_id)],
        )

    answered = [s for s in sessions.values() if s.first_response is not None]
    if answered:
        waits = [(s.first_response - s.first_customer) / 60 for s in answered]
        mean = sum(waits) / len(waits)
        if mean > p.slow_first_response_minutes:
            missed = [s.name for s, w in zip(answered, waits) if w > p.sla_first_response_minutes]
            add(
                "slow_first_response",
                p.slow_first_response,
                f"mean first response {mean:.1f} min over {len(answered)} session(s) "
                f"(> {p.slow_first_response_minutes:g} min); "
                f"{len(missed)} missed the {p.sla_first_response_minutes:g}-min SLA: {', '.join(missed)}",
                [x for s in answered for x in (s.first_customer_id, s.first_response_id)],
            )

    recent_secs = p.recent_days * 86400
    recent = [s for s in resolved if cutoff - s.resolved_at <= recent_secs]
    if recent:
        add(
            "recent_resolution",
            p.recent_resolution,
            f"resolved in the last {p.recent_days:g} days: {', '.join(s.name for s in recent)}",
            [s.resolution_id for s in recent],
        )

    # reference: every session with a resolution record; project: ended ones (a reopened `open` record has not ended)
    counted = ("resolved", "unresolved", "open") if reference else ("resolved", "unresolved")
    ended = [s for s in sessions.values() if s.status in counted]
    if len(ended) >= p.high_rate_min_ended:
        rate = len(resolved) / len(ended)
        if rate >= p.high_rate_threshold:
            what = "sessions with a resolution record" if reference else "ended sessions"
            add(
                "high_resolution_rate",
                p.high_resolution_rate,
                f"{len(resolved)} of {len(ended)} {what} resolved ({rate:.0%})",
                [s.resolution_id for s in ended],
            )

    score = min(100.0, max(0.0, p.base + sum(f.impact for f in factors)))
    return HealthReport(
        subject=h.subject, at=now, base=p.base, factors=tuple(factors), score=score, band=band_for(score, p)
    )


def _pooled_repeat(open_s: list[_Session], resolved: list[_Session], p: HealthParams, add) -> None:
    """`reference`: the pooled words of every open session against those of every resolved one."""
    a = set().union(*(s.words for s in open_s)) if open_s else set()
    b = set().union(*(s.words for s in resolved)) if resolved else set()
    if not a or not b:
        return
    shared = a & b
    ratio = len(shared) / min(len(a), len(b))
    if ratio < p.repeat_threshold:
        return
    listed = ", ".join(sorted(shared)[:8]) + (f" and {len(shared) - 8} more" if len(shared) > 8 else "")
    add(
        "repeated_issue",
        p.repeated_issue,
        f"open session(s) {', '.join(s.name for s in open_s)} share {len(shared)} of min({len(a)}, {len(b)}) words "
        f"with resolved session(s) {', '.join(s.name for s in resolved if s.words & shared)} "
        f"({ratio:.2f} >= {p.repeat_threshold:g}): {listed}",
        [*(s.turn_ids[0] for s in open_s), *(s.resolution_id for s in resolved if s.words & shared)],
    )


def _pairwise_repeat(open_s: list[_Session], resolved: list[_Session], p: HealthParams, add) -> None:
    """`project`: a pair of an open and a resolved session whose keywords overlap, divided by the open one's."""
    pairs = [
        (o, r)
        for o in open_s
        for r in resolved
        if o.kw and overlap_ratio(frozenset(o.kw), frozenset(r.kw)) >= p.repeat_threshold
    ]
    if pairs:
        o, r = pairs[0]
        more = f" (and {len(pairs) - 1} more pair(s))" if len(pairs) > 1 else ""
        add(
            "repeated_issue",
            p.repeated_issue,
            f"open session {o.name} repeats resolved session {r.name}{more}",
            [x for o, r in pairs for x in (*o.turn_ids[:1], r.resolution_id)],
        )

"""The tests' oracle of customer health: the table of `stores.session.health` read from scratch.

`health_report(history, now, params)` walks the whole history at every call, the plainest reading
of the table and its rules (see `stores.session.health`'s docstring); the product's
`HealthState` (stores/session/health_state.py) must give the same report, factor by factor, after
every event (tests/stores/test_health_state.py). It lives with the tests: a change of a factor is
made in the product and here, and the property test says whether the two still agree.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import numpy as np

from stores.memory import RESOLUTION_ROLE, SubjectHistory
from stores.protocol import HealthFactor, HealthReport
from stores.session.health import HealthParams, band_for, is_health_urgent, reference_words
from stores.text import is_urgent, keywords, overlap_ratio


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

"""Customer health: the published reference model's table (docs/reference.md), its constants and readings.

The one implementation is `stores.session.health_state.HealthState`: `report(history, now)` starts
at `base`, applies the factors below in this fixed order, and clamps to 0..100, from a state kept
in step with the history (a cost per event that does not grow with it). There is no model call in
the score path: the same history and `now` always give the same report. The tests hold it to a
reading from scratch of this table (tests/stores/health_oracle.py), factor by factor.

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
from functools import lru_cache
from typing import Annotated, Literal

from stores.bounds import NonNegative, NonPositive, NotAbove, Positive, PositiveInt, Score100, Share
from stores.text import words

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


def band_for(score: float, p: HealthParams) -> str:
    """`healthy`, `watch` or `at_risk` for a score."""
    if score >= p.healthy_min:
        return "healthy"
    if score >= p.watch_min:
        return "watch"
    return "at_risk"

"""Text analysis shared by strategies and the health model: words, keywords, urgency.

Matching always runs on an item's own text, never on its rendered line, so that role
prefixes or timestamps cannot leak into word overlap or issue keywords.
"""

from __future__ import annotations

import re
from functools import lru_cache

_WORD = re.compile(r"[a-z0-9]+(?:['_.-][a-z0-9]+)*")

STOPWORDS = frozenset(
    """a about above after again against all am an and any are aren't as at be because been
    before being below between both but by can can't cannot could couldn't did didn't do does
    doesn't doing don't down during each few for from further had hadn't has hasn't have haven't
    having he he'd he'll he's her here here's hers herself him himself his how how's i i'd i'll
    i'm i've if in into is isn't it it's its itself let's me more most mustn't my myself no nor
    not of off on once only or other ought our ours ourselves out over own same shan't she she'd
    she'll she's should shouldn't so some such than that that's the their theirs them themselves
    then there there's these they they'd they'll they're they've this those through to too under
    until up very was wasn't we we'd we'll we're we've were weren't what what's when when's where
    where's which while who who's whom why why's with won't would wouldn't you you'd you'll you're
    you've your yours yourself yourselves hi hello hey thanks thank please ok okay yes yeah just
    also still again now get got will im ive dont cant its us one can't let know""".split()
)

URGENCY_MARKERS = (
    "urgent", "critical", "blocked", "deadline", "asap", "emergency", "breaking", "outage",
    "downtime", "compliance", "sla", "escalat", "immediately", "production down", "p0", "p1",
    "severity",
)
# Markers match as word prefixes, so inflections count ("urgently", "outages", "deadlines",
# "emergencies", "escalated"), but never inside another word: plain substring matching would
# read "sla" in "Slack" and "p1" in "p10". The short codes match whole words only ("SLA(s)",
# "P0", "P1"), and "production down" also matches "production is down".
_PREFIX_MARKERS = ("urgent", "critical", "blocked", "deadline", "emergenc", "breaking", "outage", "downtime",
                   "complian", "escalat", "immediately", "severity")
_URGENCY = re.compile(
    r"\b(?:" + "|".join(m + r"\w*" for m in _PREFIX_MARKERS) + r"|asap\b|slas?\b|p[01]\b|production\s+(?:is\s+)?down\b)"
)


@lru_cache(maxsize=65536)
def words(text: str) -> frozenset[str]:
    """Lower-cased words of `text`, punctuation stripped ("issue?" == "issue")."""
    return frozenset(_WORD.findall(text.lower()))


@lru_cache(maxsize=65536)
def keywords(text: str) -> frozenset[str]:
    """Issue keywords: words minus stopwords and one-character tokens."""
    return frozenset(w for w in words(text) if w not in STOPWORDS and len(w) > 1)


@lru_cache(maxsize=65536)
def is_urgent(text: str) -> bool:
    """True when the text carries an urgency marker (whole words; `escalat` as a prefix)."""
    return _URGENCY.search(text.lower()) is not None


def overlap_ratio(current: frozenset[str], prior: frozenset[str]) -> float:
    """|current ∩ prior| / |current|, 0 when `current` is empty."""
    if not current:
        return 0.0
    return len(current & prior) / len(current)

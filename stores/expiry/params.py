"""The expiry rules' parameters: each rule of the stage is a field (defaults: docs/reference.md, "Memory expiry")."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from stores.bounds import Positive


@dataclass(frozen=True)
class ExpiryParams:
    """How each memory class dies (defaults: the reference design's table for seed 004, docs/reference.md).

    Lifespans are in days of the simulated clock, counted from when the item was said. Items
    of the request's own session are the live conversation, not memory: lifespans and
    never-store rules do not apply to them (see `live_session`), while supersession and event
    closures do (they are facts, not guesses). Lifespans are positive (`stores.bounds`, checked
    by the registry on every override).
    """

    preference_days: Positive = 365.0
    """Stable preferences live this long."""
    supersede: bool = True
    """A newer preference on the same topic with a different value supersedes the older one."""
    profile_days: Positive = 365.0
    """Stable profile facts (who the customer is) live this long: the stable lifespan."""
    system_owned: Literal["pointer", "drop", "keep"] = "pointer"
    """System-owned facts are never stored across sessions; `pointer` adds one line per topic
    saying which system owns the value ('check the billing system'), `drop` adds nothing. `keep`
    switches the rule off (they live like profile facts, `profile_days`): an ablation, to measure
    what the rule costs and buys."""
    episodic_on_resolution: bool = True
    """Episodic state expires when its session is resolved (its latest record says `resolved`)."""
    episodic_on_signal: bool = True
    """Episodic state expires on a `signal` whose `ref` its text contains (case-insensitive)."""
    sentiment: Literal["scoped", "never"] = "scoped"
    """`scoped`: sentiment lives `sentiment_days` within its issue; `never`: it is never stored."""
    sentiment_days: Positive = 7.0
    """How long sentiment lives (with `sentiment="scoped"`)."""
    sentiment_scope: Literal["session", "subject"] = "session"
    """Sentiment is shown only in its own session (`session`, its issue) or in any (`subject`)."""
    incident_days: Positive = 365.0
    """The support record (agent steps and answers, resolution records) lives this long."""
    unclassified_days: Positive | None = None
    """Items of no class live this long; None means the shortest of the lifespans above
    (`sentiment_days` counts even when sentiment is never stored): 7 days by default."""
    live_session: bool = True
    """Items of the request's own session are exempt from lifespans and never-store rules."""
    classifier: Literal["rules", "learned", "chat"] = "learned"
    """Who sorts items into classes: `learned` (the default: MiniLM embeddings and a classifier
    trained on the phrase bank, the rules when it is unsure: stores/expiry/learned.py), `rules`
    (stores/expiry/classifier.py alone, a named variant: `expiry.classifier=rules`), or `chat` (the
    reply engine's OpenAI-compatible endpoint, the learned classifier when it cannot answer)."""

    @property
    def shortest_days(self) -> float:
        """The lifespan of unclassified items (`unclassified_days`, or the shortest clock)."""
        if self.unclassified_days is not None:
            return self.unclassified_days
        return min(self.preference_days, self.profile_days, self.incident_days, self.sentiment_days)

"""The business thresholds of the `session_state` policy: ops' config, not code.

Defaults are those of the seed's examples (docs/reference.md, "Decisions between turns: defaults"). A
variant is a spec (`session_state:hostile_streak=3,offer_ttl_minutes=30`), never an edit here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from typing import Literal

from stores.bounds import Positive, PositiveInt
from stores.decisions.signals import ProducerParams


@dataclass(frozen=True)
class SessionStateParams:
    """Thresholds and windows of the `session_state` policy, and where its locker lives."""

    hostile_streak: PositiveInt = 2
    """Consecutive hostile customer turns that transfer (a calm turn resets the streak to 0)."""
    human_request_ttl_minutes: Positive = 60.0
    """How long a first request for a human is remembered: a second one inside it transfers."""
    offer_ttl_minutes: Positive = 15.0
    """How long a live-support offer stays on record: a "yes" inside it accepts the offer, and
    no second offer is made inside it."""
    empty_retrieval_streak: PositiveInt = 3
    """Consecutive empty retrievals that force a transfer."""
    same_answer_streak: PositiveInt = 2
    """Consecutive repeated answers after which live support is offered (once per offer window)."""
    session_ttl_hours: Positive = 24.0
    """How long counters, open complaints and the thread owner live without a write; keys expire so
    state from an old session is never carried into a decision."""
    locker: Literal["memory", "redis"] = "memory"
    """Where session state lives: in this process, or on a Redis server shared by every replica."""
    redis_url: str = "redis://127.0.0.1:6379/0"
    """The Redis server when `locker` is `redis`."""
    redis_gc_grace_hours: Positive = 24.0
    """Redis keys also get a real (wall-clock) TTL of their simulated TTL plus this, as garbage
    collection only; liveness is always judged on the simulated clock."""
    producers: ProducerParams = field(default_factory=ProducerParams)
    """The rule-based producers' knobs (`producers.short_max_words=3`)."""

    def __post_init__(self) -> None:
        for name in ("hostile_streak", "empty_retrieval_streak", "same_answer_streak"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)}")
        for name in ("human_request_ttl_minutes", "offer_ttl_minutes", "session_ttl_hours", "redis_gc_grace_hours"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be positive, got {getattr(self, name)}")

    @property
    def human_request_ttl(self) -> timedelta:
        """`human_request_ttl_minutes` as a duration."""
        return timedelta(minutes=self.human_request_ttl_minutes)

    @property
    def offer_ttl(self) -> timedelta:
        """`offer_ttl_minutes` as a duration."""
        return timedelta(minutes=self.offer_ttl_minutes)

    @property
    def session_ttl(self) -> timedelta:
        """`session_ttl_hours` as a duration."""
        return timedelta(hours=self.session_ttl_hours)

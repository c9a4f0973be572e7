"""The scenario model (format version 1, see datasets/schema and the scenario format doc).

A `Scenario` is what the loader produces from one YAML file: subjects and an ordered list
of events with resolved times, subjects, sessions and ids. `Probe` and `Expect` carry the
gold labels; they stay in the harness and are never handed to a strategy.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Literal, Union

from stores.protocol import Forget, Resolution, Turn

Band = Literal["healthy", "watch", "at_risk"]


@dataclass(frozen=True)
class TextNeedle:
    """A gold item given as text: a case-insensitive substring of the context text."""

    text: str


GoldRef = Union[str, TextNeedle]
"""A gold item: a turn id, `<session>#resolution`, or a text needle."""


@dataclass(frozen=True)
class Expect:
    """What a good context contains at a probe (all optional)."""

    include: tuple[GoldRef, ...] = ()
    """Must be in the context (recall)."""
    exclude: tuple[GoldRef, ...] = ()
    """Must not be in the context (stale, superseded, another customer's)."""
    identity: tuple[str, ...] = ()
    """Profile facts from earlier sessions that must surface."""
    preferences: tuple[str, ...] = ()
    """Stated preferences that must surface."""
    superseded: tuple[str, ...] = ()
    """Older preferences the newer ones replaced: must not be included."""
    above: tuple[tuple[str, str], ...] = ()
    """Pairs (a, b): a must outrank b."""
    repeat_of: str | None = None
    """The resolved session this one repeats."""
    evidence: tuple[str, ...] = ()
    """What proves the repeat was recalled (default: `<repeat_of>#resolution`)."""
    not_repeat_of: tuple[str, ...] = ()
    """Resolved sessions that are NOT the same issue (negative controls)."""
    fix_before: tuple[tuple[str, str], ...] = ()
    """Pairs (fix, failure): the known fix must outrank the failed attempt."""
    health: Band | None = None
    """Expected health band of the subject at this moment."""

    def as_gold(self) -> dict:
        """Plain data for the oracle's side door (text needles as `{"text": ...}`)."""
        d = asdict(self)
        return {k: v for k, v in d.items() if v not in (None, (), [])}


@dataclass(frozen=True)
class Probe:
    """A moment when every strategy is asked for context, with the gold labels for it."""

    id: str
    subject: str
    session: str
    task: str
    budget: int
    at: datetime
    expect: Expect = field(default_factory=Expect)
    on: str | None = None
    """The next customer turn this probe is attached to (it must not come back as history)."""
    handoff: bool = False
    """Also ask strategies with the `handoff` capability for a handoff brief."""
    line: int = 0
    """Line of the probe in its file, for messages."""


ScenarioEvent = Union[Turn, Resolution, Probe, Forget]


@dataclass(frozen=True)
class Subject:
    """A customer of the scenario."""

    id: str
    name: str = ""


@dataclass(frozen=True)
class Scenario:
    """One scripted support history with its probes."""

    id: str
    version: int
    title: str
    tags: tuple[str, ...]
    start: datetime
    subjects: dict[str, Subject]
    events: tuple[ScenarioEvent, ...]
    path: str = ""
    """File it was loaded from (relative when possible)."""
    content_hash: str = ""
    """sha256 of the file bytes."""
    suite: str = ""
    """Name of the suite folder it came from."""

    @property
    def probes(self) -> list[Probe]:
        return [e for e in self.events if isinstance(e, Probe)]

    @property
    def turns(self) -> list[Turn]:
        return [e for e in self.events if isinstance(e, Turn)]

"""The scenario model (format version 1: docs/scenario-format.md; schema: datasets/schema).

A `Scenario` is what the loader produces from one YAML file: subjects and an ordered list
of events with resolved times, subjects, sessions and ids. The events a strategy observes are
those of `stores.protocol` (`Turn`, `Resolution`, `Forget`, `Signal`); the rest stay in the
harness: `Probe` with its gold `Expect`, `Fault` (for decision policies only), and per turn its
gold (`TurnGold`: memory classes, plan, route) and its scripted producer signals
(`TurnSignals`, an input for decision policies), kept beside the events in
`Scenario.turn_gold` and `Scenario.turn_signals` so a `Turn` never carries them.

`Expect`, `TurnGold` and `TurnSignals` are derived from the file models of
`harness.format.schema` (see `harness.format.gold`): adding a key there adds it here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Union

from harness.format.gold import GoldRef, TextNeedle, record_type, runtime_type
from harness.format.schema import Band, ExpectModel, FaultKind, MemoryModel, TurnEvent, TurnSignalsModel
from stores.protocol import Forget, Resolution, Signal, Turn

__all__ = [
    "Band", "TextNeedle", "GoldRef", "Expect", "ExpectMemory", "TurnGold", "TurnSignals", "Probe", "Fault",
    "ScenarioEvent", "Subject", "Scenario",
]

Expect = runtime_type(
    ExpectModel, "Expect", "What a good context contains at a probe (all optional): one field per gold key of "
    "`harness.format.schema.ExpectModel`; frozen and hashable.", __name__)
"""The gold labels of a probe, as the criteria read them (`probe.expect.<key>`)."""

ExpectMemory = Expect.record_of(MemoryModel)
"""A gold typed memory (`type`, `text`, `outcome`, `status`, `source`; None when not given)."""

TurnGold = runtime_type(
    TurnEvent, "TurnGold", "The gold of one turn (memory classes, and for a customer turn the plan and route "
    "it should get): one field per gold key of `harness.format.schema.TurnEvent`; frozen and hashable.", __name__)
"""A turn's gold, as criteria read it (`scenario.gold_of(turn_id).<key>`)."""

TurnSignals = record_type(
    TurnSignalsModel, "TurnSignals", "What the producers report for a turn, as scripted (None: not scripted, "
    "the rule-based producer decides); an input for decision policies, never gold.", __name__)
"""A turn's scripted producer signals (`scenario.signals_of(turn_id).<signal>`)."""


@dataclass(frozen=True)
class Probe:
    """A moment when every strategy is asked for context, with the gold labels for it."""

    id: str
    subject: str
    session: str
    task: str
    budget: int
    at: datetime
    expect: Expect = field(default_factory=Expect)  # type: ignore[valid-type]
    on: str | None = None
    """The next customer turn this probe is attached to (it must not come back as history)."""
    handoff: bool = False
    """Also ask strategies with the `handoff` capability for a handoff brief."""
    line: int = 0
    """Line of the probe in its file, for messages."""
    tags: tuple[str, ...] = ()
    """Words that group probes in reports (e.g. a benchmark's question category)."""


@dataclass(frozen=True)
class Fault:
    """An infrastructure fault (`locker_down`, `locker_up`): replay hands it to decision policies,
    never to a memory strategy."""

    name: FaultKind
    """What happened."""
    at: datetime
    """Simulated time of the fault."""
    subject: str | None = None
    """The subject of the events around it (inherited; a fault concerns the whole system)."""
    session: str | None = None
    """The session of the events around it (inherited)."""


ScenarioEvent = Union[Turn, Resolution, Probe, Forget, Signal, Fault]


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
    turn_gold: dict[str, TurnGold] = field(default_factory=dict)  # type: ignore[valid-type]
    """Turn id -> its gold, for the turns that carry any (never shown to strategies)."""
    turn_signals: dict[str, TurnSignals] = field(default_factory=dict)  # type: ignore[valid-type]
    """Turn id -> its scripted producer signals, for the turns that script any (decision policies' input)."""

    @property
    def probes(self) -> list[Probe]:
        return [e for e in self.events if isinstance(e, Probe)]

    @property
    def turns(self) -> list[Turn]:
        return [e for e in self.events if isinstance(e, Turn)]

    def gold_of(self, turn_id: str) -> TurnGold:  # type: ignore[valid-type]
        """The turn's gold (nothing set when it carries none)."""
        return self.turn_gold.get(turn_id) or TurnGold()

    def signals_of(self, turn_id: str) -> TurnSignals:  # type: ignore[valid-type]
        """The turn's scripted signals (none set when it scripts none)."""
        return self.turn_signals.get(turn_id) or TurnSignals()

"""Replay a scenario through a strategy on the simulated clock.

Events are delivered in order; at each probe the strategy is asked for context and the
bundle is recorded with everything a criterion needs to judge it. Gold labels stay here:
only a strategy with the `gold` capability (the oracle control) is handed them, through
`peek_gold`. An exception inside a strategy becomes an error on the probes it affected and
the replay goes on. Strategies observe turns, resolutions, forgets and system signals; a
`Fault` is never delivered to them: it goes to the replay's `on_fault` (where decision
policies get it). The strategy is typed by the protocols of `stores.protocol`: the core
`Strategy`, a capability's protocol where the strategy claims it, a hook's where it has it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Callable, cast

from stores.protocol import (
    Bundle, ContextRequest, ExpiryCapability, Forget, GoldCapability, Handoff, HandoffCapability, HealthCapability,
    HealthReport, MemoriesCapability, PrepareHook, Resolution, Signal, Strategy, Turn,
)
from stores.packing import received_bundle
from stores.reply.model import SupportReply

from harness.format.model import Fault, Probe, Scenario, ScenarioEvent
from harness.replay import describe_error as _describe
from harness.replay.timeline import HealthPoint
from harness.replay.timeline import point as timeline_point


@dataclass(frozen=True)
class SeenItem:
    """A history item as the harness knows it (for provenance and isolation checks)."""

    id: str
    subject: str
    session: str
    text: str
    at: datetime
    event_index: int
    """Index of the event that first created it."""


@dataclass
class ProbeOutcome:
    """One probe of one scenario, answered by one strategy."""

    scenario: Scenario
    probe: Probe
    event_index: int
    bundle: Bundle | None
    error: str | None = None
    """Why there is no bundle: the strategy raised (message and last frame)."""
    seen: dict[str, SeenItem] = field(default_factory=dict)
    """Every item of every subject replayed before this probe (shared, read-only: filter by event_index)."""
    forgotten: frozenset[str] = frozenset()
    """Subjects forgotten before this probe (and not spoken to since)."""
    health: HealthReport | None = None
    health_again: HealthReport | None = None
    """A second, independent computation of the same report (determinism check)."""
    health_error: str | None = None
    handoff: Handoff | None = None
    handoff_error: str | None = None
    memories: tuple[Any, ...] | None = None
    """The customer's typed memories right after `context`, for a strategy with the `memories`
    capability (`stores.structured.model.Memory`); None for the others."""
    memories_error: str | None = None
    reply: SupportReply | None = None
    """What the one reply engine (`stores.reply`) answers from this context; None when there is no
    bundle, in the idempotency check's replays, or when the engine raised."""
    reply_error: str | None = None
    capabilities: frozenset[str] = frozenset()
    replays: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """The same probe in the idempotency check's replays (`reset`: the same instance after
    `reset()`; `twice`: a fresh one with every event delivered twice): the ids of its candidates
    and of the items they are built from, in rank order. Filled in by the runner after those
    replays; empty when there were none (a rescore, a unit test) or the replay failed there."""

    def exists(self, item_id: str) -> bool:
        """True when `item_id` was replayed before this probe."""
        s = self.seen.get(item_id)
        return s is not None and s.event_index < self.event_index


@dataclass
class Replay:
    """Everything one strategy produced on one scenario."""

    outcomes: list[ProbeOutcome]
    timeline: list[HealthPoint]
    observe_error: str | None = None
    memory_classes: dict[str, Any] = field(default_factory=dict)
    """For a strategy with the `expiry` capability: turn id -> the class it gave the turn when
    it observed it (`ExpiryCapability.memory_class`, asked right after the turn, before a later
    `forget` could drop it); empty otherwise."""


def build_seen(scenario: Scenario) -> dict[str, SeenItem]:
    """Map of every item id the scenario creates, with where it first happens."""
    seen: dict[str, SeenItem] = {}
    for i, ev in enumerate(scenario.events):
        if isinstance(ev, Turn) and ev.id not in seen:
            seen[ev.id] = SeenItem(ev.id, ev.subject, ev.session, ev.text, ev.at, i)
        elif isinstance(ev, Resolution) and ev.id not in seen:
            seen[ev.id] = SeenItem(ev.id, ev.subject, ev.session, ev.summary, ev.at, i)
    return seen


def forgotten_at_probes(scenario: Scenario) -> dict[int, frozenset[str]]:
    """Per probe (by event index): the subjects forgotten before it and not spoken to since
    (a subject spoken to again starts a new history)."""
    out: dict[int, frozenset[str]] = {}
    forgotten: set[str] = set()
    for i, ev in enumerate(scenario.events):
        if isinstance(ev, Probe):
            out[i] = frozenset(forgotten)
        elif isinstance(ev, Forget):
            forgotten.add(ev.subject)
        elif isinstance(ev, (Turn, Resolution)):  # a signal or a fault is not the customer speaking
            forgotten.discard(ev.subject)
    return out


def request_for(probe: Probe) -> ContextRequest:
    """The context request a probe makes of every strategy."""
    return ContextRequest(
        subject=probe.subject, session=probe.session, task=probe.task, budget_tokens=probe.budget, now=probe.at
    )


def scenario_texts(scenario: Scenario) -> list[str]:
    """What a strategy's optional `prepare` hook gets: every turn text, resolution summary
    and probe task of the scenario, in event order (no gold labels)."""
    out: list[str] = []
    for ev in scenario.events:
        if isinstance(ev, Turn):
            out.append(ev.text)
        elif isinstance(ev, Resolution):
            out.append(ev.summary)
        elif isinstance(ev, Probe):
            out.append(ev.task)
    return out


def prepare(scenario: Scenario, strategy: Strategy) -> None:
    """Call the strategy's optional `prepare(texts)` hook (`stores.protocol.PrepareHook`).

    It only warms caches, so a failure is ignored: whatever broke surfaces, with the same
    result as without the hook, when the strategy meets the same texts during the replay.
    """
    if isinstance(strategy, PrepareHook):
        try:
            strategy.prepare(scenario_texts(scenario))
        except Exception:
            pass


def replay(
    scenario: Scenario,
    strategy: Strategy,
    *,
    deliver_twice: bool = False,
    record_health: bool = True,
    seen: dict[str, SeenItem] | None = None,
    prepare_first: bool = True,
    on_fault: Callable[[Fault], None] | None = None,
    answer: bool = True,
    bundles_only: bool = False,
    timeline_to: Callable[[HealthPoint], None] | None = None,
) -> Replay:
    """Replay `scenario` through `strategy` (which should be fresh or reset).

    With `deliver_twice`, every turn, resolution, forget and signal is observed twice in a row
    (same ids): an idempotent memory must not change. Probes are asked once either way.
    With `prepare_first`, the strategy's optional `prepare` hook is called before the first
    event (it is for speed only, so the idempotency replays skip it).
    A `Fault` event is never delivered to the strategy: it is handed, in order, to `on_fault`
    (the decision policies' side of the replay; without it, faults change nothing).
    With `answer`, each probe's context also gets the reply engine's `SupportReply` (the
    idempotency replays only compare bundles, so they skip it). With `bundles_only` (the
    idempotency check's replays) probes ask for context alone: no typed memories, reply, health
    report or handoff brief, which those replays never compare (the timeline is
    `record_health`'s to skip). With `timeline_to`, each timeline point is handed to it as it is
    made instead of kept in `Replay.timeline` (a long history's timeline is then never all in
    memory).
    """
    caps = frozenset(strategy.capabilities)
    seen = build_seen(scenario) if seen is None else seen
    if prepare_first:
        prepare(scenario, strategy)
    outcomes: list[ProbeOutcome] = []
    timeline: list[HealthPoint] = []
    forgotten = forgotten_at_probes(scenario)
    broken: str | None = None
    classes: dict[str, Any] = {}
    for i, ev in enumerate(scenario.events):
        if isinstance(ev, Probe):
            outcomes.append(_ask(scenario, strategy, ev, i, seen, forgotten[i], caps, broken, answer, bundles_only))
            continue
        if isinstance(ev, Fault):  # infrastructure, for decision policies: a memory strategy never sees it
            if on_fault is not None:
                on_fault(ev)
            continue
        if broken is None:
            try:
                strategy.observe(ev)
                if deliver_twice:
                    strategy.observe(ev)
            except Exception as exc:  # a strategy bug must not stop the run
                broken = f"observe({_event_id(ev)}) raised {_describe(exc)}"
        if broken is None and "expiry" in caps and isinstance(ev, Turn) and ev.id not in classes:
            try:
                classes[ev.id] = cast(ExpiryCapability, strategy).memory_class(ev.subject, ev.id)
            except Exception:
                classes[ev.id] = None  # counted as no class by the classifier's criterion
        if record_health and broken is None and "health" in caps and not isinstance(ev, Forget):
            try:
                report = cast(HealthCapability, strategy).health(ev.subject, ev.at)
                p = timeline_point(report.subject, i, report)  # compact: the report is not kept
            except Exception:
                continue  # reported on the probes that ask for health
            if timeline_to is None:
                timeline.append(p)
            else:
                timeline_to(p)  # outside the try: a table that cannot be written must stop the run
    return Replay(outcomes, timeline, broken, classes)


def _event_id(ev: ScenarioEvent) -> str:
    if isinstance(ev, Forget):
        return f"forget {ev.subject}"
    if isinstance(ev, Signal):
        return f"signal {ev.name}"
    return ev.id


def _ask(scenario: Scenario, strategy: Strategy, probe: Probe, index: int, seen: dict[str, SeenItem],
         forgotten: frozenset[str], caps: frozenset[str], broken: str | None, answer: bool = True,
         bundles_only: bool = False) -> ProbeOutcome:
    """One probe's outcome; a capability is used only where the strategy claims it (and a claim
    is its protocol, `stores.protocol.CAPABILITIES`)."""
    out = ProbeOutcome(scenario, probe, index, None, seen=seen, forgotten=forgotten, capabilities=caps)
    if broken is not None:
        out.error = f"not asked: the strategy failed earlier, {broken}"
        return out
    request = request_for(probe)
    try:
        if "gold" in caps:
            cast(GoldCapability, strategy).peek_gold(probe.expect.as_gold())
        t0 = time.perf_counter()
        bundle = strategy.context(request)
        bundle.latency_ms = (time.perf_counter() - t0) * 1000.0
        out.bundle = bundle
    except Exception as exc:
        out.error = f"context() raised {_describe(exc)}"
        return out
    if bundles_only:
        return out
    if "memories" in caps:  # read now: the probe's own turn is not observed yet (recall before ingest)
        try:
            out.memories = tuple(cast(MemoriesCapability, strategy).memories(probe.subject))
        except Exception as exc:
            out.memories_error = f"memories() raised {_describe(exc)}"
    if answer:
        try:  # the engine reads the context as the model receives it (cut at the budget), never the gold
            out.reply = reply_engine().reply(request, received_bundle(bundle, probe.budget), out.memories)
        except Exception as exc:
            out.reply_error = f"the reply engine raised {_describe(exc)}"
    if "health" in caps and probe.expect.asks("band"):
        try:
            health = cast(HealthCapability, strategy).health
            out.health = health(probe.subject, probe.at)
            out.health_again = health(probe.subject, probe.at)
        except Exception as exc:
            out.health_error = f"health() raised {_describe(exc)}"
    if "handoff" in caps and probe.handoff:
        try:
            out.handoff = cast(HandoffCapability, strategy).handoff(request)
        except Exception as exc:
            out.handoff_error = f"handoff() raised {_describe(exc)}"
    return out


_ENGINE: list[Any] = []


def reply_engine() -> Any:
    """The run's one reply engine (`stores.reply.chat.reply_engine`: scripted unless SUPPORTBENCH_REPLY_URL
    is set), made once per process so every strategy's contexts are answered by the same engine."""
    if not _ENGINE:
        from stores.reply.chat import reply_engine as make

        _ENGINE.append(make())
    return _ENGINE[0]


_REPLAY_NAMES = {"reset": "the replay after reset", "twice": "the replay with every event delivered twice"}


def idempotency_signatures(
    scenario: Scenario, make_strategy: Callable[[], Strategy], first: Replay, strategy: Strategy, *,
    seen: dict[str, SeenItem] | None = None,
) -> dict[str, Any]:
    """Replay again after `reset()` and once more, fresh (`make_strategy()`, whose caller owns
    and closes the instance), with every event delivered twice.

    Returns, per probe id, the three signatures (plain, reset, twice) so the idempotency
    criterion can say exactly which replay differed and how; under `candidates`, per replay
    and probe id, the ids each replay's bundle brought back (see `ProbeOutcome.replays`);
    under `error`, what raised during the check (in `reset()`, building the fresh instance,
    or in an `observe` after the last probe), or None.
    """
    seen = build_seen(scenario) if seen is None else seen
    plain = {o.probe.id: _sig(o) for o in first.outcomes}
    result: dict[str, Any] = {"plain": plain, "reset": {}, "twice": {}, "candidates": {}, "error": None}
    step = "reset()"
    try:
        strategy.reset()
        step = _REPLAY_NAMES["reset"]
        again = replay(scenario, strategy, record_health=False, prepare_first=False, seen=seen, answer=False,
                       bundles_only=True)
        _keep(result, "reset", again)
        step = _REPLAY_NAMES["twice"]
        twice = replay(scenario, make_strategy(), deliver_twice=True, record_health=False, prepare_first=False, seen=seen,
                       answer=False, bundles_only=True)
        _keep(result, "twice", twice)
    except Exception as exc:
        result["error"] = f"{step} raised {_describe(exc)}"
    return result


def _keep(result: dict[str, Any], kind: str, r: Replay) -> None:
    result[kind] = {o.probe.id: _sig(o) for o in r.outcomes}
    result["candidates"][kind] = {o.probe.id: _candidate_ids(o) for o in r.outcomes if o.bundle is not None}
    if r.observe_error and result["error"] is None:
        result["error"] = f"in {_REPLAY_NAMES[kind]}, {r.observe_error}"


def _candidate_ids(o: ProbeOutcome) -> tuple[str, ...]:
    """Every candidate's id and source ids, in rank order, once each."""
    c = o.bundle.candidates
    fast = getattr(c, "provenance_ids", None)
    if fast is not None:  # a column-wise table knows when each item is its own source
        return fast()
    ids, sources = getattr(c, "item_ids", None), getattr(c, "source_ids", None)
    if ids is None or sources is None:  # a plain list of `Candidate`s
        ids, sources = [x.item_id for x in c], [x.source_ids for x in c]
    return tuple(dict.fromkeys(x for i, src in zip(ids, sources) for x in (i, *src)))


def attach_replays(outcomes: list[ProbeOutcome], idem: dict[str, Any]) -> None:
    """Give each outcome of the plain replay what the idempotency replays returned for its
    probe (`ProbeOutcome.replays`), so probe criteria can also judge those bundles."""
    for o in outcomes:
        o.replays = {kind: by_probe[o.probe.id] for kind, by_probe in idem.get("candidates", {}).items()
                     if o.probe.id in by_probe}


def _sig(o: ProbeOutcome):
    if o.bundle is None:
        return ("error", o.error)
    return o.bundle.signature()

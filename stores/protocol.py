"""The contract between the replay harness and every memory strategy.

Strategies see only what a deployed memory layer would see: the events of the
conversation (turns, resolutions, deletion requests, system signals) as they happen, and a
context request at the moment the agent is about to answer. Gold labels live in
the harness (`harness.format.model.Probe`) and never cross this boundary.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, ClassVar, Literal, Protocol, Sequence, Union, runtime_checkable

Role = Literal["customer", "agent"]
TurnKind = Literal["message", "action"]
Status = Literal["resolved", "open", "unresolved"]


@dataclass(frozen=True, slots=True)
class Turn:
    """One message of a support conversation."""

    id: str
    """Stable id: explicit in the scenario, or `<session>#<n>`."""
    subject: str
    """The customer the turn belongs to."""
    session: str
    """The support session (ticket, chat) the turn belongs to."""
    role: Role
    """Who spoke: the customer or the agent."""
    kind: TurnKind
    """`message`, or `action` for a step the agent tried."""
    text: str
    """What was said."""
    at: datetime
    """Simulated time of the turn (UTC)."""


@dataclass(frozen=True, slots=True)
class Resolution:
    """A session's resolution record; itself an item a strategy may retrieve."""

    subject: str
    """The customer the session belongs to."""
    session: str
    """The session being resolved (or reopened)."""
    status: Status
    """`resolved`, `open` (reopened) or `unresolved` (closed without a fix)."""
    summary: str
    """What was done; may be empty."""
    at: datetime
    """Simulated time of the resolution."""

    @property
    def id(self) -> str:
        """The retrievable id of the record: `<session>#resolution`."""
        return f"{self.session}#resolution"


@dataclass(frozen=True, slots=True)
class Forget:
    """A deletion request: nothing of this subject may appear afterwards."""

    subject: str
    """The customer to forget."""
    at: datetime
    """Simulated time of the request."""


@dataclass(frozen=True, slots=True)
class Signal:
    """A system event the agent's systems emit (a shipment delivered, an RMA closed, a callback
    done). A strategy observes it like a turn; it may ignore it. It is not a retrievable item."""

    subject: str
    """The customer it concerns."""
    session: str
    """The session it arrived in."""
    name: str
    """What happened, e.g. `rma_closed`."""
    ref: str | None
    """What it closes, e.g. `RMA 5531` (memories whose text contains it), or None."""
    at: datetime
    """Simulated time of the signal."""


Event = Union[Turn, Resolution, Forget, Signal]
"""What a strategy observes, in time order."""


@dataclass(frozen=True, slots=True)
class ContextRequest:
    """The agent is about to answer: what should it be shown?"""

    subject: str
    """The customer being served."""
    session: str
    """The live session."""
    task: str
    """What the agent is about to answer (usually the customer's latest words)."""
    budget_tokens: int
    """Hard ceiling on the tokens of the whole rendered context."""
    now: datetime
    """The simulated clock; strategies never read wall time."""


DROP_BUDGET = "budget"
"""Dropped because it did not fit in the remaining budget."""
DROP_CUTOFF = "rank_cutoff"
"""Dropped because the strategy keeps only items above a minimum score (or its own rule)."""
DROP_CAP = "item_cap"
"""Dropped because the strategy's explicit, opt-in item cap (`top_k`) was reached."""

STOP_BUDGET, STOP_CAP, STOP_EXHAUSTED = "budget", "cap", "exhausted"
"""Why a bundle stopped filling its budget: an item that ranked no worse did not fit (`budget`), the
item cap was reached first (`cap`), or every eligible candidate is in (`exhausted`)."""


def stop_reason(reasons) -> str:
    """Why a bundle stopped, from its candidates' drop reasons (`STOP_BUDGET`, `STOP_CAP`,
    `STOP_EXHAUSTED`): a candidate dropped for the budget says the budget decided, else one dropped
    by the cap says the cap did, else the eligible candidates ran out."""
    seen = set(reasons)
    if DROP_BUDGET in seen:
        return STOP_BUDGET
    if DROP_CAP in seen:
        return STOP_CAP
    return STOP_EXHAUSTED


@dataclass(slots=True)
class Candidate:
    """One item a strategy considered, with why it scored what it did."""

    item_id: str
    """Id of the memory item (a turn id or `<session>#resolution`)."""
    text: str
    """The item's text as rendered into the context."""
    score: float
    """The ranking score; equals the sum of `components`."""
    components: dict[str, float]
    """Named parts of the score, e.g. `{"recency": 4.2, "active_session": 6.0}`."""
    source_ids: tuple[str, ...]
    """Ids of the history items this candidate is built from (provenance)."""
    included: bool
    """Whether it made it into the context text."""
    reason: str = ""
    """Why it was dropped (empty when included): `budget`, `rank_cutoff`, `item_cap`, or the strategy's own word."""
    tokens: int = 0
    """Tokens of its rendered line, counted by the project tokenizer."""
    subject: str = ""
    """The customer the item belongs to."""
    session: str = ""
    """The session the item belongs to."""


@dataclass(slots=True)
class Bundle:
    """What a strategy put in front of the model, and its receipt.

    `candidates` is every item the strategy considered, in rank order (rank 1 first),
    not only the winners; `text` is exactly what the model would see.
    """

    candidates: Sequence[Candidate]
    """Every candidate considered, best first (a list, or a column-wise `stores.packing.CandidateTable`)."""
    text: str
    """The rendered context."""
    tokens: int
    """Tokens of `text`, counted by the project tokenizer on the whole text."""
    latency_ms: float = 0.0
    """Wall time the strategy took to build it (filled in by the harness)."""

    @property
    def included(self) -> list[Candidate]:
        """The candidates that made it into the context, in rank order."""
        return [c for c in self.candidates if c.included]

    @property
    def stop(self) -> str:
        """Why filling stopped (`stop_reason` of the candidates' drop reasons): `budget`, `cap`
        or `exhausted`."""
        c = self.candidates
        codes = getattr(c, "reason_set", None)  # a column-wise table answers without building rows
        return stop_reason(codes() if codes is not None else (x.reason for x in c))

    def budget_used(self, budget_tokens: int) -> float:
        """Share of `budget_tokens` the text takes (0 for a budget of 0)."""
        return self.tokens / budget_tokens if budget_tokens > 0 else 0.0

    def signature(self) -> tuple[tuple[str, ...], bytes, str]:
        """What must not change between equivalent replays: candidate ids in rank order,
        which of them were included (one byte per candidate, 1 = included), and the text."""
        c = self.candidates
        ids, mask = getattr(c, "item_ids", None), getattr(c, "included_mask", None)
        if ids is not None and mask is not None:  # column-wise: no `Candidate` per item
            flags = mask.tobytes() if getattr(mask, "dtype", None) == bool else bytes(bool(x) for x in mask)
            return tuple(ids), flags, self.text
        items = list(c)
        return tuple(x.item_id for x in items), bytes(bool(x.included) for x in items), self.text


@dataclass(frozen=True, slots=True)
class HealthFactor:
    """One itemized reason a customer's health moved."""

    signal: str
    """What was observed, e.g. `unresolved_issues`."""
    impact: float
    """Points added to (positive) or taken from (negative) the score."""
    detail: str
    """A sentence a person can read, naming the sessions or turns."""
    source_ids: tuple[str, ...] = ()
    """The history items behind the factor."""


@dataclass(frozen=True, slots=True)
class HealthReport:
    """Customer health at a simulated moment: base + impacts, clamped to 0..100."""

    subject: str
    """The customer."""
    at: datetime
    """The simulated `now` it was computed for."""
    base: float
    """Starting score (100)."""
    factors: tuple[HealthFactor, ...]
    """Every factor applied, in a fixed order."""
    score: float
    """`clamp(base + sum(impacts), 0, 100)`."""
    band: Literal["healthy", "watch", "at_risk"]
    """`healthy` >= 70, `watch` 40-69, `at_risk` < 40."""


@dataclass(frozen=True, slots=True)
class Handoff:
    """A token-bounded brief for the human who takes over a session."""

    subject: str
    """The customer."""
    session: str
    """The session being handed over."""
    sections: tuple[tuple[str, str], ...]
    """(heading, body) in the fixed order of the handoff brief (docs/reference.md)."""
    text: str
    """The rendered brief."""
    tokens: int
    """Tokens of `text`."""
    used_ids: tuple[str, ...]
    """The receipt: ids of every turn, resolution and fact the brief used, and nothing else."""


@dataclass(frozen=True, slots=True)
class Scope:
    """Where one strategy instance keeps what it remembers while the harness replays one scenario.

    Subject ids (`c1`) repeat across scenarios, strategies and worker processes, so anything a
    strategy stores outside its own process (a remote service, an on-disk index) must live under
    `namespace`. The harness gives every instance its own scope: the instance that replays the
    scenario (and replays it again after `reset()`) is `plain`; the fresh instance the idempotency
    check builds is `twice`.
    """

    namespace: str
    """`sb-` and 20 hex digits, a hash of (run id, strategy label, suite, scenario, instance):
    unique per instance and the same on every rerun with the same run id (no wall time, no
    random, independent of sharding). Use it as the remote bank/collection/user prefix."""
    run_id: str
    """The run being written (`"local"` outside a run)."""
    strategy: str
    """The strategy's label (`mem0[fast]`)."""
    suite: str
    """The scenario's suite."""
    scenario: str
    """The scenario's id."""
    instance: Literal["plain", "twice"]
    """Which instance of the scenario's replays this is."""
    cache_dir: Path
    """A persistent folder shared by every instance of this strategy (its registry name), across
    runs: model files, a package's home folder, an embedding cache. Created by the harness."""
    work_dir: Path
    """A folder private to this instance (an on-disk store): created before `open`, removed
    after `close`."""


@runtime_checkable
class Strategy(Protocol):
    """A memory strategy: observes events, answers context requests.

    The core every strategy implements: `name` (its registry key), `params` (a frozen dataclass,
    `Params`), `capabilities`, `observe(event)`, `context(request) -> Bundle` and `reset()` (forget
    everything, as if fresh). Beyond it, each optional part is its own protocol below; the
    harness uses one only where the strategy has it, never finding methods by name alone:

    Capabilities, claimed in `capabilities` (a claim must be backed by the method, with the
    signature of its protocol; `stores.registry` refuses a class that claims one it lacks):

    - `health` (`HealthCapability`): `health(subject, now) -> HealthReport`;
    - `handoff` (`HandoffCapability`): `handoff(request) -> Handoff`;
    - `gold` (`GoldCapability`, the oracle control only): `peek_gold(gold)` before each
      `context`, the side door to the probe's gold labels;
    - `memories` (`MemoriesCapability`): `memories(subject)`, the customer's typed memories
      (`stores.structured.model.Memory`) as held at this moment, read at each probe right after
      `context` (before the probe's turn is observed) for the typed-memory criteria and the reply;
    - `expiry` (`ExpiryCapability`): the strategy forgets on purpose and says so in its receipts
      (a removed item's `reason` names the expiry rule, `stores.expiry`); `memory_class(subject,
      item_id)` is the class it gave an observed item (None when it classifies nothing). Any
      strategy gets it behind the expiry stage (`name:expiry=on`).

    Hooks, used when the class defines them (never required):

    - `prepare(texts)` (`PrepareHook`), before the first event of a scenario, with the texts the
      scenario will make the strategy handle (every turn's text, resolution summary and probe
      task, in order, duplicates kept); and once per shard, on an instance built for it and
      never shown an event, with every such text of the shard's scenarios, deduplicated
      (`harness.run.runner.prefetch`). For speed only, e.g. to encode them into an embedding
      cache in large batches: it must not change what the strategy remembers or returns (memory
      still learns an event only when it is observed), and a strategy without it, or one whose
      `prepare` raises, gets the same results.
    - `open(scope)` (`OpenHook`), right after the instance is built and before anything else:
      the `Scope` it must keep its memory under (namespace, cache folder, private work folder).
      A strategy that stores nothing outside its own objects ignores it. If `open` raises, every
      case the instance owed is an `error` row naming the exception (a service that is down).
    - `call_counts()` (`CallCountsHook`), the round trips made to a service, per kind of call;
      the runner asks each instance before closing it and writes the sums per strategy in the
      run manifest (`strategies[].cost`).
    - `close()` (`CloseHook`), release what `open` acquired (connections, remote namespaces,
      files). The runner always calls it, exactly once per instance it built: after the
      scenario's replays, also when the strategy raised in `open`, `observe`, `context` or
      `reset`, and for the fresh instance of the idempotency check. An exception in `close` is
      logged as a warning and changes no score.

    Lifecycle of one scenario through one strategy spec: build `plain` -> `open(scope)` ->
    `prepare(texts)` -> `observe`/`context` (and capabilities) per event -> `reset()` -> the
    same replay again -> build `twice` -> `open(its scope)` -> replay with every event
    delivered twice -> `close()` on both.

    Parameters: `Params` is a frozen dataclass with a default and a docstring per field; every
    value is written to the run manifest and hashed into `params_hash`, except secret fields,
    declared with `stores.params.secret(env="VAR")`: their value comes from the environment
    variable when a spec does not give it, is shown as `<secret>` in the manifest (its command
    line included), labels and `supportbench ls strategies`, stays out of `params_hash` and
    baselines, and is replaced by `<secret>` in the error messages the run writes.
    """

    name: ClassVar[str]
    params: Any
    capabilities: ClassVar[frozenset[str]]

    def observe(self, event: Event) -> None: ...

    def context(self, request: ContextRequest) -> Bundle: ...

    def reset(self) -> None: ...


@runtime_checkable
class HealthCapability(Protocol):
    """The `health` capability: the customer's health at a simulated moment, itemized."""

    def health(self, subject: str, now: datetime) -> HealthReport: ...


@runtime_checkable
class HandoffCapability(Protocol):
    """The `handoff` capability: a token-bounded brief for the human who takes over."""

    def handoff(self, request: ContextRequest) -> Handoff: ...


@runtime_checkable
class GoldCapability(Protocol):
    """The `gold` capability (controls only): the probe's gold labels, for the next `context` only."""

    def peek_gold(self, gold: dict[str, Any]) -> None: ...


@runtime_checkable
class ExpiryCapability(Protocol):
    """The `expiry` capability: receipts name expiry rules; the class given to an observed item
    (a `stores.expiry.Classification`, or None when the strategy classifies nothing)."""

    def memory_class(self, subject: str, item_id: str) -> Any: ...


@runtime_checkable
class PrepareHook(Protocol):
    """Optional: warm caches with the scenario's texts before its first event (speed only)."""

    def prepare(self, texts: list[str]) -> None: ...


@runtime_checkable
class OpenHook(Protocol):
    """Optional: receive the instance's `Scope` before anything else happens."""

    def open(self, scope: Scope) -> None: ...


@runtime_checkable
class CloseHook(Protocol):
    """Optional: release what the instance holds; always called once per built instance."""

    def close(self) -> None: ...


@runtime_checkable
class CallCountsHook(Protocol):
    """Optional: the round trips the instance made to its service so far, per kind of call,
    as `{kind: {"calls": n, "seconds": s}}` (a remote strategy; the run manifest sums them)."""

    def call_counts(self) -> dict[str, dict[str, float]]: ...


@runtime_checkable
class MemoriesCapability(Protocol):
    """The `memories` capability: the customer's typed memories now (seed 002's structured memory)."""

    def memories(self, subject: str) -> Sequence[Any]: ...


CAPABILITIES: dict[str, type] = {
    "health": HealthCapability, "handoff": HandoffCapability, "gold": GoldCapability, "memories": MemoriesCapability,
    "expiry": ExpiryCapability,
}
"""Each capability a strategy may claim, and the protocol that claim commits it to."""

HOOKS: dict[str, type] = {"prepare": PrepareHook, "open": OpenHook, "close": CloseHook, "call_counts": CallCountsHook}
"""Each optional hook, by method name, and its protocol."""


def _parameters(fn: Any) -> list[str]:
    """Parameter names of a protocol method (after `self`)."""
    return list(inspect.signature(fn).parameters)[1:]


def _accepts(fn: Any, n: int) -> bool:
    """Whether `fn`, looked up on the class, can be called with an instance and `n` positional arguments."""
    try:
        inspect.signature(fn).bind(*([None] * (n + 1)))
    except TypeError:
        return False
    return True


def contract_problems(cls: type) -> list[str]:
    """What is wrong with a strategy class against the protocols (empty when nothing is): a
    missing core member, a capability claimed but unknown or not implemented with its
    protocol's signature, a hook defined with the wrong signature."""
    problems = []
    for member in ("observe", "context", "reset"):
        fn = getattr(cls, member, None)
        if not callable(fn):
            problems.append(f"{cls.__name__} has no {member}()")
        elif not _accepts(fn, len(_parameters(getattr(Strategy, member)))):
            problems.append(f"{cls.__name__}.{member} does not take ({', '.join(_parameters(getattr(Strategy, member)))})")
    caps = getattr(cls, "capabilities", None)
    if not isinstance(caps, frozenset):
        problems.append(f"{cls.__name__}.capabilities must be a frozenset, got {type(caps).__name__}")
        caps = frozenset()
    checks = [(c, CAPABILITIES.get(c), f"claims the {c!r} capability") for c in sorted(caps)]
    checks += [(h, proto, f"defines the {h!r} hook") for h, proto in HOOKS.items() if hasattr(cls, h)]
    for key, proto, why in checks:
        if proto is None:
            problems.append(f"{cls.__name__} claims an unknown capability {key!r} (known: {', '.join(CAPABILITIES)})")
            continue
        (method,) = [m for m in vars(proto) if not m.startswith("_") and callable(vars(proto)[m])]
        names = _parameters(getattr(proto, method))
        fn = getattr(cls, method, None)
        if not callable(fn):
            problems.append(f"{cls.__name__} {why} but has no {method}()")
        elif not _accepts(fn, len(names)):
            problems.append(f"{cls.__name__} {why} but {method} does not take ({', '.join(names)})")
    return problems


@dataclass(frozen=True)
class NoParams:
    """For strategies without parameters."""


def params_dict(params: Any) -> dict[str, Any]:
    """A strategy's params as a plain dict for manifests and display: secret fields redacted
    (`stores.params.public_params`)."""
    from stores.params import public_params

    return public_params(params)


__all__ = [
    "Turn",
    "Resolution",
    "Forget",
    "Signal",
    "Event",
    "ContextRequest",
    "Candidate",
    "Bundle",
    "HealthFactor",
    "HealthReport",
    "Handoff",
    "Scope",
    "Strategy",
    "HealthCapability",
    "HandoffCapability",
    "GoldCapability",
    "ExpiryCapability",
    "PrepareHook",
    "OpenHook",
    "CloseHook",
    "CallCountsHook",
    "MemoriesCapability",
    "CAPABILITIES",
    "HOOKS",
    "contract_problems",
    "NoParams",
    "params_dict",
    "DROP_BUDGET",
    "DROP_CUTOFF",
    "DROP_CAP",
    "STOP_BUDGET",
    "STOP_CAP",
    "STOP_EXHAUSTED",
    "stop_reason",
]

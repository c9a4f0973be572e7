"""The contract between the replay harness and every memory strategy.

Strategies see only what a deployed memory layer would see: the events of the
conversation (turns, resolutions, deletion requests, system signals) as they happen, and a
context request at the moment the agent is about to answer. Gold labels live in
the harness (`harness.format.model.Probe`) and never cross this boundary.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
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
"""Dropped because the strategy keeps only its top-k or above a minimum score."""


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
    """Why it was dropped (empty when included): `budget`, `rank_cutoff`, or the strategy's own word."""
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

    def signature(self) -> tuple[tuple[str, ...], str]:
        """What must not change between equivalent replays: candidate ids in rank order,
        which of them were included, and the text."""
        c = self.candidates
        ids, mask = getattr(c, "item_ids", None), getattr(c, "included_mask", None)
        if ids is not None and mask is not None:  # column-wise: no `Candidate` per item
            pairs = zip(ids, mask.tolist())
        else:
            pairs = ((x.item_id, x.included) for x in c)
        return tuple(f"{i}{'+' if inc else '-'}" for i, inc in pairs), self.text


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


@runtime_checkable
class Strategy(Protocol):
    """A memory strategy: observes events, answers context requests.

    Optional capabilities (listed in `capabilities`):
    `health` -> `health(subject, now) -> HealthReport`;
    `handoff` -> `handoff(request) -> Handoff`.

    Optional hook (not a capability, never required): `prepare(texts: list[str]) -> None`.
    The harness calls it before replaying a scenario, with the texts the scenario will make
    the strategy handle (every turn's text, resolution summary and probe task, in order,
    duplicates kept). It exists for speed only, e.g. to encode them into an embedding cache
    in large batches instead of many small per-probe batches: it must not change what the
    strategy remembers or returns (memory still learns an event only when it is observed),
    and a strategy without it, or one whose `prepare` raises, gets the same results.
    """

    name: ClassVar[str]
    params: Any
    capabilities: ClassVar[frozenset[str]]

    def observe(self, event: Event) -> None: ...

    def context(self, request: ContextRequest) -> Bundle: ...

    def reset(self) -> None: ...


@dataclass(frozen=True)
class NoParams:
    """For strategies without parameters."""


def params_dict(params: Any) -> dict[str, Any]:
    """A strategy's params as a plain dict (for manifests and display)."""
    from dataclasses import asdict, is_dataclass

    if is_dataclass(params):
        return asdict(params)
    return dict(params or {})


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
    "Strategy",
    "NoParams",
    "params_dict",
    "DROP_BUDGET",
    "DROP_CUTOFF",
]

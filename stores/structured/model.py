"""The typed support memory of seed 002: incidents, attempts and profile facts per customer.

A `Memory` is one thing the agent should remember about one customer: an INCIDENT (the problem
reported, open or resolved), an ATTEMPT (a troubleshooting step and whether it worked) or a
PROFILE fact (a stable fact about the customer's environment). Times are on the simulated
clock of the replay; `source_ids` are the turns and resolution records it was read from, so
provenance checks and the app can trace every memory back to the conversation.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, Literal, Sequence, get_args

MemoryType = Literal["ATTEMPT", "INCIDENT", "PROFILE"]
Outcome = Literal["worked", "failed", "in_progress"]
IncidentStatus = Literal["open", "resolved"]

MEMORY_TYPES: tuple[str, ...] = get_args(MemoryType)
OUTCOMES: tuple[str, ...] = get_args(Outcome)
STATUSES: tuple[str, ...] = get_args(IncidentStatus)


class MemoryFormatError(ValueError):
    """A serialized memory that cannot be read back (names the field and what was expected)."""


@dataclass(frozen=True, slots=True)
class Memory:
    """One typed memory of one customer."""

    id: str
    """Stable id, derived from the customer, the type and the canonical key (same step, same id)."""
    customer_id: str
    """The one customer it belongs to (isolation key)."""
    type: MemoryType
    """`ATTEMPT`, `INCIDENT` or `PROFILE`."""
    text: str
    """Human-readable memory: the canonical action, the incident, or the fact."""
    created_at: datetime
    """Simulated time it was first extracted."""
    updated_at: datetime
    """Simulated time of its last change (an outcome or status change, a new source)."""
    source_ids: tuple[str, ...]
    """Ids of the turns and resolution records it was read from, in the order they were seen."""
    outcome: Outcome | None = None
    """For attempts: `worked`, `failed` or `in_progress`; None for other types."""
    status: IncidentStatus | None = None
    """For incidents: `open` or `resolved`; None for other types."""
    product: str | None = None
    """The product or environment it concerns, when known (e.g. `Acme PDF Suite`)."""
    incident_id: str | None = None
    """For attempts: the incident it was tried for, when there was one."""
    key: str = ""
    """The canonical key it was matched on (the same step phrased twice has one key)."""
    previous_outcomes: tuple[str, ...] = ()
    """For attempts: outcomes it had before the current one, oldest first (a fix that stopped working
    keeps `worked` here), so an outcome change updates the memory and still keeps its history."""

    def __post_init__(self) -> None:
        if self.type not in MEMORY_TYPES:
            raise MemoryFormatError(f"memory {self.id!r}: type {self.type!r} is not one of {', '.join(MEMORY_TYPES)}")
        if self.type == "ATTEMPT":
            if self.outcome not in OUTCOMES:
                raise MemoryFormatError(f"memory {self.id!r}: an ATTEMPT needs an outcome in {', '.join(OUTCOMES)}, got {self.outcome!r}")
        elif self.outcome is not None:
            raise MemoryFormatError(f"memory {self.id!r}: only an ATTEMPT has an outcome, this {self.type} has {self.outcome!r}")
        if self.type == "INCIDENT":
            if self.status not in STATUSES:
                raise MemoryFormatError(f"memory {self.id!r}: an INCIDENT needs a status in {', '.join(STATUSES)}, got {self.status!r}")
        elif self.status is not None:
            raise MemoryFormatError(f"memory {self.id!r}: only an INCIDENT has a status, this {self.type} has {self.status!r}")
        if not self.id or not self.customer_id:
            raise MemoryFormatError("a memory needs an id and a customer_id")
        if self.updated_at < self.created_at:
            raise MemoryFormatError(f"memory {self.id!r}: updated_at {self.updated_at} is before created_at {self.created_at}")

    def evolve(self, **changes: Any) -> "Memory":
        """A copy with `changes` applied (validated again)."""
        return replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready data (times as ISO 8601, tuples as lists)."""
        return {
            "id": self.id,
            "customer_id": self.customer_id,
            "type": self.type,
            "outcome": self.outcome,
            "status": self.status,
            "text": self.text,
            "product": self.product,
            "incident_id": self.incident_id,
            "created_at": self.created_at.isoformat(),
            "updated_at": self.updated_at.isoformat(),
            "source_ids": list(self.source_ids),
            "key": self.key,
            "previous_outcomes": list(self.previous_outcomes),
        }

    @classmethod
    def from_dict(cls, data: Any) -> "Memory":
        """Read back what `to_dict` wrote; a missing or ill-typed field raises `MemoryFormatError` naming it."""
        if not isinstance(data, dict):
            raise MemoryFormatError(f"a memory must be a mapping, got {type(data).__name__}")
        unknown = set(data) - set(_FIELDS)
        if unknown:
            raise MemoryFormatError(f"memory {data.get('id')!r}: unknown field(s) {', '.join(sorted(unknown))}")
        for name in ("id", "customer_id", "type", "text", "created_at", "updated_at"):
            if not isinstance(data.get(name), str):
                raise MemoryFormatError(f"memory {data.get('id')!r}: field {name!r} must be a string, got {data.get(name)!r}")
        for name in ("outcome", "status", "product", "incident_id"):
            if data.get(name) is not None and not isinstance(data[name], str):
                raise MemoryFormatError(f"memory {data['id']!r}: field {name!r} must be a string or null, got {data[name]!r}")
        lists = {}
        for name in ("source_ids", "previous_outcomes"):
            v = data.get(name, [])
            if not isinstance(v, (list, tuple)) or not all(isinstance(x, str) for x in v):
                raise MemoryFormatError(f"memory {data['id']!r}: field {name!r} must be a list of strings, got {v!r}")
            lists[name] = tuple(v)
        times = {}
        for name in ("created_at", "updated_at"):
            try:
                times[name] = datetime.fromisoformat(data[name])
            except ValueError:
                raise MemoryFormatError(f"memory {data['id']!r}: field {name!r} is not an ISO 8601 time: {data[name]!r}") from None
        return cls(
            id=data["id"], customer_id=data["customer_id"], type=data["type"], text=data["text"],
            outcome=data.get("outcome"), status=data.get("status"), product=data.get("product"),
            incident_id=data.get("incident_id"), key=str(data.get("key") or ""), **times, **lists,
        )


_FIELDS = (
    "id", "customer_id", "type", "outcome", "status", "text", "product", "incident_id",
    "created_at", "updated_at", "source_ids", "key", "previous_outcomes",
)


def render_memory(m: Memory, incident_text: str | None = None) -> str:
    """How a memory appears in a context: a stamped line that says what kind of knowledge it is."""
    stamp = m.updated_at.strftime("%Y-%m-%d %H:%M")
    if m.type == "ATTEMPT":
        label = {"worked": "known fix (worked)", "failed": "known failure (did not help)",
                 "in_progress": "step in progress (outcome not reported yet)"}[m.outcome or "in_progress"]
        if m.outcome == "failed" and "worked" in m.previous_outcomes:
            label = "known failure (worked before, no longer helps)"
        tail = f" (for: {incident_text})" if incident_text else ""
        return f"[{stamp}] {label}: {m.text}{tail}"
    if m.type == "INCIDENT":
        return f"[{stamp}] incident, {m.status}: {m.text}"
    return f"[{stamp}] customer profile: {m.text}"


def same_ticket(mems: Sequence[Memory], sessions: Sequence[str], relevance: Sequence[float]) -> list[bool]:
    """Which memories are attempts no incident holds, unrelated to the task by their own words, from a session
    whose other memories (not profile facts) are related: the ticket's report was not read as an incident, and a
    ticket is about one problem, so such a step stays in play. The one rule of the structured strategy's bundle
    (stores/structured/strategy.py: eligible, its relevance still its own) and of the reply engine's reading of any
    context (stores/reply/engine.py: relevant). Without it a step that shares no word with the return ("re-enter the
    client's email address" for "the invitations are not reaching our clients") is dropped while the step beside it
    that shares one is kept. `sessions` and `relevance` are per memory; an empty session matches nothing."""
    matched = {s for m, s, r in zip(mems, sessions, relevance) if s and r > 0 and m.type != "PROFILE"}
    return [m.type == "ATTEMPT" and not m.incident_id and r == 0 and s in matched
            for m, s, r in zip(mems, sessions, relevance)]


__all__ = [
    "Memory", "MemoryType", "Outcome", "IncidentStatus", "MemoryFormatError", "MEMORY_TYPES", "OUTCOMES",
    "STATUSES", "render_memory", "same_ticket",
]

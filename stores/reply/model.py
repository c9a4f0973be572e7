"""The seed's `SupportReply`: the reply text and its audit metadata (FR-06, FR-07, FR-08)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any


@dataclass(frozen=True)
class UsedMemory:
    """One memory the reply used, and why it was relevant."""

    text: str
    """The memory's text (`Update application`)."""
    type: str
    """`ATTEMPT`, `INCIDENT` or `PROFILE`."""
    outcome: str | None
    """For attempts: `worked`, `failed`, `in_progress`; for incidents their status; None for profile facts."""
    score: float
    """Relevance to the customer's message, 0..1 (share of its content words the memory matches)."""
    reason: str
    """Why it was used, e.g. `same product, matched on app, crash, upload`."""
    memory_id: str
    """The memory's id (for a raw-turn strategy: derived from the context items)."""
    source_ids: tuple[str, ...]
    """The history items it traces to (the context items it came from)."""
    previous_outcomes: tuple[str, ...] = ()
    """Outcomes an attempt had before (a fix that stopped working: `("worked",)`)."""


@dataclass(frozen=True)
class SupportReply:
    """What the agent answers, with everything needed to audit it."""

    reply: str
    """The reply text."""
    is_returning_customer: bool
    """True when the context holds relevant history from an earlier session (FR-06)."""
    known_fixes: tuple[str, ...]
    """Steps that worked before, best first: the reply leads with the first (FR-04)."""
    known_failures: tuple[str, ...]
    """Steps already tried without success: listed as tried, never proposed (FR-05)."""
    used_memories: tuple[UsedMemory, ...]
    """Every memory the reply relied on, with score and reason (FR-07)."""
    next_steps: tuple[str, ...] = ()
    """What the reply proposes to do now (a known fix, or escalation)."""
    escalate: bool = False
    """True when the reply hands the case on with its history (no fix left to try)."""
    engine: str = "scripted"
    """Which engine wrote the reply text: `scripted`, or `chat:<model>`."""
    engine_note: str = ""
    """Why that engine: e.g. the chat endpoint's failure that made the scripted engine answer (FR-08)."""
    sources: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Source ids of each text in `known_fixes`, `known_failures` and `next_steps`, so a gold turn id can be
    checked against what the reply says."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready data (the sources' tuples as lists): what `dataclasses.asdict` gives, field by
        field (the fields are strings, numbers and tuples of them), without its deep copy of every
        string (a run writes one reply per probe)."""
        return {
            "reply": self.reply, "is_returning_customer": self.is_returning_customer,
            "known_fixes": _same(self.known_fixes), "known_failures": _same(self.known_failures),
            "used_memories": type(self.used_memories)(
                {f: _same(getattr(u, f)) for f in _USED_FIELDS} if type(u) is UsedMemory else asdict(u)
                for u in self.used_memories),
            "next_steps": _same(self.next_steps), "escalate": self.escalate, "engine": self.engine,
            "engine_note": self.engine_note, "sources": {k: list(v) for k, v in self.sources.items()},
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "SupportReply":
        """Read back what `to_dict` wrote."""
        used = tuple(
            UsedMemory(**{**u, "source_ids": tuple(u.get("source_ids", ())), "previous_outcomes": tuple(u.get("previous_outcomes", ()))})
            for u in d.get("used_memories", ())
        )
        return cls(
            reply=d["reply"], is_returning_customer=bool(d["is_returning_customer"]), known_fixes=tuple(d.get("known_fixes", ())),
            known_failures=tuple(d.get("known_failures", ())), used_memories=used, next_steps=tuple(d.get("next_steps", ())),
            escalate=bool(d.get("escalate", False)), engine=d.get("engine", "scripted"), engine_note=d.get("engine_note", ""),
            sources={k: tuple(v) for k, v in (d.get("sources") or {}).items()},
        )


_USED_FIELDS = tuple(f.name for f in fields(UsedMemory))


def _same(value: Any) -> Any:
    """A field's value as `asdict` copies it: a tuple or list of plain values as a new one of its type."""
    return type(value)(value) if isinstance(value, (tuple, list)) else value


__all__ = ["SupportReply", "UsedMemory"]

"""structured: typed support memory (seed 002) as a strategy the harness replays and scores.

Every observed turn and resolution record goes through the rule-based extractor
(`stores.structured.extract`), and each memory it adds or changes is written to the store
(`stores.structured.store`: in-memory, or Hindsight when `HINDSIGHT_URL` is set). At a probe
the strategy *recalls before it ingests*: the probe runs before the turn it is attached to is
observed, so that turn is extracted only afterwards and can never come back as its own history.

The context lists known fixes first, then known failures, then open incidents, then profile
facts (then steps still in progress and resolved incidents): each candidate's score is its
tier's weight plus `relevance_weight` times its relevance to the task, both shown as components.
An attempt is as relevant as the better of itself and its incident (the store's `search` score);
when anything is relevant, attempts and incidents that are not are dropped as `not_relevant`,
and profile facts always stay eligible. The budget is a hard ceiling (`stores.packing`).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from functools import lru_cache
from typing import ClassVar

import numpy as np

from stores.packing import pack
from stores.protocol import Bundle, ContextRequest, Event, Forget, Resolution, Turn
from stores.structured.extract import Extractor
from stores.structured.model import Memory, render_memory
from stores.structured.store import InMemoryStore, MemoryStore, make_store
from stores.tokens import count_tokens

_line_tokens = lru_cache(maxsize=1 << 15)(count_tokens)

NOT_RELEVANT = "not_relevant"
"""Drop reason: an attempt or incident unrelated to the task while something else is related."""


@dataclass(frozen=True)
class StructuredParams:
    """Parameters of `structured`."""

    store: str = "auto"
    """`auto` (Hindsight when HINDSIGHT_URL is set, else in-memory), `memory` or `hindsight`."""
    recall_limit: int = 12
    """How many memories the store's `search` returns per probe (the rest have relevance 0)."""
    fix_weight: float = 50.0
    """Tier weight of an attempt that worked (known fix): first in the context."""
    failure_weight: float = 40.0
    """Tier weight of an attempt that failed (known failure)."""
    open_incident_weight: float = 30.0
    """Tier weight of an open incident."""
    profile_weight: float = 20.0
    """Tier weight of a profile fact."""
    in_progress_weight: float = 10.0
    """Tier weight of a step whose outcome is not known yet."""
    resolved_incident_weight: float = 5.0
    """Tier weight of a resolved incident."""
    relevance_weight: float = 5.0
    """Points for full relevance to the task (search score, capped at 1); less than a tier gap, so tiers hold."""

    def __post_init__(self) -> None:
        if self.store not in ("auto", "memory", "hindsight"):
            raise ValueError(f"store must be auto, memory or hindsight, got {self.store!r}")
        if self.recall_limit < 1:
            raise ValueError("recall_limit must be at least 1")


def tier_of(m: Memory, p: StructuredParams) -> tuple[str, float]:
    """The tier component of a memory: its name and weight."""
    if m.type == "ATTEMPT":
        return {"worked": ("known_fix", p.fix_weight), "failed": ("known_failure", p.failure_weight)}.get(
            m.outcome or "", ("in_progress", p.in_progress_weight))
    if m.type == "INCIDENT":
        return ("open_incident", p.open_incident_weight) if m.status == "open" else ("resolved_incident", p.resolved_incident_weight)
    return "profile", p.profile_weight


class _Lines:
    """Typed memories presented the way `stores.packing.pack` reads a history (ids, lines, sessions, tokens)."""

    def __init__(self, subject: str, ids: list[str], lines: list[str], sessions: list[str]) -> None:
        self.subject = subject
        self.ids = ids
        self.lines = lines
        self.sessions = sessions
        self._arrays = {"line_tokens": np.array([_line_tokens(x) for x in lines], dtype=np.int64),
                        "times": np.zeros(len(ids))}

    def __len__(self) -> int:
        return len(self.ids)

    def array(self, name: str) -> np.ndarray:
        return self._arrays[name]


class Structured:
    """Typed memories extracted rule by rule, recalled before ingest, known fixes first."""

    name: ClassVar[str] = "structured"
    Params = StructuredParams
    capabilities: ClassVar[frozenset[str]] = frozenset({"memories"})

    def __init__(self, params: StructuredParams | None = None, *, store: MemoryStore | None = None) -> None:
        self.params = params or StructuredParams()
        self._owns_store = store is None
        self.store: MemoryStore = store if store is not None else self._make_store()
        """Where the memories live (the memory of record: context and `memories()` read it back)."""
        self.extractor = Extractor()
        self._session_of: dict[str, dict[str, str]] = {}

    def _make_store(self) -> MemoryStore:
        kind = self.params.store
        if kind == "memory":
            return InMemoryStore()
        import os

        if kind == "hindsight" and not os.environ.get("HINDSIGHT_URL", "").strip():
            raise RuntimeError("structured:store=hindsight needs HINDSIGHT_URL (and optionally HINDSIGHT_BANK, HINDSIGHT_API_KEY)")
        # a bank of its own per instance: two replays of one scenario must never share memory
        base = os.environ.get("HINDSIGHT_BANK", "").strip() or "supportbench"
        return make_store(bank=f"{base}-{uuid.uuid4().hex[:12]}")

    # ---- events -------------------------------------------------------------------------------
    def observe(self, event: Event) -> None:
        if isinstance(event, Forget):
            self.extractor.forget(event.subject)
            self.store.forget(event.subject)
            self._session_of.pop(event.subject, None)
            return
        if isinstance(event, (Turn, Resolution)):
            self._session_of.setdefault(event.subject, {}).setdefault(event.id, event.session)
        for change in self.extractor.observe(event):
            (self.store.add if change.kind == "add" else self.store.update)(change.memory)

    def reset(self) -> None:
        self.extractor.reset()
        self._session_of.clear()
        drop = getattr(self.store, "drop_bank", None) or getattr(self.store, "clear", None)
        if drop is not None:
            drop()

    def close(self) -> None:
        """Release the store: its Hindsight bank is deleted (and the connection closed when this instance made it)."""
        drop = getattr(self.store, "drop_bank", None)
        if drop is not None:
            drop()
        client = getattr(self.store, "client", None)
        if client is not None and self._owns_store:
            client.close()

    def memories(self, subject: str) -> list[Memory]:
        """The customer's typed memories as the store holds them now (the `memories` capability)."""
        return self.store.all(subject)

    # ---- the context --------------------------------------------------------------------------
    def context(self, request: ContextRequest) -> Bundle:
        p = self.params
        mems = self.store.all(request.subject)
        # scores rounded: a remote store's float noise must not reorder equal memories between replays
        found = self.store.search(request.subject, request.task, p.recall_limit, now=request.now)
        hits = {m.id: round(min(1.0, max(0.0, float(s))), 3) for m, s in found}
        by_id = {m.id: m for m in mems}
        relevance = []
        for m in mems:
            r = hits.get(m.id, 0.0)
            if m.incident_id:
                r = max(r, hits.get(m.incident_id, 0.0))
            relevance.append(r)
        any_relevant = any(r > 0 for m, r in zip(mems, relevance) if m.type != "PROFILE")
        sessions = self._session_of.get(request.subject, {})
        tiers = [tier_of(m, p) for m in mems]
        names = list(dict.fromkeys(t for t, _ in tiers))
        components: dict[str, np.ndarray] = {t: np.array([w if tt == t else 0.0 for tt, w in tiers]) for t in names}
        components["relevance"] = p.relevance_weight * np.array(relevance, dtype=np.float64)
        eligible = np.array([m.type == "PROFILE" or not any_relevant or r > 0 for m, r in zip(mems, relevance)], dtype=bool)
        lines = [render_memory(m, by_id[m.incident_id].text if m.incident_id in by_id else None) for m in mems]
        view = _Lines(request.subject, [m.id for m in mems], lines,
                      [sessions.get(m.source_ids[0], "") if m.source_ids else "" for m in mems])
        bundle = pack(view, request, components, eligible=eligible, cutoff_reason=NOT_RELEVANT)
        table = bundle.candidates
        table.source_ids = [by_id[i].source_ids for i in table.item_ids]  # provenance: the turns each memory came from
        return bundle


__all__ = ["Structured", "StructuredParams", "tier_of", "NOT_RELEVANT"]

"""structured: typed support memory (seed 002) as a strategy the harness replays and scores.

Every observed turn and resolution record goes through the rule-based extractor
(`stores.structured.extract`), and each memory it adds or changes is written to the store
(`stores.structured.store`: in-memory, or Hindsight when `HINDSIGHT_URL` is set). At a probe
the strategy *recalls before it ingests*: the probe runs before the turn it is attached to is
observed, so that turn is extracted only afterwards and can never come back as its own history.

The context lists known fixes first, then known failures, then open incidents, then profile
facts (then steps still in progress, resolved incidents and places said in passing): each candidate's score is its
tier's weight plus `relevance_weight` times its relevance to the task, both shown as components.
An attempt is as relevant as the better of itself and its incident (the store's `search` score),
and when anything is relevant, attempts and incidents that are not are dropped as `not_relevant`,
except an attempt no incident holds from a session where something is relevant (`same_ticket`: its
ticket's report was not read as an incident; one rule with the reply engine's, stores/structured/model.py); profile
facts always stay eligible. The budget is
a hard ceiling (`stores.packing`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import ClassVar, Literal

import numpy as np

from stores.bounds import NonNegative, PositiveInt
from stores.packing import pack
from stores.params import secret
from stores.protocol import Bundle, ContextRequest, Event, Forget, Resolution, Scope, Turn
from stores.structured.extract import Extractor
from stores.structured.model import Memory, render_memory, same_ticket
from stores.structured.store import DEFAULT_BANK, InMemoryStore, MemoryStore
from stores.tokens import count_tokens

_line_tokens = lru_cache(maxsize=1 << 15)(count_tokens)

NOT_RELEVANT = "not_relevant"
"""Drop reason: an attempt or incident unrelated to the task while something else is related."""


@dataclass(frozen=True)
class StructuredParams:
    """Parameters of `structured`."""

    store: str = "auto"
    """`auto` (Hindsight when `hindsight_url` is set, else in-memory), `memory` or `hindsight`."""
    recall_limit: PositiveInt | None = None
    """An explicit cap on the memories the store's `search` returns per probe (the rest have
    relevance 0); off by default: every memory of the customer is searched and the budget decides."""
    fix_weight: NonNegative = 50.0
    """Tier weight of an attempt that worked (known fix): first in the context."""
    failure_weight: NonNegative = 40.0
    """Tier weight of an attempt that failed (known failure)."""
    open_incident_weight: NonNegative = 30.0
    """Tier weight of an open incident."""
    profile_weight: NonNegative = 20.0
    """Tier weight of a profile fact."""
    in_progress_weight: NonNegative = 10.0
    """Tier weight of a step whose outcome is not known yet."""
    resolved_incident_weight: NonNegative = 5.0
    """Tier weight of a resolved incident."""
    relevance_weight: NonNegative = 5.0
    """Points for full relevance to the task (search score, capped at 1); less than a tier gap, so tiers hold."""
    front: Literal["rules", "learned", "chat", "learned_incidents"] = "learned"
    """Who reads outcomes in the customer's words: `learned` (the default: the lexicon plus a head
    trained on the phrase bank where the words say nothing or are sarcastic:
    stores/structured/learned.py), `rules` (the lexicon alone, a named variant: `front=rules`), or
    `chat` (the reply engine's OpenAI-compatible endpoint in the head's place, the learned head
    when it cannot answer; off unless `SUPPORTBENCH_REPLY_URL` is set). `learned_incidents` is `learned`
    that also opens an incident on a problem said without the lexicon's symptom words (the `statement`
    head's `problem`): it reads more incidents on new text and moves three canonical ranking cases
    (docs/frontends.md, "Extraction" and "Fourth round"), so it is a named variant, not the default."""
    hindsight_url: str = secret(env="HINDSIGHT_URL")
    """The Hindsight server (`http://127.0.0.1:8888`); from the environment, never written to a manifest."""
    hindsight_bank: str = secret(env="HINDSIGHT_BANK")
    """Prefix of the bank names (each instance writes to `<prefix>-<scope namespace>`; default `supportbench`)."""
    hindsight_api_key: str = secret(env="HINDSIGHT_API_KEY")
    """Bearer key for the Hindsight server, if it needs one."""

    def __post_init__(self) -> None:
        if self.store not in ("auto", "memory", "hindsight"):
            raise ValueError(f"store must be auto, memory or hindsight, got {self.store!r}")


PLACE_WEIGHT = 2.0
"""Tier weight of a place said in passing (a profile fact keyed `...:place`, stores/structured/extract.py `_places`):
last, after resolved incidents, so under a tight budget it is the line left out, not the history a reply reads."""


def tier_of(m: Memory, p: StructuredParams) -> tuple[str, float]:
    """The tier component of a memory: its name and weight."""
    if m.type == "ATTEMPT":
        return {"worked": ("known_fix", p.fix_weight), "failed": ("known_failure", p.failure_weight)}.get(
            m.outcome or "", ("in_progress", p.in_progress_weight))
    if m.type == "INCIDENT":
        return ("open_incident", p.open_incident_weight) if m.status == "open" else ("resolved_incident", p.resolved_incident_weight)
    if m.key.endswith(":place"):
        return "place", PLACE_WEIGHT
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

    def __init__(self, params: StructuredParams | None = None, *, store: MemoryStore | None = None,
                 transport=None) -> None:
        """`store` replaces the one the params choose; `transport` (an `httpx.BaseTransport`) is what a
        Hindsight client it makes talks through (tests answer with recorded or fake servers)."""
        self.params = params or StructuredParams()
        self._transport = transport
        self._owns_store = store is None
        self._store: MemoryStore | None = store
        self._scope: Scope | None = None
        self.extractor = Extractor(self.params.front)
        self._session_of: dict[str, dict[str, str]] = {}

    def open(self, scope: Scope) -> None:
        """Keep this instance's memories under its scope: on Hindsight, the bank `<prefix>-<namespace>`."""
        self._scope = scope
        if self._owns_store and self._store is None:
            self._store = self._make_store()

    @property
    def store(self) -> MemoryStore:
        """Where the memories live (the memory of record: context and `memories()` read it back)."""
        if self._store is None:
            self._store = self._make_store()
        return self._store

    def uses_hindsight(self) -> bool:
        """True when this instance keeps its memories on a Hindsight server."""
        p = self.params
        return p.store == "hindsight" or (p.store == "auto" and bool(p.hindsight_url.strip()))

    def _make_store(self) -> MemoryStore:
        p = self.params
        if not self.uses_hindsight():
            return InMemoryStore()
        if not p.hindsight_url.strip():
            raise RuntimeError("structured:store=hindsight needs HINDSIGHT_URL (and optionally HINDSIGHT_BANK, HINDSIGHT_API_KEY)")
        from stores.remote.hindsight_client import HindsightClient
        from stores.structured.hindsight_store import HindsightStore

        # a bank per instance: two replays of one scenario, or two shards, must never share memory
        if self._scope is not None:
            suffix = self._scope.namespace
        else:  # outside a run (no scope): still never a shared bank
            import uuid

            suffix = f"local-{uuid.uuid4().hex[:12]}"
        bank = f"{p.hindsight_bank.strip() or DEFAULT_BANK}-{suffix}"
        client = HindsightClient(p.hindsight_url.strip(), api_key=p.hindsight_api_key or None, transport=self._transport)
        return HindsightStore(client, bank)

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
        if self._store is not None:
            drop = getattr(self._store, "drop_bank", None) or getattr(self._store, "clear", None)
            if drop is not None:
                drop()

    def close(self) -> None:
        """Release the store: its Hindsight bank is deleted (and the connection closed when this instance made it)."""
        if self._store is None:
            return
        drop = getattr(self._store, "drop_bank", None)
        if drop is not None:
            drop()
        client = getattr(self._store, "client", None)
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
        found = self.store.search(request.subject, request.task, p.recall_limit or max(1, len(mems)), now=request.now)
        hits = {m.id: round(min(1.0, max(0.0, float(s))), 3) for m, s in found}
        by_id = {m.id: m for m in mems}
        relevance = []
        for m in mems:
            r = hits.get(m.id, 0.0)
            if m.incident_id:
                r = max(r, hits.get(m.incident_id, 0.0))
            relevance.append(r)
        sessions = self._session_of.get(request.subject, {})
        session_of = [sessions.get(m.source_ids[0], "") if m.source_ids else "" for m in mems]
        ticket = same_ticket(mems, session_of, relevance)
        any_relevant = any(r > 0 for m, r in zip(mems, relevance) if m.type != "PROFILE")
        tiers = [tier_of(m, p) for m in mems]
        names = list(dict.fromkeys(t for t, _ in tiers))
        components: dict[str, np.ndarray] = {t: np.array([w if tt == t else 0.0 for tt, w in tiers]) for t in names}
        components["relevance"] = p.relevance_weight * np.array(relevance, dtype=np.float64)
        eligible = np.array([m.type == "PROFILE" or not any_relevant or r > 0 or t for m, r, t in zip(mems, relevance, ticket)],
                            dtype=bool)
        lines = [render_memory(m, by_id[m.incident_id].text if m.incident_id in by_id else None) for m in mems]
        view = _Lines(request.subject, [m.id for m in mems], lines, session_of)
        bundle = pack(view, request, components, eligible=eligible, cutoff_reason=NOT_RELEVANT)
        table = bundle.candidates
        table.source_ids = [by_id[i].source_ids for i in table.item_ids]  # provenance: the turns each memory came from
        return bundle


__all__ = ["Structured", "StructuredParams", "tier_of", "same_ticket", "NOT_RELEVANT"]

"""Strategies that exist only to prove generated suites cannot be solved by shortcuts (register
one with `monkeypatch.setitem(REGISTRY, name, "shortcut_strategies:Class")`; never shipped)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import ClassVar, Literal

import numpy as np

from stores.memory import RESOLUTION_ROLE, MemoryStore
from stores.packing import pack
from stores.protocol import Bundle, ContextRequest, Event
from stores.retrieval.history_stuffing import HistoryStuffing


@dataclass(frozen=True)
class PinnedParams:
    """Parameters of `Pinned`."""

    rule: Literal["first_turn", "first_customer_turns", "first_session", "newest"] = "first_turn"
    """Which turns to pin by position alone: the customer's very first turn, the first customer
    turn of every session, every turn of the first session, or none (newest first only)."""


class Pinned:
    """A positional rule: pinned turns first (oldest first), then the rest newest first, packed
    within the budget like every strategy. It reads nothing but positions and times."""

    name: ClassVar[str] = "pinned"
    Params = PinnedParams
    capabilities: ClassVar[frozenset[str]] = frozenset()

    def __init__(self, params: PinnedParams | None = None) -> None:
        self.params = params or PinnedParams()
        self.memory = MemoryStore()

    def observe(self, event: Event) -> None:
        self.memory.observe(event)

    def reset(self) -> None:
        self.memory.reset()

    def context(self, request: ContextRequest) -> Bundle:
        h = self.memory.history(request.subject)
        n = len(h)
        order = np.lexsort((np.arange(n), h.array("times"))) if n else np.zeros(0, dtype=int)
        age_rank = np.empty(n)
        age_rank[order] = np.arange(n)  # 0 = oldest
        pinned = np.zeros(n, dtype=bool)
        rule = self.params.rule
        first_session = None
        seen_sessions: set[str] = set()
        for i in order.tolist():
            if h.roles[i] == RESOLUTION_ROLE:
                continue
            session = h.sessions[i]
            if rule == "first_turn" and not pinned.any():
                pinned[i] = True
            elif rule == "first_customer_turns" and h.roles[i] == "customer" and session not in seen_sessions:
                seen_sessions.add(session)
                pinned[i] = True
            elif rule == "first_session":
                first_session = first_session or session
                pinned[i] = session == first_session
        # pinned items outrank every other (older pins first); the rest rank newest first
        pin = np.where(pinned, 2.0 * n - 2 * age_rank, 0.0)
        return pack(h, request, {"pinned": pin, "recency": np.where(pinned, 0.0, age_rank)})


class OverBudget(HistoryStuffing):
    """`history_stuffing` that ignores the probe's budget: the whole history goes into the
    context, as a transcript. It exists to prove that going over the budget never pays: the
    retrieval criteria judge what the model would receive (the context cut at the budget)."""

    name: ClassVar[str] = "over_budget"

    def context(self, request: ContextRequest) -> Bundle:
        return super().context(replace(request, budget_tokens=10**9))

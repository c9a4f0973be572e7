"""Strategies that exist only to prove generated suites cannot be solved by shortcuts (register
one as an installed package would, with the `plugins` fixture: `plugins.strategy(name,
"shortcut_strategies:Class")`; never shipped)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import ClassVar, Literal

import numpy as np

from stores.memory import RESOLUTION_ROLE, MemoryStore
from stores.packing import pack
from stores.protocol import Bundle, ContextRequest, Event, Forget
from stores.retrieval.history_stuffing import HistoryStuffing, HistoryStuffingParams


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


GATES = ("token_budget", "provenance", "idempotency", "isolation", "self_recall")
"""The gates `Broken` can be told to break, one each."""


@dataclass(frozen=True)
class BrokenParams(HistoryStuffingParams):
    """Parameters of `Broken`."""

    breaks: Literal["token_budget", "provenance", "idempotency", "isolation", "self_recall"] = "token_budget"
    """The gate it breaks: ignore the budget, cite no sources, answer differently after `reset()`,
    mix every customer's history together, or keep its memory through `reset()`."""


class Broken(HistoryStuffing):
    """`history_stuffing` with one deliberate defect, so a test can see each gate fail (never shipped)."""

    name: ClassVar[str] = "broken"
    Params = BrokenParams

    def __init__(self, params: BrokenParams | None = None) -> None:
        super().__init__(params or BrokenParams())
        self.was_reset = False

    def observe(self, event: Event) -> None:
        if self.params.breaks == "isolation" and not isinstance(event, Forget):
            event = replace(event, subject="everyone")  # one pile for all customers
        super().observe(event)

    def reset(self) -> None:
        self.was_reset = True
        if self.params.breaks != "self_recall":  # self_recall: memory survives the reset
            super().reset()

    def context(self, request: ContextRequest) -> Bundle:
        breaks = self.params.breaks
        if breaks == "token_budget":
            return super().context(replace(request, budget_tokens=10**9))
        if breaks == "isolation":
            return super().context(replace(request, subject="everyone"))
        bundle = super().context(request)
        if breaks == "provenance":
            c = bundle.candidates
            c.source_ids = [() if inc else src for src, inc in zip(c.source_ids, c.included_mask.tolist())]
        elif breaks == "idempotency" and self.was_reset:
            # after a reset the same lines come back in the opposite order: not the bundle of the plain replay
            header, *lines = bundle.text.split("\n")
            bundle.text = "\n".join([header, *reversed(lines)])
        return bundle

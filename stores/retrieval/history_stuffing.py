"""history_stuffing: the customer's whole history, newest first, until the budget is full."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from stores.memory import MemoryStore
from stores.packing import pack
from stores.protocol import Bundle, ContextRequest, Event


@dataclass(frozen=True)
class HistoryStuffingParams:
    """Parameters of `history_stuffing`."""

    include_resolutions: bool = True
    """Whether resolution records are part of the history stuffed in."""


class HistoryStuffing:
    """The baseline every team starts with: paste the newest history that fits.

    Candidates are ranked newest first (the `recency` component is the item's position in
    time order, so newer always outranks older); the packed items are rendered in
    chronological order, as a transcript reads.
    """

    name: ClassVar[str] = "history_stuffing"
    Params = HistoryStuffingParams
    capabilities: ClassVar[frozenset[str]] = frozenset()

    def __init__(self, params: HistoryStuffingParams | None = None) -> None:
        self.params = params or HistoryStuffingParams()
        self.memory = MemoryStore()

    def observe(self, event: Event) -> None:
        self.memory.observe(event)

    def reset(self) -> None:
        self.memory.reset()

    def context(self, request: ContextRequest) -> Bundle:
        h = self.memory.history(request.subject)
        pool = np.arange(len(h))
        if not self.params.include_resolutions:
            pool = pool[np.asarray(h.roles, dtype=object)[pool] != "resolution"] if len(h) else pool
        times = h.array("times")[pool] if len(h) else np.zeros(0)
        # rank by time, ties by observation order: the newest item gets the highest rank value
        rank = np.empty(len(pool), dtype=np.float64)
        rank[np.lexsort((pool, times))] = np.arange(len(pool), dtype=np.float64)
        return pack(h, request, {"recency": rank}, pool=pool, render="chronological")

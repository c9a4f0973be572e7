"""Shortcut controls: trivial rules a sceptical reviewer would try first, run beside every design
so a verdict can say it was not won by one of them.

Each reads nothing but what any strategy may read (positions, roles, times and the task's words;
never gold, never wall time) and packs within the budget through `stores.packing.pack` like every
strategy, so the criteria judge them exactly as they judge a design:

- `first_turn_pin`: the customer's very first turn pinned on top, the rest newest first;
- `role_first`: every item that is not a customer turn (agent turns, resolution records) first,
  newest first, then the customer's turns, newest first;
- `nth_turn_pin`: each session's 2nd and 3rd customer turns pinned (oldest first), the rest newest
  first;
- `keyword_only`: the items of the session sharing the most task keywords first, then by the
  item's own shared keywords, newest first among equals;
- `recency`: newest first, nothing else.

They are controls (`stores.registry.CONTROLS`): kept out of leaderboards unless asked for
(`--all`), and the report says, per criterion, whether the best design is separated from every
one of them (docs/criteria.md, "Shortcut controls").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from stores.memory import IndexedMemory, SubjectHistory
from stores.packing import pack
from stores.protocol import Bundle, ContextRequest, NoParams
from stores.text import keywords


def _age_rank(h: SubjectHistory) -> np.ndarray:
    """Per item: 0 for the oldest, n-1 for the newest (ties in observation order)."""
    n = len(h)
    order = np.lexsort((np.arange(n), h.array("times"))) if n else np.zeros(0, dtype=int)
    rank = np.empty(n)
    rank[order] = np.arange(n)
    return rank


def _pinned_first(h: SubjectHistory, request: ContextRequest, pinned: np.ndarray) -> Bundle:
    """Pinned items first (older pins first), then the rest newest first."""
    n = len(h)
    age = _age_rank(h)
    pin = np.where(pinned, 2.0 * n - age, 0.0)  # above every unpinned item (its recency is below n)
    return pack(h, request, {"pinned": pin, "recency": np.where(pinned, 0.0, age)})


class _Shortcut(IndexedMemory):
    """What every shortcut shares: plain memory of the replayed history (nothing derived from
    it), no parameters."""

    name: ClassVar[str] = ""
    Params = NoParams
    capabilities: ClassVar[frozenset[str]] = frozenset()
    derived: ClassVar[tuple[str, ...]] = ()

    def __init__(self, params: NoParams | None = None) -> None:
        super().__init__()
        self.params = params or NoParams()

    def context(self, request: ContextRequest) -> Bundle:
        return self.rank(self.memory.history(request.subject), request)

    def rank(self, h: SubjectHistory, request: ContextRequest) -> Bundle:
        raise NotImplementedError


class Recency(_Shortcut):
    """Newest first, nothing else."""

    name: ClassVar[str] = "recency"

    def rank(self, h, request):
        return pack(h, request, {"recency": _age_rank(h)})


class FirstTurnPin(_Shortcut):
    """The customer's very first turn pinned on top, the rest newest first."""

    name: ClassVar[str] = "first_turn_pin"

    def rank(self, h, request):
        pinned = np.zeros(len(h), dtype=bool)
        first = next((i for i in np.argsort(_age_rank(h)).tolist() if h.roles[i] == "customer"), None)
        if first is not None:
            pinned[first] = True
        return _pinned_first(h, request, pinned)


NTH = (2, 3)
"""The customer turns of each session `nth_turn_pin` pins (1 = the session's first)."""


class NthTurnPin(_Shortcut):
    """Each session's 2nd and 3rd customer turns pinned (oldest first), the rest newest first."""

    name: ClassVar[str] = "nth_turn_pin"

    def rank(self, h, request):
        pinned = np.zeros(len(h), dtype=bool)
        seen: dict[str, int] = {}
        for i in np.argsort(_age_rank(h)).tolist():
            if h.roles[i] != "customer":
                continue
            seen[h.sessions[i]] = k = seen.get(h.sessions[i], 0) + 1
            pinned[i] = k in NTH
        return _pinned_first(h, request, pinned)


class RoleFirst(_Shortcut):
    """Every item that is not a customer turn first (agent turns, resolution records), newest
    first, then the customer's turns, newest first."""

    name: ClassVar[str] = "role_first"

    def rank(self, h, request):
        n = len(h)
        other = np.array([r != "customer" for r in h.roles], dtype=bool) if n else np.zeros(0, dtype=bool)
        return pack(h, request, {"role": np.where(other, float(n), 0.0), "recency": _age_rank(h)})


class KeywordOnly(_Shortcut):
    """Task-keyword overlap alone: the items of the session whose words share the most task
    keywords first (a resolution record's summary counts for its session), then by the item's
    own shared keywords, newest first among equals."""

    name: ClassVar[str] = "keyword_only"

    def rank(self, h, request):
        n = len(h)
        task = keywords(request.task)
        own = np.array([len(task & keywords(t)) for t in h.texts], dtype=float) if n else np.zeros(0)
        by_session: dict[str, set[str]] = {}
        for s, t in zip(h.sessions, h.texts):
            by_session.setdefault(s, set()).update(task & keywords(t))
        session = np.array([len(by_session[s]) for s in h.sessions], dtype=float) if n else np.zeros(0)
        # session overlap decides, the item's own overlap next, age last (each term below the step of the one above)
        scale = max(n, 1)
        return pack(h, request, {"session_overlap": session * (len(task) + 1) * scale, "overlap": own * scale,
                                 "recency": _age_rank(h) / scale})


SHORTCUTS: tuple[type[_Shortcut], ...] = (FirstTurnPin, RoleFirst, NthTurnPin, KeywordOnly, Recency)
"""Every shortcut control, in the order reports list them."""

"""Control strategies that keep the scorers honest; never shown on leaderboards by default.

`empty` returns nothing, so it must score 0 wherever something has to be recalled.
`oracle` is the only strategy given the probe's gold labels (through `peek_gold`, a side
door the harness opens only for strategies with the `gold` capability) and builds the best
bundle within budget, so it must score 1.0 on every retrieval criterion. A change that
breaks either is a scorer bug.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import numpy as np

from stores.memory import MemoryStore
from stores.packing import pack
from stores.protocol import Bundle, ContextRequest, Event, NoParams


class Empty:
    """Remembers nothing, returns an empty context."""

    name: ClassVar[str] = "empty"
    Params = NoParams
    capabilities: ClassVar[frozenset[str]] = frozenset()

    def __init__(self, params: NoParams | None = None) -> None:
        self.params = params or NoParams()
        self.memory = MemoryStore()

    def observe(self, event: Event) -> None:
        pass

    def reset(self) -> None:
        pass

    def context(self, request: ContextRequest) -> Bundle:
        return pack(self.memory.history(request.subject), request, {})


@dataclass(frozen=True)
class OracleParams:
    """Parameters of `oracle`."""

    render: Literal["rank", "chronological"] = "rank"
    """`rank` or `chronological` rendering of the packed context."""


ORACLE_EXPIRED = "expired: named by the probe's gold (oracle control)"
"""The oracle's receipt reason for an item the probe's gold says has expired: it proves the
expiry criterion can be met; it names the gold, not a rule the oracle applied."""


class Oracle:
    """Includes exactly the gold items a probe asks for, ordered to satisfy every ordering label.

    It claims `expiry` too: what the gold says has expired stays out with `ORACLE_EXPIRED` as its
    receipt reason. It classifies nothing (`memory_class` is None), so the classifier's criterion
    does not apply to it."""

    name: ClassVar[str] = "oracle"
    Params = OracleParams
    capabilities: ClassVar[frozenset[str]] = frozenset({"gold", "expiry"})

    def __init__(self, params: OracleParams | None = None) -> None:
        self.params = params or OracleParams()
        self.memory = MemoryStore()
        self._gold: dict[str, Any] = {}

    def observe(self, event: Event) -> None:
        self.memory.observe(event)

    def reset(self) -> None:
        self.memory.reset()
        self._gold = {}

    def peek_gold(self, gold: dict[str, Any]) -> None:
        """The side door: the probe's expectations, as plain data, for the next `context` call only."""
        self._gold = gold

    def memory_class(self, subject: str, item_id: str) -> None:
        """The oracle gives no item a memory class."""
        return None

    def context(self, request: ContextRequest) -> Bundle:
        gold, self._gold = self._gold, {}
        h = self.memory.history(request.subject)
        n = len(h)
        wanted = _ordered_wanted(gold)
        needles = [x for key in _WANTED_NEEDLES for x in gold.get(key, ())]
        for needle in (x["text"].lower() for x in needles if isinstance(x, dict)):
            hit = next((i for i, line in zip(h.ids, h.lines) if needle in line.lower()), None)
            if hit is not None and hit not in wanted:
                wanted.append(hit)
        rank = {item_id: i for i, item_id in enumerate(wanted)}
        score = np.zeros(n)
        for i, item_id in enumerate(h.ids):
            if item_id in rank:
                score[i] = len(wanted) - rank[item_id]
        eligible = score > 0
        bundle = pack(h, request, {"gold": score}, eligible=eligible, render=self.params.render, cutoff_reason="not_gold")
        expired = set(gold.get("expired", ()))
        if expired:  # the receipt of the column-wise table is a list: name the gold's reason in place
            c = bundle.candidates
            for k, item_id in enumerate(c.item_ids):
                if item_id in expired and not c.included_mask[k]:
                    c.reasons[k] = ORACLE_EXPIRED
        return bundle


_WANTED_NEEDLES = ("include", "known_fixes", "known_failures")
"""Keys whose text needles the oracle matches against the history's lines."""


def _ordered_wanted(gold: dict[str, Any]) -> list[str]:
    """Ids the gold wants in the context, ordered so every `above` and `fix_before` pair holds
    (and every known fix sits above every known failure, so a reply reading it leads with the fix)."""
    avoid = set(gold.get("exclude", ())) | set(gold.get("superseded", ())) | set(gold.get("expired", ()))
    for s in gold.get("not_repeat_of", ()):
        avoid.add(f"{s}#resolution")
    pairs = [tuple(p) for p in gold.get("above", ())]
    for fix, failure in (tuple(p) for p in gold.get("fix_before", ())):
        pairs.append((fix, failure))
    fixes = [x for x in gold.get("known_fixes", ()) if isinstance(x, str)]
    failures = [x for x in gold.get("known_failures", ()) if isinstance(x, str)]
    pairs += [(fix, failure) for fix in fixes for failure in failures]
    want: list[str] = []
    for key in ("evidence", "identity", "preferences", "include", "known_fixes", "known_failures"):
        want += [x for x in gold.get(key, ()) if isinstance(x, str)]
    want += [a for a, _ in pairs]
    # the second of a pair is only kept when it is wanted on its own; then it must sit below
    want = [x for x in dict.fromkeys(want) if x not in avoid]
    # order: a topological sort over the pairs, stable on first mention
    after: dict[str, set[str]] = {x: set() for x in want}
    for a, b in pairs:
        if a in after and b in after:
            after[b].add(a)
    ordered: list[str] = []
    placed: set[str] = set()
    while len(ordered) < len(want):
        progressed = False
        for x in want:
            if x not in placed and after[x] <= placed:
                ordered.append(x)
                placed.add(x)
                progressed = True
        if not progressed:  # contradictory pairs: keep the rest in mention order
            ordered += [x for x in want if x not in placed]
            break
    return ordered

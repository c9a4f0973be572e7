"""Matching a strategy's typed memories against a probe's `expect.memories` gold (scenario format, seed 002).

A gold memory matches an extracted one when the type, the outcome or status (if the gold gives
one), the text needle (a case-insensitive substring of the memory's text) and the source (if
given: a turn id among the memory's source ids) all agree. Each memory answers at most one gold
memory: the pairing is a maximum matching, so two gold attempts cannot both claim one memory and
the order of the lists does not matter. Precision is matched / extracted, recall matched / gold.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence


def _get(x: Any, name: str) -> Any:
    return x.get(name) if isinstance(x, dict) else getattr(x, name, None)


def matches(gold: Any, memory: Any) -> bool:
    """True when the extracted `memory` satisfies the gold memory spec `gold` (see the module docstring)."""
    if _get(gold, "type") != _get(memory, "type"):
        return False
    for field in ("outcome", "status"):
        want = _get(gold, field)
        if want is not None and want != _get(memory, field):
            return False
    needle = (_get(gold, "text") or "").lower()
    if needle and needle not in (_get(memory, "text") or "").lower():
        return False
    source = _get(gold, "source")
    return source is None or source in tuple(_get(memory, "source_ids") or ())


@dataclass(frozen=True)
class MemoryMatch:
    """How an extracted set compares with the gold set."""

    pairs: tuple[tuple[int, int], ...]
    """(gold index, memory index) of each match."""
    missed: tuple[int, ...]
    """Gold memories nothing matched."""
    extra: tuple[int, ...]
    """Extracted memories no gold memory claimed."""
    n_gold: int
    n_memories: int

    @property
    def precision(self) -> float:
        """Matched / extracted (1.0 when nothing was extracted and nothing was expected)."""
        if self.n_memories == 0:
            return 1.0 if self.n_gold == 0 else 0.0
        return len(self.pairs) / self.n_memories

    @property
    def recall(self) -> float:
        """Matched / gold (1.0 for an empty gold set)."""
        return 1.0 if self.n_gold == 0 else len(self.pairs) / self.n_gold

    @property
    def f1(self) -> float:
        """Harmonic mean of precision and recall."""
        p, r = self.precision, self.recall
        return 0.0 if p + r == 0 else 2 * p * r / (p + r)


def match_memories(gold: Sequence[Any], memories: Sequence[Any]) -> MemoryMatch:
    """The maximum one-to-one matching of `gold` specs to extracted `memories` (augmenting paths)."""
    edges = [[j for j, m in enumerate(memories) if matches(g, m)] for g in gold]
    owner: dict[int, int] = {}  # memory index -> gold index

    def augment(i: int, seen: set[int]) -> bool:
        for j in edges[i]:
            if j in seen:
                continue
            seen.add(j)
            if j not in owner or augment(owner[j], seen):
                owner[j] = i
                return True
        return False

    for i in range(len(gold)):
        augment(i, set())
    pairs = tuple(sorted((i, j) for j, i in owner.items()))
    matched_gold = {i for i, _ in pairs}
    return MemoryMatch(
        pairs=pairs,
        missed=tuple(i for i in range(len(gold)) if i not in matched_gold),
        extra=tuple(j for j in range(len(memories)) if j not in owner),
        n_gold=len(gold), n_memories=len(memories),
    )


__all__ = ["matches", "match_memories", "MemoryMatch"]

"""What a bundle covers, where, and how to quote it: the shared reading of a bundle.

Every criterion reads a bundle the same way (the criteria doc's rules):

- an item *covers* a gold id when that id is in the item's `source_ids`;
- only included items count: a gold item that is not included is missing, whatever its rank;
- a rank is the item's position among *all* candidates (1 = best); a gold id's rank is the
  best rank of an included item covering it;
- a text needle matches when it is a case-insensitive substring of the context text.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import wraps
from typing import Callable, NamedTuple, TypeVar

from stores.protocol import Forget

from ..replay import ProbeOutcome
from ..scenario import GoldRef, TextNeedle

T = TypeVar("T")


class _Memo:
    """Readings of the outcome being scored. Its criteria run one after another over the same
    bundle, so each reading (ranks, foreign items, ...) is computed once per outcome, not once
    per criterion; the next outcome replaces them."""

    def __init__(self) -> None:
        self.outcome: ProbeOutcome | None = None
        self.bundle = None
        self.values: dict[str, object] = {}

    def get(self, o: ProbeOutcome, name: str, build: Callable[[ProbeOutcome], T]) -> T:
        if self.outcome is not o or self.bundle is not o.bundle:
            self.outcome, self.bundle, self.values = o, o.bundle, {}
        if name not in self.values:
            self.values[name] = build(o)
        return self.values[name]  # type: ignore[return-value]


_memo = _Memo()


def _per_outcome(fn: Callable[[ProbeOutcome], T]) -> Callable[[ProbeOutcome], T]:
    """Compute `fn(o)` once per outcome (callers must not mutate what it returns)."""

    @wraps(fn)
    def cached(o: ProbeOutcome) -> T:
        return _memo.get(o, fn.__name__, fn)

    return cached


class Row(NamedTuple):
    """What the criteria read of one candidate."""

    item_id: str
    subject: str
    source_ids: tuple[str, ...]
    included: bool


@_per_outcome
def rows(o: ProbeOutcome) -> list[Row]:
    """The bundle's candidates in rank order, as light rows (read column-wise when the
    candidates are a column-wise table, without building a `Candidate` per item)."""
    c = o.bundle.candidates
    cols = [getattr(c, k, None) for k in ("item_ids", "subjects", "source_ids", "included_mask")]
    if all(col is not None for col in cols):
        ids, subjects, sources, mask = cols
        return [Row(*t) for t in zip(ids, subjects, sources, mask.tolist())]
    return [Row(x.item_id, x.subject, x.source_ids, x.included) for x in c]


@dataclass(frozen=True)
class View:
    """One outcome's bundle, indexed for gold lookups."""

    rank: dict[str, int]
    """Gold id -> best rank (1-based, among all candidates) of an included item covering it."""
    text: str
    """The context text, lowercased (for needles)."""
    n_included: int
    n_candidates: int


@_per_outcome
def view(o: ProbeOutcome) -> View:
    """Index `o.bundle` once per outcome."""
    rank: dict[str, int] = {}
    n_inc = 0
    n = 0
    for r, c in enumerate(rows(o), start=1):
        n = r
        if not c.included:
            continue
        n_inc += 1
        for sid in c.source_ids:
            rank.setdefault(sid, r)
    return View(rank, (o.bundle.text or "").lower(), n_inc, n)


def hit(v: View, g: GoldRef) -> bool:
    """Whether gold item `g` is in the context (covered by an included item, or its text is there)."""
    if isinstance(g, TextNeedle):
        return g.text.lower() in v.text
    return g in v.rank


def name(g: GoldRef) -> str:
    """How a gold item is named in an explanation."""
    return f'text "{g.text}"' if isinstance(g, TextNeedle) else g


def quote(o: ProbeOutcome, item_id: str, width: int = 60) -> str:
    """`id: 'first words of its text'`, so a reader sees what the id was."""
    s = o.seen.get(item_id)
    if s is None or not s.text:
        return item_id
    t = " ".join(s.text.split())
    if len(t) > width:
        t = t[: width - 1].rstrip() + "…"
    return f"{item_id}: '{t}'"


def quote_all(o: ProbeOutcome, ids, limit: int = 3) -> str:
    """Quote up to `limit` gold items (text needles are named, not quoted)."""
    ids = list(ids)
    parts = [quote(o, g) if isinstance(g, str) else name(g) for g in ids[:limit]]
    if len(ids) > limit:
        parts.append(f"and {len(ids) - limit} more")
    return "; ".join(parts)


def pair_verdict(v: View, first: str, second: str) -> tuple[bool, str]:
    """Whether `first` outranks `second` by the doc's rule, and why not when it does not.

    Right when the first is included and either the second is not included or the first's
    best included rank is strictly better (one item covering both does not order them).
    """
    r1, r2 = v.rank.get(first), v.rank.get(second)
    if r1 is None:
        return False, f"{first} is not in the context"
    if r2 is None:
        return True, f"{first} is in (rank {r1}) and {second} is not"
    if r1 < r2:
        return True, f"{first} (rank {r1}) is above {second} (rank {r2})"
    if r1 == r2:
        return False, f"{first} and {second} come in the same item (rank {r1}), so it does not order them"
    return False, f"{second} (rank {r2}) is above {first} (rank {r1})"


def plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


@_per_outcome
def foreign_items(o: ProbeOutcome) -> list[tuple[str, str, bool]]:
    """Candidates (included or not) that belong to another customer: (item id, subject, included).

    A candidate's subject is the one it declares, and also that of every history item it is
    built from (a strategy cannot launder another customer's turn by labelling it as ours).
    """
    me = o.probe.subject
    seen = o.seen
    out = []
    for c in rows(o):
        others = {c.subject} if c.subject and c.subject != me else None
        for sid in (c.item_id, *c.source_ids):
            s = seen.get(sid)
            if s is not None and s.subject != me:
                others = (others or set()) | {s.subject}
        if others:
            out.append((c.item_id, min(others), c.included))
    return out


@_per_outcome
def last_forgets(o: ProbeOutcome) -> dict[str, int]:
    """Subject -> index of its latest `forget` before the probe."""
    out: dict[str, int] = {}
    for i, ev in enumerate(o.scenario.events[: o.event_index]):
        if isinstance(ev, Forget):
            out[ev.subject] = i
    return out


@_per_outcome
def forgotten_items(o: ProbeOutcome) -> list[tuple[str, str, bool]]:
    """Candidates that bring back something a `forget` deleted: (item id, subject, included).

    Deleted means: an item of a subject created before that subject's latest `forget` before
    the probe, whether or not the subject has spoken again since (a new history starts then,
    the old one stays deleted); or any item of a subject still forgotten at the probe.
    """
    last_forget = last_forgets(o)
    if not last_forget and not o.forgotten:
        return []
    out = []
    for c in rows(o):
        bad = c.subject if c.subject in o.forgotten else None
        for sid in (c.item_id, *c.source_ids):
            s = o.seen.get(sid)
            if s is not None and s.event_index < last_forget.get(s.subject, -1):
                bad = s.subject
        if bad is not None:
            out.append((c.item_id, bad, c.included))
    return out


def leaked_text(o: ProbeOutcome, subjects_before: dict[str, int], min_len: int = 24) -> list[str]:
    """Ids of history items whose words appear in the context text although they should not.

    `subjects_before` maps a subject to an event index: items of that subject created before it
    are off limits. Short texts are ignored, and so is a text the probe's own, still-visible
    history also contains (two customers may be sent the same boilerplate).
    """
    if not subjects_before or not o.bundle.text:
        return []
    ctx = " ".join(o.bundle.text.lower().split())
    me, floor = o.probe.subject, subjects_before.get(o.probe.subject, -1)
    allowed = {
        " ".join(s.text.lower().split())
        for s in o.seen.values()
        if s.subject == me and floor <= s.event_index < o.event_index
    }
    out = []
    for s in o.seen.values():
        limit = subjects_before.get(s.subject)
        if limit is None or s.event_index >= limit:
            continue
        t = " ".join(s.text.lower().split())
        if len(t) >= min_len and t in ctx and not any(t in a for a in allowed):
            out.append(s.id)
    return out

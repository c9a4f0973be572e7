"""What a bundle covers, where, and how to quote it: the shared reading of a bundle.

Every criterion reads a bundle the same way (docs/criteria.md, "How a bundle is read"):

- an item *covers* a gold id when that id is in the item's `source_ids`;
- the context is what the model receives: the bundle's text cut at the probe's budget
  (`stores.packing.cut_to_budget`: whole lines, the lowest-ranked dropped first), so exceeding
  the budget never shows the model more; the gates (token budget, provenance, isolation) judge
  the whole bundle as the strategy returned it (`full_view`);
- only items in the context count: a gold item that is not included is missing, whatever its
  rank; and the bundle's `included` flags are not taken on trust: an item is in the context
  only when it is marked included *and* its rendered text (`Candidate.text`) is in the context
  text (a bundle that marks an item included but leaves its text out is reported as such, and
  one whose line the budget cut removed is reported as past the cut);
- what must stay out (`exclude`, `superseded`, a negative repeat control, another customer's
  or a deleted item) counts as shown when it is marked included *or* its text is there;
- a rank is the item's position among *all* candidates (1 = best); a gold id's rank is the
  best rank of an item in the context covering it;
- a text needle matches when it is a case-insensitive substring of the context text.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import wraps
from typing import Callable, Iterable, Iterator, NamedTuple, Sequence, TypeVar

from stores.packing import cut_to_budget
from stores.protocol import Forget

from harness.replay.probes import ProbeOutcome
from harness.format.model import GoldRef, TextNeedle

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


def per_outcome(fn: Callable[[ProbeOutcome], T]) -> Callable[[ProbeOutcome], T]:
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
    text: str
    """Its rendered line (`Candidate.text`): it is in the context only if this is in the text."""


class Rows(Sequence[Row]):
    """A column-wise bundle's candidates as light rows, in rank order, each `Row` made when it is
    read: a long pool's criteria read its included rows and the top of its ranking, so the
    thousands of rows below are never built. It also answers, from the columns, what the criteria
    ask of every row: which are included (`included_positions`), every item id (`item_ids`), and
    whether each candidate is its own one source, of one subject (`single`)."""

    def __init__(self, ids: Sequence[str], subjects: Sequence[str], sources: Sequence[tuple[str, ...]] | None, mask,
                 texts: Sequence[str], single: str | None = None) -> None:
        """`sources` None: each candidate's source ids are its own id alone (`(item_id,)`)."""
        self.item_ids, self._subjects, self._texts = ids, subjects, texts
        self._sources = sources if sources is not None else _OwnSources(ids)
        self._mask = mask
        self._included = mask.tolist()
        self.single = single
        """The one subject of every candidate when each is its own one source (a packed history's table), else None."""

    def __len__(self) -> int:
        return len(self.item_ids)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        return Row(self.item_ids[i], self._subjects[i], self._sources[i], self._included[i], self._texts[i])

    def __iter__(self) -> Iterator[Row]:
        sources = zip(self.item_ids) if isinstance(self._sources, _OwnSources) else self._sources  # zip: (id,) each
        return map(Row, self.item_ids, self._subjects, sources, self._included, self._texts)

    def first_position(self, item_id: str) -> int | None:
        """Position (0-based, rank order) of the first candidate whose source ids hold `item_id`,
        None when none does; read from the item ids alone when each candidate is its own source."""
        if isinstance(self._sources, _OwnSources):
            try:
                return self.item_ids.index(item_id)
            except ValueError:
                return None
        return next((i for i, src in enumerate(self._sources) if item_id in (src or ())), None)

    def included_positions(self) -> list[int]:
        """Positions (0-based, rank order) of the candidates marked included."""
        return self._mask.nonzero()[0].tolist()


class _OwnSources(Sequence[tuple[str, ...]]):
    """The source-id column of candidates that are each their own one source, made per row."""

    def __init__(self, ids: Sequence[str]) -> None:
        self._ids = ids

    def __len__(self) -> int:
        return len(self._ids)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [(x,) for x in self._ids[i]]
        return (self._ids[i],)


@per_outcome
def rows(o: ProbeOutcome) -> Sequence[Row]:
    """The bundle's candidates in rank order, as light rows (read column-wise when the
    candidates are a column-wise table, without building a `Candidate` per item, each row only
    when it is read: `Rows`)."""
    c = o.bundle.candidates
    own = getattr(c, "own_sources", None)
    own = own is not None and own()  # each candidate its own one source: that column is not built
    names = ("item_ids", "subjects", "included_mask", "texts") if own else ("item_ids", "subjects", "source_ids", "included_mask", "texts")
    cols = [getattr(c, k, None) for k in names]
    if all(col is not None for col in cols) and hasattr(cols[-2], "nonzero"):
        if own:
            cols.insert(2, None)
        ids, subjects, sources, mask, texts = cols
        sole = getattr(c, "sole_subject", None)
        return Rows(ids, subjects, sources, mask, texts, sole() if sole is not None else None)
    return [Row(x.item_id, x.subject, x.source_ids, x.included, x.text) for x in c]


def marked_included(cands: Sequence) -> Iterable[tuple[int, Row]]:
    """(rank, row) of the candidates marked included, in rank order (rank 1 = best); a `Rows`
    builds only those rows."""
    if isinstance(cands, Rows):
        return ((i + 1, cands[i]) for i in cands.included_positions())
    return ((r, c) for r, c in enumerate(cands, start=1) if c.included)


def in_context(text: str | None, context: str, lines: frozenset[str]) -> bool:
    """Whether a candidate's rendered text is in the context text (one of its lines, or part of
    one). An empty text never is: it shows the model nothing."""
    return isinstance(text, str) and bool(text) and (text in lines or text in context)


def lie(item_id: str, v: "View | None" = None) -> str:
    """The sentence for an item marked included whose text the model does not receive: cut at
    the budget (when `v` says so), or missing from the text altogether."""
    if v is not None and item_id in v.past_cut:
        return f"{item_id} is past the budget cut: the context is over its budget and the model would not receive that line"
    return f"the bundle marks {item_id} included but its text is not in the context"


@dataclass(frozen=True)
class View:
    """One outcome's bundle, indexed for gold lookups."""

    rank: dict[str, int]
    """Gold id -> best rank (1-based, among all candidates) of an item in the context covering
    it: marked included *and* its rendered text is in the context text."""
    text: str
    """The context text, lowercased (for needles)."""
    n_included: int
    """Candidates the bundle marks included."""
    n_candidates: int
    marked: dict[str, int] = field(default_factory=dict)
    """Gold id -> best rank of an item covering it that the bundle marks included (text or not)."""
    hidden: dict[str, str] = field(default_factory=dict)
    """Gold id with no `rank` -> the first item covering it that the bundle marks included
    although its text is not in the context."""
    hidden_items: tuple[str, ...] = ()
    """Items marked included whose text is not in the context, in rank order."""
    context: str = ""
    """The context text as the model sees it."""
    lines: frozenset[str] = frozenset()
    """The context text's lines."""
    candidates: Sequence = ()
    """The candidates, in rank order (for `present`, which also looks at dropped ones): the `Rows`
    of a column-wise bundle, else a tuple."""
    past_cut: frozenset[str] = frozenset()
    """Items marked included whose line the bundle's text holds but the budget cut removed."""


def index(candidates: Iterable, context: str | None, budget: int | None = None) -> View:
    """Index candidates (in rank order; anything with `item_id`, `source_ids`, `included`,
    `text`) and the context text for gold lookups.

    The one place the criteria's reading rules live: the criteria call it on a bundle (`view`),
    the app (`harness.analysis.queries.gold_check`) on the same rows read back from a run's Parquet.
    A bundle's flags are not taken on trust: an item counts as in the context (`rank`, `hit`)
    only when it is marked included *and* its rendered text is in the context text; an item
    that must stay out counts as in it (`present`) when it is marked included *or* its text
    is there. With a `budget`, the context is first cut to it (`received`): what the model
    receives, the one reading of an over-budget bundle the criteria and the app share.
    """
    cands = candidates if isinstance(candidates, Rows) else tuple(candidates)
    full = context or ""
    ctx = received(full, budget, cands) if budget is not None else full
    lines = frozenset(ctx.split("\n"))
    full_lines = frozenset(full.split("\n")) if ctx is not full else lines
    rank: dict[str, int] = {}
    marked: dict[str, int] = {}
    hidden: dict[str, str] = {}
    hidden_items: list[str] = []
    past_cut: set[str] = set()
    n_inc = 0
    for r, c in marked_included(cands):
        n_inc += 1
        shown = in_context(c.text, ctx, lines)
        if not shown:
            hidden_items.append(c.item_id)
            if ctx is not full and in_context(c.text, full, full_lines):
                past_cut.add(c.item_id)
        for sid in c.source_ids if c.source_ids is not None else ():
            marked.setdefault(sid, r)
            if shown:
                rank.setdefault(sid, r)
            else:
                hidden.setdefault(sid, c.item_id)
    hidden = {g: i for g, i in hidden.items() if g not in rank}
    return View(rank, ctx.lower(), n_inc, len(cands), marked, hidden, tuple(hidden_items), ctx, lines, cands,
                frozenset(past_cut))


def received(text: str, budget: int, candidates: Iterable) -> str:
    """What the model receives of `text` under `budget`, given the bundle's candidates in rank
    order (`stores.packing.cut_to_budget` over the included ones' rendered texts)."""
    return cut_to_budget(text, budget, [c.text for _, c in marked_included(candidates) if isinstance(c.text, str)])


@per_outcome
def view(o: ProbeOutcome) -> View:
    """Index `o.bundle` once per outcome, as the model receives it: cut at the probe's budget."""
    return index(rows(o), o.bundle.text, o.probe.budget)


@per_outcome
def full_view(o: ProbeOutcome) -> View:
    """Index `o.bundle` once per outcome, uncut: the whole text the strategy returned (for the gates).
    A bundle within its budget is received whole, and then this is `view(o)` (the same index of the
    same rows and text), not indexed twice."""
    v = view(o)
    if v.context == (o.bundle.text or ""):
        return v
    return index(rows(o), o.bundle.text)


def gold_ref(g) -> GoldRef:
    """A gold item as read back from a run's JSON (`{"text": ...}` is a text needle)."""
    return TextNeedle(str(g["text"])) if isinstance(g, dict) else str(g)


def hit(v: View, g: GoldRef) -> bool:
    """Whether gold item `g` is in the context: covered by an item marked included whose text is
    in the context, or, for a text needle, found in the context text."""
    if isinstance(g, TextNeedle):
        return g.text.lower() in v.text
    return g in v.rank


def shown_rank(v: View, g: str) -> int | None:
    """Best rank of an item covering `g` that the bundle marks included *or* whose text is in
    the context (the reading for what must stay out: either is enough to show it)."""
    best = v.marked.get(g)
    for r, c in enumerate(v.candidates, start=1):
        if best is not None and r >= best:
            break
        if not c.included and g in (c.source_ids if c.source_ids is not None else ()) and in_context(c.text, v.context, v.lines):
            return r
    return best


def present(v: View, g: GoldRef) -> bool:
    """Whether an item that must stay out (`exclude`, `superseded`) counts as in the context:
    marked included, or its text is there (see `shown_rank`)."""
    if isinstance(g, TextNeedle):
        return hit(v, g)
    return shown_rank(v, g) is not None


def hidden_note(v: View, ids) -> str:
    """'; the bundle marks X included but ...' for the missing gold ids that is the reason for."""
    items = list(dict.fromkeys(v.hidden[g] for g in ids if isinstance(g, str) and g in v.hidden))
    return "".join(f"; {lie(i, v)}" for i in items[:3]) + (f"; and {len(items) - 3} more like it" if len(items) > 3 else "")


def unmarked_note(v: View, ids) -> str:
    """'; X is not marked included but its text is in the context' for what must stay out."""
    items = [g for g in ids if isinstance(g, str) and g not in v.marked and present(v, g)]
    return "".join(f"; {g} is not marked included but its text is in the context" for g in items[:3])


REPEAT_TOP = 3
"""A negative repeat control fails when its resolution is included within this many ranks."""


def repeat_flagged(v: View, session: str) -> int | None:
    """The rank at which `session`'s resolution wrongly signals a repeat (within the top
    `REPEAT_TOP` ranks, marked included or its text in the context: `shown_rank`), else None."""
    r = shown_rank(v, f"{session}#resolution")
    return r if r is not None and r <= REPEAT_TOP else None


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
    """Whether `first` outranks `second` by the pair rule of docs/criteria.md, and why not when it does not.

    Right when the first is in the context (`hit`) and either the second is not or the first's
    best rank in the context is strictly better (one item covering both does not order them).
    """
    r1, r2 = v.rank.get(first), v.rank.get(second)
    if r1 is None:
        return False, f"{first} is not in the context" + (f" ({lie(v.hidden[first], v)})" if first in v.hidden else "")
    if r2 is None:
        return True, f"{first} is in (rank {r1}) and {second} is not"
    if r1 < r2:
        return True, f"{first} (rank {r1}) is above {second} (rank {r2})"
    if r1 == r2:
        return False, f"{first} and {second} come in the same item (rank {r1}), so it does not order them"
    return False, f"{second} (rank {r2}) is above {first} (rank {r1})"


def wrong_pairs(v: View, pairs) -> list[tuple[str, str, str]]:
    """`(first, second, why)` for each pair `pair_verdict` finds out of order, in the given order."""
    out = []
    for first, second in pairs:
        right, why = pair_verdict(v, first, second)
        if not right:
            out.append((first, second, why))
    return out


def pair_ids(wrong: list[tuple[str, str, str]]) -> list[str]:
    """The ids of the wrong pairs, each once, in order (a verdict's evidence)."""
    return list(dict.fromkeys(x for first, second, _ in wrong for x in (first, second)))


def plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def how(o: ProbeOutcome, c: Row) -> str:
    """Where a candidate stands, in words: `included`, `considered` (dropped), or which way
    the bundle's flag and its text disagree (either way, it counts as shown)."""
    v = view(o)
    shown = in_context(c.text, v.context, v.lines)
    if c.included:
        if shown:
            return "included"
        return "marked included, but past the budget cut" if c.item_id in v.past_cut else \
            "marked included, though its text is not in the context"
    return "not marked included, though its text is in the context" if shown else "considered"


class _PerScenario:
    """Readings of a whole scenario that every probe of it shares (kept for the scenario being scored, so a
    probe's reading costs what its bundle holds, not what the scenario holds): the positions of its
    `forget` events, and per subject the ids of every other customer's items."""

    def __init__(self) -> None:
        self.key: tuple = ()
        self.forgets: list[tuple[int, str]] = []
        self.foreign: dict[str, frozenset[str]] = {}

    def of(self, o: ProbeOutcome) -> "_PerScenario":
        key = (o.scenario, o.scenario.events, o.seen)
        if len(self.key) != 3 or any(a is not b for a, b in zip(key, self.key)):  # held, so no id is reused meanwhile
            self.key = key
            self.forgets = [(i, ev.subject) for i, ev in enumerate(o.scenario.events) if isinstance(ev, Forget)]
            self.foreign = {}
        return self

    def foreign_ids(self, seen: dict, me: str) -> frozenset[str]:
        if me not in self.foreign:
            self.foreign[me] = frozenset(i for i, s in seen.items() if s.subject != me)
        return self.foreign[me]


_scenario = _PerScenario()


@per_outcome
def foreign_items(o: ProbeOutcome) -> list[tuple[str, str, str]]:
    """Candidates (included or not) that belong to another customer: (item id, subject, `how`).

    A candidate's subject is the one it declares, and also that of every history item it is
    built from (a strategy cannot launder another customer's turn by labelling it as ours).
    """
    me = o.probe.subject
    seen = o.seen
    theirs = _scenario.of(o).foreign_ids(seen, me)
    cands = rows(o)
    if isinstance(cands, Rows) and cands.single in ("", me) and (not theirs or theirs.isdisjoint(cands.item_ids)):
        return []  # every candidate is its own source, of this customer, and no id is anyone else's: the loop below skips each
    out = []
    for c in cands:
        if not (c.subject and c.subject != me) and (
            not theirs or (c.item_id not in theirs and theirs.isdisjoint(c.source_ids))
        ):
            continue  # nothing of it is anyone else's (the common case, read from one set)
        others = {c.subject} if c.subject and c.subject != me else None
        for sid in (c.item_id, *c.source_ids):
            s = seen.get(sid)
            if s is not None and s.subject != me:
                others = (others or set()) | {s.subject}
        if others:
            out.append((c.item_id, min(others), how(o, c)))
    return out


@per_outcome
def last_forgets(o: ProbeOutcome) -> dict[str, int]:
    """Subject -> index of its latest `forget` before the probe."""
    out: dict[str, int] = {}
    for i, subject in _scenario.of(o).forgets:
        if i >= o.event_index:
            break
        out[subject] = i
    return out


@per_outcome
def forgotten_items(o: ProbeOutcome) -> list[tuple[str, str, str]]:
    """Candidates that bring back something a `forget` deleted: (item id, subject, `how`).

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
            out.append((c.item_id, bad, how(o, c)))
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

"""Rank, pack and render: the one way every strategy turns scores into a context.

A strategy supplies its candidate pool (items of a `SubjectHistory`) and the named score
components of each; packing sums them into scores, sorts (stable, best first), fills the
budget greedily (an item that does not fit is skipped, not a stop, so smaller ones below
it can still fill the space) and renders the text. The budget is a hard ceiling on the whole
text, header included: it is checked on the final text with the project tokenizer.
"""

from __future__ import annotations

from dataclasses import dataclass
from operator import itemgetter
from typing import Iterator, Literal, Sequence, overload

import numpy as np

from stores.memory import SubjectHistory
from stores.protocol import DROP_BUDGET, DROP_CAP, DROP_CUTOFF, Bundle, Candidate, ContextRequest
from stores.tokens import count_lines_tokens, count_text_tokens, count_tokens, lines_add_up


class CandidateTable(Sequence[Candidate]):
    """Candidates stored column-wise (cheap for 10,000 items); indexing yields `Candidate`s.

    Built either from finished columns (the constructor) or, by `pack`, lazily over the
    history it ranked (`ranked`): the id, text, session and reason columns are then taken
    from the history in rank order the first time something reads them, so a probe whose
    bundle is only compared (an idempotency replay) or counted never builds 10,000 of each.
    """

    def __init__(
        self,
        item_ids: list[str],
        texts: list[str],
        subjects: list[str],
        sessions: list[str],
        source_ids: list[tuple[str, ...]],
        scores: np.ndarray,
        components: dict[str, np.ndarray],
        included_mask: np.ndarray,
        reasons: list[str],
        tokens: np.ndarray,
    ) -> None:
        self._cols: dict[str, list] = {
            "item_ids": item_ids, "texts": texts, "subjects": subjects, "sessions": sessions,
            "source_ids": source_ids, "reasons": reasons,
        }
        self._scores, self._components, self.included_mask, self.tokens = scores, components, included_mask, tokens
        self._lazy: _RankedSource | None = None
        self._n = len(item_ids)

    @classmethod
    def ranked(cls, history: SubjectHistory, order: np.ndarray, order_local: np.ndarray, scores: np.ndarray,
               components: dict[str, np.ndarray], included: np.ndarray, reason_codes: np.ndarray,
               labels: tuple[str, ...], tokens: np.ndarray) -> "CandidateTable":
        """A table over `history`'s items at positions `order` (rank order), whose columns are
        read from the history only when first used. `scores` and `components` are aligned with
        the pool (`order_local` puts them in rank order); `reason_codes` index `labels`."""
        t = cls.__new__(cls)
        t._cols, t.included_mask, t.tokens = {}, included, tokens
        t._scores, t._components = None, None
        shared = getattr(history, "shared_lines", None)  # a stand-in history may only have `lines`
        t._lazy = _RankedSource(history.subject, history.ids, shared() if shared else history.lines, history.sessions, order,
                                order_local, scores, components, reason_codes, labels,
                                isinstance(history, SubjectHistory))
        t._n = len(order)
        return t

    def _col(self, name: str) -> list:
        col = self._cols.get(name)
        if col is None:
            col = self._cols[name] = self._lazy.column(name)
        return col

    @staticmethod
    def _column(name: str, doc: str) -> property:
        """A column read lazily and settable (a strategy may replace one, e.g. its own source ids)."""
        return property(lambda self: self._col(name), lambda self, value: self._set_col(name, value), doc=doc)

    def _set_col(self, name: str, value: list) -> None:
        self._cols[name] = value
        self.__dict__.setdefault("_given", set()).add(name)

    item_ids = _column("item_ids", "Item ids in rank order.")
    texts = _column("texts", "Rendered lines in rank order.")
    subjects = _column("subjects", "Whose item each candidate is.")
    sessions = _column("sessions", "Session of each candidate.")
    source_ids = _column("source_ids", "History items behind each candidate.")
    reasons = _column("reasons", "Why each candidate was dropped ('' if included).")

    @property
    def scores(self) -> np.ndarray:
        """Ranking scores in rank order."""
        if self._scores is None:
            self._scores = self._lazy.scores[self._lazy.order_local]
        return self._scores

    @property
    def components(self) -> dict[str, np.ndarray]:
        """Each score component in rank order (they sum to `scores`)."""
        if self._components is None:
            lz = self._lazy
            self._components = {k: np.ascontiguousarray(v[lz.order_local]) for k, v in lz.components.items()}
        return self._components

    def column_at(self, name: str, positions: list[int]) -> list:
        """Column `name` at `positions` (rank order), the values the whole column holds there,
        without building the whole column when it was not read yet (the reply engine reads the
        few included rows of a pool of thousands)."""
        col = self._cols.get(name)
        if col is not None or self._lazy is None:
            col = self._col(name)
            return [col[i] for i in positions]
        return self._lazy.column(name, positions)

    def reason_set(self) -> set[str]:
        """The distinct drop reasons of the candidates ('' for included), without building the column."""
        if self._lazy is not None and "reasons" not in self._cols:
            lz = self._lazy
            counts = np.bincount(lz.reason_codes, minlength=len(lz.labels)) if len(lz.reason_codes) else ()
            return {lz.labels[k] for k in np.flatnonzero(counts).tolist()}
        return set(self.reasons)

    def own_sources(self) -> bool:
        """Whether each candidate's source ids are just its own id (a packed history's table whose
        source ids no one replaced), known without building that column."""
        return self._lazy is not None and "source_ids" not in self.__dict__.get("_given", ())

    def reason_counts(self, rows: np.ndarray) -> dict[str, int]:
        """How many of the candidates at `rows` (positions in rank order) have each drop reason
        ('' for included), counted from the reason codes without building the reason column."""
        if self._lazy is None or "reasons" in self._cols:
            reasons = self.reasons
            out: dict[str, int] = {}
            for i in np.asarray(rows).tolist():
                out[reasons[i]] = out.get(reasons[i], 0) + 1
            return out
        lz = self._lazy
        counts = np.bincount(lz.reason_codes[rows], minlength=len(lz.labels)).tolist()
        out = {}
        for label, k in zip(lz.labels, counts):
            if k:
                out[label] = out.get(label, 0) + k
        return out

    def sole_subject(self) -> str | None:
        """The subject of every candidate when each is its own one source and no strategy replaced
        the subject column either (a packed history's table: one customer's items), else None."""
        if not self.own_sources() or "subjects" in self.__dict__.get("_given", ()):
            return None
        return self._lazy.subject

    def provenance_ids(self) -> tuple[str, ...]:
        """Every candidate's id and source ids, in rank order, once each."""
        if self.own_sources():  # each item is its own source
            ids = self.item_ids
            lz = self._lazy
            if (lz.distinct_ids and "item_ids" not in self.__dict__.get("_given", ())
                    and (not len(lz.order) or np.bincount(lz.order).max() <= 1)):
                return tuple(ids)  # distinct positions of a history whose ids are distinct: nothing to drop
            return tuple(dict.fromkeys(ids))
        return tuple(dict.fromkeys(x for i, src in zip(self.item_ids, self.source_ids) for x in (i, *src)))

    def __len__(self) -> int:
        return self._n

    @overload
    def __getitem__(self, i: int) -> Candidate: ...
    @overload
    def __getitem__(self, i: slice) -> list[Candidate]: ...

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError(i)
        return Candidate(
            item_id=self.item_ids[i],
            text=self.texts[i],
            score=float(self.scores[i]),
            components={k: float(v[i]) for k, v in self.components.items()},
            source_ids=self.source_ids[i],
            included=bool(self.included_mask[i]),
            reason=self.reasons[i],
            tokens=int(self.tokens[i]),
            subject=self.subjects[i],
            session=self.sessions[i],
        )

    def __iter__(self) -> Iterator[Candidate]:
        # one bulk conversion per column instead of numpy scalar reads per item: criteria and
        # idempotency signatures iterate every candidate of every bundle
        names = list(self.components)
        comp_rows = zip(*(self.components[k].tolist() for k in names)) if names else (() for _ in range(len(self)))
        return (
            Candidate(item_id=i, text=t, score=sc, components=dict(zip(names, cr)), source_ids=src, included=inc,
                      reason=r, tokens=tk, subject=su, session=se)
            for i, t, sc, cr, src, inc, r, tk, su, se in zip(
                self.item_ids, self.texts, self.scores.tolist(), comp_rows, self.source_ids,
                self.included_mask.tolist(), self.reasons, self.tokens.tolist(), self.subjects, self.sessions,
            )
        )


@dataclass
class _RankedSource:
    """Where a lazily built `CandidateTable` reads its columns: the history's lists as they
    were at packing time (ids and sessions are append-only; lines are copied by the history
    before an in-place change, see `SubjectHistory.shared_lines`) and the rank order."""

    subject: str
    ids: list[str]
    lines: list[str]
    sessions: list[str]
    order: np.ndarray
    order_local: np.ndarray
    scores: np.ndarray
    components: dict[str, np.ndarray]
    reason_codes: np.ndarray
    labels: tuple[str, ...]
    distinct_ids: bool = False
    """Whether no id occurs twice in `ids` (a `SubjectHistory`'s: it adds an id once)."""

    def column(self, name: str, positions: list[int] | None = None) -> list:
        """The column in rank order, or only its values at `positions` (indexes into the rank order)."""
        order = self.order if positions is None else self.order[positions]
        if name == "item_ids":
            return _take(self.ids, order)
        if name == "texts":
            return _take(self.lines, order)
        if name == "sessions":
            return _take(self.sessions, order)
        if name == "subjects":
            return [self.subject] * len(order)
        if name == "source_ids":
            return [(i,) for i in _take(self.ids, order)]
        if name == "reasons":
            codes = self.reason_codes if positions is None else self.reason_codes[positions]
            return np.asarray(self.labels, dtype=object)[codes].tolist()
        raise KeyError(name)


def header_for(request: ContextRequest) -> str:
    """First line of every context: whose memory this is, and as of when."""
    return (
        f"Memory for customer {request.subject}, live session {request.session}, "
        f"as of {request.now:%Y-%m-%d %H:%M} UTC"
    )


def _greedy(tokens: np.ndarray, ok: np.ndarray, remaining: int) -> np.ndarray:
    """Which items to include: in rank order, each eligible item that still fits is taken
    (one that does not fit is skipped, not a stop). Python only steps over items that fit;
    a run of items that do not is skipped with one array search."""
    included = np.zeros(len(tokens), dtype=bool)
    elig = np.flatnonzero(ok)
    if not len(elig):
        return included
    tok = tokens[elig]
    toks = tok.tolist()
    take: list[int] = []
    k, m = 0, len(toks)
    while k < m:
        if toks[k] > remaining:
            fits = np.flatnonzero(tok[k + 1 :] <= remaining)
            if not len(fits):
                break
            k += 1 + int(fits[0])
        take.append(k)
        remaining -= toks[k]
        k += 1
    included[elig[take]] = True
    return included


def _take(seq: list, order: np.ndarray) -> list:
    if len(order) == 0:
        return []
    if len(order) == 1:
        return [seq[int(order[0])]]
    return list(itemgetter(*order.tolist())(seq))


def total_score(components: dict[str, np.ndarray], n: int) -> np.ndarray:
    """The ranking score of `n` items: the sum of their components, added in dict order."""
    scores = np.zeros(n, dtype=np.float64)
    for v in components.values():
        scores = scores + v
    return scores


def pack(
    history: SubjectHistory,
    request: ContextRequest,
    components: dict[str, np.ndarray | float],
    *,
    pool: np.ndarray | None = None,
    eligible: np.ndarray | None = None,
    render: Literal["rank", "chronological"] = "rank",
    cutoff_reason: str = DROP_CUTOFF,
    cap: int | None = None,
) -> Bundle:
    """Build a bundle from per-item score components.

    `pool` selects which history positions are candidates (default: all); each component
    is an array aligned with `pool` (or a scalar applied to all). `eligible`, aligned with
    `pool`, marks candidates the strategy is willing to include (others are dropped with
    `cutoff_reason`). `cap` (None: no cap) keeps at most that many eligible candidates, best
    first; the eligible ones below it are dropped as `item_cap`. Ties keep pool order. The candidates' columns are read from the history
    and from the component arrays when the bundle is first read, so a strategy hands over
    arrays it does not change afterwards (built fresh per request, or kept read-only, as
    `session_aware` keeps its session signals between probes).
    """
    if pool is None:
        pool = np.arange(len(history))
    n = len(pool)
    comps = {k: v if isinstance(v, np.ndarray) and v.dtype == np.float64 and v.shape == (n,)
             else np.broadcast_to(np.asarray(v, dtype=np.float64), (n,)) for k, v in components.items()}
    scores = total_score(comps, n)
    order_local = np.argsort(-scores, kind="stable")
    order = pool[order_local] if n else pool

    line_tokens = history.array("line_tokens")[order] if n else np.zeros(0, dtype=np.int64)
    ok = np.ones(n, dtype=bool) if eligible is None else np.asarray(eligible, dtype=bool)[order_local]
    capped = np.zeros(n, dtype=bool)
    if cap is not None:
        over = np.flatnonzero(ok)[cap:]
        capped[over] = True
        ok = ok & ~capped

    header = header_for(request)
    header_tokens = count_text_tokens(header)  # memoized: every strategy and replay asks the same probe
    # newlines cost no tokens, so the text costs the header plus the lines packed
    included = _greedy(line_tokens, ok, request.budget_tokens - header_tokens)
    # 0: included, 1: eligible but over the budget, 2: not eligible (the cutoff), 3: over the item cap
    codes = np.where(included, 0, np.where(ok, 1, np.where(capped, 3, 2))).astype(np.int8)

    text, tokens = _render(history, order, included, header, header_tokens, line_tokens, render, request.budget_tokens, codes)
    return Bundle(
        candidates=CandidateTable.ranked(history, order, order_local, scores, comps, included, codes,
                                         ("", DROP_BUDGET, cutoff_reason, DROP_CAP), line_tokens),
        text=text,
        tokens=tokens,
    )


def _render(history, order, included, header, header_tokens, line_tokens, render, budget, codes) -> tuple[str, int]:
    """Render the included items and count the text; if the count ever exceeds the budget,
    drop from the bottom (marking the item over budget) and count again.

    The count is the header's plus the packed lines' own counts, which is the whole text's
    count whenever the project tokenizer splits at newlines (`stores.tokens.lines_add_up`);
    otherwise the whole text is tokenized. Either way the number checked against the budget
    is the text's true count, so no text over its budget leaves here.
    """
    additive = lines_add_up()
    while True:
        idx = order[included]
        if render == "chronological" and len(idx):
            times = history.array("times")[idx]
            idx = idx[np.lexsort((idx, times))]
        if len(idx) == 0 and budget < header_tokens:
            return "", 0
        text = "\n".join([header, *(_take(history.lines, idx) if len(idx) else [])])
        tokens = header_tokens + int(line_tokens[included].sum()) if additive else count_text_tokens(text)
        if tokens <= budget:
            return text, tokens
        worst = np.flatnonzero(included)
        if len(worst) == 0:
            return "", 0
        included[worst[-1]] = False
        codes[int(worst[-1])] = 1


def cut_to_budget(text: str, budget: int, ranked: Sequence[str]) -> str:
    """What the model receives of a context: the text itself when it fits `budget`, else the
    cut a serving layer holding the bundle would make. Whole lines only, in their order in the
    text: the lines that are no included item's (the header, any framing) claim the budget
    first, then the included items' lines best rank first (`ranked`: their rendered texts in
    rank order), each kept while it still fits (one that does not is skipped, not a stop), the
    way `pack` fills a budget. So the strategy's own ranking decides what survives, and a context
    over its budget can never show the model more than packing within the budget would have.
    Counted by the project tokenizer; the one cut the criteria judge and the app shows."""
    if not text or count_lines_tokens(text) <= budget:
        return text
    lines = text.split("\n")
    rank_of: dict[str, int] = {}
    for r, item in enumerate(ranked):
        for line in (item or "").split("\n"):
            rank_of.setdefault(line, r)
    order = sorted(range(len(lines)), key=lambda i: (rank_of.get(lines[i], -1), i))
    keep, used = [], 0
    for i in order:
        n = count_tokens(lines[i])
        if used + n <= budget:
            keep.append(i)
            used += n
    return "\n".join(lines[i] for i in sorted(keep))


def received_bundle(bundle: Bundle, budget: int) -> Bundle:
    """`bundle` as the model receives it: the same bundle when its text fits `budget`, else a copy
    whose text is `cut_to_budget`'s (whoever reads the context, the reply engine too, reads that)."""
    # counted from its lines, which packing has counted already (each distinct line is tokenized once per process)
    if not bundle.text or count_lines_tokens(bundle.text) <= budget:
        return bundle
    text = cut_to_budget(bundle.text, budget, [c.text for c in bundle.candidates if c.included and isinstance(c.text, str)])
    return Bundle(candidates=bundle.candidates, text=text, tokens=count_text_tokens(text), latency_ms=bundle.latency_ms)

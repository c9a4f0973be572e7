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
from stores.protocol import DROP_BUDGET, DROP_CUTOFF, Bundle, Candidate, ContextRequest
from stores.tokens import count_text_tokens, count_tokens


@dataclass
class CandidateTable(Sequence[Candidate]):
    """Candidates stored column-wise (cheap for 10,000 items); indexing yields `Candidate`s."""

    item_ids: list[str]
    texts: list[str]
    subjects: list[str]
    sessions: list[str]
    source_ids: list[tuple[str, ...]]
    scores: np.ndarray
    components: dict[str, np.ndarray]
    included_mask: np.ndarray
    reasons: list[str]
    tokens: np.ndarray

    def __len__(self) -> int:
        return len(self.item_ids)

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


def top_k_eligible(scores: np.ndarray, p) -> np.ndarray:
    """Top-k by score (stable on ties) and above the minimum; `p` carries `top_k` and `min_score`."""
    ok = scores > p.min_score
    if p.top_k >= 0 and ok.sum() > p.top_k:
        order = np.argsort(-scores, kind="stable")
        keep = np.zeros(len(scores), dtype=bool)
        keep[order[: p.top_k]] = True
        ok &= keep
    return ok


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
) -> Bundle:
    """Build a bundle from per-item score components.

    `pool` selects which history positions are candidates (default: all); each component
    is an array aligned with `pool` (or a scalar applied to all). `eligible`, aligned with
    `pool`, marks candidates the strategy is willing to include (others are dropped with
    `cutoff_reason`). Ties keep pool order.
    """
    if pool is None:
        pool = np.arange(len(history))
    n = len(pool)
    comps = {k: np.broadcast_to(np.asarray(v, dtype=np.float64), (n,)) for k, v in components.items()}
    scores = total_score(comps, n)
    order_local = np.argsort(-scores, kind="stable")
    order = pool[order_local] if n else pool

    line_tokens = history.array("line_tokens")[order] if n else np.zeros(0, dtype=np.int64)
    ok = np.ones(n, dtype=bool) if eligible is None else np.asarray(eligible, dtype=bool)[order_local]

    header = header_for(request)
    header_tokens = count_text_tokens(header)
    # newlines cost no tokens, so the text costs the header plus the lines packed
    included = _greedy(line_tokens, ok, request.budget_tokens - header_tokens)
    # ineligible: cutoff; eligible but not included: budget (kept a list: _render may edit it)
    labels = np.array(["", DROP_BUDGET, cutoff_reason], dtype=object)
    reasons = labels[np.where(included, 0, np.where(ok, 1, 2))].tolist()

    text, tokens = _render(history, order, included, header, render, request.budget_tokens, reasons)
    ids = _take(history.ids, order)
    return Bundle(
        candidates=CandidateTable(
            item_ids=ids,
            texts=_take(history.lines, order),
            subjects=[history.subject] * n,
            sessions=_take(history.sessions, order),
            source_ids=[(i,) for i in ids],
            scores=scores[order_local],
            components={k: np.ascontiguousarray(v[order_local]) for k, v in comps.items()},
            included_mask=included,
            reasons=reasons,
            tokens=line_tokens,
        ),
        text=text,
        tokens=tokens,
    )


def _render(history, order, included, header, render, budget, reasons) -> tuple[str, int]:
    """Render included items; if the whole-text count ever exceeds the budget, drop from the bottom."""
    while True:
        idx = order[included]
        if render == "chronological" and len(idx):
            times = history.array("times")[idx]
            idx = idx[np.lexsort((idx, times))]
        if len(idx) == 0 and budget < count_tokens(header):
            return "", 0
        text = "\n".join([header, *(_take(history.lines, idx) if len(idx) else [])])
        tokens = count_text_tokens(text)
        if tokens <= budget:
            return text, tokens
        worst = np.flatnonzero(included)
        if len(worst) == 0:
            return "", 0
        included[worst[-1]] = False
        reasons[int(worst[-1])] = DROP_BUDGET


def cut_to_budget(text: str, budget: int, ranked: Sequence[str]) -> str:
    """What the model receives of a context: the text itself when it fits `budget`, else the
    cut a serving layer holding the bundle would make. Whole lines only, in their order in the
    text: the lines that are no included item's (the header, any framing) claim the budget
    first, then the included items' lines best rank first (`ranked`: their rendered texts in
    rank order), each kept while it still fits (one that does not is skipped, not a stop), the
    way `pack` fills a budget. So the strategy's own ranking decides what survives, and a context
    over its budget can never show the model more than packing within the budget would have.
    Counted by the project tokenizer; the one cut the criteria judge and the app shows."""
    if not text or count_text_tokens(text) <= budget:
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
    if not bundle.text or count_text_tokens(bundle.text) <= budget:
        return bundle
    text = cut_to_budget(bundle.text, budget, [c.text for c in bundle.candidates if c.included and isinstance(c.text, str)])
    return Bundle(candidates=bundle.candidates, text=text, tokens=count_text_tokens(text), latency_ms=bundle.latency_ms)

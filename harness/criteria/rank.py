"""Rank metrics, as the public memory benchmarks report retrieval: recall@k and nDCG@k over each
probe's ranked candidates (docs/criteria.md, "Rank metrics").

Recall at the budget (`recall`) asks what the model receives; these ask how well the strategy
ordered everything it considered, whatever the budget, so a number here can be set beside the
numbers LoCoMo and LongMemEval papers print. They read the probe's `include` gold:

- a gold item's rank is the position (1 = best) of the first candidate covering it: the id is
  among the candidate's source ids, or a text needle is in the candidate's text (ignoring case);
  candidates count whether or not the context included them;
- recall@k is the share of gold items ranked k or better; a gold item that is not among the
  candidates at all is a miss at every k, never a case left out;
- nDCG@10 is binary-relevance DCG over the first 10 ranks (each gold item counts once, at its
  rank r, worth 1 / log2(r + 1)) divided by the ideal DCG of min(|gold|, 10) items ranked first.

They form the group `rank`: shown in every table, in no total and never in the shared headline
total (they measure the same gold as recall, which already counts there).
"""

from __future__ import annotations

import math
from itertools import islice

from harness.criteria import criterion, ok_or_fail
from harness.criteria.bundle import Rows, per_outcome, name, plural, rows
from harness.format.model import TextNeedle
from harness.replay.probes import ProbeOutcome

KS = (5, 10, 25)
"""The cut-offs recall is reported at (the field's usual ones)."""

NDCG_K = 10
"""The cut-off of nDCG."""


@per_outcome
def gold_ranks(o: ProbeOutcome) -> dict[str, int | None]:
    """Each `include` gold item (by its name) -> the rank of the first candidate covering it,
    None when no candidate does."""
    gold = o.probe.expect.include
    out: dict[str, int | None] = {name(g): None for g in gold}
    ids = {g for g in gold if not isinstance(g, TextNeedle)}
    needles = [g for g in gold if isinstance(g, TextNeedle)]
    left = len(out)
    cands = rows(o)
    if isinstance(cands, Rows) and not needles:  # each gold id's first covering candidate, found by id
        for g in ids:
            at = cands.first_position(g)
            out[g] = None if at is None else at + 1
        return out
    for r, c in enumerate(cands, start=1):
        if not left:
            break
        for g in ids.intersection(c.source_ids or ()):
            if out[g] is None:
                out[g] = r
                left -= 1
        if needles and c.text:
            low = c.text.lower()
            for g in needles:
                if out[name(g)] is None and g.text.lower() in low:
                    out[name(g)] = r
                    left -= 1
    return out


def _where(ranks: dict[str, int | None]) -> str:
    shown = [f"{g} at rank {r}" if r is not None else f"{g} not among the candidates" for g, r in islice(ranks.items(), 6)]
    return ", ".join(shown) + (f" and {len(ranks) - 6} more" if len(ranks) > 6 else "")


def _recall_at(k: int):
    key = f"recall_at_{k}"

    def score(o: ProbeOutcome):
        ranks = gold_ranks(o)
        found = [g for g, r in ranks.items() if r is not None and r <= k]
        missed = [g for g in ranks if g not in found]
        n = len(o.bundle.candidates)
        why = (f"{len(found)} of {plural(len(ranks), 'must-include item')} in the top {k} of {plural(n, 'candidate')} "
               f"({_where(ranks)}); each counts 1/{len(ranks)}")
        return ok_or_fail(key, len(found) / len(ranks), not missed, why, missed)

    score.__name__ = key
    score.__doc__ = (f"Share of `include` gold items ranked {k} or better among all candidates (included or not); "
                     "an item not among the candidates is a miss.")
    return criterion(key, title=f"recall@{k}", group="rank", applies=lambda p: bool(p.expect.include))(score)


for _k in KS:
    _recall_at(_k)


@criterion(f"ndcg_at_{NDCG_K}", title=f"nDCG@{NDCG_K}", group="rank", applies=lambda p: bool(p.expect.include))
def ndcg_at_10(o: ProbeOutcome):
    """Binary-relevance nDCG over the first 10 ranks: each `include` gold item ranked r <= 10
    adds 1 / log2(r + 1), divided by the ideal (every gold item ranked first, up to 10 of them)."""
    ranks = gold_ranks(o)
    parts = {g: 1 / math.log2(r + 1) for g, r in ranks.items() if r is not None and r <= NDCG_K}
    ideal = sum(1 / math.log2(i + 1) for i in range(1, min(len(ranks), NDCG_K) + 1))
    value = sum(parts.values()) / ideal
    terms = " + ".join(f"{g} {v:.3f}" for g, v in parts.items()) or "nothing in the top 10"
    why = f"DCG@{NDCG_K} = {terms} = {sum(parts.values()):.3f} of an ideal {ideal:.3f} ({_where(ranks)})"
    return ok_or_fail(f"ndcg_at_{NDCG_K}", value, len(parts) == len(ranks) and value >= 1 - 1e-9, why,
                      [g for g in ranks if g not in parts])

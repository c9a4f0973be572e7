"""hybrid: session-aware ranking whose relevance term is embedding cosine instead of word overlap."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import ClassVar, Literal

import numpy as np

from stores.bounds import ModelRef, NonNegative, PositiveInt
from stores.cache import ArrayMemo
from stores.retrieval.embedding import VectorIndex, vector_index, warm_cache
from stores.retrieval.encoder import DEFAULT_MODEL
from stores.memory import SubjectHistory
from stores.protocol import ContextRequest
from stores.session.session_aware import PUBLISHED, SessionAware, SessionAwareParams, SessionIndex, per_probe


@dataclass(frozen=True)
class HybridParams(SessionAwareParams):
    """Parameters of `hybrid`: every `session_aware` constant, plus the fusion of the two rankings."""

    relevance: Literal["overlap", "tfidf", "semantic", "rrf"] = "rrf"
    """`rrf`: reciprocal rank fusion of the TF-IDF ranking (items with a cosine above 0) and the
    embedding ranking, `sum 1 / (rrf_k + rank)`, divided by the probe's best, times `relevance_max`
    (component `relevance`); `semantic`: the published hybrid's clipped cosine,
    `min(overlap_max, semantic_weight * overlap_max * max(cosine, 0))` (component `semantic`);
    `tfidf` and `overlap` as in `session_aware`."""
    rrf_k: PositiveInt = 5
    """The rank offset of reciprocal rank fusion (larger: flatter)."""
    semantic_weight: NonNegative = 1.0
    """Scale of the published semantic term (only with `relevance="semantic"`)."""
    model: ModelRef = DEFAULT_MODEL
    """Sentence-transformers model id (the offline MiniLM) or a local model folder."""


class Hybrid(SessionAware):
    """`session_aware` whose relevance fuses the lexical and the dense ranking.

    Identical to `session_aware` (same components, same fixes, same health and handoff),
    except for relevance: by default the reciprocal rank fusion of the TF-IDF ranking and the
    embedding ranking of the items' own text to the task (`rrf`), normalised per probe. The
    `published` variant keeps the published hybrid: the `semantic` component, the embedding
    cosine clipped at 0 and scaled to 0..`overlap_max`, with `session_aware`'s published table.
    Embeddings come from the same cached encoder as `embedding`.
    """

    name: ClassVar[str] = "hybrid"
    Params = HybridParams
    capabilities: ClassVar[frozenset[str]] = frozenset({"health", "handoff"})
    derived: ClassVar[tuple[str, ...]] = (*SessionAware.derived, "_vectors")
    presets: ClassVar[dict[str, dict[str, object]]] = {"published": {**PUBLISHED, "relevance": "semantic"}}

    def __init__(self, params: HybridParams | None = None) -> None:
        super().__init__(params or HybridParams())
        self._vectors: dict[str, VectorIndex] = {}

    def prepare(self, texts: list[str]) -> None:
        """Warm the embedding cache with the scenario's texts in large batches (speed only)."""
        warm_cache(self.params.model, texts)

    def _relevance(self, h: SubjectHistory, ix: SessionIndex, request: ContextRequest) -> tuple[str, np.ndarray]:
        p = self.params
        if p.relevance not in ("semantic", "rrf"):
            return super()._relevance(h, ix, request)
        cos = vector_index(self._vectors, h, p.model).cosine(h, request.task)
        if p.relevance == "semantic":
            return "semantic", np.minimum(p.overlap_max, p.semantic_weight * p.overlap_max * np.maximum(cos, 0.0))
        lex = self._lexical(h, request)
        return "relevance", p.relevance_max * per_probe(fused(lex, cos, p.rrf_k))


def rrf(scores: np.ndarray, k: int, only_positive: bool = False) -> np.ndarray:
    """`1 / (k + rank)` of each item in the ranking by `scores` (rank 1 the best, ties in pool
    order); with `only_positive`, items scoring 0 or less are not in the ranking and get 0."""
    order = np.argsort(-scores, kind="stable")
    rank = np.empty(len(scores), dtype=np.float64)
    rank[order] = np.arange(1, len(scores) + 1)
    out = 1.0 / (k + rank)
    return np.where(scores > 0, out, 0.0) if only_positive else out


_FUSED = ArrayMemo()
"""`rrf_fused` results by a digest of its inputs (see `fused`)."""


def fused(lexical: np.ndarray, dense: np.ndarray, k: int) -> np.ndarray:
    """`rrf_fused(lexical, dense, k)`, remembered by a blake2b digest of both arrays' bytes (and
    n, k): the fusion is a pure function of the two rankings, so a probe asked again on the same
    history with the same task (a run's idempotency replays) sorts nothing. Read-only."""
    d = hashlib.blake2b(np.ascontiguousarray(lexical, dtype=np.float64).data, digest_size=32)
    d.update(np.ascontiguousarray(dense, dtype=np.float64).data)
    key = (d.digest(), len(lexical), int(k))
    out = _FUSED.get(key)
    return out if out is not None else _FUSED.put(key, rrf_fused(lexical, dense, k))


def rrf_fused(lexical: np.ndarray, dense: np.ndarray, k: int) -> np.ndarray:
    """`rrf(lexical, k, only_positive=True) + rrf(dense, k)`, the same numbers for less work: the
    lexical ranking sorts only the items scoring above 0 (in pool order, so ties fall as in the
    whole ranking, where they come first), and the ranks' reciprocals are taken once."""
    n = len(dense)
    inv = 1.0 / (k + np.arange(1, n + 1, dtype=np.float64))  # 1 / (k + rank) for ranks 1..n
    out = np.empty(n, dtype=np.float64)
    out[np.argsort(-dense, kind="stable")] = inv
    pos = np.flatnonzero(lexical > 0)
    lex = np.zeros(n, dtype=np.float64)
    lex[pos[np.argsort(-lexical[pos], kind="stable")]] = inv[: len(pos)]
    return lex + out

"""hybrid: session-aware ranking whose relevance term is embedding cosine instead of word overlap."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from stores.bounds import ModelRef, NonNegative
from stores.retrieval.embedding import VectorIndex, vector_index, warm_cache
from stores.retrieval.encoder import DEFAULT_MODEL
from stores.memory import SubjectHistory
from stores.protocol import ContextRequest
from stores.session.session_aware import SessionAware, SessionAwareParams, SessionIndex


@dataclass(frozen=True)
class HybridParams(SessionAwareParams):
    """Parameters of `hybrid`: every `session_aware` constant, plus the semantic term."""

    semantic_weight: NonNegative = 1.0
    """Relevance = `min(overlap_max, semantic_weight * overlap_max * max(cosine, 0))`."""
    model: ModelRef = DEFAULT_MODEL
    """Sentence-transformers model id (the offline MiniLM) or a local model folder."""


class Hybrid(SessionAware):
    """`session_aware` with a semantic relevance term.

    Identical to `session_aware` (same components, same fixes, same health and handoff),
    except that the `overlap` component is replaced by `semantic`: the embedding cosine of
    the item's own text to the task, clipped at 0 and scaled to 0..`overlap_max` by
    `semantic_weight`. Embeddings come from the same cached encoder as `embedding`.
    """

    name: ClassVar[str] = "hybrid"
    Params = HybridParams
    capabilities: ClassVar[frozenset[str]] = frozenset({"health", "handoff"})
    derived: ClassVar[tuple[str, ...]] = (*SessionAware.derived, "_vectors")

    def __init__(self, params: HybridParams | None = None) -> None:
        super().__init__(params or HybridParams())
        self._vectors: dict[str, VectorIndex] = {}

    def prepare(self, texts: list[str]) -> None:
        """Warm the embedding cache with the scenario's texts in large batches (speed only)."""
        warm_cache(self.params.model, texts)

    def _relevance(self, h: SubjectHistory, ix: SessionIndex, request: ContextRequest) -> tuple[str, np.ndarray]:
        p = self.params
        cos = vector_index(self._vectors, h, p.model).cosine(h, request.task)
        return "semantic", np.minimum(p.overlap_max, p.semantic_weight * p.overlap_max * np.maximum(cos, 0.0))

"""embedding: dense retrieval, cosine between the task and each item under a sentence encoder."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

import numpy as np

from stores.bounds import Cosine, ModelRef, PositiveInt
from stores.cache import chain_digest, text_key
from stores.retrieval.encoder import DEFAULT_MODEL, encoder
from stores.memory import IndexedMemory, SubjectHistory
from stores.packing import pack
from stores.protocol import Bundle, ContextRequest

COSINE_DECIMALS = 6
"""Cosines are rounded so float noise between batch shapes can never reorder items."""


@dataclass(frozen=True)
class EmbeddingParams:
    """Parameters of `embedding`."""

    top_k: PositiveInt | None = None
    """An explicit item cap, off by default (the token budget decides how much is packed): with a
    value, at most this many items are eligible and the rest are dropped as `item_cap`."""
    min_score: Cosine = 0.0
    """Items with cosine <= this are dropped as `rank_cutoff`."""
    model: ModelRef = DEFAULT_MODEL
    """Sentence-transformers model id (the offline MiniLM) or a local model folder."""
    render: Literal["rank", "chronological"] = "rank"
    """`rank` or `chronological` order of the packed lines."""


class VectorIndex:
    """A subject's item embeddings, aligned with its history positions, filled lazily.

    At a probe, every item not yet embedded is encoded in one batch together with the task
    (through the process-wide cached `Encoder`); a resolution record whose summary changed is
    re-embedded. Empty texts get a zero vector (cosine 0) instead of an embedding of nothing.

    The cosines are a pure function of the items' texts and the task (under one encoder), so
    they are kept on the encoder by a digest of both (`chain`: item i's digest covers the cache
    keys of texts 0..i): the same probe asked again on the same texts, by a run's idempotency
    replays or by another instance, multiplies nothing.
    """

    def __init__(self, model_id: str) -> None:
        self.model_id = model_id
        self.version = -1
        self.texts: list[str] = []
        self.replaced_seen = 0  # cursor into `SubjectHistory.replaced`
        self.vecs = np.zeros((0, 0), dtype=np.float32)
        self.chain: list[bytes] = []
        self.filled_by: tuple | bool | None = None  # (encoder, its numerics) every row came from; False: mixed

    def cosine(self, h: SubjectHistory, task: str) -> np.ndarray:
        """Cosine of every item of `h` to `task`, rounded to `COSINE_DECIMALS`."""
        enc = encoder(self.model_id)
        todo: list[int] = []
        if self.version != h.version:
            todo = [i for i in dict.fromkeys(h.replaced[self.replaced_seen :])
                    if i < len(self.texts) and h.texts[i] != self.texts[i]]
            self.replaced_seen = len(h.replaced)
            for i in todo:
                self.texts[i] = h.texts[i]
            if todo:  # a text replaced in place: the digests from it on are redone
                del self.chain[min(todo):]
            start = len(self.texts)
            for i in range(start, len(h)):
                self.texts.append(h.texts[i])
            todo += list(range(start, len(h)))
        batch = [self.texts[i] for i in todo if self.texts[i].strip()]
        out = enc.encode(batch + [task]) if task.strip() else enc.encode(batch)
        dim = out.shape[1]
        if self.vecs.shape[1] != dim:
            self.vecs = np.zeros((0, dim), dtype=np.float32)
        if len(self.texts) > len(self.vecs):
            grown = np.zeros((max(len(self.texts), 2 * len(self.vecs)), dim), dtype=np.float32)
            grown[: len(self.vecs)] = self.vecs
            self.vecs = grown
        source = (enc, enc.single)
        if todo:
            self.filled_by = source if self.filled_by is None or self.filled_by == source else False
        rows = iter(out)
        for i in todo:
            self.vecs[i] = next(rows) if self.texts[i].strip() else 0.0
        self.version = h.version
        if not task.strip():
            return np.zeros(len(h))
        n = len(h)
        key = (chain_digest(self.chain, self.texts, n), text_key(task))
        shared = self.filled_by == source  # every row from this encoder as it is now: the memo may answer
        cos = enc.cosines.get(key) if shared else None
        if cos is None:
            cos = np.round((self.vecs[:n] @ out[-1]).astype(np.float64), COSINE_DECIMALS)
            if shared:
                enc.cosines.put(key, cos)
        return cos


class EmbeddingRetrieval(IndexedMemory):
    """Dense retrieval: normalized MiniLM embeddings of each item's own text, cosine to the task.

    Candidates are every turn and resolution record of the customer, ranked by cosine
    (component `cosine`); those above `min_score` are eligible and packed greedily into the
    budget (an explicit `top_k` caps them, dropped as `item_cap`). Embeddings come from the on-disk cache keyed by (model id,
    sha256 of text) (`stores.retrieval.encoder`), so a rerun of the same suite encodes nothing.
    """

    name: ClassVar[str] = "embedding"
    Params = EmbeddingParams
    capabilities: ClassVar[frozenset[str]] = frozenset()

    def __init__(self, params: EmbeddingParams | None = None) -> None:
        self.params = params or EmbeddingParams()
        super().__init__()
        self._index: dict[str, VectorIndex] = {}

    def prepare(self, texts: list[str]) -> None:
        """Warm the embedding cache with the scenario's texts in large batches (speed only)."""
        warm_cache(self.params.model, texts)

    def context(self, request: ContextRequest) -> Bundle:
        h = self.memory.history(request.subject)
        cos = vector_index(self._index, h, self.params.model).cosine(h, request.task)
        return pack(h, request, {"cosine": cos}, eligible=cos > self.params.min_score, cap=self.params.top_k,
                    render=self.params.render)


def vector_index(indexes: dict[str, VectorIndex], h: SubjectHistory, model_id: str) -> VectorIndex:
    """The subject's index from `indexes` (a throwaway one for a subject with no history)."""
    ix = indexes.get(h.subject)
    if ix is None:
        ix = VectorIndex(model_id)
        if len(h):
            indexes[h.subject] = ix
    return ix


def warm_cache(model_id: str, texts: list[str]) -> None:
    """Encode the non-empty `texts` not yet cached, in one call (a strategy's `prepare`).

    Only the cache is touched, and the vectors are bitwise the ones a per-probe encode would
    have stored: `stores.retrieval.encoder` encodes without padding, so batch composition cannot matter.
    """
    encoder(model_id).warm([t for t in texts if t.strip()])

"""tfidf: lexical retrieval, cosine between the task and each item under the subject's TF-IDF."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Annotated, ClassVar, Literal

import re

import numpy as np

from stores.bounds import NotBelow, PositiveInt, Share
from stores.cache import ArrayMemo, chain_digest
from stores.memory import IndexedMemory, SubjectHistory
from stores.packing import pack
from stores.protocol import Bundle, ContextRequest
from stores.text import STOPWORDS

TOKEN_PATTERN = r"[a-z0-9]+(?:['_.-][a-z0-9]+)*"
"""The project's word pattern (`stores.text`), so TF-IDF and the other strategies see the same words."""


@dataclass(frozen=True)
class TfidfParams:
    """Parameters of `tfidf`."""

    top_k: PositiveInt | None = None
    """An explicit item cap, off by default (the token budget decides how much is packed): with a
    value, at most this many items are eligible and the rest are dropped as `item_cap`."""
    min_score: Share = 0.0
    """Items with cosine <= this are dropped as `rank_cutoff`."""
    ngram_min: PositiveInt = 1
    """Smallest n-gram of words."""
    ngram_max: Annotated[PositiveInt, NotBelow("ngram_min")] = 1
    """Largest n-gram of words."""
    sublinear_tf: bool = True
    """Use 1 + log(tf) instead of raw term counts."""
    stop_words: bool = True
    """Drop the project's stopwords (`stores.text.STOPWORDS`) before counting."""
    render: Literal["rank", "chronological"] = "rank"
    """`rank` or `chronological` order of the packed lines."""


def word_ngrams(ngram_min: int, ngram_max: int, stop_words: frozenset[str]):
    """`text -> terms`, the terms scikit-learn's `CountVectorizer(lowercase=True, token_pattern=TOKEN_PATTERN,
    ngram_range=(ngram_min, ngram_max), stop_words=...)` analyzer yields, in its order (a test compares
    them on the project's suites): the lowercased text's words, the stop words left out, then the word
    n-grams of each length in turn. Written here because importing scikit-learn for it was a second of
    every run's start-up (scipy.stats and the rest of its import chain)."""
    words = re.compile(TOKEN_PATTERN).findall

    def analyze(text: str) -> list[str]:
        tokens = [w for w in words(text.lower()) if w not in stop_words]
        terms = list(tokens) if ngram_min == 1 else []
        for n in range(max(ngram_min, 2), min(ngram_max, len(tokens)) + 1):
            terms.extend(" ".join(tokens[i : i + n]) for i in range(len(tokens) - n + 1))
        return terms

    return analyze


@lru_cache(maxsize=16)
def term_counts(ngram_min: int, ngram_max: int, stop_words: bool):
    """`text, sublinear -> (terms, weighted tf)` for one analyzer configuration: the distinct
    terms of the text in first-occurrence order and their term frequencies (`1 + log(tf)` when
    sublinear). Memoized per text and shared by every instance with the same configuration, so
    the replays of a run analyze each text once (the result is a pure function of the text)."""
    analyzer = word_ngrams(ngram_min, ngram_max, STOPWORDS if stop_words else frozenset())

    @lru_cache(maxsize=1 << 16)
    def counts(text: str, sublinear: bool) -> tuple[tuple[str, ...], np.ndarray]:
        c: dict[str, int] = {}
        for term in analyzer(text):
            c[term] = c.get(term, 0) + 1
        tf = np.fromiter(c.values(), dtype=np.float64, count=len(c))
        if sublinear:
            tf = 1.0 + np.log(tf)
        tf.flags.writeable = False  # shared between callers
        return tuple(c), tf

    return counts


class TfidfIndex:
    """A subject's term counts and document frequencies, maintained item by item.

    Scores equal those of scikit-learn's `TfidfVectorizer(smooth_idf=True, norm="l2",
    sublinear_tf=...)` fitted on the subject's current corpus and applied to the task
    (a test checks it), but nothing is refitted: a new item adds its counts and bumps
    the document frequencies of its terms, and only the O(nnz) sparse products run per probe.
    """

    def __init__(self, analyzer) -> None:
        self.analyzer = analyzer
        self.version = -1
        self.texts: list[str] = []
        self.rows: list[tuple[np.ndarray, np.ndarray]] = []  # (term ids, weighted tf)
        self.vocab: dict[str, int] = {}
        self.df = np.zeros(256, dtype=np.float64)
        self.replaced_seen = 0  # cursor into `SubjectHistory.replaced`
        # the CSR arrays, grown geometrically as rows arrive (a replaced row triggers a rebuild)
        self.indptr = np.zeros(257, dtype=np.int64)
        self.indices = np.zeros(1024, dtype=np.int64)
        self.data = np.zeros(1024, dtype=np.float64)
        self.row_of = np.zeros(1024, dtype=np.int64)
        self.nnz = 0
        self._weights_for: tuple = (None, None)
        # the digest chain of the texts (item i's digest covers texts 0..i), kept apart from the
        # rows above so a probe answered from `_COSINES` needs no row brought up to date
        self.chain: list[bytes] = []
        self._chain_texts: list[str] = []
        self._chain_version = -1
        self._chain_replaced_seen = 0

    def digest(self, h: SubjectHistory) -> bytes:
        """A digest of `h`'s texts in order (b"" for none): what the subject's cosines depend on."""
        if self._chain_version != h.version:
            texts = self._chain_texts
            todo = [i for i in dict.fromkeys(h.replaced[self._chain_replaced_seen :])
                    if i < len(texts) and h.texts[i] != texts[i]]
            self._chain_replaced_seen = len(h.replaced)
            for i in todo:
                texts[i] = h.texts[i]
            if todo:  # a text replaced in place: the digests from it on are redone
                del self.chain[min(todo):]
            texts.extend(h.texts[len(texts) : len(h)])
            self._chain_version = h.version
        return chain_digest(self.chain, self._chain_texts, len(h))

    def _counts(self, text: str, sublinear: bool) -> tuple[np.ndarray, np.ndarray]:
        terms, tf = self.analyzer(text, sublinear)
        ids = np.empty(len(terms), dtype=np.int64)
        for k, term in enumerate(terms):  # ids in first-occurrence order, as counting would give
            j = self.vocab.get(term)
            if j is None:
                j = self.vocab[term] = len(self.vocab)
                if j >= len(self.df):
                    self.df = np.concatenate([self.df, np.zeros_like(self.df)])
            ids[k] = j
        return ids, tf

    def sync(self, h: SubjectHistory, sublinear: bool) -> None:
        if self.version == h.version:
            return
        replaced = False
        for i in dict.fromkeys(h.replaced[self.replaced_seen :]):
            if i < len(self.texts) and h.texts[i] != self.texts[i]:
                self.df[self.rows[i][0]] -= 1
                self.texts[i] = h.texts[i]
                self.rows[i] = self._counts(h.texts[i], sublinear)
                self.df[self.rows[i][0]] += 1
                replaced = True
        if replaced:
            self.nnz = 0
            for r in range(len(self.rows)):
                self._append_csr(r, self.rows[r])
        for i in range(len(self.texts), len(h)):
            self.texts.append(h.texts[i])
            row = self._counts(h.texts[i], sublinear)
            self.rows.append(row)
            self.df[row[0]] += 1
            self._append_csr(i, row)
        self.replaced_seen = len(h.replaced)
        self.version = h.version

    def _append_csr(self, r: int, row: tuple[np.ndarray, np.ndarray]) -> None:
        ids, tf = row
        end = self.nnz + len(ids)
        if end > len(self.indices):
            size = max(end, 2 * len(self.indices))
            self.indices = np.resize(self.indices, size)
            self.data = np.resize(self.data, size)
            self.row_of = np.resize(self.row_of, size)
        if r + 2 > len(self.indptr):
            self.indptr = np.resize(self.indptr, 2 * len(self.indptr))
        self.indices[self.nnz : end] = ids
        self.data[self.nnz : end] = tf
        self.row_of[self.nnz : end] = r
        self.indptr[r + 1] = self.nnz = end

    def matrix(self):
        """The subject's term-count matrix as a SciPy CSR matrix (rows: items, columns: the vocabulary)."""
        import scipy.sparse as sp  # not on the ranking path: `cosine` sums the rows itself

        n = len(self.rows)
        return sp.csr_matrix(
            (self.data[: self.nnz], self.indices[: self.nnz], self.indptr[: n + 1]),
            shape=(n, len(self.vocab)),
            copy=False,
        )

    def _weights(self, n: int, v: int) -> tuple[np.ndarray, np.ndarray]:
        """The idf and each row's norm `||tf_i * idf||` (O(nnz), without
        materializing the weighted matrix), kept until the index changes: the probes between two
        turns (most of a long conversation's questions come at its end) share them."""
        key = (self.version, self.nnz, n, v)
        if self._weights_for[0] != key:
            idf = np.log((1.0 + n) / (1.0 + self.df[:v])) + 1.0
            sq = self.data[: self.nnz] * idf[self.indices[: self.nnz]]
            sq *= sq
            norms = np.sqrt(np.bincount(self.row_of[: self.nnz], weights=sq, minlength=n))
            self._weights_for = (key, (idf, norms))
        return self._weights_for[1]

    def cosine(self, task: str, sublinear: bool) -> np.ndarray:
        n = len(self.rows)
        if n == 0:
            return np.zeros(0)
        terms, tf = self.analyzer(task, sublinear)
        known = [(self.vocab.get(t), k) for k, t in enumerate(terms)]
        known = [(j, k) for j, k in known if j is not None]  # terms the subject never used carry no weight, as in sklearn
        if not known:
            return np.zeros(n)
        v = len(self.vocab)
        idf, norms = self._weights(n, v)
        q_ids = np.fromiter((j for j, _ in known), dtype=np.int64, count=len(known))
        q_tf = tf[[k for _, k in known]]
        q = q_tf * idf[q_ids]
        q_norm = float(np.sqrt(q @ q))
        w = np.zeros(v)
        w[q_ids] = q * idf[q_ids]
        # each row's dot product with `w`, as SciPy's CSR product computes it (from 0.0, adding the row's
        # products in its stored order) without importing SciPy (a tenth of a second of every run's
        # start): only the entries of the task's terms are added, in that order; the others' products
        # are +0.0 (counts and idf are positive), and adding +0.0 to a sum >= 0 leaves it unchanged
        indices = self.indices[: self.nnz]
        at = np.flatnonzero((w != 0)[indices])
        dots = np.bincount(self.row_of[at], weights=self.data[at] * w[indices[at]], minlength=n)
        with np.errstate(invalid="ignore", divide="ignore"):
            cos = np.where(norms > 0, dots / (norms * q_norm), 0.0)
        return cos


def tfidf_cosine(indexes: dict[str, TfidfIndex], h: SubjectHistory, task: str, analyzer, sublinear: bool) -> np.ndarray:
    """Cosine of every item of `h` to `task` under the subject's TF-IDF, from its index in `indexes`
    (kept in step with `h`; a throwaway one for a subject with no history). `analyzer` is a
    `term_counts` configuration. What `tfidf` ranks by, and the lexical half of `session_aware`."""
    ix = indexes.get(h.subject)
    if ix is None:
        ix = TfidfIndex(analyzer)
        if len(h):
            indexes[h.subject] = ix
    key = (analyzer, sublinear, ix.digest(h), task)
    cos = _COSINES.get(key)
    if cos is None:
        ix.sync(h, sublinear)
        cos = _COSINES.put(key, ix.cosine(task, sublinear))
    return cos


_COSINES = ArrayMemo()
"""The cosines `tfidf_cosine` gave, by analyzer configuration, digest of the items' texts and task:
a pure function of those (the order in which an index met its terms changes no sum), so the
idempotency replays, which ask every probe again on the same texts, and `session_aware` and
`hybrid`, which ask what `tfidf` asked, compute each once. The answer is read-only."""


class TfidfRetrieval(IndexedMemory):
    """Classic lexical retrieval: TF-IDF over the customer's turns and resolution records.

    The corpus is the subject's own items (their own text, never the rendered line), so
    one customer's vocabulary never weighs another's. Candidates are every item, ranked by
    cosine to the task (component `cosine`); those with cosine above `min_score` are
    eligible (the rest are dropped as `rank_cutoff`) and packed greedily into the budget, so
    the budget decides how much is used; an explicit `top_k` caps the eligible ones (`item_cap`). No session or time awareness: that is the point of
    this baseline.
    """

    name: ClassVar[str] = "tfidf"
    Params = TfidfParams
    capabilities: ClassVar[frozenset[str]] = frozenset()

    def __init__(self, params: TfidfParams | None = None) -> None:
        self.params = params or TfidfParams()
        p = self.params
        self._analyzer = term_counts(p.ngram_min, p.ngram_max, p.stop_words)
        super().__init__()
        self._index: dict[str, TfidfIndex] = {}

    def scores(self, h: SubjectHistory, task: str) -> np.ndarray:
        """Cosine of every item of `h` to `task` (the index brought up to date with `h` when they are
        not already known, `tfidf_cosine`)."""
        return tfidf_cosine(self._index, h, task, self._analyzer, self.params.sublinear_tf)

    def context(self, request: ContextRequest) -> Bundle:
        h = self.memory.history(request.subject)
        cos = self.scores(h, request.task)
        return pack(h, request, {"cosine": cos}, eligible=cos > self.params.min_score, cap=self.params.top_k,
                    render=self.params.render)


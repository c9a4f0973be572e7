"""tfidf equals scikit-learn without refitting; the embedding cache makes a rerun encode nothing."""

from __future__ import annotations

import multiprocessing as mp

import numpy as np
import pytest
from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer
from store_events import at, request, resolve, two_customer_history

from stores.retrieval.encoder import Encoder
from stores.text import STOPWORDS
from stores.retrieval.tfidf import TOKEN_PATTERN, TfidfRetrieval, word_ngrams

TASK = "CSV export fails with error 502 again, export"


@pytest.mark.parametrize("sublinear", [True, False])
def test_tfidf_matches_a_fresh_sklearn_fit_at_every_step(sublinear):
    s = TfidfRetrieval(TfidfRetrieval.Params(sublinear_tf=sublinear))
    events = [*two_customer_history(), resolve("a2", at(days=11), "Rotated the SAML signing certificate.", subject="acme")]
    for e in events:
        s.observe(e)
        h = s.memory.history("acme")
        if not len(h):
            continue
        got = s.scores(h, TASK)
        v = TfidfVectorizer(token_pattern=TOKEN_PATTERN, sublinear_tf=sublinear, stop_words=sorted(STOPWORDS))
        try:
            ref = (v.fit_transform(h.texts) @ v.transform([TASK]).T).toarray().ravel()
        except ValueError:  # empty vocabulary so far
            ref = np.zeros(len(h))
        np.testing.assert_allclose(got, ref, atol=1e-12)


def _suite_texts() -> list[str]:
    from harness.format.loader import load_suite
    from harness.format.model import Turn

    texts = [e.text for sc in load_suite(["datasets/canonical", "datasets/challenge"]) for e in sc.events if isinstance(e, Turn)]
    return texts + ["", "   ", "ÉCLAIR Straße İstanbul naïve café", "v2.3.1 isn't re-set_up... 502!!", "a b c d e f", "the the the"]


@pytest.mark.parametrize("ngrams", [(1, 1), (1, 2), (1, 3), (2, 2), (2, 3)])
@pytest.mark.parametrize("stop", [True, False])
def test_the_analyzer_yields_sklearns_terms_in_its_order(ngrams, stop):
    texts = _suite_texts()
    assert len(texts) > 500
    ref = CountVectorizer(lowercase=True, token_pattern=TOKEN_PATTERN, ngram_range=ngrams,
                          stop_words=sorted(STOPWORDS) if stop else None).build_analyzer()
    ours = word_ngrams(*ngrams, STOPWORDS if stop else frozenset())
    assert [ours(t) for t in texts] == [ref(t) for t in texts]


def test_tfidf_top_k_drops_as_item_cap_and_min_score_as_rank_cutoff():
    s = TfidfRetrieval(TfidfRetrieval.Params(top_k=2))
    for e in two_customer_history():
        s.observe(e)
    b = s.context(request("a3", TASK, at(days=11), budget=10_000))
    assert len(b.included) == 2
    dropped = [c for c in b.candidates if not c.included]
    assert {c.reason for c in dropped if c.score > 0} == {"item_cap"}
    assert {c.reason for c in dropped if c.score <= 0} == {"rank_cutoff"}
    assert b.stop == "cap"


def test_tfidf_has_no_item_cap_by_default_so_the_budget_decides():
    s = TfidfRetrieval()
    assert s.params.top_k is None
    for e in two_customer_history():
        s.observe(e)
    big = s.context(request("a3", TASK, at(days=11), budget=10_000))
    relevant = [c for c in big.candidates if c.score > 0]
    assert len(relevant) > 2 and all(c.included for c in relevant)
    assert big.stop == "exhausted"
    # a budget that holds only part of the relevant items stops on the budget, not on a count
    small = s.context(request("a3", TASK, at(days=11), budget=big.tokens - 1))
    assert small.stop == "budget" and 0 < len(small.included) < len(relevant)
    assert small.budget_used(big.tokens - 1) <= 1.0


TEXTS = ["printer tray jammed", "invoice export fails", "login loops", "printer tray jammed"]


def test_second_encoder_on_the_same_cache_encodes_nothing(tmp_path):
    first = Encoder(cache_dir=tmp_path)
    a = first.encode(TEXTS)
    assert first.encoded == 3  # duplicates are encoded once
    second = Encoder(cache_dir=tmp_path)
    b = second.encode(TEXTS)
    assert second.encoded == 0
    np.testing.assert_array_equal(a, b)
    assert np.allclose(np.linalg.norm(a, axis=1), 1.0, atol=1e-5)


def _encode_in_child(path, texts, q):
    e = Encoder(cache_dir=path)
    e.encode(texts)
    q.put(e.encoded)


@pytest.mark.slow  # two fresh processes each load torch and the model
def test_two_processes_writing_at_once_leave_a_complete_cache(tmp_path):
    ctx = mp.get_context("spawn")  # fork after torch has started its threads can deadlock
    q = ctx.Queue()
    procs = [ctx.Process(target=_encode_in_child, args=(tmp_path, [f"{w} number {i}" for i in range(40)], q)) for w in ("alpha", "beta")]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    assert sorted(q.get() for _ in procs) == [40, 40]
    assert not list(tmp_path.rglob(".tmp-*"))
    reader = Encoder(cache_dir=tmp_path)
    reader.encode([f"{w} number {i}" for w in ("alpha", "beta") for i in range(40)])
    assert reader.encoded == 0


def test_compaction_keeps_every_vector(tmp_path):
    e = Encoder(cache_dir=tmp_path)
    for t in TEXTS[:3]:
        e.encode([t])
    assert len(list(e.dir.glob("part-*.npz"))) == 3
    e.compact()
    assert len(list(e.dir.glob("part-*.npz"))) == 1
    fresh = Encoder(cache_dir=tmp_path)
    fresh.encode(TEXTS)
    assert fresh.encoded == 0


def test_a_digest_ending_in_a_nul_byte_survives_the_round_trip(tmp_path):
    from stores.retrieval.encoder import text_key

    text = next(f"text {i}" for i in range(10_000) if text_key(f"text {i}").endswith(b"\0"))
    Encoder(cache_dir=tmp_path).encode([text])
    again = Encoder(cache_dir=tmp_path)
    again.encode([text])
    assert again.encoded == 0


def test_a_vector_does_not_depend_on_what_it_was_batched_with(tmp_path):
    texts = ["ok", "CSV export fails with error 502 again after the update", "refund please"]
    together = Encoder(cache_dir=tmp_path / "a").encode(texts)
    alone = np.stack([Encoder(cache_dir=tmp_path / f"b{i}").encode([t])[0] for i, t in enumerate(texts)])
    assert (together == alone).all()


def test_embedding_cosines_are_remembered_by_text_and_redone_when_a_text_changes(tmp_path, monkeypatch):
    from store_events import at, resolve, turn

    from stores.memory import MemoryStore
    from stores.retrieval.embedding import VectorIndex

    monkeypatch.setenv("SUPPORTBENCH_CACHE", str(tmp_path))
    events = [turn("a#1", "a", "customer", "The printer tray is jammed again", at(0)),
              turn("a#2", "a", "agent", "Pulled the tray and reseated the roller", at(1)),
              resolve("a", at(5), "Roller reseated")]
    store = MemoryStore()
    for e in events:
        store.observe(e)
    h = store.history("acme")
    first, second = VectorIndex("all-MiniLM-L6-v2"), VectorIndex("all-MiniLM-L6-v2")
    a = first.cosine(h, "printer jammed")
    assert second.cosine(h, "printer jammed") is a and not a.flags.writeable  # same texts, same task: remembered
    assert first.cosine(h, "invoice export") is not a
    store.observe(resolve("a", at(6), "Replaced the tray sensor"))  # a text replaced in place
    b = first.cosine(h, "printer jammed")
    fresh = VectorIndex("all-MiniLM-L6-v2").cosine(h, "printer jammed")
    assert b is fresh and b.tolist() != a.tolist() and b[:2].tolist() == a[:2].tolist()


def test_an_array_memo_keeps_at_most_its_limit_the_oldest_forgotten_first():
    from stores.cache import ArrayMemo

    memo = ArrayMemo(limit=10)
    a = memo.put("a", np.zeros(4))
    assert memo.get("a") is a and not a.flags.writeable
    memo.put("b", np.ones(4))
    memo.put("c", np.full(4, 2.0))  # 12 > 10: "a" goes
    assert memo.get("a") is None and memo.get("b") is not None and memo.get("c") is not None and memo.size == 8
    big = memo.put("big", np.zeros(11))  # larger than the whole memo: returned, not kept
    assert memo.get("big") is None and not big.flags.writeable and memo.size == 8


def test_tfidf_cosines_are_remembered_by_text_and_equal_those_of_a_fresh_index(monkeypatch):
    """The cosines are kept by a digest of the items' texts and the task (`tfidf._COSINES`): an
    instance asked what another asked on the same texts gets the same read-only array, a text
    replaced in place is asked afresh, and an index that met a replaced text's old words gives the
    very bits an index built on the final texts gives (the memo's key is all the answer depends on)."""
    import stores.retrieval.tfidf as tfidf
    from stores.cache import ArrayMemo

    events = [*two_customer_history(), resolve("a2", at(days=11), "Rotated the SAML signing certificate.", subject="acme"),
              resolve("a2", at(days=12), "Reissued the SAML certificate and the CSV export token.", subject="acme")]
    for sublinear in (True, False):
        monkeypatch.setattr(tfidf, "_COSINES", ArrayMemo())
        stepped = TfidfRetrieval(TfidfRetrieval.Params(sublinear_tf=sublinear))
        for e in events:  # asked at every step: its index meets the first summary's words, then the second
            stepped.observe(e)
            before = stepped.scores(stepped.memory.history("acme"), TASK)
        h = stepped.memory.history("acme")
        assert h.replaced, "the second resolution replaces the first in place"
        monkeypatch.setattr(tfidf, "_COSINES", ArrayMemo())  # nothing remembered: both computed
        kept = stepped.scores(h, TASK)
        once = TfidfRetrieval(TfidfRetrieval.Params(sublinear_tf=sublinear))
        for e in events:
            once.observe(e)
        monkeypatch.setattr(tfidf, "_COSINES", ArrayMemo())
        fresh = once.scores(once.memory.history("acme"), TASK)
        assert kept.tobytes() == fresh.tobytes() and kept.tobytes() == before.tobytes()
        again = once.scores(once.memory.history("acme"), TASK)
        assert again is fresh and not again.flags.writeable  # same texts, same task: remembered
        assert once.scores(once.memory.history("acme"), "invoice refund") is not fresh
        once.observe(resolve("a2", at(days=13), "Replaced the SSO certificate.", subject="acme"))
        changed = once.scores(once.memory.history("acme"), TASK)
        assert changed is not fresh and changed.tobytes() != fresh.tobytes()


def test_chain_digest_extends_redoes_and_separates_histories():
    from stores.cache import chain_digest

    chain: list[bytes] = []
    texts = ["printer offline", "tried a restart", "still offline"]
    assert chain_digest(chain, texts, 0) == b""
    two = chain_digest(chain, texts, 2)
    three = chain_digest(chain, texts, 3)
    assert len(chain) == 3 and two == chain[1] and three == chain[2]
    assert chain_digest([], texts, 3) == three  # extending step by step is computing at once
    texts[1] = "tried a reinstall"
    del chain[1:]  # what a caller does when text 1 is replaced
    assert chain_digest(chain, texts, 3) == chain_digest([], texts, 3) != three
    # each link hashes a fixed-size key of its text: joined or split texts are other histories,
    # and a lone surrogate (JSON may escape one) is digested, not refused
    assert len({chain_digest([], t, len(t)) for t in (["ab"], ["a", "b"], ["a", "", "b"], ["\ud800"])}) == 4

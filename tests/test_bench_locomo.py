"""bench/locomo_retrieval.py: the evidence recall it reports is the share of each probe's `include`
gold among the included items, and recall@k among the first k of the ranking; the plain BM25 loop
ranks by rank_bm25's own scores and packs like every strategy."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import bench_module, probe, scenario, turn

from stores.registry import parse_spec


@pytest.fixture(scope="module")
def bench():
    return bench_module("locomo_retrieval")


def story():
    return scenario([
        turn("a", "We adopted a puppy called Biscuit last spring.", 0, session="s1"),
        turn("b", "The weather was lovely at the lake that weekend.", 5, session="s1", role="agent"),
        turn("c", "Biscuit learned to sit and fetch in two weeks.", 60 * 24, session="s2"),
        turn("d", "I started a pottery class on Tuesdays.", 60 * 24 + 5, session="s2", role="agent"),
        probe("q1", "What is the puppy called?", 60 * 48, session="q", include=("a", "c")),
        probe("q2", "Which class started on Tuesdays?", 60 * 48 + 1, session="q", include=("d",)),
    ], id="bench-story")


def test_recall_is_the_share_of_the_gold_in_the_context_and_among_the_first_k(bench):
    from harness.replay.probes import request_for
    from stores.memory import MemoryStore
    from stores.packing import header_for
    from stores.tokens import count_tokens

    s = story()
    m = MemoryStore()
    for ev in s.events[:4]:
        m.observe(ev)
    lines = sorted(count_tokens(x) for x in m.history(s.events[0].subject).lines)
    one = max(count_tokens(header_for(request_for(p))) for p in s.probes) + lines[-1]
    assert one < min(count_tokens(header_for(request_for(p))) for p in s.probes) + lines[0] + lines[1]
    # a budget that holds the header and one line: each probe keeps its best match only
    tiny = bench.evaluate(parse_spec("tfidf").build, [s], [one])
    # q1: one of its two gold turns fits (0.5); q2: its one gold turn is the best match (1.0)
    assert tiny["probes"] == 2 and tiny["recall"][one] == pytest.approx((0.5 + 1.0) / 2)
    assert tiny["at_k"][5] == pytest.approx(1.0)  # every gold turn is in the top 5 of 4 items
    # with room for everything: tfidf still leaves out c, which shares no word with q1 (cosine 0,
    # a rank cutoff), while session_aware packs every item
    assert bench.evaluate(parse_spec("tfidf").build, [story()], [2000])["recall"][2000] == pytest.approx(0.75)
    assert bench.evaluate(parse_spec("session_aware").build, [story()], [2000])["recall"][2000] == pytest.approx(1.0)


def test_the_plain_bm25_loop_ranks_by_rank_bm25(bench):
    from rank_bm25 import BM25Okapi

    from harness.format.model import Probe
    from harness.replay.probes import request_for

    s, plain = story(), bench.PlainBM25()
    for ev in s.events:
        if isinstance(ev, Probe):
            bundle = plain.context(request_for(ev))
            texts = plain.memory.history(ev.subject).texts
            want = BM25Okapi([bench.tokens(t) for t in texts]).get_scores(bench.tokens(ev.task))
            got = {c.item_id: c.score for c in bundle.candidates}
            ids = plain.memory.history(ev.subject).ids
            assert np.allclose([got[i] for i in ids], want)
        else:
            plain.observe(ev)

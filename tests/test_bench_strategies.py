"""bench/strategies.py's peers: the per-probe recomputation of the published arithmetic is the peer of
`session_aware[published]`, and gives its scores exactly (the bench prints `same output yes` only then)."""

from __future__ import annotations

import numpy as np

from bench.strategies import probe_stream, published_session_scores, synth_events
from stores.packing import total_score
from stores.session.session_aware import PUBLISHED, SessionAware


def _scores_both_ways(s: SessionAware, turns: int = 300, probes: int = 5) -> list[tuple[np.ndarray, np.ndarray]]:
    events = synth_events(turns)
    for e in events:
        s.observe(e)
    out = []
    for new, req in probe_stream(events, probes, turns + 2):
        s.observe(new)
        h = s.memory.history(req.subject)
        out.append((total_score(s._components(h, req)[0], len(h)), published_session_scores(s, h, req)))
    return out


def test_the_published_recomputation_equals_the_published_variant_score_for_score():
    pairs = _scores_both_ways(SessionAware(SessionAware.Params(**PUBLISHED)))
    assert pairs and all(len(ours) > 300 for ours, _ in pairs)
    for ours, peer in pairs:
        assert np.array_equal(ours, peer)


def test_the_default_ranks_by_other_components_so_it_is_not_the_peers_match():
    """Why the bench holds the peer to the variant: against the default the scores differ."""
    assert any(not np.array_equal(ours, peer) for ours, peer in _scores_both_ways(SessionAware()))

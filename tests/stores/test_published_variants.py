"""`session_aware[published]` and `hybrid[published]` keep the published arithmetic exactly: their
tables on the canonical suite equal the ones `session_aware` and `hybrid` wrote before the default
ranking changed (recorded in tests/data/published_canonical.json as one digest per probe, of the
candidates in rank order with their scores and components, the context and the handoff brief).
A change anywhere in the published path names the probe that moved. The criteria's verdicts and
the reply engine's wording are left out: they are other code (a new criterion, a changed reading
of the words), judged by their own tests, not the published arithmetic.

`hybrid`'s scores come from sentence vectors, and a vector's last bits depend on the encoder's path
(`stores.retrieval.encoder.batch_independent`): batched where MKL's strict numerics take, one text per call
where they do not. The digests above were recorded on a batched machine; on a machine of the other kind the
tables are held to tests/data/published_canonical_single.json, recorded on such a machine (twelfth round, at
the tree whose batched-path test had passed), where `session_aware`'s digests (no vectors) equal the batched
record's and 41 of `hybrid`'s 66 probes differ. That second record holds the published path steady on such a
machine; it does not prove the two kinds of machine rank alike to the last bit.

To record the digests again (only when the published arithmetic itself is meant to change):
`python tests/stores/test_published_variants.py RUN` with a canonical run of the two variants, on each kind of
machine (it writes the record of the machine's kind).
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RECORDED = ROOT / "tests" / "data" / "published_canonical.json"
RECORDED_SINGLE = ROOT / "tests" / "data" / "published_canonical_single.json"
PAIRS = {"session_aware[published]": "session_aware", "hybrid[published]": "hybrid"}
"""Variant label -> the label its recorded tables were written under."""


def record_for_this_machine() -> Path:
    """The record of this machine's encoder path: batched (strict numerics) or one text per call."""
    from stores.retrieval.encoder import batch_independent

    return RECORDED if batch_independent() else RECORDED_SINGLE


def digests(run: Path, label: str) -> dict[str, str]:
    """`scenario/probe` -> sha256 of what `label` did at the probe, strategy label left out."""
    from harness.analysis.results import Results

    with Results(run) as res:
        cands = res.rows("""SELECT scenario, probe_id, rank, item_id, score, components, included, reason, tokens
                            FROM candidates WHERE strategy = ? ORDER BY scenario, probe_id, rank""", [label])
        probes = res.rows("""SELECT scenario, probe_id, tokens, n_candidates, n_included, context, handoff
                             FROM probes WHERE strategy = ? ORDER BY scenario, probe_id""", [label])
    parts: dict[str, list] = {}
    for rows in (cands, probes):
        for r in rows:
            parts.setdefault(f"{r[0]}/{r[1]}", []).append([repr(x) for x in r[2:]])
    return {k: hashlib.sha256(json.dumps(v).encode()).hexdigest() for k, v in sorted(parts.items())}


@pytest.mark.slow
def test_the_published_variants_write_the_tables_of_the_published_arithmetic(tmp_path):
    from harness.format.loader import load_suite
    from harness.run.runner import execute
    from stores.registry import parse_specs

    recorded = json.loads(record_for_this_machine().read_text())
    run = execute(load_suite(ROOT / "datasets" / "canonical"), parse_specs(",".join(PAIRS)), tmp_path, run_id="published")
    for label, old in PAIRS.items():
        got, want = digests(run.path, label), recorded[old]
        assert got.keys() == want.keys()
        moved = [k for k in want if got[k] != want[k]]
        assert not moved, (f"{label} differs from the recorded {old} tables ({record_for_this_machine().name}) at "
                           f"{len(moved)} probes, e.g. {moved[:3]}")


def test_the_two_records_differ_only_where_vectors_score():
    """The session-aware arithmetic reads no vector: its digests are the same in both records."""
    batched, single = json.loads(RECORDED.read_text()), json.loads(RECORDED_SINGLE.read_text())
    assert batched["session_aware"] == single["session_aware"]
    assert batched["hybrid"].keys() == single["hybrid"].keys()


def test_the_published_preset_is_the_reference_table_and_the_default_is_not():
    from stores.registry import parse_spec

    published = parse_spec("session_aware[published]").params()
    assert (published.relevance, published.recency, published.boost_cap, published.step_order) == ("overlap", "minmax", None, 0.0)
    assert (published.active_session, published.open_issue, published.resolved_session, published.repeat_issue,
            published.repeat_issue_with_summary, published.action_step, published.urgency, published.idle_chatter,
            published.recency_max, published.overlap_max) == (6.0, 4.0, -5.0, 4.0, 6.0, 2.0, 2.0, -2.0, 5.0, 5.0)
    assert parse_spec("hybrid[published]").params().relevance == "semantic"
    # overrides apply on top of the preset; the default is the relevance-first ranking
    assert parse_spec("session_aware[published]:repeat_threshold=0.2").params().recency == "minmax"
    assert parse_spec("session_aware").params().relevance == "tfidf" and parse_spec("hybrid").params().relevance == "rrf"


if __name__ == "__main__":  # record: python tests/stores/test_published_variants.py RUN (labels session_aware, hybrid)
    run = Path(sys.argv[1])
    record_for_this_machine().write_text(json.dumps({old: digests(run, old) for old in PAIRS.values()}, indent=1,
                                                    sort_keys=True) + "\n")

"""recall@k and nDCG@10: ranks over every candidate, a gold item never among them a miss, the
group kept out of the shared total, and a run's scores broken down by probe tag."""

from __future__ import annotations

import json
import math

import pytest
from test_criteria import cand, judge, outcome, story

from harness.analysis.aggregate import shared_criteria
from harness.criteria import registry, score_probe
from harness.criteria.groups import GROUPS
from harness.format.model import TextNeedle


def ranked(*ids, included=()):
    return [cand(i, included=i in included) for i in ids]


def test_recall_at_k_counts_ranks_among_all_candidates_included_or_not():
    sc = story(include=["exp-1", "exp-fix"])
    fillers = [f"f{i}" for i in range(8)]
    # exp-1 ranked 2, exp-fix ranked 9; nothing is included (a zero budget), the ranks still count
    o = outcome(sc, ranked("f0", "exp-1", *fillers[1:], "exp-fix"))
    r5, r10 = judge("recall_at_5", o), judge("recall_at_10", o)
    assert r5.value == 0.5 and not r5.passed and r5.evidence == ("exp-fix",)
    assert "exp-1 at rank 2" in r5.explanation and "exp-fix at rank 10" in r5.explanation
    assert r10.value == 1.0 and r10.passed
    assert judge("recall", o).value == 0.0  # at the budget, nothing was in the context


def test_a_gold_item_not_among_the_candidates_is_a_miss_at_every_k():
    sc = story(include=["exp-1", "bill-1"])
    o = outcome(sc, ranked("exp-1"))
    for k in (5, 10, 25):
        s = judge(f"recall_at_{k}", o)
        assert s.value == 0.5 and s.status == "fail" and s.evidence == ("bill-1",)
        assert "bill-1 not among the candidates" in s.explanation
    assert judge("ndcg_at_10", o).value == pytest.approx(1 / (1 + 1 / math.log2(3)))


def test_ndcg_components_sum_and_the_ideal_caps_at_ten():
    sc = story(include=["exp-1", "exp-fix"])
    o = outcome(sc, ranked("f0", "exp-1", "f1", "exp-fix"))
    s = judge("ndcg_at_10", o)
    dcg = 1 / math.log2(3) + 1 / math.log2(5)
    ideal = 1 + 1 / math.log2(3)
    assert s.value == pytest.approx(dcg / ideal)
    assert f"exp-1 {1 / math.log2(3):.3f} + exp-fix {1 / math.log2(5):.3f} = {dcg:.3f} of an ideal {ideal:.3f}" in s.explanation
    perfect = judge("ndcg_at_10", outcome(sc, ranked("exp-fix", "exp-1")))
    assert perfect.value == pytest.approx(1.0) and perfect.passed
    assert judge("ndcg_at_10", outcome(sc, ranked(*[f"f{i}" for i in range(10)], "exp-1", "exp-fix"))).value == 0.0


def test_a_text_needle_is_found_in_a_candidates_text():
    sc = story(include=[TextNeedle("monthly files")])
    o = outcome(sc, ranked("f0", "exp-fix"))
    s = judge("recall_at_5", o)
    assert s.value == 1.0 and 'text "monthly files" at rank 2' in s.explanation
    assert isinstance(sc.probes[0].expect.include[0], TextNeedle)


def test_rank_criteria_apply_with_include_only_and_stay_out_of_the_shared_total():
    crit = registry()
    assert [k for k, c in crit.items() if c.group == "rank"] == ["recall_at_5", "recall_at_10", "recall_at_25", "ndcg_at_10"]
    assert not GROUPS["rank"].shared and GROUPS["rank"].total is None
    assert not any(s.criterion.startswith(("recall_at", "ndcg")) for s in score_probe(outcome(story(), ranked("exp-1"))))
    import pandas as pd
    df = pd.DataFrame([{"strategy": "a", "criterion": c, "grp": g, "n": 3, "unsupported": 0}
                       for c, g in (("recall", "extra"), ("recall_at_5", "rank"))])
    assert shared_criteria(df) == ["recall"]


def test_report_breaks_a_run_down_by_probe_tag(tmp_path, capsys):
    from harness.cli import main

    suite = tmp_path / "s.yaml"
    suite.write_text(
        "id: tagged\nversion: 1\ntitle: t\nstart: 2026-01-01T00:00:00Z\nsubjects: {c: {}}\nevents:\n"
        "  - turn: my router drops wifi every evening\n    subject: c\n    session: s1\n    id: t1\n"
        "  - turn: the invoice shows a double charge\n    id: t2\n"
        "  - probe: p1\n    session: s2\n    at: +1d\n    task: wifi router evening drops\n    tags: [wifi]\n"
        "    expect: {include: [t1]}\n"
        "  - probe: p2\n    task: double charge on invoice\n    tags: [billing, money]\n    expect: {include: [t2]}\n")
    runs = tmp_path / "runs"
    assert main(["run", str(suite), "--strategies", "tfidf", "--out", str(runs), "--run-id", "r", "--quiet"]) == 0
    capsys.readouterr()
    assert main(["report", str(runs / "r"), "--by-tag", "--format", "json"]) == 0
    obj = json.loads(capsys.readouterr().out)
    assert list(obj["by_tag"]) == ["billing", "money", "wifi"]
    assert {t: v["probes"] for t, v in obj["by_tag"].items()} == {"billing": 1, "money": 1, "wifi": 1}
    assert obj["by_tag"]["wifi"]["strategies"]["tfidf"]["recall_at_5"]["n"] == 1
    assert obj["strategies"]["tfidf"]["recall_at_5"]["n"] == 2
    assert main(["report", str(runs / "r"), "--by-tag", "--format", "md"]) == 0
    md = capsys.readouterr().out
    assert "## By probe tag" in md and "### `wifi` (1 probes)" in md
    assert main(["report", str(runs / "r")]) == 0 and "probes tagged" not in capsys.readouterr().out


@pytest.mark.parametrize("strategy", ["tfidf", "session_aware", "history_stuffing"])
def test_a_column_wise_bundle_scores_as_the_same_candidates_listed_one_by_one(strategy):
    """The criteria read a packed bundle's rows column-wise (`harness.criteria.bundle.Rows`: rows made
    as they are read, a gold id's rank found by id); the same candidates as a plain list of
    `Candidate`s take the general path. Every score must be the same, on every probe of the suite."""
    from dataclasses import replace
    from pathlib import Path

    from harness.format.loader import load_suite
    from harness.replay.probes import replay
    from stores.packing import CandidateTable
    from stores.protocol import Bundle
    from stores.registry import parse_spec

    root = Path(__file__).resolve().parents[2] / "datasets" / "canonical"
    compared = 0
    for sc in load_suite([root]):
        for o in replay(sc, parse_spec(strategy).build(), answer=False).outcomes:
            if o.bundle is None or not isinstance(o.bundle.candidates, CandidateTable):
                continue
            listed = replace(o, bundle=Bundle(candidates=list(o.bundle.candidates), text=o.bundle.text, tokens=o.bundle.tokens))
            assert score_probe(o) == score_probe(listed), (sc.id, o.probe.id)
            compared += 1
    assert compared > 30

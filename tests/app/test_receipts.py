"""Shortened receipts (docs/run-format.md): a long pool's candidate rows keep the top of the ranking,
every included, gold, evidence and foreign item with its true rank, and count the rest; the scores
are those of the complete receipt, and the Rankings page says the receipt is shortened."""

from __future__ import annotations

import json

import duckdb
import pytest
from fixture_runs import long_history
from test_pages import no_exception, open_page, texts

from harness.run import tables
from harness.run.runner import execute
from stores.registry import parse_specs

TOP = 3


def table(run, name):
    return duckdb.sql(f"select * from read_parquet('{run}/{name}/*.parquet')").df()


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("receipts")
    specs = parse_specs("tfidf,session_aware")
    full = execute([long_history()], specs, root, run_id="20990101-000000-full").path
    with pytest.MonkeyPatch.context() as mp:  # the fixture's pool (~43 items) counts as long here
        mp.setattr(tables, "RECEIPT_LONG", 10)
        mp.setattr(tables, "RECEIPT_TOP", TOP)
        short = execute([long_history()], specs, root, run_id="20990101-000000-short").path
    return full, short


def test_a_long_pool_keeps_the_top_the_included_and_the_gold_with_true_ranks_and_counts_the_rest(runs):
    full, short = runs
    a, b = table(full, "candidates"), table(short, "candidates")
    probes = table(short, "probes").set_index(["strategy", "probe_id"])
    assert len(b) < len(a)
    for (strat, probe), kept in b.groupby(["strategy", "probe_id"]):
        whole = a[(a.strategy == strat) & (a.probe_id == probe)]
        # every kept row is the complete receipt's row at the same rank
        merged = kept.merge(whole, on=["rank", "item_id", "score", "components", "included", "reason"], how="left", indicator=True)
        assert (merged["_merge"] == "both").all()
        ids = set(kept["item_id"])
        assert set(whole[whole["included"]]["item_id"]) <= ids
        assert set(whole[whole["rank"] <= TOP]["item_id"]) <= ids
        assert {"h-live", "w5#resolution", "h-0"} & set(whole["item_id"]) <= ids  # the probe's gold
        row = probes.loc[(strat, probe)]
        assert row["left_out"] == len(whole) - len(kept) == row["n_candidates"] - len(kept) > 0
        assert sum(json.loads(row["left_out_reasons"]).values()) == row["left_out"]
    assert (table(full, "probes")["left_out"] == 0).all()


def test_the_scores_of_a_shortened_receipt_are_those_of_the_complete_one(runs):
    full, short = runs
    cols = ["strategy", "probe_id", "criterion", "value", "status", "explanation", "evidence"]
    a = table(full, "scores")[cols].sort_values(cols[:3]).reset_index(drop=True)
    b = table(short, "scores")[cols].sort_values(cols[:3]).reset_index(drop=True)
    assert a.astype(str).equals(b.astype(str))


def test_the_rankings_page_reads_a_shortened_receipt_and_says_so(runs, monkeypatch):
    full, short = runs
    monkeypatch.setenv("SUPPORTBENCH_RUNS", str(short.parent))
    pages = {}
    for run in (full, short):
        at = open_page("rankings", run=run.name, scenario="long-history", probe="p-long", strategies=["session_aware"])
        no_exception(at)
        pages[run] = texts(at)
    assert "Shortened receipt:" in pages[short] and "Shortened receipt:" not in pages[full]
    # the gold check reads the same verdicts off the shortened receipt
    gold = [line for line in pages[full].splitlines() if line.startswith("gold:")]
    assert gold and gold == [line for line in pages[short].splitlines() if line.startswith("gold:")]


def test_a_rescore_of_a_shortened_receipt_gives_the_scores_of_the_complete_one(runs, tmp_path):
    from harness.analysis.rescore import rescore

    full, short = runs
    again = rescore(short, tmp_path, run_id="20990101-000000-rescored")
    cols = ["strategy", "probe_id", "criterion", "value", "status", "explanation", "evidence"]
    a = table(full, "scores")[cols].sort_values(cols[:3]).reset_index(drop=True)
    b = table(again, "scores")[cols].sort_values(cols[:3]).reset_index(drop=True)
    assert a.astype(str).equals(b.astype(str))

"""The read side behind the app's pages (`harness.analysis`): the failure list over every case,
candidate statuses from the bundle, two contexts diffed, the per-scenario table, distributions
and the runs of one suite."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from helpers import outage_story, probe, resolve, scenario, turn

from harness.analysis import failures
from harness.analysis.contexts import BOTH, NEITHER, ONLY_A, ONLY_B, item_diff, line_diff
from harness.analysis.queries import (BUDGET, CUTOFF, EXPIRED, INCLUDED, Filter, candidates, scenario_count, scenario_table)
from harness.analysis.results import Results
from harness.analysis.trends import NO_VERDICT, case_histogram, content_digest, same_suite
from harness.run.runner import execute
from stores.registry import parse_specs


def tight_history():
    """Eight long turns and a small budget: packing drops some for budget and keeps smaller ones below them."""
    events = [turn(f"t-{i}", ("long " * (30 if i % 2 else 3)) + f"turn {i} about exports", i * 10, session="s1") for i in range(8)]
    events += [resolve("s1", "Exports fixed.", 100), turn("n-1", "Exports broken again", 2000, session="s2"),
               probe("p1", "exports broken", 2001, session="s2", include=("n-1", "s1#resolution"), budget=90,
                     health="watch")]
    return scenario(events, id="tight")


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    path = execute([outage_story(), tight_history()], parse_specs("history_stuffing,session_aware,empty,oracle"),
                   tmp_path_factory.mktemp("runs"), run_id="r").path
    with Results(path) as res:
        yield res


def test_the_failure_list_is_ordered_over_every_case_before_it_is_paged(run):
    every = failures.page(run, Filter(), limit=10_000, order="scenario")
    assert failures.count(run) == len(every) > 4
    pages = pd.concat([failures.page(run, Filter(), limit=3, offset=k, order="scenario") for k in range(0, len(every), 3)])
    assert list(pages["scenario"]) == sorted(every["scenario"]) and pages.reset_index(drop=True).equals(every)


def test_failure_groups_sum_to_the_count_and_controls_can_be_left_out(run):
    groups = failures.groups(run, "strategy")
    assert groups["cases"].sum() == failures.count(run) and list(groups["cases"]) == sorted(groups["cases"], reverse=True)
    assert failures.group_count(run, "strategy") == len(groups)
    without = failures.groups(run, "strategy", Filter(include_controls=False))
    assert "empty" in set(groups["group"]) and not {"empty", "oracle"} & set(without["group"])
    with pytest.raises(ValueError, match="cannot group by 'tags'"):
        failures.groups(run, "tags")


@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_the_export_writes_every_selected_case_in_order(run, tmp_path, fmt):
    path = tmp_path / f"out.{fmt}"
    n = failures.export(run, path, fmt, order="value")
    rows = (pd.read_csv(path) if fmt == "csv" else pd.DataFrame(json.loads(path.read_text())))
    assert n == len(rows) == failures.count(run)
    assert list(rows.columns) == list(failures.COLUMNS)
    expect = failures.page(run, limit=10_000, order="value")
    assert list(rows["strategy"]) == list(expect["strategy"]) and list(rows["criterion"]) == list(expect["criterion"])


def test_candidate_status_comes_from_the_bundles_flag_and_reason(run):
    c = candidates(run, "history_stuffing", "tight", "p1")
    assert set(c["status"]) >= {INCLUDED, BUDGET}
    assert (c["status"] == INCLUDED).eq(c["included"]).all()
    assert (c.loc[c["reason"] == "budget", "status"] == BUDGET).all()
    # greedy packing: an item dropped for budget sits above an included one, so no single line can mark the cut
    first_drop = c.index[c["status"] == BUDGET][0]
    assert (c.loc[first_drop:, "status"] == INCLUDED).any()
    assert c["used_tokens"].iloc[-1] == c.loc[c["included"], "tokens"].sum()


def test_expired_and_cutoff_reasons_have_their_own_status(run):
    import duckdb

    from harness.analysis.queries import STATUS_SQL

    rows = duckdb.sql(f"""SELECT {STATUS_SQL} AS status FROM (VALUES (true, ''), (false, 'budget'), (false, 'rank_cutoff'),
                          (false, 'expired: sentiment older than 7 days, said 2026-03-04'), (false, 'superseded by p-2 on 2026-06-02'),
                          (false, 'not stored: sentiment (never stored)'), (false, 'duplicate')) t(included, reason)""").fetchall()
    assert [r[0] for r in rows] == [INCLUDED, BUDGET, CUTOFF, EXPIRED, EXPIRED, EXPIRED, "dropped"]


def test_two_contexts_are_diffed_item_by_item_and_line_by_line(run):
    a = candidates(run, "oracle", "tight", "p1")
    b = candidates(run, "empty", "tight", "p1")
    d = item_diff(a, b, {"n-1": "◆ gold"})
    assert set(d["where"]) <= {ONLY_A, NEITHER} and (d["where"] == ONLY_A).any() and not (d["where"] == ONLY_B).any()
    assert d.loc[d["item_id"] == "n-1", "gold"].iloc[0] == "◆ gold"
    same = item_diff(a, a)
    assert set(same["where"]) <= {BOTH, NEITHER}
    assert line_diff("x\ny\nz", "x\nz\nw") == [("same", "x", "x"), ("only A", "y", ""), ("same", "z", "z"), ("only B", "", "w")]


def test_the_scenario_table_pages_every_scenario_in_sql_order(run):
    f = Filter()
    assert scenario_count(run, f) == 2
    by_name = scenario_table(run, f, "name")
    assert list(by_name["scenario"]) == ["outage", "tight"]
    assert {"oracle", "empty", "history_stuffing"} <= set(by_name.columns)
    assert (by_name["spread"] >= 0).all() and (by_name[["oracle", "empty"]].max(axis=1) - by_name[["oracle", "empty"]].min(axis=1)
                                               <= by_name["spread"] + 1e-12).all()
    assert list(scenario_table(run, f, "name", limit=1, offset=1)["scenario"]) == ["tight"]


def test_a_case_histogram_has_every_bin_and_keeps_no_verdict_apart(run):
    h = case_histogram(run, "health", Filter())
    per = h.groupby("strategy")
    assert (per.size() == 11).all()  # ten value bins and the no-verdict one, even when empty
    hs = h[h["strategy"] == "history_stuffing"].set_index("bin")
    assert hs.loc[NO_VERDICT, "share"] == 1.0  # history stuffing reports no health: every case unsupported
    assert abs(per["share"].sum().dropna() - 1).max() < 1e-9


def test_same_suite_runs_are_listed_oldest_first_with_edited_ones_marked():
    m = {
        "new": {"started": "2026-03", "datasets": [{"suite": "s", "hash": "b"}]},
        "old": {"started": "2026-01", "datasets": [{"suite": "s", "hash": "a"}]},
        "mid": {"started": "2026-02", "datasets": [{"suite": "s", "hash": "b"}]},
        "else": {"started": "2026-02", "datasets": [{"suite": "t", "hash": "b"}]},
    }
    assert same_suite(m, "new") == [("old", False), ("mid", True), ("new", True)]


@pytest.mark.parametrize("f", [Filter(), Filter(include_controls=True), Filter(scenarios=("tight",))],
                         ids=["default", "controls", "one-scenario"])
def test_a_trends_total_is_the_leaderboards_shared_total_without_its_intervals(run, f):
    """The trend reads `shared_totals` (the aggregate without its bootstrap): the same figure, to the
    last bit, as the Leaderboard's headline for the run under the same filters."""
    from harness.analysis.queries import leaderboard, shared_totals

    board = leaderboard(run, f)[1].set_index("strategy")["shared"]
    trend = shared_totals(run, f)
    assert list(trend["run"].unique()) == ["r"]
    got = trend.set_index("strategy")["shared"]
    assert sorted(got.index) == sorted(board.index)
    assert got.reindex(board.index).equals(board), pd.concat([board, got], axis=1)


def test_the_aggregate_without_intervals_has_the_same_point_figures(run):
    from harness.analysis.aggregate import aggregate

    full, bare = aggregate(run, include_controls=True), aggregate(run, include_controls=True, intervals=False)
    points = ["strategy", "criterion", "grp", "mean", "n", "pass_rate", "unsupported", "errors"]
    pd.testing.assert_frame_equal(full[points], bare[points])
    assert bare[["lo", "hi", "pass_lo", "pass_hi"]].isna().all().all()
    assert full["lo"].notna().any()


def test_a_runs_content_digest_changes_with_its_parts_not_with_its_name():
    m = {"checksums": {"scores/part-0.parquet": "a" * 64}, "started": "2026-03-01T00:00:00", "name": "x"}
    assert content_digest(m) == content_digest({**m, "name": "renamed"})
    assert content_digest(m) != content_digest({**m, "checksums": {"scores/part-0.parquet": "b" * 64}})
    assert content_digest(m) != content_digest({**m, "started": "2026-03-02T00:00:00"})  # the same id written again


def test_the_board_says_when_a_shortcut_control_matches_the_best_design(tmp_path):
    from harness.analysis.queries import shortcut_verdict
    from harness.format.loader import load_suite
    from harness.generate import write_suite

    write_suite(tmp_path / "suite", 6, seed=1, profile="small")
    scenarios = load_suite([str(tmp_path / "suite")])
    tied = execute(scenarios, parse_specs("history_stuffing,recency"), tmp_path / "runs", run_id="tied")
    alone = execute(scenarios, parse_specs("history_stuffing,oracle"), tmp_path / "runs", run_id="alone")
    with Results(tied.path) as res:  # history_stuffing ranks newest first: the recency rule is the same rule
        verdict = shortcut_verdict(res, Filter(include_controls=False))
    assert verdict.startswith("NOT SEPARATED: the best design (history_stuffing") and "recency" in verdict
    with Results(alone.path) as res:
        assert shortcut_verdict(res, Filter()) == ""  # no shortcut ran: nothing to say

"""The app's gold marks, health bands and aggregate seed agree with the harness's own rules.

The Failures and Rankings pages mark each gold item of a probe (✓ included, ✗ missing, ...)
with `harness.analysis.queries.gold_check`, on rows read back from a run's Parquet. Those marks must
never contradict the criteria's verdicts on the same bundle: both read it through
`harness.criteria.bundle`.
"""

from __future__ import annotations

from types import SimpleNamespace

import pandas as pd
import pytest
from canonical_run import CANONICAL_SEED

from harness.analysis import queries
from harness.analysis.aggregate import aggregate
from harness.criteria import bundle
from harness.analysis.queries import gold_check, parse_expect
from harness.analysis.results import Results
from stores.session.health import HealthParams, band_for

STRATEGIES = "history_stuffing,tfidf,session_aware,oracle,empty"
SEED = CANONICAL_SEED


@pytest.fixture(scope="module")
def canonical(canonical_run):
    """The shared canonical run (tests/conftest.py); its strategies include `STRATEGIES`."""
    with Results(canonical_run) as res:
        yield res


def _marks(res: Results) -> dict[tuple[str, str, str], pd.DataFrame]:
    """(strategy, scenario, probe) -> the app's gold table, from the same rows the pages read."""
    mine = f"strategy IN ({', '.join(repr(s) for s in STRATEGIES.split(','))})"
    cands = res.df(f"""SELECT strategy, scenario, probe_id, rank, item_id, source_ids, included, text
                       FROM candidates WHERE {mine} ORDER BY strategy, scenario, probe_id, rank""")
    groups = {k: g for k, g in cands.groupby(["strategy", "scenario", "probe_id"], sort=False)}
    empty = cands.iloc[0:0]
    probes = res.df(f"""SELECT p.strategy, p.scenario, p.probe_id, p.context, p.budget, e.expect
                       FROM probes p JOIN events e ON e.scenario = p.scenario AND e.kind = 'probe' AND e.item_id = p.probe_id
                       WHERE p.error IS NULL AND p.{mine}""")
    return {(r.strategy, r.scenario, r.probe_id): gold_check(parse_expect(r.expect), groups.get((r.strategy, r.scenario, r.probe_id), empty),
                                                            r.context, int(r.budget))
            for r in probes.itertuples(index=False)}


def _share(rows: pd.DataFrame) -> float:
    return float(rows["ok"].mean())


def test_gold_marks_agree_with_the_criteria_on_every_case_of_a_canonical_run(canonical):
    marks = _marks(canonical)
    scores = canonical.df("""SELECT strategy, scenario, probe_id, criterion, value, passed FROM scores
                             WHERE status IN ('ok', 'fail') AND criterion IN ('recall', 'identity_persistence',
                               'preference_surfacing', 'stale_suppression', 'repeat_issue', 'session_ranking', 'known_fix_first')""")
    scores = scores[scores.strategy.isin(STRATEGIES.split(","))]
    assert len(scores) > 100
    seen, wrong = set(), []
    for s in scores.itertuples(index=False):
        g = marks[(s.strategy, s.scenario, s.probe_id)]
        kind = lambda k: g[g["kind"] == k]  # noqa: E731
        if s.criterion == "recall":
            agree = s.passed == kind("must include")["ok"].all() and s.value == pytest.approx(_share(kind("must include")))
        elif s.criterion == "identity_persistence":  # it also fails on another customer's items: compare the share
            agree = s.value == pytest.approx(_share(kind("identity"))) and (not s.passed or kind("identity")["ok"].all())
        elif s.criterion == "preference_surfacing":
            stale = not kind("superseded")["ok"].all()
            agree = (s.passed == (kind("preference")["ok"].all() and not stale)
                     and s.value == pytest.approx(0.0 if stale else _share(kind("preference"))))
        elif s.criterion == "stale_suppression":
            agree = s.passed == kind("must exclude")["ok"].all() and s.value == pytest.approx(_share(kind("must exclude")))
        elif s.criterion == "repeat_issue":
            agree = s.passed == (kind("repeat evidence")["ok"].all() and kind("not a repeat")["ok"].all())
        elif s.criterion == "session_ranking":
            agree = s.value == pytest.approx(_share(kind("above")))
        else:
            agree = s.value == pytest.approx(_share(kind("known fix first")))
        seen.add(s.criterion)
        if not agree:
            wrong.append(f"{s.strategy} {s.scenario}/{s.probe_id} {s.criterion} passed={s.passed} value={s.value}:\n"
                         f"{g.to_string()}")
    assert {"recall", "identity_persistence", "preference_surfacing", "stale_suppression"} <= seen
    assert not wrong, f"{len(wrong)} disagreements, e.g.\n" + "\n".join(wrong[:3])
    # the run must exercise both sides, or agreement proves little
    assert scores["passed"].any() and not scores["passed"].all()


def _cands(*rows) -> pd.DataFrame:
    """Candidate rows as `queries.candidates` returns them: (item_id, source_ids, included, text)."""
    return pd.DataFrame([{"rank": i, "item_id": a, "source_ids": list(b), "included": c, "text": t}
                         for i, (a, b, c, t) in enumerate(rows, start=1)])


def test_only_source_ids_cover_a_gold_id():
    cands = _cands(("b-1", [], True, "Priya, finance lead"), ("summary", ["b-2"], True, "email about billing"))
    g = gold_check({"include": ["b-1", "b-2"]}, cands, "Priya, finance lead\nemail about billing").set_index("ref")
    assert g.loc["b-1", "mark"] == "✗ missing"  # its own item id names it, but no source id does
    assert g.loc["b-2", "mark"] == "✓ included"


def test_not_a_repeat_uses_the_criteria_top_limit(monkeypatch):
    top = bundle.REPEAT_TOP
    filler = [(f"x{i}", [f"x{i}"], True, f"x{i}") for i in range(1, top)]
    at_top = _cands(*filler, ("pw#resolution", ["pw#resolution"], True, "reset"))
    below = _cands(*filler, ("y", ["y"], True, "y"), ("pw#resolution", ["pw#resolution"], True, "reset"))
    expect = {"not_repeat_of": ["pw"]}
    assert not gold_check(expect, at_top, "")["ok"].iloc[0]
    assert gold_check(expect, below, "")["ok"].iloc[0]
    monkeypatch.setattr(bundle, "REPEAT_TOP", top + 1)  # one constant: move it and the app follows
    row = gold_check(expect, below, "").iloc[0]
    assert not row["ok"] and row["mark"] == f"⚠ in top {top + 1}"


def test_one_item_covering_both_sides_of_a_pair_does_not_order_them():
    cands = _cands(("merged", ["a", "b"], True, "a and b"))
    g = gold_check({"above": [["a", "b"]]}, cands, "a and b")
    assert not g["ok"].iloc[0] and "same item" in g["detail"].iloc[0]


def _res(strategies: list[dict]) -> SimpleNamespace:
    return SimpleNamespace(manifests={"r": {"strategies": strategies}})


def test_health_bands_come_from_the_strategy_params_in_the_manifest():
    res = _res([{"label": "plain", "name": "tfidf", "params": {}},
                {"label": "strict", "name": "session_aware", "params": {"health": {"healthy_min": 80.0, "watch_min": 55.0}}}])
    assert queries.health_bands(res, "strict") == (("healthy", 80.0, 100.0), ("watch", 55.0, 80.0), ("at_risk", 0.0, 55.0))
    assert queries.health_bands(res) == queries.health_bands(res, "strict")  # the run's first health thresholds


def test_health_bands_fall_back_to_the_health_model_defaults():
    d = HealthParams()
    expected = (("healthy", d.healthy_min, 100.0), ("watch", d.watch_min, d.healthy_min), ("at_risk", 0.0, d.watch_min))
    assert queries.health_bands(_res([{"label": "plain", "name": "tfidf", "params": {}}]), "plain") == expected
    assert queries.health_bands(_res([])) == expected


@pytest.mark.parametrize("health", [{}, {"healthy_min": 80.0, "watch_min": 55.0}])
def test_a_score_falls_in_the_band_the_health_model_gives_it(health):
    """The chart's band edges (low inclusive; 100 is healthy) classify every score as the model does."""
    bands = queries.health_bands(_res([{"label": "s", "name": "session_aware", "params": {"health": health}}]), "s")
    params = HealthParams(**health)
    for score in [x / 2 for x in range(201)]:
        drawn = [name for name, lo, hi in bands if lo <= score < hi or (score == hi == 100.0)]
        assert drawn == [band_for(score, params)], score


def test_health_chart_draws_the_bands_it_is_given(canonical):
    from pages.health import timeline, waterfall

    scenario = canonical.rows("SELECT scenario, subject FROM health WHERE strategy = 'session_aware' LIMIT 1")[0]
    tl = queries.health_timeline(canonical, scenario[0], scenario[1], ("session_aware",))
    gold = queries.health_gold(canonical, *scenario)
    bands = (("healthy", 80.0, 100.0), ("watch", 55.0, 80.0), ("at_risk", 0.0, 55.0))
    for fig in (timeline(tl, gold, None, bands), waterfall(tl.iloc[0], bands)):
        rects = sorted((s["y0"], s["y1"]) for s in fig.layout.shapes if s["type"] == "rect")
        assert rects == [(0.0, 55.0), (55.0, 80.0), (80.0, 100.0)]


def test_leaderboard_aggregates_with_the_run_seed(canonical):
    assert queries.run_seed(canonical) == SEED
    cells, _ = queries.leaderboard(Results(canonical.paths[0]), queries.Filter(include_controls=True))
    want = aggregate(canonical, include_controls=True, seed=SEED)
    other = aggregate(canonical, include_controls=True, seed=0)
    key = ["strategy", "criterion"]
    got = cells.set_index(key)[["lo", "hi"]].sort_index()
    assert got.equals(want.set_index(key)[["lo", "hi"]].sort_index())
    assert not got.equals(other.set_index(key)[["lo", "hi"]].sort_index()), "seed should matter for some interval"


def test_ci_case_statistics_are_the_numbers_the_leaderboard_shows(canonical):
    """`check` and `compare` judge a run on the same per-criterion numbers the app shows."""
    from harness.analysis.cases import criterion_stats

    key, cols = ["strategy", "criterion"], ["mean", "n", "pass_rate", "unsupported", "errors"]
    stats = criterion_stats(canonical).set_index(key)[cols].sort_index()
    cells, _ = queries.leaderboard(Results(canonical.paths[0]), queries.Filter(include_controls=True))
    shown = cells[cells["n"] > 0].set_index(key)[cols].sort_index()
    assert len(stats) > 50 and {"oracle", "empty"} <= set(stats.index.get_level_values("strategy"))
    pd.testing.assert_frame_equal(stats, shown, check_dtype=False)


def _board(res: Results, f: "queries.Filter") -> tuple[pd.DataFrame, pd.DataFrame]:
    cells, totals = queries.leaderboard(res, f)
    return (cells.sort_values(["strategy", "criterion"]).reset_index(drop=True),
            totals.sort_values("strategy").reset_index(drop=True))


@pytest.mark.slow  # every filter's board computed twice on the canonical run
def test_leaderboard_filters_never_change_the_results_they_are_given(canonical):
    """One `Results` serves every query of a page: a filtered call must not leave a filter behind."""
    tag = canonical.rows("SELECT DISTINCT unnest(tags) FROM events ORDER BY 1")[0][0]
    scenario = canonical.rows("SELECT DISTINCT scenario FROM scores ORDER BY 1")[1][0]
    filters = [queries.Filter(tags=(tag,)), queries.Filter(), queries.Filter(scenarios=(scenario,), include_controls=False),
               queries.Filter(tags=(tag,)), queries.Filter()]
    shared = Results(canonical.paths[0])
    try:
        for f in filters:  # the same filters, each on a fresh Results, are the truth
            with Results(canonical.paths[0]) as fresh:
                want = _board(fresh, f)
            got = _board(shared, f)
            pd.testing.assert_frame_equal(got[0], want[0])
            pd.testing.assert_frame_equal(got[1], want[1])
        assert shared.rows("SELECT count(*) FROM scores") == canonical.rows("SELECT count(*) FROM scores")
        views = {r[0] for r in shared.rows("SELECT view_name FROM duckdb_views() WHERE NOT internal")}
        assert views == {r[0] for r in canonical.rows("SELECT view_name FROM duckdb_views() WHERE NOT internal")}
    finally:
        shared.close()
    filtered, whole = _board(canonical, filters[0])[0], _board(canonical, filters[1])[0]
    assert filtered["n"].sum() < whole["n"].sum(), "the tag filter should narrow the cases"

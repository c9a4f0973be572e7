"""Every page of the workbench driven headless with AppTest over the fixture runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

import app as router

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
MAIN = "20260102-000000-main"
TIGHT = "20260101-000000-tight"
PAGES = [v.url_path for v in router.VIEWS]


def open_page(page: str, **params) -> AppTest:
    """Open `page` as a link does in a fresh server process: the first script run of the session
    gets the page's URL path and exactly these URL parameters (a deep link)."""
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params.update({"run": MAIN, **params})
    if page != PAGES[0]:  # the default page is the root URL
        at.switch_page(f"pages/{page}.py")  # before the first run AppTest names the page by its file, as a fresh server does
    return at.run()


def texts(at: AppTest) -> str:
    parts = [e.value for kind in ("title", "subheader", "markdown", "caption", "info", "success", "error", "warning")
             for e in getattr(at, kind)]
    return "\n".join(str(p) for p in parts)


def figures(at: AppTest) -> list[dict]:
    return [json.loads(el.proto.spec) for el in at.get("plotly_chart")]


def no_exception(at: AppTest) -> None:
    assert not at.exception, [e.message for e in at.exception]


@pytest.mark.parametrize("page", PAGES)
def test_every_page_renders_without_exception(app_runs, page):
    at = open_page(page)
    no_exception(at)
    assert at.query_params["run"] == MAIN


@pytest.mark.parametrize("page", PAGES)
def test_every_page_starts_with_its_title(app_runs, page):
    """Nothing above the title: a bare string in a page module would be printed by Streamlit's magic."""
    at = open_page(page)
    first = next(iter(at.main.children.values()))
    assert type(first).__name__ == "Title", first


def test_run_picker_defaults_to_newest_and_lists_every_run(app_runs):
    at = AppTest.from_file(APP, default_timeout=60).run()
    picker = at.sidebar.selectbox[0]
    assert picker.value == MAIN
    assert set(picker.options) == {MAIN, TIGHT}
    assert at.query_params["run"] == MAIN


@pytest.mark.parametrize("page", PAGES)
def test_a_rerun_scans_the_runs_folder_once(app_runs, page, monkeypatch):
    """The router lists the runs (reading every manifest); pages reuse its pick, not a scan per query.
    Compare lists them once more, for its own run A / run B pickers."""
    import harness.analysis.results as results

    at = open_page(page)
    reads, real = [], results.read_manifest
    monkeypatch.setattr(results, "read_manifest", lambda p: reads.append(p) or real(p))
    at.run()
    no_exception(at)
    assert len(reads) == len(app_runs) * (2 if page == "compare" else 1), reads


def test_run_in_the_url_selects_that_run(app_runs):
    at = open_page("leaderboard", run=TIGHT)
    assert at.sidebar.selectbox[0].value == TIGHT
    assert TIGHT in texts(at)


def test_leaderboard_shows_heatmap_totals_and_hides_controls_by_default(app_runs):
    at = open_page("leaderboard")
    no_exception(at)
    heat = figures(at)[0]["data"][0]
    assert heat["type"] == "heatmap"
    assert set(heat["y"]) == {"history_stuffing", "session_aware"}
    assert "token budget compliance" in heat["x"]
    assert "pass rate" in json.dumps(heat["hovertext"]) and "n=" in json.dumps(heat["hovertext"])
    totals = at.dataframe[0].value
    assert list(totals["strategy"]) and {"tokens_mean", "latency_p50"} <= set(totals.columns)


def test_leaderboard_controls_toggle_adds_oracle_and_empty(app_runs):
    at = open_page("leaderboard")
    at.toggle[0].set_value(True).run()
    assert {"oracle", "empty"} <= set(figures(at)[0]["data"][0]["y"])
    assert at.query_params["controls"] == "1"


def test_leaderboard_tag_filter_narrows_the_cases(app_runs):
    everything = open_page("leaderboard", controls="1").dataframe[0].value.set_index("strategy")["cases"]
    billing = open_page("leaderboard", controls="1", tag="billing").dataframe[0].value.set_index("strategy")["cases"]
    assert set(billing.index) == set(everything.index)  # an empty table would make the next line hold vacuously
    assert (billing < everything.reindex(billing.index)).all()


def test_leaderboard_cell_choice_opens_matching_failures(app_runs):
    at = open_page("leaderboard")
    at.selectbox(key=_key(at, "strategy")).set_value("session_aware")
    at.selectbox(key=_key(at, "criterion")).set_value("preference_surfacing")
    at.button[0].click().run()
    no_exception(at)
    assert at.title[0].value == "Failures"
    assert at.query_params["strategy"] == "session_aware"
    assert at.query_params["criterion"] == "preference_surfacing"
    shown = at.dataframe[0].value
    assert set(shown["strategy"]) == {"session_aware"} and set(shown["crit"]) == {"preference surfacing"}


def test_heatmap_click_selection_maps_to_its_cell():
    from pages.leaderboard import cell_from_selection

    event = {"selection": {"points": [{"x": "recall", "y": "tfidf", "customdata": ["tfidf", "recall"]}]}}
    assert cell_from_selection(event) == ("tfidf", "recall")
    assert cell_from_selection({"selection": {"points": []}}) is None


def test_rankings_shows_timeline_and_a_ranking_per_strategy(app_runs):
    at = open_page("rankings", scenario="billing-repeat", probe="p-bill", strategies=["session_aware", "oracle"])
    no_exception(at)
    figs = figures(at)
    assert len(figs) == 3  # timeline + one ranking per strategy
    ranking = figs[1]
    assert any(t["type"] == "bar" for t in ranking["data"])
    labels = ranking["data"][0]["y"]
    assert any(label.startswith("✓") for label in labels) and any(label.startswith("⚠") for label in labels)
    assert "#### session_aware" in texts(at) and "#### oracle" in texts(at)


def test_rankings_deep_link_restores_scenario_probe_and_strategies(app_runs):
    at = open_page("rankings", scenario="long-history", probe="p-long", strategies=["history_stuffing", "empty"])
    assert at.selectbox(key=_key(at, "scenario")).value == "long-history"
    assert at.selectbox(key=_key(at, "probe")).value == "p-long"
    assert at.multiselect(key=_key(at, "strategies")).value == ["history_stuffing", "empty"]


def test_rankings_probe_selection_changes_what_is_shown(app_runs):
    at = open_page("rankings", scenario="billing-repeat", probe="p-bill")
    assert "p-bill`**" in texts(at)
    at.selectbox(key=_key(at, "probe")).set_value("p-bill-2").run()
    assert "p-bill-2`**" in texts(at)
    assert at.query_params["probe"] == "p-bill-2"


def test_rankings_paginates_long_candidate_lists_and_draws_the_budget_line(app_runs):
    at = open_page("rankings", scenario="long-history", probe="p-long", strategies=["history_stuffing"])
    assert at.pagination, "43 candidates need more than one page"
    ranking = figures(at)[1]
    assert len(ranking["data"][0]["y"]) == 15
    assert any("budget" in (a.get("text") or "") for a in ranking["layout"].get("annotations", []))
    at.pagination[0].set_value(2).run()
    assert "Ranks 16–30" in texts(at)
    assert at.query_params["rank_page"] == "2"


def test_health_shows_bands_timeline_gold_and_waterfall(app_runs):
    at = open_page("health", scenario="billing-repeat", subject="c1")
    no_exception(at)
    figs = figures(at)
    assert figs[0]["layout"]["shapes"], "band rectangles"
    assert any(t.get("name") == "gold band (probe)" for t in figs[0]["data"])
    assert any(t["type"] == "waterfall" for f in figs for t in f["data"])
    gold = at.dataframe[0].value
    assert {"p-bill", "p-bill-2"} <= set(gold["probe_id"])
    assert "✗ disagrees" in set(gold["agrees"])  # p-bill-2 expects at risk


def test_health_moment_is_in_the_url_and_changes_the_waterfall(app_runs):
    at = open_page("health", scenario="billing-repeat", subject="c1", at="0")
    first = [t for t in figures(at)[-1]["data"] if t["type"] == "waterfall"][0]["x"]
    assert at.query_params["at"] == "0"
    at.select_slider[0].set_value(8).run()
    later = [t for t in figures(at)[-1]["data"] if t["type"] == "waterfall"][0]["x"]
    assert at.query_params["at"] == "8"
    assert first != later


def test_failures_lists_failing_cases_errors_first_and_filters(app_runs):
    at = open_page("failures")
    no_exception(at)
    rows = at.dataframe[0].value
    assert len(rows) and set(s.split()[-1] for s in rows["icon"]) <= {"fail", "error"}
    at = open_page("failures", strategy="empty")
    assert set(at.dataframe[0].value["strategy"]) == {"empty"}
    at = open_page("failures", q="superseded")
    assert len(at.dataframe[0].value)
    assert all("superseded" in e.lower() or "superseded" in (t or "").lower()
               for e, t in zip(at.dataframe[0].value["explanation"], at.dataframe[0].value["task"]))


def test_failures_unsupported_toggle_adds_unsupported_cases(app_runs):
    at = open_page("failures", strategy="history_stuffing", criterion="health")
    assert "No failing cases" in texts(at)
    at.toggle[0].set_value(True).run()
    assert set(s.split()[-1] for s in at.dataframe[0].value["icon"]) == {"unsupported"}


def test_failures_case_shows_transcript_context_gold_and_handoff(app_runs):
    at = open_page("failures", case="session_aware|billing-repeat|p-bill|preference_surfacing")
    no_exception(at)
    body = texts(at)
    assert "billing-repeat · p-bill · preference surfacing · session_aware" in body
    assert "— 4 weeks later —" in body
    assert "Session `jan`" in body and "Session `feb`" in body
    assert "✓ gold, in context" in body and "must exclude" in body
    assert "#### Handoff brief" in body
    gold = at.dataframe[-1].value
    assert {"must include", "superseded"} <= set(gold["kind"])
    assert "⚠ present" in set(gold["mark"])


def test_failures_opening_a_case_puts_it_in_the_url(app_runs):
    at = open_page("failures", strategy="empty")
    box = at.selectbox(key=_key(at, "case"))
    box.set_value(box.options[1]).run()
    assert at.query_params["case"].startswith("empty|")
    assert "#### Transcript" in texts(at)


def test_compare_two_runs_lists_regressions(app_runs):
    at = open_page("compare", mode="runs", a=TIGHT, b=MAIN)
    no_exception(at)
    assert at.metric[0].label == "regressions"
    regressions = int(at.metric[0].value)
    assert regressions > 0  # with the main run's larger budgets, history stuffing lets stale items back in
    assert [t.label for t in at.tabs][0] == f"Regressions ({regressions})"
    listed = at.dataframe[1].value  # [0] is the per-criterion table in the expander
    assert len(listed) == regressions and (listed["delta"] < 0).all()
    assert figures(at), "criteria moved between the runs: the delta chart is drawn"


def test_compare_two_strategies_in_one_run(app_runs):
    at = open_page("compare", mode="strategies", sa="empty", sb="oracle")
    no_exception(at)
    assert at.query_params["sa"] == "empty" and at.query_params["sb"] == "oracle"
    improvements = int(at.metric[1].value)
    assert improvements > 0


def test_get_started_offers_one_button_when_there_is_no_run(app_runs, tmp_path, monkeypatch):
    monkeypatch.setenv("SUPPORTBENCH_RUNS", str(tmp_path / "empty"))
    at = AppTest.from_file(APP, default_timeout=60).run()
    no_exception(at)
    assert "no run" in texts(at).lower()
    assert [b.label for b in at.button] == ["Run the canonical suite"]


def _key(at: AppTest, param: str) -> str:
    """The page-specific widget key of a URL parameter (see pages._shared.wkey)."""
    keys = [k for k in at.session_state.keys() if k.startswith("qp_") and k.endswith("_" + param)]
    assert keys, f"no widget bound to {param!r}"
    return keys[0]

"""Every page of the workbench driven headless with AppTest over the fixture runs."""

from __future__ import annotations

import os
import json
import re
from pathlib import Path
from urllib.parse import parse_qs

import pandas as pd
import pytest
from helpers import HANG
from streamlit.testing.v1 import AppTest

from pages import _views as views

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
MAIN = "20260102-000000-main"
TIGHT = "20260101-000000-tight"
PAGES = [v.url_path for v in views.VIEWS]


def open_page(page: str, **params) -> AppTest:
    """Open `page` as a link does in a fresh server process: the first script run of the session
    gets the page's URL path and exactly these URL parameters (a deep link)."""
    at = AppTest.from_file(APP, default_timeout=HANG)
    at.query_params.update({"run": MAIN, **params})
    if page != PAGES[0]:  # the default page is the root URL
        at.switch_page(f"pages/{page}.py")  # before the first run AppTest names the page by its file, as a fresh server does
    return at.run()


def texts(at: AppTest) -> str:
    """What the page's Markdown elements read as (the data in them is escaped to stay text:
    `pages._shared.plain`; the escapes are taken off here)."""
    parts = [e.value for kind in ("title", "subheader", "markdown", "caption", "info", "success", "error", "warning")
             for e in getattr(at, kind)]
    return unescape("\n".join(str(p) for p in parts))


def unescape(markdown: str) -> str:
    """Markdown with its backslash escapes taken off (what a reader sees of escaped text)."""
    return re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", markdown).replace("\u2060", "")


def follow(at: AppTest) -> AppTest:
    """Do what the browser does with `pages._shared.go`: open the address its script names (a
    link to another page of the app, with its selection)."""
    body = next((e.proto.body for e in at.get("html") if "pushState" in e.proto.body), None)
    assert body is not None, "the page asked the browser to open nothing"
    address = json.loads(re.search(r"new URL\((\".*?\"), document.baseURI\)", body).group(1))
    path, _, qs = address.removeprefix("./").partition("?")
    params = {k: v[0] if len(v) == 1 else v for k, v in parse_qs(qs).items()}
    return open_page(path or PAGES[0], **params)  # a fresh session: AppTest cannot switch to a page by its URL path


def figures(at: AppTest) -> list[dict]:
    return [json.loads(el.proto.spec) for el in at.get("plotly_chart")]


def no_exception(at: AppTest) -> None:
    """Nothing raised: neither past the router nor inside its guard (which turns it into a short error)."""
    assert not at.exception, [e.message for e in at.exception]
    guarded = [e.value for e in at.error if e.value.startswith("Something went wrong")]
    assert not guarded, guarded


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
    at = AppTest.from_file(APP, default_timeout=HANG).run()  # a bare address
    named = [e.proto.body for e in at.get("html") if "searchParams.set('run'" in e.proto.body]
    assert named and f'"{MAIN}"' in named[0] and "history.replaceState" in named[0], "the newest run named in place"
    assert not at.title and not at.sidebar.selectbox, "nothing drawn before the address names the run"
    at.query_params["run"] = MAIN  # what the browser then runs
    at.run()
    picker = at.sidebar.selectbox[0]
    assert picker.value == MAIN
    assert set(picker.options) == {f"{MAIN} · test", f"{TIGHT} · test"}  # each run shown with its suite
    assert at.query_params["run"] == MAIN


@pytest.mark.parametrize("page", PAGES)
def test_a_rerun_scans_the_runs_folder_once(app_runs, page, monkeypatch):
    """The router lists the runs (reading every manifest); pages reuse its pick, not a scan per query.
    Compare's run A / run B pickers reuse that listing too; the trends list them once more, for the
    runs of the same suite."""
    import harness.analysis.results as results

    at = open_page(page)
    reads, real = [], results.read_manifest
    monkeypatch.setattr(results, "read_manifest", lambda p: reads.append(p) or real(p))
    at.run()
    no_exception(at)
    assert len(reads) == len(app_runs) * (2 if page == "trends" else 1), reads


def test_run_in_the_url_selects_that_run(app_runs):
    at = open_page("leaderboard", run=TIGHT)
    assert at.sidebar.selectbox[0].value == TIGHT
    assert TIGHT in texts(at)


def heat_cells(at: AppTest) -> dict[tuple[str, str], tuple[str, str]]:
    """(strategy, criterion) -> (what the cell holds, its hover) from the heatmap's click targets."""
    fig = figures(at)[0]
    target = next(t for t in fig["data"] if t["type"] == "scatter")
    return {(cd[0], cd[1]): (cd[2], tip) for cd, tip in zip(target["customdata"], target["hovertext"])}


def test_leaderboard_shows_heatmap_totals_and_hides_controls_by_default(app_runs):
    at = open_page("leaderboard")
    no_exception(at)
    fig = figures(at)[0]
    assert [t["type"] for t in fig["data"]] == ["heatmap", "heatmap", "scatter"]  # neutral cells, scores, click targets
    cells = heat_cells(at)
    assert {s for s, _ in cells} == {"history_stuffing", "session_aware", "structured"}
    rows = " ".join(fig["layout"]["yaxis"]["ticktext"]).replace("<br>", " ")
    assert "identity persistence" in rows and "token budget compliance" not in rows  # gates are not scores
    hovers = " ".join(tip for _, tip in cells.values())
    assert "pass rate" in hovers and " cases" in hovers
    assert "bootstrap over scenarios" in hovers  # probes share scenarios: the cluster interval, named
    totals = at.dataframe[0].value
    assert list(totals["strategy"]) and {"shared", "coverage", "tokens_mean", "latency_p50"} <= set(totals.columns)
    assert list(totals["shared"]) == sorted(totals["shared"], reverse=True)  # ordered by the shared total
    assert list(totals["strategy"]) == list(fig["data"][0]["x"])  # the heatmap's columns in the same order
    assert "interval" in totals.columns  # the shared total's interval
    captions = " ".join(c.value for c in at.caption)
    assert "How sure the order is" in captions and " over " in captions
    gates = at.dataframe[1].value.set_index("strategy")
    assert "token budget compliance" in gates.columns and (gates == "✓ pass").all().all()


def _leaderboard_of(specs: str, tmp_path, monkeypatch, run_id: str):
    """The Leaderboard page of a run of the fixture scenarios through `specs`, written into `tmp_path`."""
    from fixture_runs import fixture_scenarios

    from harness.run.runner import execute
    from stores.registry import parse_specs

    run = execute(fixture_scenarios(), parse_specs(specs), tmp_path, run_id=run_id).path
    monkeypatch.setenv("SUPPORTBENCH_RUNS", str(tmp_path))
    at = open_page("leaderboard", run=run.name)
    no_exception(at)
    return at


def test_leaderboard_gates_show_a_failing_gate_with_its_cases(tmp_path, monkeypatch, plugins):
    plugins.strategy("broken", "shortcut_strategies:Broken")
    at = _leaderboard_of("history_stuffing,broken:breaks=token_budget", tmp_path, monkeypatch, "20990101-000000-gates")
    gates = at.dataframe[1].value.set_index("strategy")
    assert gates.loc["history_stuffing", "token budget compliance"] == "✓ pass"
    assert gates.loc["broken[breaks=token_budget]", "token budget compliance"].startswith("✗ ")
    assert any("broken[breaks=token_budget] fails token budget compliance" in unescape(e.label) for e in at.expander)
    assert "tokens against a budget of" in texts(at)


def test_leaderboard_shows_budget_use_and_flags_a_capped_strategy_that_leaves_gold_out(tmp_path, monkeypatch):
    at = _leaderboard_of("session_aware,tfidf[capped]:top_k=1", tmp_path, monkeypatch, "20990101-000000-budget")
    totals = at.dataframe[0].value.set_index("strategy")
    assert {"budget_use", "cap", "budget_flag"} <= set(totals.columns)
    assert totals.loc["tfidf[capped]", "cap"] > 0 and totals.loc["session_aware", "cap"] == 0
    assert totals.loc["tfidf[capped]", "budget_flag"].startswith("⚠ ") and totals.loc["session_aware", "budget_flag"] == ""
    assert 0 < totals.loc["tfidf[capped]", "budget_use"] < totals.loc["session_aware", "budget_use"] <= 1


def test_leaderboard_hover_gives_scores_as_fractions_and_rates_as_percentages(app_runs):
    kind, tip = heat_cells(open_page("leaderboard"))[("session_aware", "recall")]
    assert kind == "score"
    assert re.search(r"mean \d\.\d\d \(95% CI \d\.\d\d–\d\.\d\d\)", tip), tip
    assert re.search(r"pass rate \d+% \(95% CI \d+%–\d+%, (Wilson|bootstrap over scenarios)\)", tip), tip


def test_leaderboard_unsupported_cells_are_neutral_not_a_zero(app_runs):
    at = open_page("leaderboard")
    assert heat_cells(at)[("history_stuffing", "health")][0] == "unsupported"
    neutral, scores, _ = figures(at)[0]["data"]
    row = neutral["y"].index("health")
    col = neutral["x"].index("history_stuffing")
    assert scores["z"][row][col] is None and neutral["text"][row][col] == "n/a"
    assert neutral["colorscale"][0][1] == neutral["colorscale"][-1][1]  # one grey, whatever the value


def test_leaderboard_controls_toggle_adds_oracle_and_empty(app_runs):
    at = open_page("leaderboard")
    at.toggle[0].set_value(True).run()
    assert {"oracle", "empty"} <= {s for s, _ in heat_cells(at)}
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
    at = follow(at.button[0].click().run())
    no_exception(at)
    assert at.title[0].value == "Failures"
    assert at.query_params["strategy"] == "session_aware"
    assert at.query_params["criterion"] == "preference_surfacing"
    shown = at.dataframe[0].value
    assert set(shown["strategy"]) == {"session_aware"} and set(shown["crit"]) == {"preference surfacing"}


def test_heatmap_click_selection_maps_to_its_cell():
    from pages.leaderboard import cell_from_selection

    event = {"selection": {"points": [{"x": "tfidf", "y": "recall", "customdata": ["tfidf", "recall", "score"]}]}}
    assert cell_from_selection(event) == ("tfidf", "recall")
    assert cell_from_selection({"selection": {"points": []}}) is None
    assert cell_from_selection({"selection": {"points": [{"customdata": ["empty", "provenance", "none"]}]}}) is None


def test_rankings_shows_timeline_and_a_ranking_per_strategy(app_runs):
    at = open_page("rankings", scenario="billing-repeat", probe="p-bill", strategies=["session_aware", "oracle"])
    no_exception(at)
    figs = figures(at)
    assert len(figs) == 3  # timeline + one ranking per strategy
    ranking = figs[1]
    assert any(t["type"] == "bar" for t in ranking["data"])
    labels = ranking["data"][0]["y"]
    assert any(label.startswith("◆") for label in labels) and any(label.startswith("⊘") for label in labels)
    assert "#### session_aware" in texts(at) and "#### oracle" in texts(at)
    assert "tokens of 400" in texts(at)  # a strategy's numbers on one line that wraps, not truncating metrics


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


def test_rankings_paginates_long_candidate_lists_and_bands_what_was_left_out(app_runs):
    at = open_page("rankings", run=TIGHT, scenario="long-history", probe="p-long", strategies=["history_stuffing"])
    assert at.pagination, "43 candidates need more than one page"
    ranking = figures(at)[1]
    assert len(ranking["data"][0]["y"]) == 15
    shown = at.dataframe[-2].value  # this page's ranked candidates
    left_out = shown.reset_index(drop=True).index[shown["status"] != "included"]
    bands = [sh for sh in ranking["layout"]["shapes"] if sh["type"] == "rect"]
    assert len(left_out) and sorted(round(b["y0"] + 0.5) for b in bands) == list(left_out)
    at.pagination[0].set_value(2).run()
    assert "Ranks 16–30" in texts(at)
    assert at.query_params["rank_page"] == "2"


def test_rankings_draws_what_the_strategy_did_not_where_token_sums_pass_the_budget():
    """Greedy packing skips an item that does not fit and takes smaller ones below it: the raw sum of
    candidate tokens says nothing about what was kept. The bands come from each candidate's status."""
    from pages.rankings import ranking_chart

    cands = pd.DataFrame({
        "rank": [1, 2, 3, 4, 5], "item_id": ["a", "b", "c", "d", "e"], "score": [5.0, 4.0, 3.0, 2.0, 0.0],
        "components": ['{"x": 5}', '{"x": 4}', '{"x": 3}', '{"x": 2}', "{}"], "included": [True, False, True, False, False],
        "reason": ["", "budget", "", "rank_cutoff", "expired: sentiment older than 7 days"], "tokens": [50, 90, 10, 5, 5],
        "status": ["included", "dropped for budget", "included", "dropped by rank cutoff or item cap", "expired before ranking"],
        "text": ["a", "b", "c", "d", "e"],
    })
    fig = ranking_chart(cands, 60, {"b": "◆ gold"}).to_plotly_json()
    bands = [(round(sh["y0"] + 0.5), sh["fillcolor"]) for sh in fig["layout"]["shapes"] if sh["type"] == "rect"]
    assert [k for k, _ in bands] == [1, 3, 4] and len({c for _, c in bands}) == 3  # budget, cutoff, expired: three looks
    lines = [sh for sh in fig["layout"]["shapes"] if sh["type"] == "line"]
    assert [ln["y0"] for ln in lines] == [2.5]  # the rank cutoff, where the strategy cut; no line at a token sum
    assert fig["data"][0]["y"][1] == "◆ #2 b"


def test_rankings_default_strategies_include_session_aware(app_runs):
    at = open_page("rankings", scenario="billing-repeat", probe="p-bill")
    chosen = at.multiselect(key=_key(at, "strategies")).value
    assert chosen[0] == "session_aware" and "oracle" not in chosen and "empty" not in chosen


def test_rankings_diffs_two_contexts_of_the_probe(app_runs):
    at = open_page("rankings", scenario="billing-repeat", probe="p-bill", strategies=["session_aware", "oracle"],
                   da="oracle", db="empty")
    no_exception(at)
    items = at.dataframe[-1].value
    assert set(items["where"]) <= {"in both", "only A", "only B", "in neither"}
    assert (items["where"] == "only A").any() and not (items["where"] == "only B").any()  # empty puts nothing in
    assert at.query_params["da"] == "oracle" and at.query_params["db"] == "empty"


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


def test_health_says_when_a_timeline_point_keeps_only_part_of_a_factor(tmp_path, monkeypatch):
    """A history long enough that a factor names more items than a timeline point keeps: the
    factor table shows how many ids were left out and the page says the probe report is whole."""
    from harness.run.runner import execute
    from harness.replay.timeline import MAX_IDS
    from helpers import probe, resolve, scenario, turn
    from stores.registry import parse_specs

    events = []
    for i in range(MAX_IDS + 20):
        events += [turn(f"t{i}", "my vpn tunnel drops every hour again", 60 * i, session=f"s{i}"),
                   resolve(f"s{i}", "vpn tunnel fixed by renewing the certificate", 60 * i + 5)]
    events += [turn("live-1", "the vpn tunnel drops every hour, urgent", 60 * (MAX_IDS + 20), session="live"),
               probe("p", "vpn tunnel drops", 60 * (MAX_IDS + 20) + 1, session="live", health="at_risk")]
    execute([scenario(events, id="many-sessions", subjects=("c1",))], parse_specs("session_aware"), tmp_path,
            run_id="many", policies=())
    monkeypatch.setenv("SUPPORTBENCH_RUNS", str(tmp_path))
    at = open_page("health", run="many", scenario="many-sessions", subject="c1")
    no_exception(at)
    factors = at.dataframe[-1].value
    left_out = factors["source_ids_left_out"].dropna()
    assert len(left_out) and (left_out >= 20).all()  # the sessions past MAX_IDS, and the open one where it is named too
    assert f"keeps at most {MAX_IDS} source ids" in texts(at)


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
    assert [e.label for e in at.expander][0].startswith("Session jan · C1 · 2026-03-02 · 4 turns · resolved · ◆ 2 gold")  # the earlier session, collapsed
    assert "Session `jan`" not in body and "Session `feb`" in body  # the probe's own session, in full
    assert "◆ gold, in context" in body and "must stay out, present" in body
    assert "#### Handoff brief" in body
    gold = next(d.value for d in at.dataframe if "mark" in d.value.columns)
    assert {"must include", "superseded"} <= set(gold["kind"])
    assert "⚠ present" in set(gold["mark"])


def test_failures_case_shows_the_reply_next_to_the_context_and_the_typed_memories(app_runs):
    at = open_page("failures", case="structured|billing-repeat|p-bill|repeat_issue")
    no_exception(at)
    body = texts(at)
    assert "#### The reply to this context" in body and "engine: scripted" in body
    assert "returning customer: yes" in body
    used = next(d.value for d in at.dataframe if "reason" in d.value.columns)
    assert "Refund duplicate platform fee" in set(used["text"])
    mems = next(d.value for d in at.dataframe if "state" in d.value.columns)
    assert {"INCIDENT", "PROFILE"} <= set(mems["type"])
    raw = open_page("failures", case="history_stuffing|billing-repeat|p-bill|preference_surfacing")
    assert "#### The reply to this context" in texts(raw)
    assert not any("state" in d.value.columns for d in raw.dataframe)  # no typed memories to show


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
    at = AppTest.from_file(APP, default_timeout=HANG).run()
    no_exception(at)
    assert "no run" in texts(at).lower()
    assert [b.label for b in at.button] == ["Run the canonical suite"]


def _key(at: AppTest, param: str) -> str:
    """The page-specific widget key of a URL parameter (see pages._shared.wkey)."""
    keys = [k for k in at.session_state.keys() if k.startswith("qp_") and k.endswith("_" + param)]
    assert keys, f"no widget bound to {param!r}"
    return keys[0]


def test_health_moment_starts_at_the_latest_event_when_the_scenario_changes(app_runs):
    from harness.analysis.queries import health_timeline
    from harness.analysis.results import Results

    with Results(app_runs["main"]) as res:
        latest = int(health_timeline(res, "long-history", "c1")["event_index"].max())
        assert 8 in set(health_timeline(res, "long-history", "c1")["event_index"])  # the old moment exists there too
    at = open_page("health", scenario="billing-repeat", subject="c1", at="8")
    assert at.query_params["at"] == "8"
    at.selectbox(key=_key(at, "scenario")).set_value("long-history").run()
    no_exception(at)
    # the latest moment is the default: it stays out of the URL (a link that names it keeps it)
    assert at.query_params.get("at") is None and at.select_slider[0].value == latest


def test_failures_hide_controls_unless_shown_or_picked(app_runs):
    shown = set(open_page("failures").dataframe[0].value["strategy"])
    assert shown and not shown & {"oracle", "empty"}
    assert "empty" in set(open_page("failures", controls="1").dataframe[0].value["strategy"])
    assert set(open_page("failures", strategy="empty").dataframe[0].value["strategy"]) == {"empty"}


def test_failures_order_is_over_all_cases_not_the_page(app_runs):
    from harness.analysis.results import Results

    at = open_page("failures", controls="1", order="scenario")
    no_exception(at)
    listed = at.dataframe[0].value
    with Results(app_runs["main"]) as res:
        first = res.rows("SELECT min(scenario) FROM scores WHERE status IN ('fail', 'error')")[0][0]
    assert listed["scenario"].iloc[0] == first and list(listed["scenario"]) == sorted(listed["scenario"])


def test_failures_group_by_criterion_sums_every_case(app_runs):
    at = open_page("failures", controls="1", group="criterion")
    no_exception(at)
    groups = at.dataframe[0].value
    total = int(re.search(r"\*\*(\d+)\*\* cases", texts(at)).group(1))
    assert groups["cases"].sum() == total and list(groups["cases"]) == sorted(groups["cases"], reverse=True)
    assert "preference surfacing" in set(groups["group"])  # criteria by their titles


def test_failures_offers_the_whole_selection_as_csv_and_json(app_runs):
    at = open_page("failures", controls="1")
    labels = [b.proto.label for b in at.get("download_button")]
    assert labels == ["CSV", "JSON"]


def test_a_long_transcript_collapses_earlier_sessions_and_searches(app_runs):
    case = "session_aware|long-history|p-long|recall"
    at = open_page("failures", case=case)
    no_exception(at)
    labels = [e.label for e in at.expander if e.label.startswith("Session ")]
    assert [lab.split(" · ")[0] for lab in labels] == [f"Session w{i}" for i in range(6)]
    assert "[↓ Jump to the probe](#the-probe)" in texts(at)
    chats = len(at.chat_message)
    opened = [e for e in at.expander if e.label.startswith("Session ") and e.proto.expanded]
    assert [e.label.split(" · ")[0] for e in opened] == ["Session w5"], "only the session holding the evidence is open"
    assert chats == 1 + len(opened[0].chat_message), "the probe's session and the evidence's are drawn as chat messages"
    assert "evidence (a click shows it in the transcript): [w5#resolution](#ev-w5_23_resolution)" in texts(at)
    at = open_page("failures", case=case, tq="batch 7")
    assert "1 of 44 events mention “batch 7”" in texts(at) and len(at.chat_message) == 1
    assert "**batch 7**" in at.chat_message[0].markdown[0].value


def test_compare_pairs_a_variant_with_its_base_by_default(pair_runs, monkeypatch):
    from fixture_runs import BASE, VARIANT

    monkeypatch.setenv("SUPPORTBENCH_RUNS", str(Path(pair_runs["base"]).parent))
    at = open_page("compare", run=VARIANT, mode="runs", a=BASE, b=VARIANT)
    no_exception(at)
    pairs = at.multiselect(key=_key(at, "pair")).value
    assert pairs == ["history_stuffing → history_stuffing", "session_aware → session_aware[repeat_threshold=0.15]"]
    assert int(at.metric[3].value) == 0  # every case paired: nothing on one side only
    crit = at.dataframe[0].value
    assert "session_aware -> session_aware[repeat_threshold=0.15]" in set(crit["strategy"])


def test_compare_says_loudly_when_two_runs_share_no_case(pair_runs, monkeypatch):
    from fixture_runs import BASE, OTHER

    monkeypatch.setenv("SUPPORTBENCH_RUNS", str(Path(pair_runs["base"]).parent))
    at = open_page("compare", run=OTHER, mode="runs", a=BASE, b=OTHER)
    no_exception(at)
    assert any("These runs share no case" in e.value for e in at.error)
    assert not at.metric and not figures(at)  # no delta is shown as if it were a result


def test_a_link_to_a_missing_run_says_so_and_offers_the_runs_there_are(app_runs):
    at = open_page("failures", run="20990101-gone", case="session_aware|billing-repeat|p-bill|preference_surfacing")
    no_exception(at)
    assert at.title[0].value == "Run not found"
    assert "20990101-gone" in at.error[0].value
    assert str(Path(os.environ["SUPPORTBENCH_RUNS"]).resolve()) not in at.error[0].value  # the folder is not shown to a visitor
    box = at.selectbox[0]
    assert {o.split(" · ")[0] for o in box.options} == {MAIN, TIGHT}
    assert not at.sidebar.selectbox, "no run picker pretending another run is the one asked for"
    box.set_value(TIGHT).run()
    assert at.query_params["run"] == TIGHT and at.title[0].value == "Failures"  # the page the link asked for
    assert any(m.value.startswith("#### Transcript") for m in at.markdown)  # and its case


def test_leaderboard_per_scenario_table_orders_every_scenario(app_runs):
    at = open_page("leaderboard", controls="1", sorder="name")
    table = at.dataframe[-1].value
    assert list(table["scenario"]) == sorted(["outage", "billing-repeat", "long-history", "two-customers"])
    assert {"oracle", "empty", "session_aware"} <= set(table.columns) and (table["spread"] >= 0).all()


def test_trends_show_distributions_and_the_suites_runs_in_order(app_runs):
    at = open_page("trends", criterion="recall", controls="1")
    no_exception(at)
    hist, boxes, trend = figures(at)
    assert {t["name"] for t in hist["data"]} == {"history_stuffing", "session_aware", "structured", "oracle", "empty"}
    assert all(t["type"] == "box" for t in boxes["data"])
    assert trend["layout"]["xaxis"]["categoryarray"] == [TIGHT, MAIN]  # oldest first: both runs are of suite `test`
    wide = at.dataframe[-1].value
    board = open_page("leaderboard", controls="1").dataframe[0].value.set_index("strategy")["shared"]
    mine = wide.set_index("label").loc[MAIN, list(board.index)].astype(float)
    assert (mine.round(9) == board.astype(float).round(9)).all()  # a point of the trend is the leaderboard's number


def test_trends_read_each_run_once_and_never_its_leaderboard(app_runs, monkeypatch):
    """The trend's cost is bounded: each run of the suite is summarised once (its shared totals,
    kept under its id and content digest), never recomputed on a later paint, and no run's full
    leaderboard (bootstrap intervals, budget use) is computed for it."""
    import harness.analysis.queries as queries
    import pages.trends as trends

    trends.run_totals.clear()
    read, real = [], trends.shared_totals
    monkeypatch.setattr(trends, "shared_totals", lambda res, f: read.append(res.run_ids[0]) or real(res, f))
    boards = []
    real_board = queries.leaderboard
    monkeypatch.setattr(queries, "leaderboard", lambda res, f=queries.Filter(): boards.append(res.run_ids[0]) or real_board(res, f))
    at = open_page("trends", criterion="recall")
    no_exception(at)
    assert sorted(read) == sorted([TIGHT, MAIN]), read  # both runs of suite `test`, once each
    at.run()
    at.selectbox(key=_key(at, "criterion")).set_value("health").run()
    no_exception(at)
    assert sorted(read) == sorted([TIGHT, MAIN]), f"a later paint read a run again: {read}"
    assert not boards, f"the trend computed full leaderboards: {boards}"


def test_a_failed_export_says_so_in_a_sentence_and_logs_the_rest(app_runs, caplog):
    from pages._shared import deferred_export

    build = deferred_export("failures.export", "xml", run=str(app_runs["main"]))
    with pytest.raises(RuntimeError, match=r"^The XML export could not be written; the details are in the app's log\.$"):
        build()
    assert "unknown export format 'xml'" in caplog.text


def test_an_over_budget_context_is_shown_as_the_criteria_judge_it_cut_at_the_budget(tmp_path, monkeypatch, plugins):
    from fixture_runs import long_history

    from harness.run.runner import execute
    from stores.tokens import count_text_tokens
    from stores.registry import parse_specs

    plugins.strategy("over_budget", "shortcut_strategies:OverBudget")
    run = execute([long_history()], parse_specs("over_budget"), tmp_path, run_id="20990101-000000-over").path
    monkeypatch.setenv("SUPPORTBENCH_RUNS", str(tmp_path))
    at = open_page("rankings", run=run.name, scenario="long-history", probe="p-long", strategies=["over_budget"])
    no_exception(at)
    assert "Over budget: the criteria judge the context cut at 300 tokens" in texts(at)
    at = open_page("failures", run=run.name, case="over_budget|long-history|p-long|recall")
    no_exception(at)
    assert "Over budget: the criteria judge what the model would receive" in texts(at)
    seen, returned = at.code[0].value, at.code[1].value
    assert "Week 0 message 0" in returned and "Week 0 message 0" not in seen  # the oldest history is past the cut
    assert count_text_tokens(seen) <= 300 < count_text_tokens(returned)
    assert "The strategy returned, before the cut:" in texts(at)


def test_compare_pairs_decision_policies_like_strategies(app_runs):
    """A policy variant's regressions are cases like any other: the policies are paired by default."""
    at = open_page("compare", mode="runs", a=TIGHT, b=MAIN)
    no_exception(at)
    pairs = at.multiselect(key=_key(at, "pair")).value
    assert {"session_state → session_state", "per_message → per_message"} <= set(pairs)
    crit = at.dataframe[0].value
    assert {"session_state", "per_message"} <= set(crit["strategy"])  # a pair of equal labels is named once


def test_a_capped_health_score_gets_a_cap_bar_so_the_last_bar_stands_at_the_score():
    from pages.health import waterfall

    row = {"base": 90.0, "score": 100.0, "band": "healthy",
           "factors": json.dumps([{"signal": "recent_resolution", "impact": 10.0, "detail": "resolved 2 days ago"},
                                  {"signal": "high_resolution_rate", "impact": 10.0, "detail": "3 of 3 resolved"}])}
    trace = waterfall(row, [("healthy", 70, 100)]).data[0]
    assert list(trace.x) == ["base", "resolved in the last 7 days", "most sessions resolved", "capped at 100", "score"]
    assert "(recent_resolution)" in trace.hovertext[1]  # the id on hover
    assert sum(trace.y[:-1]) == 100.0 and trace.text[-1] == "100"  # plotly's total bar is the running sum


def test_a_waterfall_given_its_steps_does_not_read_the_factors_again():
    """The Health page reads each row's factors once per render (`factors_of`) and hands the steps
    to the axis and the chart: given them, neither parses the row's JSON again."""
    from pages.health import factors_of, waterfall, waterfall_range, waterfall_span, waterfall_steps

    row = {"base": 90.0, "score": 100.0, "band": "healthy",
           "factors": json.dumps([{"signal": "recent_resolution", "impact": 10.0, "detail": "resolved 2 days ago"},
                                  {"signal": "high_resolution_rate", "impact": 10.0, "detail": "3 of 3 resolved"}])}
    steps = waterfall_steps(row, factors_of(row))
    assert steps == waterfall_steps(row)  # the same steps whichever way the factors came
    unreadable = {**row, "factors": "not json"}
    with pytest.raises(json.JSONDecodeError):
        waterfall_steps(unreadable)
    assert waterfall_span(unreadable, steps) == waterfall_span(row)
    assert waterfall_range([unreadable], [steps]) == waterfall_range([row])
    given, parsed = waterfall(unreadable, [("healthy", 70, 100)], None, steps).data[0], waterfall(row, [("healthy", 70, 100)]).data[0]
    assert list(given.x) == list(parsed.x) and list(given.y) == list(parsed.y) and list(given.text) == list(parsed.text)


def test_an_unknown_filter_in_a_link_is_named_not_dropped_silently(app_runs):
    at = open_page("failures", strategy=["session_aware", "no_such_strategy"], criterion="recall")
    no_exception(at)
    assert "no_such_strategy" in texts(at) and "this run does not have" in texts(at)
    assert at.multiselect(key=_key(at, "strategy")).value == ["session_aware"]


def test_compare_shows_the_paired_interval_of_each_mean_delta(app_runs):
    from harness.analysis.queries import delta_intervals
    from harness.analysis.results import Results

    at = open_page("compare", mode="runs", a=TIGHT, b=MAIN)
    no_exception(at)
    crit = at.dataframe[0].value.set_index(["strategy", "criterion"])
    row = crit.loc[("session_aware", "recall")]
    assert row["n_paired"] > 1 and row["lo"] <= row["paired_delta"] <= row["hi"]
    assert pd.isna(crit.loc[("session_aware", "repeat-issue detection"), "lo"])  # an F1 is not a mean of cases: no interval
    with Results([app_runs["tight"], app_runs["main"]]) as res:  # the interval is the normal one over per-case differences
        scores = res.df("SELECT run, scenario, probe_id, coalesce(value, 0) AS v FROM scores "
                        "WHERE strategy = 'session_aware' AND criterion = 'recall'")
        d = delta_intervals(res, TIGHT, MAIN, (("session_aware", "session_aware"),))
    wide = scores.pivot_table(index=["scenario", "probe_id"], columns="run", values="v").dropna()
    diff = wide[MAIN] - wide[TIGHT]
    got = d.set_index("criterion").loc["recall"]
    assert got["n_paired"] == len(diff) and abs(got["paired_delta"] - diff.mean()) < 1e-9
    assert abs(got["hi"] - got["paired_delta"] - 1.96 * diff.std(ddof=1) / len(diff) ** 0.5) < 1e-9


def test_the_glossary_names_every_criterion_total_and_raw_id(app_runs):
    from harness.criteria import registry

    at = open_page("glossary")
    no_exception(at)
    totals, criteria, terms, ids = (d.value for d in at.dataframe)
    assert "total (core, equal weight)" in set(totals["total"])
    assert set(criteria["id"]) == set(registry()) and criteria["judges"].str.len().min() > 20
    assert {"coverage", "fail open", "shared total"} <= set(terms["term"])
    assert dict(zip(ids["id"], ids["shown as"]))["offer_live"] == "offer live support"

"""The running app in a real browser: every page renders, what a reader clicks does what it says,
links reopen what they name, nothing is requested from anywhere but 127.0.0.1; screenshots kept.

Clicks are real mouse events at the element's centre (`browser.Chromium.click_at`). Screenshots
(1280x800 and a phone) go to test-artifacts/screenshots/ (gitignored); with
SUPPORTBENCH_UPDATE_SCREENSHOTS=1 they are also copied to docs/screenshots/, the ones the README
shows. Without chromium the tests are skipped, except under CI=true, where a missing browser is
a failure.
"""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import time
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlparse

import pytest
from browser import PHONE, Chromium, chromium_binary, eventually, scroll_to, serve

from pages import _views as views

pytestmark = [pytest.mark.browser, pytest.mark.slow]  # each server start and page load takes seconds

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts" / "screenshots"
DOCS = ROOT / "docs" / "screenshots"
MAIN = "20260102-000000-main"
TIGHT = "20260101-000000-tight"
CASE = "session_aware|billing-repeat|p-bill|preference_surfacing"
LONG_CASE = "session_aware|long-history|p-long|recall"
DESKTOP = (1280, 800)

# (screenshot name, the router's url path of the page, query params, texts that must render, text to scroll to before the shot)
VIEWS = [
    ("leaderboard", "leaderboard", {"controls": "1"}, ["Leaderboard", "Score by criterion", "Totals, tokens and latency"], None),
    ("rankings", "rankings", {"scenario": "billing-repeat", "probe": "p-bill", "strategies": ["history_stuffing", "session_aware"]},
     ["Rankings per turn", "Probe p-bill", "session_aware"], None),
    ("rankings-candidates", "rankings", {"run": TIGHT, "scenario": "billing-repeat", "probe": "p-bill",
                                         "strategies": ["history_stuffing", "session_aware"]},
     ["Rankings per turn", "gold:", "dropped for budget"], "history_stuffing"),
    ("rankings-diff", "rankings", {"scenario": "billing-repeat", "probe": "p-bill", "da": "session_aware", "db": "empty"},
     ["Two contexts side by side", "in one context only"], "Two contexts side by side"),
    ("health", "health", {"scenario": "billing-repeat", "subject": "c1"}, ["Health", "Gold bands at the probes", "Why: the factors"], None),
    ("failures", "failures", {}, ["Failures", "cases · errors first"], None),
    ("failures-case", "failures", {"case": CASE}, ["Transcript up to the probe", "Context against the gold", "Handoff brief"],
     "billing-repeat · p-bill"),
    ("failures-reply", "failures", {"case": "structured|billing-repeat|p-bill|repeat_issue"},
     ["Context against the gold", "The reply to this context", "returning customer: yes"], "The reply to this context"),
    ("compare", "compare", {"mode": "runs", "a": TIGHT, "b": MAIN}, ["Compare", "Per-criterion deltas", "Cases that flipped"], None),
    ("trends", "trends", {"criterion": "recall"}, ["Distributions and trends", "Per scenario", "Across runs of this suite"], None),
    ("decisions", "decisions", {"scenario": "decision-yes-three-meanings", "turn": "pkg1-yes"},
     ["Decisions", "Policy leaderboard", "One turn", "Irreversible error: false transfer", "affirmative_without_offer"], None),
    ("decisions-turn", "decisions", {"scenario": "decision-locker-down-mid-chat", "turn": "down-yes"},
     ["The locker is down at this turn", "Locker before", "unreadable (down)"], "One turn"),
    ("glossary", "glossary", {}, ["Glossary", "Totals", "Criteria", "Other words", "Ids shown in plain words"], None),
]
PHONE_VIEWS = [
    ("leaderboard-phone", "leaderboard", {}, ["Leaderboard", "Score by criterion"], "Score by criterion"),
    ("failures-case-phone", "failures", {"case": LONG_CASE}, ["Transcript up to the probe"], "Transcript up to the probe"),
]


def link(server: str, url_path: str, params: dict) -> str:
    """The link to a page of the router: the default page is the root URL."""
    path = "" if url_path == views.VIEWS[0].url_path else url_path
    return f"{server}/{path}?{urlencode(params, doseq=True)}"


def query(url: str) -> dict[str, list[str]]:
    return parse_qs(urlparse(url).query)


def keep(shot: Path) -> None:
    assert shot.stat().st_size > 10_000
    if os.environ.get("SUPPORTBENCH_UPDATE_SCREENSHOTS") == "1":
        DOCS.mkdir(parents=True, exist_ok=True)
        shutil.copy2(shot, DOCS / shot.name)


def test_every_page_of_the_router_is_opened_in_the_browser():
    assert {v[1] for v in VIEWS} == {v.url_path for v in views.VIEWS}


@pytest.fixture(scope="module")
def chromium():
    binary = chromium_binary()
    if binary is None:
        reason = "chromium is not installed (apt-get install -y chromium)"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{reason}; CI=true requires the browser test to run")
        pytest.skip(reason)
    return binary


@pytest.fixture(scope="module")
def server(app_runs, chromium):
    with serve(ROOT, Path(app_runs["main"]).parent) as url:
        yield url


@pytest.fixture(scope="module")
def downloads(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("downloads")


@pytest.fixture(scope="module")
def browser(chromium, downloads):
    b = Chromium(chromium, *DESKTOP, downloads=downloads)
    yield b
    b.close()


@pytest.fixture
def desktop(browser):
    browser.viewport(*DESKTOP)
    return browser


@pytest.mark.parametrize("name,path,params,expect,scroll", VIEWS, ids=[v[0] for v in VIEWS])
def test_page_renders_in_chromium(server, desktop, name, path, params, expect, scroll):
    text = desktop.open(link(server, path, {"run": MAIN, **params}), expect)
    assert "Traceback" not in text and "Something went wrong" not in text
    assert "Deploy" not in text  # a local workbench: the toolbar has no deploy button (client.toolbarMode)
    if scroll:
        scroll_to(desktop, scroll)
    shot = ARTIFACTS / f"{name}.png"
    desktop.screenshot(shot)
    keep(shot)


@pytest.mark.parametrize("name,path,params,expect,scroll", PHONE_VIEWS, ids=[v[0] for v in PHONE_VIEWS])
def test_page_renders_on_a_phone(server, browser, name, path, params, expect, scroll):
    browser.viewport(*PHONE, mobile=True)
    try:
        text = browser.open(link(server, path, {"run": MAIN, **params}), expect)
        assert "Traceback" not in text and "Something went wrong" not in text
        if scroll:
            scroll_to(browser, scroll)
        overflow = browser.evaluate("document.querySelector('[data-testid=stMain]').scrollWidth - window.innerWidth")
        assert overflow <= 1, f"the page is {overflow}px wider than the phone"
        shot = ARTIFACTS / f"{name}.png"
        browser.screenshot(shot)
        keep(shot)
    finally:
        browser.viewport(*DESKTOP)


def test_the_phone_heatmap_keeps_every_cell_readable(server, browser):
    """On a phone the heatmap still shows every strategy and criterion, cells wide enough for their value."""
    browser.viewport(*PHONE, mobile=True)
    try:
        browser.open(link(server, "leaderboard", {"run": MAIN, "controls": "1"}), ["Score by criterion"])
        browser.wait_drawn(".js-plotly-plot", PLOT_DRAWN, "the heatmap drawn")
        size = browser.evaluate("""(() => { const gd = document.querySelector('.js-plotly-plot'); const L = gd._fullLayout;
            return {w: L.xaxis._length / L.xaxis._categories.length, h: L.yaxis._length / L.yaxis._categories.length,
                    fits: gd.getBoundingClientRect().right <= window.innerWidth + 1}; })()""")
    finally:
        browser.viewport(*DESKTOP)
    assert size["fits"], size
    assert size["w"] >= 40 and size["h"] >= 28, size  # room for "0.67" at the cell font, on a 390 px screen


# --- clicks ----------------------------------------------------------------------------------------


PLOT_DRAWN = "e._fullLayout && e._fullLayout.xaxis && e._fullLayout.xaxis._categories && e._fullLayout.xaxis._categories.length"
"""The heatmap is laid out: its axes have their categories (the page's text can arrive before)."""


CELL = """((strategy, criterion) => {
  const gd = document.querySelector('.js-plotly-plot');
  gd.scrollIntoView({block: 'center'});
  const L = gd._fullLayout, xa = L.xaxis, ya = L.yaxis, r = gd.getBoundingClientRect();
  return {x: r.left + xa._offset + xa.c2p(xa._categories.indexOf(strategy)),
          y: r.top + ya._offset + ya.c2p(ya._categories.indexOf(criterion)),
          w: xa._length / xa._categories.length, h: ya._length / ya._categories.length};
})"""


def click_cell(browser: Chromium, strategy: str, criterion: str, corner: bool = False) -> None:
    """A real click on a heatmap cell (near its corner with `corner`: the whole cell answers, not only its middle)."""
    browser.wait_drawn(".js-plotly-plot", PLOT_DRAWN, "the heatmap drawn")
    at = browser.evaluate(f"({CELL})({json.dumps(strategy)}, {json.dumps(criterion)})")
    time.sleep(0.4)
    at = browser.evaluate(f"({CELL})({json.dumps(strategy)}, {json.dumps(criterion)})")
    x, y = at["x"], at["y"]
    if corner:
        x, y = x + 0.4 * at["w"], y + 0.35 * at["h"]
    browser.hover_at(x, y)
    time.sleep(0.3)
    browser.click_at(x, y)


def wait_until(browser: Chromium, js: str, what: str) -> None:
    """Poll a JavaScript condition until it holds (`eventually`: only a hang fails)."""
    eventually(lambda: browser.evaluate(js), what)


def test_a_leaderboard_cell_click_opens_its_failing_cases(server, desktop):
    desktop.open(link(server, "leaderboard", {"run": MAIN}), ["Score by criterion"])
    click_cell(desktop, "session_aware", "preference_surfacing", corner=True)
    url = desktop.wait_url("/failures")
    assert query(url)["strategy"] == ["session_aware"] and query(url)["criterion"] == ["preference_surfacing"]
    desktop.wait_for(["Failures", "preference surfacing", "· errors first"])


def test_an_unsupported_cell_click_opens_its_unsupported_cases(server, desktop):
    desktop.open(link(server, "leaderboard", {"run": MAIN}), ["Score by criterion"])
    click_cell(desktop, "history_stuffing", "health")
    url = desktop.wait_url("/failures")
    assert query(url)["unsupported"] == ["1"] and query(url)["criterion"] == ["health"]
    desktop.wait_for(["3 cases · errors first"])  # the three scenarios with a health probe, all unsupported


def test_a_scenario_row_click_opens_that_scenarios_failures(server, desktop):
    desktop.open(link(server, "leaderboard", {"run": MAIN, "sorder": "name"}), ["By scenario"])
    click_row(desktop, "By scenario", 0)  # billing-repeat, first by name
    url = desktop.wait_url("/failures")
    assert query(url)["scenario"] == ["billing-repeat"]


def click_row(browser: Chromium, heading: str, row: int, prefix: bool = False) -> None:
    """Click the selection box of `row` in the first table under the heading `heading` (or the text
    starting so, with `prefix`) (a canvas grid: rows are at fixed heights under a header row)."""
    eventually(lambda: browser.evaluate(f"""(() => {{
      const want = {json.dumps(heading)}, prefix = {json.dumps(prefix)};
      const h = [...document.querySelectorAll('h1,h2,h3,h4,p,span')].find(e => prefix ? e.innerText.trim().startsWith(want)
                                                                               : e.innerText.trim() === want);
      return !!h && [...document.querySelectorAll('[data-testid=stDataFrame]')].some(
        d => (h.compareDocumentPosition(d) & Node.DOCUMENT_POSITION_FOLLOWING) && d.getBoundingClientRect().height > 0);
    }})()"""), f"a table under {heading!r} drawn")
    at = browser.evaluate(f"""(() => {{
      const want = {json.dumps(heading)}, prefix = {json.dumps(prefix)};
      const h = [...document.querySelectorAll('h1,h2,h3,h4,p,span')].find(e => prefix ? e.innerText.trim().startsWith(want)
                                                                               : e.innerText.trim() === want);
      const all = [...document.querySelectorAll('[data-testid=stDataFrame]')];
      const t = all.find(d => h.compareDocumentPosition(d) & Node.DOCUMENT_POSITION_FOLLOWING);
      t.scrollIntoView({{block: 'center'}});
      const r = t.getBoundingClientRect();
      return {{x: r.left + 18, y: r.top + 35 + 35 * {row} + 17}};
    }})()""")
    time.sleep(0.5)
    browser.click_at(at["x"], at["y"])


def test_a_group_click_lists_that_groups_cases(server, desktop):
    desktop.open(link(server, "failures", {"run": MAIN, "controls": "1", "group": "criterion"}), ["click one to list its cases"])
    click_row(desktop, "Failures", 0)  # the biggest group first
    desktop.wait_for(["· errors first"], gone=["click one to list its cases"])
    url = desktop.url()
    assert "group" not in query(url) and len(query(url)["criterion"]) == 1


def test_the_export_downloads_every_case_of_the_selection(server, desktop, downloads):
    text = desktop.open(link(server, "failures", {"run": TIGHT, "controls": "1"}), ["cases · errors first"])
    total = int(text.split(" cases · errors first")[0].split("\n")[-1].replace(",", ""))
    assert total > 25, "more cases than one page: the export must not be the page"
    for f in downloads.glob("*"):
        f.unlink()
    desktop.click_text("CSV", scope="[data-testid=stDownloadButton]")
    files = eventually(lambda: list(downloads.glob("*.csv")), "a CSV arrived in the downloads folder")
    rows = list(csv.DictReader(io.StringIO(files[0].read_text())))
    assert len(rows) == total and {"strategy", "scenario", "criterion", "explanation"} <= set(rows[0])
    assert {r["strategy"] for r in rows} >= {"empty", "session_aware"}


def test_the_jump_link_brings_the_probe_into_view(server, desktop):
    desktop.open(link(server, "failures", {"run": MAIN, "case": LONG_CASE}), ["Jump to the probe"])
    eventually(lambda: desktop.evaluate("!!document.getElementById('the-probe')"), "the probe's anchor drawn")
    assert desktop.locate("↓ Jump to the probe")  # scrolled into view; the probe is further down, out of sight
    probe = "document.getElementById('the-probe').getBoundingClientRect().top"
    assert desktop.evaluate(probe) > DESKTOP[1]
    desktop.click_until("↓ Jump to the probe", lambda: 0 <= desktop.evaluate(probe) < DESKTOP[1] - 60,
                        what="the probe scrolled into view")


def test_an_earlier_session_opens_when_clicked(server, desktop):
    text = desktop.open(link(server, "failures", {"run": MAIN, "case": LONG_CASE}), ["Session w4"])
    assert "Week 4 message 29" not in text  # collapsed
    assert "Week 5 message 35" in text  # open: w5 holds the verdict's evidence (its resolution)
    desktop.click_until("Session w4", "Week 4 message 29", prefix=True)


def test_a_transcript_search_filters_it_and_goes_into_the_url(server, desktop):
    desktop.open(link(server, "failures", {"run": MAIN, "case": LONG_CASE}), ["Search the transcript"])
    desktop.click_selector('input[aria-label="Search the transcript"]')
    desktop.type_text("batch 7")
    desktop.wait_for(["1 of 44 events mention “batch 7”"])
    assert query(desktop.url())["tq"] == ["batch 7"]


def test_a_flipped_case_click_opens_both_sides_filtered_to_the_flip(server, desktop):
    desktop.open(link(server, "compare", {"run": MAIN, "mode": "runs", "a": TIGHT, "b": MAIN}), ["Cases that flipped"])
    click_row(desktop, "Cases that flipped", 0)
    url = desktop.wait_url("/failures")
    q = query(url)
    strategy, scenario, _probe, criterion = q["case"][0].split("|")
    assert q["run"] == [MAIN] and q["vs"] == [TIGHT]
    assert q["strategy"] == [strategy] and q["criterion"] == [criterion] and q["scenario"] == [scenario]  # the list: the flip's
    text = desktop.wait_for(["A vs B:", "What moved:", "Transcript up to the probe"])
    assert f"A · {TIGHT}" in text and f"B · {MAIN}" in text  # both runs named, not a silent switch
    assert "A's context" in text and "B's context" in text


def test_a_decisions_row_click_opens_that_turn(server, desktop):
    from fixture_runs import decision_scenarios

    from stores.protocol import Turn

    scen = next(s for s in decision_scenarios() if s.id == "decision-routing")
    turns = [e.id for e in scen.events if isinstance(e, Turn)]
    desktop.open(link(server, "decisions", {"run": MAIN, "scenario": scen.id}), ["One turn", "click a turn's row"])
    for row in (0, 1):
        click_row(desktop, "✓ matches the gold", row, prefix=True)
        wait_until(desktop, "[...document.querySelectorAll('[data-testid=stSelectbox] input[aria-label=\"Turn\"]')]"
                   f".some(i => i.value.startsWith({json.dumps(turns[row] + ' — ')}))", f"the Turn picker showing {turns[row]}")
        desktop.wait_for(["Locker before → after"])


def test_the_health_moment_restarts_when_the_scenario_changes(server, desktop):
    desktop.open(link(server, "health", {"run": MAIN, "scenario": "billing-repeat", "subject": "c1", "at": "8"}),
                 ["Why: the factors"])
    desktop.choose("Scenario", "long-history — test scenario long-history")
    desktop.wait_for(["Why: the factors"])
    eventually(lambda: query(desktop.url()).get("scenario") == ["long-history"], "the URL names the new scenario")
    desktop.wait_for(["Why: the factors"])  # the run the new scenario started has ended
    assert query(desktop.url()).get("at") != ["8"]  # the latest moment is left out of the URL


# --- links -------------------------------------------------------------------------------------------


def test_deep_link_restores_selection_in_the_browser(server, desktop):
    url = f"{server}/rankings?{urlencode({'run': TIGHT, 'scenario': 'long-history', 'probe': 'p-long', 'strategies': 'empty'})}"
    text = desktop.open(url, ["Probe p-long", "#### empty".removeprefix("#### ")])
    assert "budget 60 tokens" in text  # the tight run's budget: the run came from the URL too


def test_the_default_pages_own_path_reopens_the_root_with_its_parameters(server, desktop):
    text = desktop.open(f"{server}/leaderboard?{urlencode({'run': TIGHT, 'controls': '1'})}", ["Score by criterion"])
    assert "Page not found" not in text and "does not seem to exist" not in text
    url = desktop.url()
    assert urlparse(url).path == "/" and query(url)["run"] == [TIGHT] and query(url)["controls"] == ["1"]


def test_a_link_to_a_missing_run_says_so_and_a_pick_opens_one(server, desktop):
    text = desktop.open(link(server, "failures", {"run": "20990101-gone", "case": CASE}), ["Run not found"])
    assert "20990101-gone" in text and "Transcript" not in text
    desktop.choose("Open one of the 2 runs that exist", f"{TIGHT} · test")
    desktop.wait_for(["Transcript up to the probe"])
    assert query(desktop.url())["run"] == [TIGHT]


def test_no_request_leaves_127_0_0_1(server, chromium):
    """Every page, a case, a phone: the browser asks nothing of any other host (no font, icon or metrics)."""
    b = Chromium(chromium, *DESKTOP)
    try:
        for _name, path, params, expect, _ in VIEWS:
            b.open(link(server, path, {"run": MAIN, **params}), expect)
        b.viewport(*PHONE, mobile=True)
        b.open(link(server, "failures", {"run": MAIN, "case": LONG_CASE}), ["Transcript up to the probe"])
        b.pump(2.0)
        requests = list(b.requests)
    finally:
        b.close()
    assert len(requests) > 20, "the recorder saw the page's own requests"
    outside = sorted({u for u in requests if urlparse(u).scheme not in ("data", "blob")
                      and urlparse(u).hostname != "127.0.0.1"})
    assert not outside, outside


def test_next_and_previous_walk_the_cases_of_the_selection(server, desktop):
    desktop.open(link(server, "failures", {"run": MAIN, "strategy": "session_aware"}), ["· errors first"])
    click_row(desktop, "Failures", 0)
    desktop.wait_for(["Case 1 of", "Transcript up to the probe"])
    first = query(desktop.wait_url("case="))["case"]
    desktop.click_text("next case →")
    desktop.wait_for(["Case 2 of"])
    wait_until(desktop, f"!location.search.includes({json.dumps(urlencode({'case': first[0]})[5:])})", "the URL naming the next case")
    desktop.click_text("← previous case")
    desktop.wait_for(["Case 1 of"])
    wait_until(desktop, f"location.search.includes({json.dumps(urlencode({'case': first[0]})[5:])})", "the URL naming the first case")


def test_on_a_phone_labels_and_controls_fit(server, browser):
    """390 px: every heatmap cell's text inside its cell, Compare's axis labels inside the chart, and
    every option of the Failures list control on screen."""
    browser.viewport(*PHONE, mobile=True)
    try:
        browser.open(link(server, "leaderboard", {"run": MAIN, "controls": "1"}), ["Score by criterion"])
        wait_until(browser, "!!document.querySelector('.js-plotly-plot')?._fullLayout", "the heatmap drawn")
        wide = browser.evaluate("""(() => { const gd = document.querySelector('.js-plotly-plot'), xa = gd._fullLayout.xaxis;
            const cell = xa._length / xa._categories.length;
            return [...gd.querySelectorAll('.heatmaplayer text, g.textpoint text, .hm text')].map(t => t.getBBox().width)
              .filter(w => w > cell); })()""")
        assert not wide, f"cell texts wider than their cell: {wide}"
        browser.open(link(server, "compare", {"run": MAIN, "mode": "runs", "a": TIGHT, "b": MAIN}), ["Per-criterion deltas"],
                     timeout=90)
        wait_until(browser, "!!document.querySelector('.js-plotly-plot')?._fullLayout", "the deltas drawn")
        cut = browser.evaluate("""(() => { const gd = document.querySelector('.js-plotly-plot'), box = gd.getBoundingClientRect();
            return [...gd.querySelectorAll('.ytick text')].map(t => t.getBoundingClientRect())
              .filter(r => r.left < box.left - 1 || r.right > box.right + 1).length; })()""")
        assert cut == 0, f"{cut} axis labels cut"
        browser.open(link(server, "failures", {"run": MAIN}), ["one by one", "· errors first"])
        off = browser.evaluate("""[...document.querySelectorAll('[data-testid=stButtonGroup] button')]
            .filter(b => b.getBoundingClientRect().right > window.innerWidth + 1).map(b => b.innerText)""")
        assert not off, f"list options off screen: {off}"
    finally:
        browser.viewport(*DESKTOP)

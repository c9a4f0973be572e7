"""The running app in a real browser: every page renders its expected text; screenshots kept.

Screenshots go to test-artifacts/screenshots/ (gitignored); with SUPPORTBENCH_UPDATE_SCREENSHOTS=1
they are also copied to docs/screenshots/, the ones the README shows. Without chromium the test is
skipped, except under CI=true, where a missing browser is a failure.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from urllib.parse import urlencode

import pytest
from browser import Chromium, chromium_binary, scroll_to, serve

import app as router

pytestmark = [pytest.mark.browser, pytest.mark.slow]  # each server start and page load takes seconds

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts" / "screenshots"
DOCS = ROOT / "docs" / "screenshots"
MAIN = "20260102-000000-main"
TIGHT = "20260101-000000-tight"
CASE = "session_aware|billing-repeat|p-bill|preference_surfacing"

# (screenshot name, the router's url path of the page, query params, texts that must render, text to scroll to before the shot)
VIEWS = [
    ("leaderboard", "leaderboard", {"controls": "1"}, ["Leaderboard", "Score by criterion", "Totals, tokens and latency"], None),
    ("rankings", "rankings", {"scenario": "billing-repeat", "probe": "p-bill", "strategies": ["history_stuffing", "session_aware"]},
     ["Rankings per turn", "Probe p-bill", "session_aware"], None),
    ("rankings-candidates", "rankings", {"scenario": "billing-repeat", "probe": "p-bill", "strategies": ["history_stuffing", "session_aware"]},
     ["Rankings per turn", "gold:"], "history_stuffing"),
    ("health", "health", {"scenario": "billing-repeat", "subject": "c1"}, ["Health", "Gold bands at the probes", "Why: the factors"], None),
    ("failures", "failures", {}, ["Failures", "cases · errors first"], None),
    ("failures-case", "failures", {"case": CASE}, ["Transcript up to the probe", "Context against the gold", "Handoff brief"],
     "billing-repeat · p-bill"),
    ("compare", "compare", {"mode": "runs", "a": TIGHT, "b": MAIN}, ["Compare", "Per-criterion deltas", "Cases that flipped"], None),
]


def link(server: str, url_path: str, params: dict) -> str:
    """The link to a page of the router: the default page is the root URL."""
    path = "" if url_path == router.VIEWS[0].url_path else url_path
    return f"{server}/{path}?{urlencode(params, doseq=True)}"


def test_every_page_of_the_router_is_opened_in_the_browser():
    assert {v[1] for v in VIEWS} == {v.url_path for v in router.VIEWS}


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
def browser(chromium):
    b = Chromium(chromium, width=1400, height=1000)
    yield b
    b.close()


@pytest.mark.parametrize("name,path,params,expect,scroll", VIEWS, ids=[v[0] for v in VIEWS])
def test_page_renders_in_chromium(server, browser, name, path, params, expect, scroll):
    text = browser.open(link(server, path, {"run": MAIN, **params}), expect, timeout=90)
    assert "Traceback" not in text and "Error" not in text.split("\n")[0]
    if scroll:
        scroll_to(browser, scroll)
    shot = ARTIFACTS / f"{name}.png"
    browser.screenshot(shot)
    assert shot.stat().st_size > 10_000
    if os.environ.get("SUPPORTBENCH_UPDATE_SCREENSHOTS") == "1":
        DOCS.mkdir(parents=True, exist_ok=True)
        shutil.copy2(shot, DOCS / shot.name)


def test_deep_link_restores_selection_in_the_browser(server, browser):
    url = f"{server}/rankings?{urlencode({'run': TIGHT, 'scenario': 'long-history', 'probe': 'p-long', 'strategies': 'empty'})}"
    text = browser.open(url, ["Probe p-long", "#### empty".removeprefix("#### ")], timeout=90)
    assert "budget 60 tokens" in text  # the tight run's budget: the run came from the URL too


# (url path, query params, texts the page must render): links a PM would paste into a ticket
FIRST_LINKS = [
    ("failures", {"run": TIGHT, "case": CASE}, ["Transcript up to the probe", "Context against the gold"]),
    ("rankings", {"run": TIGHT, "scenario": "billing-repeat", "probe": "p-bill"}, ["Rankings per turn", "Probe p-bill"]),
]


@pytest.mark.parametrize("path,params,expect", FIRST_LINKS, ids=[f[0] for f in FIRST_LINKS])
def test_a_deep_link_that_is_a_fresh_servers_first_request_runs_under_the_router(app_runs, browser, path, params, expect):
    """Before any session has routed, Streamlit would run `pages/<path>.py` by itself (no picker,
    no navigation): the page must hand over to the router."""
    with serve(ROOT, Path(app_runs["main"]).parent) as url:
        browser.open(link(url, path, params), expect, timeout=90)
        sidebar = browser.text('[data-testid="stSidebar"]')
        picked = browser.input_values('[data-testid="stSidebar"] [data-testid="stSelectbox"]')
    missing = [v.title for v in router.VIEWS if v.title not in sidebar]
    assert not missing, f"navigation lacks {missing}; sidebar reads {sidebar[:300]!r}"
    assert "Run" in sidebar and picked == [TIGHT], f"no run picker showing the linked run: {picked}; sidebar reads {sidebar[:300]!r}"

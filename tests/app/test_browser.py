"""The running app in a real browser: every page renders its expected text; screenshots kept.

Screenshots go to test-artifacts/screenshots/ (gitignored); with SUPPORTBENCH_UPDATE_SCREENSHOTS=1
they are also copied to docs/screenshots/, the ones the README shows. Without chromium the test is
skipped, except under CI=true, where a missing browser is a failure.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from urllib.parse import urlencode

import pytest
from browser import Chromium, chromium_binary, free_port, scroll_to, start_app, wait_http

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts" / "screenshots"
DOCS = ROOT / "docs" / "screenshots"
MAIN = "20260102-000000-main"
TIGHT = "20260101-000000-tight"
CASE = "session_aware|billing-repeat|p-bill|preference_surfacing"

# (screenshot name, url path, query params, texts that must render, text to scroll to before the shot)
VIEWS = [
    ("leaderboard", "", {"controls": "1"}, ["Leaderboard", "Score by criterion", "Totals, tokens and latency"], None),
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
    port = free_port()
    proc = start_app(ROOT, Path(app_runs["main"]).parent, port)
    try:
        wait_http(f"http://127.0.0.1:{port}/_stcore/health", timeout=90)
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()


@pytest.fixture(scope="module")
def browser(chromium):
    b = Chromium(chromium, width=1400, height=1000)
    yield b
    b.close()


@pytest.mark.parametrize("name,path,params,expect,scroll", VIEWS, ids=[v[0] for v in VIEWS])
def test_page_renders_in_chromium(server, browser, name, path, params, expect, scroll):
    url = f"{server}/{path}?{urlencode({'run': MAIN, **params}, doseq=True)}"
    text = browser.open(url, expect, timeout=90)
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

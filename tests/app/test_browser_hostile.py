"""Data is text, never markup, in a real browser: a run whose every text field is hostile Markdown
and HTML (images, links, autolinks, raw HTML, Streamlit's colour directives) pointing at a
listener on a second loopback address; no page showing it makes the browser fetch anything from
there, nothing of it becomes a link or an image, and each piece is shown as the text it is.

The listener (127.0.0.2) is not the app's address (127.0.0.1), so a request to it can only come
from data drawn as markup. Pages visited: a case (transcript, verdict, context, the reply panel,
the handoff brief), Rankings, Decisions, Compare, the Leaderboard.
"""

from __future__ import annotations

import http.server
import os
import threading
import time
from dataclasses import replace
from pathlib import Path
from urllib.parse import urlencode, urlparse

import pytest
from browser import Chromium, chromium_binary, serve
from helpers import probe, resolve, scenario, turn

pytestmark = [pytest.mark.browser, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
ELSEWHERE = "127.0.0.2"
RUN, OLD = "20260301-000000-hostile", "20260228-000000-hostile-old"


class Listener:
    """An HTTP server on 127.0.0.2 that records every path asked of it."""

    def __init__(self) -> None:
        seen = self.seen = []

        class Record(http.server.BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 (the standard library's name)
                seen.append(self.path)
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer((ELSEWHERE, 0), Record)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def hostile(self, where: str) -> str:
        """Markup that would reach the listener in every way Markdown and HTML allow, tagged `where`."""
        base = f"http://{ELSEWHERE}:{self.port}"
        return (f"![x]({base}/img-{where}.png) [click]({base}/link-{where}) {base}/auto-{where} "
                f"<img src='{base}/html-{where}.png'> :red[**FREE REFUND {where}**] $x^2$ :material/home:")

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def hostile_scenarios(h: Listener):
    """One conversation whose every text is hostile, and a canonical decision scenario whose
    customer turns are."""
    from harness.format.loader import load_scenario
    from harness.format.model import Subject
    from stores.protocol import Turn

    story = scenario([
        turn("e-1", "I'm " + h.hostile("turn-old"), 0, session="old"),
        turn("e-2", "Try this: " + h.hostile("agent-turn"), 3, session="old", role="agent", kind="action"),
        resolve("old", "Resolved: " + h.hostile("summary"), 10),
        turn("e-3", "Please call me " + h.hostile("preference"), 60 * 24 * 20, session="new"),
        turn("e-4", "Same problem again " + h.hostile("turn"), 60 * 24 * 20 + 1, session="new"),
        probe("p-h", "answer " + h.hostile("task"), 60 * 24 * 20 + 2, session="new", include=("e-4",),
              preferences=("e-3",), repeat_of="old", handoff=True, health="watch"),
    ], id="hostile", subjects=("c1",))
    story = replace(story, subjects={"c1": Subject("c1", "Mallory " + h.hostile("subject"))},
                    title="hostile " + h.hostile("title"))
    canonical = ROOT / "datasets" / "canonical" / "decision-yes-three-meanings.yaml"
    decision = load_scenario(canonical)
    decision = replace(decision, suite="test", events=tuple(
        replace(e, text=e.text + " " + h.hostile(f"decision-{e.id}")) if isinstance(e, Turn) else e
        for e in decision.events))
    return [story, decision]


@pytest.fixture(scope="module")
def listener():
    h = Listener()
    yield h
    h.close()


@pytest.fixture(scope="module")
def hostile_runs(listener, tmp_path_factory):
    from fixture_runs import tighten

    from harness.run.runner import execute
    from stores.decisions.registry import parse_policies
    from stores.registry import parse_specs

    root = tmp_path_factory.mktemp("hostile-runs")
    specs = parse_specs("history_stuffing,structured,session_aware")
    policies = parse_policies("session_state,per_message")
    scs = hostile_scenarios(listener)
    execute([tighten(s, 40) for s in scs], specs, root, run_id=OLD, name="old " + listener.hostile("run-name-old"),
            command="hostile old", policies=policies)
    execute(scs, specs, root, run_id=RUN, name=listener.hostile("run-name"), command="hostile", policies=policies)
    return root


@pytest.fixture(scope="module")
def chromium():
    binary = chromium_binary()
    if binary is None:
        if os.environ.get("CI") == "true":
            pytest.fail("chromium is not installed; CI=true requires the browser test to run")
        pytest.skip("chromium is not installed (apt-get install -y chromium)")
    return binary


# (url path, query params, texts that must render): every page that shows the run's texts
PAGES = [
    ("failures", {"case": "session_aware|hostile|p-h|preference_surfacing"},
     ["Transcript up to the probe", "Context against the gold", "Handoff brief", "FREE REFUND turn"]),
    ("failures", {"case": "structured|hostile|p-h|recall"}, ["The reply to this context", "FREE REFUND turn"]),
    ("failures", {"case": "session_aware|hostile|p-h|recall", "tq": "problem"}, ["events mention", "FREE REFUND turn"]),
    ("rankings", {"scenario": "hostile", "probe": "p-h"}, ["Rankings per turn", "FREE REFUND task"]),
    ("decisions", {"scenario": "decision-yes-three-meanings"}, ["One turn", "Policy leaderboard", "FREE REFUND decision-"]),
    ("compare", {"mode": "runs", "a": OLD, "b": RUN}, ["Per-criterion deltas", "Cases that flipped"]),
    ("leaderboard", {"controls": "1"}, ["Score by criterion", "FREE REFUND run-name"]),
    ("failures", {}, ["cases · errors first"]),
]


def test_no_page_fetches_from_another_host_and_data_reads_as_text(hostile_runs, listener, chromium):
    b = Chromium(chromium, 1280, 900)
    try:
        with serve(ROOT, hostile_runs) as server:
            for path, params, expect in PAGES:
                url = f"{server}/{'' if path == 'leaderboard' else path}?{urlencode({'run': RUN, **params})}"
                text = b.open(url, expect, timeout=120)
                assert "Something went wrong" not in text and "Traceback" not in text
                # what markup would have made of the data: links and images to the listener, styled directives
                made = b.evaluate(f"""(() => {{
                    const host = {ELSEWHERE!r};
                    return [...document.querySelectorAll('a[href], img[src], [style*="url("]')]
                      .map(e => e.getAttribute('href') || e.getAttribute('src') || e.getAttribute('style'))
                      .filter(u => u.includes(host)); }})()""")
                assert not made, f"{path} {params}: data became markup: {made}"
                b.pump(1.0)
        time.sleep(0.5)
    finally:
        requests = list(b.requests)
        b.close()
    fetched = sorted({u for u in requests if urlparse(u).hostname == ELSEWHERE})
    assert not fetched, f"the browser fetched from {ELSEWHERE}: {fetched}"
    assert not listener.seen, f"the listener on {ELSEWHERE} was asked for {listener.seen}"


def test_the_hostile_text_is_shown_as_the_text_it_is(hostile_runs, listener, chromium):
    """The reader sees the data literally: the image syntax, the directive, the maths, the raw HTML."""
    b = Chromium(chromium, 1280, 900)
    try:
        with serve(ROOT, hostile_runs) as server:
            url = f"{server}/failures?{urlencode({'run': RUN, 'case': 'structured|hostile|p-h|recall'})}"
            text = b.open(url, ["The reply to this context", "FREE REFUND turn**]"], timeout=120)
    finally:
        b.close()
    text = text.replace("\u2060", "")  # the invisible word joiner that keeps an address in data from being a link
    base = f"http://{ELSEWHERE}:{listener.port}"
    for piece in (f"![x]({base}/img-turn.png)", f"[click]({base}/link-turn)", f"<img src='{base}/html-turn.png'>",
                  ":red[**FREE REFUND turn**]", "$x^2$", ":material/home:", "Mallory ![x]("):
        assert piece in text, f"{piece!r} is not shown as text"

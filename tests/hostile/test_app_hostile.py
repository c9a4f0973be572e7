"""The app next to damaged runs and hostile links: every page usable, no traceback on any page,
and it listens on this machine only."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlencode

import pytest
from damage import DAMAGES, copy_run, scramble_middle, truncate, without_checksums
from helpers import HANG
from hostile_cli import ROOT

sys.path.insert(0, str(ROOT / "tests" / "app"))

from streamlit.testing.v1 import AppTest  # noqa: E402

APP = str(ROOT / "app.py")
PAGES = ["leaderboard", "rankings", "health", "failures", "compare"]


@pytest.fixture
def damaged_runs(runs, monkeypatch):
    """`good`, then a newer run with a truncated part and a newer one with an unusable manifest."""
    truncate(copy_run(runs, "truncated"))
    DAMAGES["strategies-oops"](runs)
    monkeypatch.setenv("SUPPORTBENCH_RUNS", str(runs))
    return runs


def page(name: str, **params) -> AppTest:
    """Open `page` as a link does (the default page is the root URL). A link without a run gets the
    run named in its address by the browser before anything is drawn (`pages._shared.name_the_run`):
    the run the app asks for is put into the URL and the page run again, as the browser does."""
    at = AppTest.from_file(APP, default_timeout=HANG)
    at.query_params.update(params)
    if name != PAGES[0]:
        at.switch_page(f"pages/{name}.py")
    at.run()
    named = [m for e in at.get("html") for m in re.findall(r"searchParams\.set\('run', (\"[^\"]*\")\)", e.proto.body)]
    if "run" not in params and named:
        at.query_params["run"] = json.loads(named[0])
        at.run()
    return at


def shown(at: AppTest) -> str:
    kinds = ("title", "markdown", "caption", "info", "success", "error", "warning")
    return "\n".join(str(e.value) for kind in kinds for e in getattr(at, kind))


@pytest.mark.parametrize("name", PAGES)
def test_every_page_stays_usable_next_to_damaged_newer_runs(damaged_runs, name):
    at = page(name)
    assert not at.exception, [e.message for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    assert [o.split(" · ")[0] for o in at.sidebar.selectbox[0].options] == ["good"]  # damaged runs are never offered
    notes = re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", "\n".join(c.value for c in at.sidebar.caption))  # escaped data, read as text
    assert "`truncated`: scores/part-000000.parquet: truncated" in notes
    assert "`damaged`: manifest.json: strategies: input should be a valid list" in notes


def test_a_damaged_run_named_in_the_link_is_named_as_damaged_and_the_usable_runs_offered(damaged_runs):
    at = page("leaderboard", run="truncated")
    assert not at.exception, [e.message for e in at.exception]
    assert at.title[0].value == "Run not found" and "damaged" in at.error[0].value and "truncated" in at.error[0].value
    assert [o.split(" · ")[0] for o in at.selectbox[0].options] == ["good"]  # never opened, never another run in its place


def test_a_page_that_raises_says_so_briefly_and_the_app_carries_on(runs, monkeypatch):
    # framing intact and no checksums (a run written before they were recorded): only reading its rows fails
    scramble_middle(without_checksums(copy_run(runs, "scrambled")))
    monkeypatch.setenv("SUPPORTBENCH_RUNS", str(runs))
    at = page("leaderboard", run="scrambled")
    assert not at.exception, [e.message for e in at.exception]
    (err,) = at.error
    assert err.value.startswith("Something went wrong showing this page") and "log" in err.value
    assert "Traceback" not in shown(at) and "File \"" not in shown(at)
    assert [o.split(" · ")[0] for o in at.sidebar.selectbox[0].options] == ["scrambled", "good"]
    at.query_params["run"] = "good"  # the same session moves on to another run (AppTest keeps the URL it was given)
    at.sidebar.selectbox[0].set_value("good").run()
    assert at.sidebar.selectbox[0].value == "good" and not at.error and not at.exception


@pytest.mark.parametrize("case", ["foo", "a|b", "|||", "x|y|z|w|extra"])
def test_a_malformed_case_link_is_a_warning_not_a_traceback(runs, monkeypatch, case):
    monkeypatch.setenv("SUPPORTBENCH_RUNS", str(runs))
    at = page("failures", case=case)
    assert not at.exception, [e.message for e in at.exception]
    assert any("is not a case" in w.value for w in at.warning)


# -- the running app --------------------------------------------------------------------------


def listening_addresses(port: int) -> set[str]:
    """Local addresses with a socket LISTENing on `port` (IPv4 and IPv6), from /proc/net."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            local, state = line.split()[1], line.split()[3]
            address, hex_port = local.rsplit(":", 1)
            if state == "0A" and int(hex_port, 16) == port:
                found.add(address)
    return found


@pytest.fixture
def served(damaged_runs):
    """`streamlit run app.py` as `make app` starts it, but without `--server.address`: the
    project's .streamlit/config.toml alone must keep it on 127.0.0.1."""
    from browser import free_port, wait_http

    port = free_port()
    streamlit = Path(sys.executable).with_name("streamlit")
    proc = subprocess.Popen([str(streamlit), "run", "app.py", "--server.port", str(port), "--server.fileWatcherType", "none"],
                            cwd=ROOT, env={**os.environ, "SUPPORTBENCH_RUNS": str(damaged_runs)},
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        wait_http(f"http://127.0.0.1:{port}/_stcore/health")
        yield port, proc
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()


@pytest.mark.slow
def test_the_app_listens_on_127_0_0_1_only(served):
    port, _ = served
    assert listening_addresses(port) == {"0100007F"}  # 127.0.0.1, and no IPv6 or wildcard socket


def test_make_app_binds_localhost_unless_told_otherwise():
    dry = subprocess.run(["make", "-n", "app"], cwd=ROOT, capture_output=True, text=True)
    assert "--server.address 127.0.0.1" in dry.stdout, dry.stdout + dry.stderr
    told = subprocess.run(["make", "-n", "app", "HOST=0.0.0.0"], cwd=ROOT, capture_output=True, text=True)
    assert "--server.address 0.0.0.0" in told.stdout


@pytest.mark.slow
@pytest.mark.browser
def test_no_traceback_reaches_the_browser(served, runs):
    from browser import Chromium, chromium_binary

    binary = chromium_binary()
    if binary is None:
        if os.environ.get("CI") == "true":
            pytest.fail("chromium is not installed; CI=true requires the browser test to run")
        pytest.skip("chromium is not installed (apt-get install -y chromium)")
    scramble_middle(without_checksums(copy_run(runs, "scrambled", newest=False)))
    port, _ = served
    browser = Chromium(binary)
    try:
        base = f"http://127.0.0.1:{port}"
        text = browser.open(f"{base}/failures?{urlencode({'run': 'good', 'case': 'foo'})}",
                            ["is not a case", "2 damaged runs not shown"])
        assert "Traceback" not in text and "ValueError" not in text and "TypeError" not in text
        text = browser.open(f"{base}/?run=scrambled", ["Something went wrong showing this page"])
        assert "Traceback" not in text and ".py" not in text, text
    finally:
        browser.close()

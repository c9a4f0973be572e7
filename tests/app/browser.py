"""Drive headless Debian chromium for the browser tests: the running app, its text and screenshots.

`chromium --dump-dom` returns as soon as the page has loaded, before Streamlit's websocket has
delivered the first script run, and `--virtual-time-budget` does not let that real-time
exchange happen, so the page is read through the DevTools protocol instead: same binary, same
flags, and we poll the rendered text in real time until what we expect is there.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]


def chromium_binary() -> str | None:
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_http(url: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise TimeoutError(f"{url} did not answer within {timeout:.0f}s")
        time.sleep(0.3)


class Chromium:
    """One headless chromium with a fresh profile, driven over the DevTools protocol."""

    def __init__(self, binary: str, width: int = 1400, height: int = 1000) -> None:
        from websockets.sync.client import connect

        self.profile = tempfile.mkdtemp(prefix="sb-chromium-")
        self.port = free_port()
        self.proc = subprocess.Popen(
            [binary, *CHROMIUM_FLAGS, f"--user-data-dir={self.profile}", f"--remote-debugging-port={self.port}",
             "--remote-allow-origins=*", f"--window-size={width},{height}", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        wait_http(f"http://127.0.0.1:{self.port}/json/version", timeout=30)
        targets = json.load(urllib.request.urlopen(f"http://127.0.0.1:{self.port}/json/list", timeout=5))
        page = next(t for t in targets if t.get("type") == "page")
        self._conn = connect(page["webSocketDebuggerUrl"], max_size=None, open_timeout=10)
        self.ws = self._conn.__enter__()
        self._id = 0
        self.call("Page.enable")
        self.call("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1, mobile=False)

    def call(self, method: str, **params):
        self._id += 1
        self.ws.send(json.dumps({"id": self._id, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv(timeout=60))
            if msg.get("id") == self._id:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})

    def evaluate(self, expression: str):
        """The value of a JavaScript expression in the page."""
        return self.call("Runtime.evaluate", expression=expression, returnByValue=True).get("result", {}).get("value")

    def text(self, selector: str | None = None) -> str:
        """The rendered text of the page, or of the first element matching the CSS `selector` ('' if none)."""
        target = f"document.querySelector({json.dumps(selector)})" if selector else "document.body"
        return self.evaluate(f"(() => {{ const e = {target}; return e ? e.innerText : ''; }})()") or ""

    def input_values(self, selector: str) -> list[str]:
        """The values of the inputs inside the elements matching `selector` (a selectbox shows its choice in one)."""
        return self.evaluate(f"[...document.querySelectorAll({json.dumps(selector + ' input')})].map(i => i.value)") or []

    def open(self, url: str, expect: list[str], timeout: float = 60.0, settle: float = 1.5) -> str:
        """Load `url` and wait until every string of `expect` is on the page (then let charts settle)."""
        self.call("Page.navigate", url=url)
        deadline = time.monotonic() + timeout
        text = ""
        while time.monotonic() < deadline:
            text = self.text()
            if all(e in text for e in expect) and "Running..." not in text:
                time.sleep(settle)
                return self.text()
            time.sleep(0.5)
        missing = [e for e in expect if e not in text]
        raise AssertionError(f"{url}: {missing} not rendered within {timeout:.0f}s; page text starts {text[:500]!r}")

    def screenshot(self, path: Path) -> None:
        data = self.call("Page.captureScreenshot", format="png")["data"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(data))

    def close(self) -> None:
        try:
            self._conn.__exit__(None, None, None)
        finally:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
            shutil.rmtree(self.profile, ignore_errors=True)


@contextmanager
def serve(root: Path, runs: Path) -> Iterator[str]:
    """A fresh `streamlit run app.py` process on a free port; yields its base URL once it answers."""
    port = free_port()
    proc = start_app(root, runs, port)
    try:
        wait_http(f"http://127.0.0.1:{port}/_stcore/health", timeout=90)
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()


def start_app(root: Path, runs: Path, port: int) -> subprocess.Popen:
    """`streamlit run app.py` headless on localhost, reading runs from `runs`."""
    env = {**os.environ, "SUPPORTBENCH_RUNS": str(runs)}
    streamlit = Path(os.sys.executable).with_name("streamlit")
    cmd = [str(streamlit) if streamlit.exists() else "streamlit", "run", "app.py", "--server.headless", "true",
           "--server.port", str(port), "--server.address", "127.0.0.1", "--server.fileWatcherType", "none",
           "--browser.gatherUsageStats", "false"]
    return subprocess.Popen(cmd, cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)


def scroll_to(browser: Chromium, text: str) -> None:
    """Scroll the element whose text starts with `text` to the top of the view."""
    js = f"""(() => {{
      const want = {json.dumps(text)};
      const els = [...document.querySelectorAll('h1,h2,h3,h4,h5,p,span,div')]
        .filter(e => e.innerText && e.innerText.trim().startsWith(want))
        .sort((a, b) => (/^H[1-5]$/.test(b.tagName) - /^H[1-5]$/.test(a.tagName)) || (a.innerText.length - b.innerText.length));
      const el = els[0];
      if (el) {{ el.scrollIntoView({{block: 'start'}}); return true; }}
      return false;
    }})()"""
    browser.call("Runtime.evaluate", expression=js, returnByValue=True)
    time.sleep(0.8)

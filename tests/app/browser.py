"""Drive headless Debian chromium for the browser tests: the running app, its text, clicks and screenshots.

`chromium --dump-dom` returns as soon as the page has loaded, before Streamlit's websocket has
delivered the first script run, and `--virtual-time-budget` does not let that real-time
exchange happen, so the page is driven through the DevTools protocol instead: same binary, same
flags, and we poll the rendered text in real time until what we expect is there.

Clicks are real input events (`Input.dispatchMouseEvent` at an element's centre, as a mouse
would send them), not JavaScript `click()` calls, so what a reader's click does is what is
tested. Every request the page makes is recorded through the `Network` domain, so a test can
hold the app to 127.0.0.1.
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

from helpers import HANG, eventually  # noqa: F401 - the browser tests import eventually from here

CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]

PHONE = (390, 844)
"""A phone's viewport in CSS pixels (an iPhone 12-15's), for the small-screen checks."""


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


def wait_http(url: str, timeout: float = HANG) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise TimeoutError(f"hang: {url} did not answer within {timeout:.0f}s")
        time.sleep(0.3)


# JavaScript: the innermost visible element whose own text (trimmed) is `want` (or starts with it
# when `prefix`), inside `scope`; headings and buttons first. Returns its centre in viewport pixels.
_FIND = """(want, prefix, scope) => {
  const root = scope ? document.querySelector(scope) : document.body;
  if (!root) return null;
  const els = [...root.querySelectorAll('button,a,label,p,span,div,h1,h2,h3,h4,h5,li,td,[role=option],[role=tab]')]
    .filter(e => { const t = (e.innerText || '').trim(); return prefix ? t.startsWith(want) : t === want; })
    .filter(e => { const r = e.getBoundingClientRect(); return r.width > 0 && r.height > 0; })
    .sort((a, b) => (a.innerText.length - b.innerText.length) || (b.querySelectorAll('*').length < a.querySelectorAll('*').length ? 1 : -1));
  const el = els[0];
  if (!el) return null;
  el.scrollIntoView({block: 'center'});
  const r = el.getBoundingClientRect();
  return {x: r.left + r.width / 2, y: r.top + r.height / 2};
}"""


class Chromium:
    """One headless chromium with a fresh profile, driven over the DevTools protocol."""

    def __init__(self, binary: str, width: int = 1400, height: int = 1000, *, downloads: Path | None = None) -> None:
        from websockets.sync.client import connect

        self.profile = tempfile.mkdtemp(prefix="sb-chromium-")
        self.port = free_port()
        self.proc = subprocess.Popen(
            [binary, *CHROMIUM_FLAGS, f"--user-data-dir={self.profile}", f"--remote-debugging-port={self.port}",
             "--remote-allow-origins=*", f"--window-size={width},{height}", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        wait_http(f"http://127.0.0.1:{self.port}/json/version")
        targets = json.load(urllib.request.urlopen(f"http://127.0.0.1:{self.port}/json/list", timeout=HANG))
        page = next(t for t in targets if t.get("type") == "page")
        self._conn = connect(page["webSocketDebuggerUrl"], max_size=None, open_timeout=HANG, ping_interval=None)  # no keepalive: a busy machine made pongs late
        self.ws = self._conn.__enter__()
        self._id = 0
        self.requests: list[str] = []
        """Every URL the page requested since the browser started (Network.requestWillBeSent)."""
        self.downloads = downloads
        self.call("Page.enable")
        self.call("Network.enable")
        if downloads is not None:
            downloads.mkdir(parents=True, exist_ok=True)
            self.call("Browser.setDownloadBehavior", behavior="allow", downloadPath=str(downloads))
        self.viewport(width, height)

    # --- protocol ---------------------------------------------------------------------------

    def call(self, method: str, **params):
        self._id += 1
        self.ws.send(json.dumps({"id": self._id, "method": method, "params": params}))
        while True:
            try:
                msg = json.loads(self.ws.recv(timeout=HANG))
            except TimeoutError:
                raise AssertionError(f"hang: the browser never answered {method} in {HANG:.0f}s") from None
            if msg.get("id") == self._id:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})
            self._event(msg)

    def _event(self, msg: dict) -> None:
        if msg.get("method") == "Network.requestWillBeSent":
            self.requests.append(msg["params"]["request"]["url"])

    def pump(self, seconds: float = 0.0) -> None:
        """Take in the events the browser sent meanwhile (requests made while we were not calling)."""
        deadline = time.monotonic() + seconds
        while True:
            try:
                msg = json.loads(self.ws.recv(timeout=max(0.01, deadline - time.monotonic())))
            except TimeoutError:
                return
            self._event(msg)

    def evaluate(self, expression: str):
        """The value of a JavaScript expression in the page (promises awaited)."""
        out = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in out:
            raise RuntimeError(f"page script failed: {out['exceptionDetails'].get('exception', {}).get('description')}")
        return out.get("result", {}).get("value")

    def viewport(self, width: int, height: int, *, mobile: bool = False) -> None:
        """Resize the page's viewport (a phone: `mobile=True`, touch-sized, no desktop scrollbars)."""
        self.call("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1, mobile=mobile)
        self.width, self.height, self.mobile = width, height, mobile

    # --- reading ------------------------------------------------------------------------------

    def text(self, selector: str | None = None) -> str:
        """The rendered text of the page, or of the first element matching the CSS `selector` ('' if none)."""
        target = f"document.querySelector({json.dumps(selector)})" if selector else "document.body"
        return self.evaluate(f"(() => {{ const e = {target}; return e ? e.innerText : ''; }})()") or ""

    def url(self) -> str:
        return self.evaluate("location.href") or ""

    def input_values(self, selector: str) -> list[str]:
        """The values of the inputs inside the elements matching `selector` (a selectbox shows its choice in one)."""
        return self.evaluate(f"[...document.querySelectorAll({json.dumps(selector + ' input')})].map(i => i.value)") or []

    def open(self, url: str, expect: list[str], timeout: float = HANG, settle: float = 1.5) -> str:
        """Load `url` and wait until every string of `expect` is on the page (then let charts settle)."""
        self.call("Page.navigate", url=url)
        return self.wait_for(expect, timeout=timeout, settle=settle, what=url)

    def wait_for(self, expect: list[str], *, timeout: float = HANG, settle: float = 1.0, gone: list[str] = (),
                 what: str = "page") -> str:
        """Wait until every string of `expect` is on the page and none of `gone` is, and the script run ended."""
        seen = {"text": ""}

        def ready() -> bool:
            text = seen["text"] = self.text()
            return all(e in text for e in expect) and not any(g in text for g in gone) and not self.running()

        try:
            eventually(ready, f"{what}: {expect} rendered" + (f" and {list(gone)} gone" if gone else ""), timeout, poll=0.4)
        except AssertionError as e:
            raise AssertionError(f"{e}; page text starts {seen['text'][:600]!r}") from None
        time.sleep(settle)
        return self.text()

    def wait_drawn(self, selector: str, ready: str = "true", what: str = "") -> None:
        """Wait until an element matching `selector` is on the page and the JavaScript `ready`
        (reading it as `e`) holds: a chart drawn, a table laid out (text alone can come first)."""
        js = f"(() => {{ const e = document.querySelector({json.dumps(selector)}); return !!(e && ({ready})); }})()"
        eventually(lambda: self.evaluate(js), what or f"{selector} drawn")

    def running(self) -> bool:
        """True while Streamlit shows its running indicator (a script run is under way)."""
        return bool(self.evaluate("!!document.querySelector('[data-testid=stStatusWidget] [data-testid=stStatusWidgetRunningIcon], "
                                  "[data-testid=stStatusWidgetRunningIcon]') || document.body.innerText.includes('Running...')"))

    def wait_url(self, contains: str, timeout: float = HANG) -> str:
        """Wait until the page's URL contains `contains`; returns the URL."""
        return eventually(lambda: next((u for u in [self.url()] if contains in u), None), f"the URL contains {contains!r}", timeout)

    # --- acting ---------------------------------------------------------------------------------

    def click_at(self, x: float, y: float) -> None:
        """A left click at viewport pixel (x, y): move, press, release, as a mouse sends them."""
        for kind, extra in (("mouseMoved", {}), ("mousePressed", {"button": "left", "clickCount": 1}),
                            ("mouseReleased", {"button": "left", "clickCount": 1})):
            self.call("Input.dispatchMouseEvent", type=kind, x=x, y=y, **extra)
            time.sleep(0.05)

    def hover_at(self, x: float, y: float) -> None:
        self.call("Input.dispatchMouseEvent", type="mouseMoved", x=x, y=y)

    def locate(self, text: str, *, prefix: bool = False, scope: str | None = None) -> dict[str, float] | None:
        """The centre of the element showing `text` (scrolled into view), or None."""
        return self.evaluate(f"({_FIND})({json.dumps(text)}, {json.dumps(prefix)}, {json.dumps(scope)})")

    def click_text(self, text: str, *, prefix: bool = False, scope: str | None = None, timeout: float = HANG) -> None:
        """Click the element showing `text` (waiting for it to appear)."""
        at = eventually(lambda: self.locate(text, prefix=prefix, scope=scope), f"something showing {text!r} to click",
                        timeout, poll=0.4)
        time.sleep(0.2)  # scrolled into view: let layout settle, then find it again
        at = self.locate(text, prefix=prefix, scope=scope) or at
        self.click_at(at["x"], at["y"])

    def click_until(self, text: str, shown, *, prefix: bool = False, retry_after: float = 30.0, what: str = "") -> None:
        """Click the element showing `text` until `shown` is on the page (a string), or until
        `shown()` is true (a callable; `what` says what it waits for). A click that lands while
        the page's script reruns, or while the page still lays itself out, is lost, so the click is
        repeated when nothing came of it after `retry_after` seconds (that only decides when to
        click again; the test fails only on a hang, after `HANG`)."""
        what = what or f"{shown!r} shown"

        def done() -> bool:
            return shown() if callable(shown) else shown in self.text()

        def attempt() -> bool:
            if done():
                return True
            self.click_text(text, prefix=prefix)
            try:
                if callable(shown):
                    eventually(shown, what, retry_after)
                else:
                    self.wait_for([shown], timeout=retry_after, settle=0.2)
                return True
            except AssertionError:
                return False

        eventually(attempt, f"{what} after clicking {text!r}", poll=0.1)

    def click_selector(self, selector: str, index: int = 0) -> None:
        """Click the centre of the `index`th element matching the CSS `selector`."""
        at = self.evaluate(f"""(() => {{ const e = document.querySelectorAll({json.dumps(selector)})[{index}];
            if (!e) return null; e.scrollIntoView({{block: 'center'}}); const r = e.getBoundingClientRect();
            return {{x: r.left + r.width / 2, y: r.top + r.height / 2}}; }})()""")
        if not at:
            raise AssertionError(f"no element {selector!r} [{index}] to click")
        time.sleep(0.2)
        self.click_at(at["x"], at["y"])

    def type_text(self, text: str) -> None:
        """Type into the focused element, then press Enter (what commits a Streamlit text input)."""
        self.call("Input.insertText", text=text)
        for kind in ("keyDown", "keyUp"):
            self.call("Input.dispatchKeyEvent", type=kind, key="Enter", code="Enter", windowsVirtualKeyCode=13,
                      **({"text": "\r"} if kind == "keyDown" else {}))

    def choose(self, label: str, option: str, timeout: float = HANG) -> None:
        """Pick `option` in the selectbox labelled `label`: click its box open, click the option in the list."""
        self.click_selector(f'[data-testid="stSelectbox"] input[aria-label={json.dumps(label)}]')
        self.click_text(option, scope='[role="listbox"]', timeout=timeout)

    def screenshot(self, path: Path, *, full: bool = False) -> None:
        """A PNG of the viewport, or with `full` of the whole page: Streamlit scrolls inside its main
        container, so the viewport is made as tall as that content for the shot, then put back."""
        w, h, mobile = self.width, self.height, self.mobile
        if full:
            tall = self.evaluate("Math.max(document.body.scrollHeight, "
                                 "document.querySelector('[data-testid=stMain]')?.scrollHeight || 0)") or h
            self.viewport(w, min(int(tall) + 40, 8000), mobile=mobile)
            time.sleep(1.5)
        try:
            data = self.call("Page.captureScreenshot", format="png")["data"]
        finally:
            if full:
                self.viewport(w, h, mobile=mobile)
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
        wait_http(f"http://127.0.0.1:{port}/_stcore/health")
        yield f"http://127.0.0.1:{port}"
    finally:
        stop(proc)


def stop(proc: subprocess.Popen) -> None:
    """Ask a server process to stop; kill it when it has not within 15 s."""
    proc.terminate()
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


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

"""Replay recorded Hindsight request/response pairs through an `httpx.MockTransport`.

`recorded(*names)` answers the listed pairs in order; each request must equal the recorded
one exactly (method, path, query parameters, JSON body), so a test proves the client sends
what the real server was sent, and parses what the real server answered.
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx

DATA = Path(__file__).resolve().parent.parent / "data" / "hindsight"


def pair(name: str) -> dict:
    """One recorded pair by its file stem prefix, e.g. `"08"` or `"08_recall"`."""
    matches = sorted(DATA.glob(f"{name}*.json"))
    assert len(matches) == 1, f"expected one fixture for {name!r}, found {[m.name for m in matches]}"
    return json.loads(matches[0].read_text())


def _params(request: httpx.Request) -> dict | None:
    got: dict = {}
    for key in request.url.params.keys():
        values = request.url.params.get_list(key)
        got[key] = values
    return got or None


def _same_params(recorded: dict | None, request: httpx.Request) -> bool:
    got = _params(request)
    if not recorded:
        return got is None
    if got is None or set(got) != set(recorded):
        return False
    for k, v in recorded.items():
        want = [str(x) for x in v] if isinstance(v, list) else [str(v)]
        if got[k] != want:
            return False
    return True


class Recorded:
    """A transport that plays back pairs in order and remembers every request it saw."""

    def __init__(self, *names: str, responses: list[dict] | None = None) -> None:
        self.pairs = [pair(n) for n in names] + list(responses or [])
        self.seen: list[httpx.Request] = []
        self.transport = httpx.MockTransport(self._handle)

    def _handle(self, request: httpx.Request) -> httpx.Response:
        self.seen.append(request)
        assert self.pairs, f"unexpected request {request.method} {request.url}"
        rec = self.pairs.pop(0)
        want = rec["request"]
        body = json.loads(request.content) if request.content else None
        assert (request.method, request.url.path) == (want["method"], want["path"]), (
            f"sent {request.method} {request.url.path}, recorded {want['method']} {want['path']}"
        )
        assert _same_params(want.get("params"), request), f"params {_params(request)} != recorded {want.get('params')}"
        assert body == want.get("json"), f"body {body} != recorded {want.get('json')}"
        resp = rec["response"]
        return httpx.Response(resp["status"], json=resp["json"])

    def done(self) -> bool:
        """Every recorded pair was asked for."""
        return not self.pairs

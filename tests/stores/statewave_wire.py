"""Answer the `statewave` strategy's requests from recorded Statewave pairs, checking each request.

The recordings were made by a script, not by the strategy, so a request cannot be byte-equal
to its recording; what is checked is what the real server checks and what makes the answer
apply: the method, path and query parameters are the recorded ones; every field of the
recorded body is sent with the recorded value (`metadata` and `provenance` only as objects,
since they are free-form, and `max_tokens` only as a positive integer, since it follows the
caller's budget); any other field the strategy sends is one the API documents for
that route (`EXTRA`); every episode has the recorded episode's fields and a message list of
`user`/`assistant` messages. The answer is the recorded one, except for a batch of episodes,
which the recorded server would echo: each episode comes back with the id the server gave the
recorded episode of the same text, so the ids in later recorded answers (context, handoff)
point at the strategy's turns.
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx

DATA = Path(__file__).resolve().parent.parent / "data" / "statewave"

EXTRA = {
    "/v1/context": {"max_tokens", "session_id"},
    "/v1/resolutions": {"metadata", "resolution_summary"},
    "/v1/handoff": {"max_tokens"},
}
"""Fields the API takes on a route (the SDK 1.5.0 signatures) beyond those in its recording."""
FREE_FORM = {"metadata", "provenance"}
"""Free-form objects: any object will do."""
SIZED = {"max_tokens"}
"""Fields that follow the caller's budget: any positive integer will do (tests that care pin it)."""


def pair(name: str) -> dict:
    """One recorded pair by its file name prefix, e.g. `"10"`."""
    matches = sorted(DATA.glob(f"{name}*.json"))
    assert len(matches) == 1, f"expected one fixture for {name!r}, found {[m.name for m in matches]}"
    return json.loads(matches[0].read_text())


def _text_of(episode: dict) -> str:
    payload = episode.get("payload") or {}
    msgs = payload.get("messages")
    return msgs[0]["content"] if msgs else payload.get("text", "")


def recorded_episode_ids() -> dict[str, dict]:
    """Text of each recorded episode -> the recorded episode (its id and created_at)."""
    out: dict[str, dict] = {}
    for name in ("03", "04", "18"):
        ep = pair(name)["response"]["json"]
        out[_text_of(ep)] = ep
    for ep in pair("05")["response"]["json"]["episodes"]:
        out[_text_of(ep)] = ep
    return out


EPISODE_FIELDS = set(pair("03")["request"]["json"])
"""Fields of one episode, as the recording sent them."""


class StatewaveWire:
    """A transport playing back pairs in order; `seen` keeps every request."""

    def __init__(self, *names: str | dict) -> None:
        # a name is a recorded pair's prefix; a dict is a pair written by the test (an answer
        # the recording did not cover), checked the same way
        self.pairs = [pair(n) if isinstance(n, str) else n for n in names]
        self.names = [n if isinstance(n, str) else "test pair" for n in names]
        self.seen: list[httpx.Request] = []
        self.episodes = recorded_episode_ids()
        self.transport = httpx.MockTransport(self._handle)

    def done(self) -> bool:
        """Every recorded pair was asked for."""
        return not self.pairs

    def _handle(self, request: httpx.Request) -> httpx.Response:
        self.seen.append(request)
        assert self.pairs, f"unexpected request {request.method} {request.url}"
        rec, name = self.pairs.pop(0), self.names.pop(0)
        want = rec["request"]
        body = json.loads(request.content) if request.content else None
        got = (request.method, request.url.path)
        assert got == (want["method"], want["path"]), f"sent {got}, recorded ({name}) {want['method']} {want['path']}"
        params = dict(request.url.params) or None
        assert params == want.get("params"), f"params {params} != recorded ({name}) {want.get('params')}"
        if want["path"] == "/v1/episodes/batch":
            return self._echo(body, rec)
        self._check_body(name, want["path"], body, want.get("json"))
        resp = rec["response"]
        return httpx.Response(resp["status"], json=resp["json"])

    def _check_body(self, name: str, path: str, body, recorded) -> None:
        if recorded is None:
            assert body is None, f"{name}: sent a body {body}, the recording has none"
            return
        for key, value in recorded.items():
            assert key in body, f"{name}: {key!r} missing from {body}"
            if key in FREE_FORM:
                assert isinstance(body[key], dict), f"{name}: {key} must be an object"
            elif key in SIZED:
                assert isinstance(body[key], int) and body[key] >= 1, f"{name}: {key}={body[key]!r}, expected an int >= 1"
            else:
                assert body[key] == value, f"{name}: {key}={body[key]!r}, recorded {value!r}"
        extra = set(body) - set(recorded) - EXTRA.get(path, set())
        for key in SIZED & set(body):
            assert isinstance(body[key], int) and body[key] >= 1, f"{name}: {key}={body[key]!r}, expected an int >= 1"
        assert not extra, f"{name}: fields {sorted(extra)} are not in the recording nor documented for {path}"

    def _echo(self, body: dict, rec: dict) -> httpx.Response:
        out = []
        for ep in body["episodes"]:
            assert set(ep) <= EPISODE_FIELDS, f"episode fields {sorted(set(ep) - EPISODE_FIELDS)} not in the recording"
            assert {"subject_id", "source", "type", "payload"} <= set(ep)
            msgs = ep["payload"]["messages"]
            assert msgs and all(m["role"] in ("user", "assistant") and isinstance(m["content"], str) for m in msgs)
            for k in FREE_FORM & set(ep):
                assert isinstance(ep[k], dict)
            known = self.episodes.get(msgs[0]["content"])
            assert known is not None, f"no recorded episode with the text {msgs[0]['content']!r}"
            out.append({**ep, "metadata": ep.get("metadata", {}), "provenance": ep.get("provenance", {}),
                        "session_id": ep.get("session_id"), "id": known["id"], "created_at": known["created_at"]})
        return httpx.Response(rec["response"]["status"], json={"episodes_created": len(out), "episodes": out})

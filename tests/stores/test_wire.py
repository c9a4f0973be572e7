"""Every remote call has a whole-call deadline and a size cap, and follows no redirect.

Each test talks to a hostile server on 127.0.0.1 (`tests/fault_server.py`). Before
`stores.remote.wire`, a dripping server held a call until the server gave up (httpx's timeout
is per socket read) and a 50 MB answer was read whole. Nothing here is timed: the error's words
say which limit cut the call, and the server counts what it was made to do (the answers the client
cut off, the bytes it sent); the dripping server never gives up by itself, so a client without a
deadline would hang the test, which then fails saying so.
"""

from __future__ import annotations

import httpx
import pytest
from fault_server import FaultServer
from helpers import eventually

from stores.protocol import ContextRequest
from stores.remote import wire
from stores.remote.hindsight_client import HindsightClient, HindsightServerError, HindsightUnavailable
from stores.remote.statewave_client import StatewaveClient, StatewaveServerError, StatewaveUnavailable
from stores.reply.chat import ChatEngine

PASSWORD = "pw-MARKER-5e1f"


def error_of(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the test asserts on it
        return e
    return None


def cut_off(server: FaultServer) -> None:
    """The client hung up on the server's one answer (it did not wait for the answer's end)."""
    eventually(lambda: server.hung_up == server.hits == 1, "the server seeing the client hang up", poll=0.05)


FLOOD_READ = 20_000_000
"""More than a 1 MB cap plus what both ends' socket buffers can hold (Linux's defaults top out at 4 MB
sending and 6 MB receiving): a client that stopped reading at its cap leaves the server unable to
send this much of its 50 MB (about 4 MB here); one that reads on takes all 50 MB."""


@pytest.mark.parametrize("mode", ["drip", "drip_headers"])
def test_a_server_that_drips_bytes_is_cut_at_the_whole_call_deadline(mode):
    with FaultServer(mode, interval=0.1) as server:
        err = error_of(HindsightClient(server.url, timeout=1.0).health)
        cut_off(server)
    assert isinstance(err, HindsightUnavailable), err
    assert "within the 1 s whole-call deadline" in str(err)  # the deadline cut it (the server never ends by itself)


def test_statewave_calls_have_the_same_deadline():
    with FaultServer("drip", interval=0.1) as server:
        err = error_of(StatewaveClient(server.url, timeout=1.0).healthz)
        cut_off(server)
    assert isinstance(err, StatewaveUnavailable) and "whole-call deadline" in str(err)


@pytest.mark.parametrize("mode", ["flood", "flood_declared"])
def test_an_answer_past_the_cap_stops_at_the_cap(mode):
    with FaultServer(mode, size=50_000_000) as server:
        err = error_of(HindsightClient(server.url, timeout=20.0, max_bytes=1_000_000).health)
        cut_off(server)
    assert isinstance(err, HindsightServerError), err
    assert "1,000,000-byte cap" in str(err)
    assert server.sent < FLOOD_READ, f"the server sent {server.sent:,} bytes: the client read past its cap"


def test_statewave_answers_have_the_same_cap():
    with FaultServer("flood") as server:
        err = error_of(StatewaveClient(server.url, timeout=20.0, max_bytes=100_000).healthz)
        cut_off(server)
    assert isinstance(err, StatewaveServerError) and "100,000-byte cap" in str(err)
    assert server.sent < FLOOD_READ


def test_a_redirect_is_never_followed_and_its_credentials_are_not_repeated():
    with FaultServer("redirect", location=f"http://admin:{PASSWORD}@127.0.0.2:9/v1") as server:
        err = error_of(HindsightClient(server.url, timeout=2.0).health)
        assert server.hits == 1
    assert isinstance(err, HindsightServerError) and "redirects are not followed" in str(err)
    assert PASSWORD not in str(err) and "http://<secret>@127.0.0.2:9/v1" in str(err)


def test_a_good_answer_within_the_limits_is_read_whole():
    with FaultServer("json", body={"status": "healthy"}) as server:
        assert HindsightClient(server.url, timeout=5.0, max_bytes=1_000).health() == {"status": "healthy"}


REQ = ContextRequest(subject="c1", session="s1", task="the app crashes", now=None, budget_tokens=200)  # type: ignore[arg-type]


@pytest.mark.parametrize("mode,why", [("drip", "whole-call deadline"), ("flood", "byte cap"),
                                      ("redirect", "redirects are not followed")])
def test_the_chat_engine_falls_back_within_its_deadline_and_names_no_credential(mode, why):
    from stores.protocol import Bundle

    with FaultServer(mode, interval=0.1) as server:
        url = server.url.replace("http://", f"http://bot:{PASSWORD}@") + "/v1/"
        engine = ChatEngine(url, timeout=1.0, max_bytes=200_000)
        r = engine.reply(REQ, Bundle(candidates=[], text="", tokens=0))
        if mode != "redirect":  # a redirect's answer ends at once; the others only when the client hangs up
            cut_off(server)
    assert r.engine == "scripted" and why in r.engine_note, r.engine_note  # the note says which limit cut it
    assert PASSWORD not in r.engine_note


def test_a_chat_reply_note_never_carries_the_url_credentials():
    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={"choices": [{"message": {"content": "Hello"}}]})

    from stores.protocol import Bundle

    engine = ChatEngine(f"http://bot:{PASSWORD}@127.0.0.1:1/v1/", transport=httpx.MockTransport(answer))
    r = engine.reply(REQ, Bundle(candidates=[], text="", tokens=0))
    assert r.engine.startswith("chat:") and PASSWORD not in r.engine_note
    assert "http://<secret>@127.0.0.1:1/v1" in r.engine_note


def test_the_deadline_reaches_httpx_own_transport():
    # the one place supportbench reaches under httpx: a new httpx that moves it fails here
    transport = wire.deadline_transport()
    assert type(transport._pool._network_backend).__name__ == "_Backend"


def test_limits_are_checked():
    with pytest.raises(ValueError):
        wire.Limits(deadline_s=0)
    with pytest.raises(ValueError):
        wire.Limits(max_bytes=0)

"""The one reply engine: the seed's SupportReply from any strategy's context, and the chat fallback."""

from __future__ import annotations

import json
import socket

import httpx
import pytest
from helpers import at, turn
from test_structured_strategy import FIRST_VISIT, RETURNING, WEEK, replayed

from stores.protocol import ContextRequest
from stores.registry import strategy_class
from stores.reply.chat import ChatEngine, reply_engine
from stores.reply.engine import ESCALATE, ScriptedEngine
from stores.reply.model import SupportReply

ENGINE = ScriptedEngine()
REQ = ContextRequest("c1", "s2", RETURNING.text, 4000, at(WEEK))


def structured_reply(events=FIRST_VISIT, req=REQ):
    s = replayed(events)
    return ENGINE.reply(req, s.context(req), s.memories("c1"))


def raw_reply(name, events=FIRST_VISIT, req=REQ):
    s = strategy_class(name)()
    for e in events:
        s.observe(e)
    return ENGINE.reply(req, s.context(req))


def test_a_returning_customer_gets_the_known_fix_first_and_the_failures_skipped():
    r = structured_reply()
    assert r.is_returning_customer
    assert r.known_fixes == ("Update application",) and r.next_steps == ("Update application",)
    assert r.known_failures == ("Restart application", "Cleared application cache")
    assert r.reply.startswith("Welcome back. From your previous sessions, \u201cUpdate application\u201d worked")
    fix = r.used_memories[0]
    assert (fix.text, fix.outcome, fix.score) == ("Update application", "worked", 1.0)
    assert fix.reason == "same product, matched on application, crashing, upload, pdf, earlier session"
    assert r.sources["Update application"] == ("a6",) and r.sources["Cleared application cache"] == ("a4", "a5")


@pytest.mark.parametrize("name", ["history_stuffing", "session_aware"])
def test_a_raw_turn_context_is_read_by_the_same_extractor_and_traces_to_its_items(name):
    r = raw_reply(name)
    s = structured_reply()
    assert (r.known_fixes, r.known_failures, r.is_returning_customer) == (s.known_fixes, s.known_failures, True)
    assert all(set(u.source_ids) <= {e.id for e in FIRST_VISIT} for u in r.used_memories)


def test_what_the_context_leaves_out_the_reply_cannot_know():
    req = ContextRequest("c1", "s2", RETURNING.text, 60, at(WEEK))  # room for one line or two
    r = raw_reply("history_stuffing", req=req)
    assert r.known_fixes == () and r.next_steps != ("Update application",)


def test_a_first_time_customer_is_not_returning():
    req = ContextRequest("c1", "s1", "Still crashing, what now?", 4000, at(5))
    r = structured_reply(FIRST_VISIT[:5], req)
    assert not r.is_returning_customer and r.known_fixes == ()
    assert r.known_failures == ("Restart application", "Cleared application cache")


def test_when_the_known_fix_stops_working_the_reply_keeps_the_history_and_escalates():
    events = [*FIRST_VISIT, RETURNING, turn("b2", "Updated the app again, still crashing.", WEEK + 5, session="s2")]
    r = structured_reply(events, ContextRequest("c1", "s2", "It is still crashing, what now?", 4000, at(WEEK + 6)))
    assert r.escalate and r.next_steps == (ESCALATE,) and r.known_fixes == ()
    assert set(r.known_failures) == {"Restart application", "Cleared application cache", "Update application"}
    assert "\u201cUpdate application\u201d fixed this before but no longer helps" in r.reply
    assert not set(r.next_steps) & set(r.known_failures)


def test_an_empty_context_still_gets_a_deterministic_reply():
    r = ENGINE.reply(REQ, strategy_class("empty")().context(REQ))
    assert r.reply and not r.is_returning_customer and r.used_memories == () and r.engine == "scripted"
    assert r == ENGINE.reply(REQ, strategy_class("empty")().context(REQ))


def test_a_reply_survives_a_json_round_trip():
    r = structured_reply()
    assert SupportReply.from_dict(json.loads(json.dumps(r.to_dict()))) == r


def test_a_replys_data_is_what_asdict_gives_with_the_sources_as_lists():
    from dataclasses import asdict, replace

    r = structured_reply()
    assert r.used_memories and r.sources and r.known_fixes
    broke = replace(r, used_memories=(replace(r.used_memories[0], previous_outcomes=("worked",)), *r.used_memories[1:]))
    for x in (r, broke, replace(r, known_fixes=list(r.known_fixes)), SupportReply("hi", False, (), (), ())):
        want = {**asdict(x), "sources": {k: list(v) for k, v in x.sources.items()}}
        got = x.to_dict()
        assert got == want and [type(v) for v in got.values()] == [type(v) for v in want.values()]
        assert json.dumps(got, sort_keys=True) == json.dumps(want, sort_keys=True)


def chat(handler, **kw):
    return ChatEngine("http://127.0.0.1:9/v1", model="m1", api_key="sk-test", transport=httpx.MockTransport(handler), **kw)


def test_the_chat_engine_sends_one_chat_completion_and_keeps_the_scripted_metadata():
    seen = []

    def answer(request):
        seen.append(request)
        return httpx.Response(200, json={"id": "x", "object": "chat.completion", "choices": [
            {"index": 0, "message": {"role": "assistant", "content": " Welcome back! Updating the app fixed it last time. "},
             "finish_reason": "stop"}]})

    s = replayed()
    r = chat(answer).reply(REQ, s.context(REQ), s.memories("c1"))
    (req,) = seen
    assert req.method == "POST" and req.url.path == "/v1/chat/completions"
    assert req.headers["authorization"] == "Bearer sk-test"
    body = json.loads(req.content)
    assert body["model"] == "m1" and body["temperature"] == 0 and [m["role"] for m in body["messages"]] == ["system", "user"]
    assert "Known fixes: Update application" in body["messages"][1]["content"]
    assert r.reply == "Welcome back! Updating the app fixed it last time." and r.engine == "chat:m1"
    assert (r.known_fixes, r.known_failures) == (structured_reply().known_fixes, structured_reply().known_failures)


@pytest.mark.parametrize("handler, why", [
    (lambda r: httpx.Response(503, json={"error": "overloaded"}), "HTTP 503"),
    (lambda r: httpx.Response(200, json={"choices": []}), "no choices[0].message.content"),
    (lambda r: httpx.Response(200, text="<html>"), "no choices[0].message.content"),
    (lambda r: httpx.Response(200, json={"choices": [{"message": {"content": "  "}}]}), "empty reply"),
])
def test_a_failing_chat_endpoint_falls_back_to_the_scripted_reply_and_says_why(handler, why):
    s = replayed()
    r = chat(handler).reply(REQ, s.context(REQ), s.memories("c1"))
    assert r.engine == "scripted" and why in r.engine_note
    assert r.reply == structured_reply().reply


def test_an_unreachable_chat_endpoint_falls_back_too():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    s = replayed()
    r = ChatEngine(f"http://127.0.0.1:{port}/v1", timeout=2).reply(REQ, s.context(REQ), s.memories("c1"))
    assert r.engine == "scripted" and f"no answer from http://127.0.0.1:{port} (ConnectError" in r.engine_note


def test_the_chat_engine_is_off_unless_its_url_is_set():
    assert isinstance(reply_engine({}), ScriptedEngine)
    e = reply_engine({"SUPPORTBENCH_REPLY_URL": "http://127.0.0.1:9/v1", "SUPPORTBENCH_REPLY_MODEL": "m2"})
    assert isinstance(e, ChatEngine) and e.name == "chat:m2"


def test_a_context_without_the_fix_gives_a_reply_without_it():
    r = raw_reply("tfidf")  # its top matches are the crash reports and the cache step, not "Updated the app"
    s = strategy_class("tfidf")()
    for e in FIRST_VISIT:
        s.observe(e)
    assert "a6" not in {c.item_id for c in s.context(REQ).included}
    assert r.known_fixes == () and "Update application" not in r.next_steps

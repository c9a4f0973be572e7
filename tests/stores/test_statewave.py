"""The `statewave` strategy against recorded pairs of a real Statewave server, and live when STATEWAVE_URL is set."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import httpx
import pytest
from remote_env import need_server
from statewave_wire import StatewaveWire

from stores.protocol import ContextRequest, Forget, Resolution, Turn
from stores.remote.receipt import RemoteUnavailable
from stores.remote.statewave import Statewave, StatewaveParams
from stores.remote.statewave_client import (StatewaveClient, StatewaveServerError, StatewaveUnavailable,
                                            StatewaveValidationError)
from stores.tokens import count_tokens

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc)
DANA = "cust-dana"


def t(id, text, minutes, session="T-1001-s1", role="customer", kind="message"):
    return Turn(id=id, subject=DANA, session=session, role=role, kind=kind, text=text, at=T0 + timedelta(minutes=minutes))


FIRST_SESSION = [
    t("d-1", "My name is Dana Whitfield. My router AX3000 drops Wi-Fi every evening.", 0),
    t("d-2", "Dana prefers email follow-ups over phone calls.", 1),
    t("d-3", "Dana is on the Enterprise plan.", 2),
    t("d-4", "I work at Globex as an IT manager.", 3),
]
ANGRY = t("d-5", "The Wi-Fi is dropping again and I am frustrated. I want to cancel.", 60 * 24 * 7, session="T-1001-s2")


def req(task="Follow up on Dana's Wi-Fi issue", budget=300, session="T-1001-s1", minutes=10):
    return ContextRequest(subject=DANA, session=session, task=task, budget_tokens=budget, now=T0 + timedelta(minutes=minutes))


def strategy(wire: StatewaveWire) -> Statewave:
    # no namespace prefix, so the subject ids are the recorded ones
    return Statewave(StatewaveParams(url="http://statewave.test"), transport=wire.transport, namespace="")


def test_turns_are_sent_as_one_batch_then_compiled_then_the_context_asked_with_the_session():
    wire = StatewaveWire("05", "07", "10")
    s = strategy(wire)
    for e in FIRST_SESSION:
        s.observe(e)
    assert wire.seen == []  # buffered until something reads
    b = s.context(req())
    assert wire.done()
    sent = json.loads(wire.seen[0].content)["episodes"]
    assert [e["session_id"] for e in sent] == ["T-1001-s1"] * 4
    assert [e["metadata"]["turn_id"] for e in sent] == ["d-1", "d-2", "d-3", "d-4"]
    assert sent[0]["metadata"]["at"] == "2026-03-02T09:00:00+00:00"  # the simulated time travels in metadata
    assert s.calls.calls == {"POST /v1/episodes/batch": 1, "POST /v1/memories/compile": 1, "POST /v1/context": 1}
    assert json.loads(wire.seen[2].content)["max_tokens"] == 300  # the budget, as the server's own ceiling
    # the receipt: every record the server returned, in its order, named after our turns
    assert [c.item_id for c in b.candidates] == ["d-1", "d-4", "d-1~2", "d-3", "d-2", "d-4~2"]
    assert [c.source_ids for c in b.candidates] == [("d-1",), ("d-4",), ("d-1",), ("d-3",), ("d-2",), ("d-4",)]
    assert [c.score for c in b.candidates] == [6.0, 5.0, 4.0, 3.0, 2.0, 1.0]
    assert all(c.components == {"statewave_order": c.score} for c in b.candidates)
    assert b.candidates[0].text == "[2026-03-02 09:00] (T-1001-s1) profile_fact: My name is Dana Whitfield"
    # a summary of a two-message episode is one line
    assert all("\n" not in c.text for c in b.candidates)
    assert count_tokens(b.text) == b.tokens <= 300
    assert b.text.split("\n")[1:] == [c.text for c in b.candidates if c.included]


@pytest.mark.parametrize("budget", [0, 10, 25, 40, 60, 300])
def test_the_budget_is_cut_by_our_tokenizer_in_whole_lines(budget):
    wire = StatewaveWire("05", "07", "10")
    s = strategy(wire)
    for e in FIRST_SESSION:
        s.observe(e)
    b = s.context(req(budget=budget))
    assert count_tokens(b.text) == b.tokens <= budget
    included = [c for c in b.candidates if c.included]
    assert (b.text.split("\n")[1:] if b.text else []) == [c.text for c in included]
    if not b.text:
        assert included == []
        return
    # a line is dropped only when it did not fit in what the lines above it left
    left = budget - count_tokens(b.text.split("\n")[0])
    for c in b.candidates:
        if c.included:
            left -= c.tokens
        else:
            assert c.reason == "budget" and c.tokens > left


def test_resolutions_keep_their_summary_and_a_500_on_a_re_post_is_accepted_only_once_read_back():
    wire = StatewaveWire("13", "14", "15", "17")
    s = strategy(wire)
    s.observe(Resolution(DANA, "T-1001-s1", "open", "", T0 + timedelta(minutes=5)))
    s.observe(Resolution(DANA, "T-0999-s1", "resolved", "Password reset resolved the login issue.", T0))
    # delivered twice: nothing is re-sent
    s.observe(Resolution(DANA, "T-0999-s1", "resolved", "Password reset resolved the login issue.", T0))
    s.observe(Resolution(DANA, "T-1001-s1", "resolved", "Firmware 2.4.1 fixed the evening Wi-Fi drops.",
                         T0 + timedelta(minutes=30)))
    assert wire.done()
    assert s.calls.calls["POST /v1/resolutions"] == 3
    assert s.verified_500 == 1 and s.calls.calls["GET /v1/resolutions"] == 1


def test_a_500_whose_row_was_not_updated_is_an_error():
    from statewave_wire import pair

    # read back after the 500, the session's row is still the open one: the write did not happen
    still_open = {"request": pair("17")["request"], "response": {"status": 200, "json": [pair("13")["response"]["json"]]}}
    wire = StatewaveWire("13", "15", still_open)
    s = strategy(wire)
    s.observe(Resolution(DANA, "T-1001-s1", "open", "", T0))
    with pytest.raises(StatewaveServerError, match="500 internal_error"):
        s.observe(Resolution(DANA, "T-1001-s1", "resolved", "Firmware 2.4.1 fixed the evening Wi-Fi drops.",
                             T0 + timedelta(minutes=30)))
    assert wire.done()


def test_a_500_on_a_first_post_is_never_read_back():
    wire = StatewaveWire("15")
    s = strategy(wire)
    with pytest.raises(StatewaveServerError):
        s.observe(Resolution(DANA, "T-1001-s1", "resolved", "Firmware 2.4.1 fixed the evening Wi-Fi drops.", T0))
    assert wire.done()


def _full_story(wire: StatewaveWire) -> Statewave:
    s = strategy(wire)
    for e in FIRST_SESSION:
        s.observe(e)
    s.context(req())
    s.observe(Resolution(DANA, "T-1001-s1", "open", "", T0 + timedelta(minutes=5)))
    s.observe(Resolution(DANA, "T-0999-s1", "resolved", "Password reset resolved the login issue.", T0))
    s.observe(Resolution(DANA, "T-1001-s1", "resolved", "Firmware 2.4.1 fixed the evening Wi-Fi drops.",
                         T0 + timedelta(minutes=30)))
    s.observe(ANGRY)
    return s


STORY = ("05", "07", "10", "13", "14", "15", "17")


def test_handoff_is_the_servers_brief_in_the_reference_order_citing_our_ids():
    wire = StatewaveWire(*STORY, "05", "19")
    s = _full_story(wire)
    h = s.handoff(req(session="T-1001-s2"), budget_tokens=800)
    assert wire.done()
    assert [name for name, _ in h.sections] == [
        "Who the customer is", "Profile facts that matter", "The active issue", "Related history",
        "Resolved: deprioritize", "What the next agent needs now"]  # nothing was tried: that section is absent
    assert "- The Wi-Fi is dropping again" in h.text.replace("[support-chat/conversation] user: ", "")
    assert "(T-1001-s1) resolved: Firmware 2.4.1 fixed the evening Wi-Fi drops." in h.text
    # the receipt cites our turns and resolutions, nothing of the server's own ids
    assert set(h.used_ids) == {"d-1", "d-2", "d-3", "d-4", "d-5", "T-1001-s1#resolution", "T-0999-s1#resolution"}
    assert count_tokens(h.text) == h.tokens <= 800


@pytest.mark.parametrize("budget", [0, 5, 40, 120])
def test_a_handoff_within_a_small_budget_keeps_whole_lines_and_cites_only_what_it_kept(budget):
    wire = StatewaveWire(*STORY, "05", "19")
    h = _full_story(wire).handoff(req(session="T-1001-s2"), budget_tokens=budget)
    assert count_tokens(h.text) == h.tokens <= budget
    lines = h.text.split("\n") if h.text else []
    headings = {name for name, _ in h.sections}
    assert all(line.startswith("- ") or line in headings for line in lines)
    if budget == 0:
        assert h.used_ids == () and h.text == ""


def test_health_is_the_servers_score_with_its_factors():
    wire = StatewaveWire(*STORY, "05", "20")
    s = _full_story(wire)
    r = s.health(DANA, T0 + timedelta(days=8))
    assert (r.score, r.band, r.base) == (100.0, "healthy", 100.0)
    assert [(f.signal, f.impact) for f in r.factors] == [("recent_resolution", 10.0), ("high_resolution_rate", 10.0)]
    assert r.score == max(0, min(100, r.base + sum(f.impact for f in r.factors)))
    # nothing changed since: the same report, no second call (the server reads its own clock, not ours)
    assert s.health(DANA, T0 + timedelta(days=8)) == r
    assert s.calls.calls["GET /v1/subjects/{id}/health"] == 1
    assert wire.done()


def test_a_deleted_customer_is_deleted_on_the_server_and_comes_back_empty():
    wire = StatewaveWire("05", "07", "10", "24", "25")
    s = strategy(wire)
    for e in FIRST_SESSION:
        s.observe(e)
    s.context(req())
    s.observe(Forget(DANA, T0 + timedelta(hours=1)))
    b = s.context(ContextRequest(DANA, "T-1001-s1", "Follow up", 300, T0 + timedelta(hours=2)))
    assert wire.done()
    assert list(b.candidates) == [] and "Dana" not in b.text


def test_a_second_context_without_new_turns_does_not_compile_again():
    wire = StatewaveWire("05", "07", "10", "11")
    s = strategy(wire)
    for e in FIRST_SESSION:
        s.observe(e)
    s.context(req())
    b = s.context(ContextRequest(DANA, "T-1001-s1", "What plan is Dana on?", 100_000, T0))
    assert wire.done()
    assert s.calls.calls["POST /v1/memories/compile"] == 1
    assert "Enterprise plan" in b.text


def test_the_client_reports_validation_errors_with_the_servers_details():
    wire = StatewaveWire("16")
    c = StatewaveClient("http://statewave.test", transport=wire.transport)
    with pytest.raises(StatewaveValidationError, match=r"body.status: String should match pattern") as e:
        c.create_resolution("cust-dana", "T-1001-s1", "closed")
    assert e.value.request_id == "be9dc6d3cb0d475d"


def test_without_a_url_opening_the_strategy_says_what_to_set(monkeypatch, tmp_path):
    from stores.protocol import Scope

    monkeypatch.delenv("STATEWAVE_URL", raising=False)
    s = Statewave()  # built (a registry lists it), but it cannot open
    with pytest.raises(RemoteUnavailable, match="set STATEWAVE_URL"):
        s.open(Scope(namespace="sb-0", run_id="r", strategy="statewave", suite="t", scenario="x", instance="plain",
                     cache_dir=tmp_path, work_dir=tmp_path))
    s.close()


def test_a_refused_connection_is_a_clear_error_naming_the_server():
    s = Statewave(StatewaveParams(url="http://127.0.0.1:9"), namespace="")
    s.observe(FIRST_SESSION[0])  # buffered: nothing sent yet
    with pytest.raises(StatewaveUnavailable, match=r"no answer from http://127.0.0.1:9 .*STATEWAVE_URL"):
        s.context(req())


def test_namespaces_keep_instances_apart_and_never_reach_the_text():
    seen: list[dict] = []

    def handler(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content) if request.content else None
        seen.append({"path": request.url.path, "body": body})
        if request.url.path == "/v1/episodes/batch":
            eps = [{**e, "id": f"id-{i}", "created_at": "2026-12-01T00:00:00Z"} for i, e in enumerate(body["episodes"])]
            return httpx.Response(201, json={"episodes_created": len(eps), "episodes": eps})
        if request.url.path == "/v1/context":
            return httpx.Response(200, json={"subject_id": body["subject_id"], "task": body["task"], "facts": [
                {"id": "m1", "kind": "profile_fact", "content": f"{body['subject_id']} is Dana", "source_episode_ids": ["id-0"]}],
                "episodes": [], "procedures": []})
        return httpx.Response(200, json={})

    s = Statewave(StatewaveParams(url="http://statewave.test"), transport=httpx.MockTransport(handler), namespace="run7")
    s.observe(FIRST_SESSION[0])
    b = s.context(req())
    assert seen[0]["body"]["episodes"][0]["subject_id"] == "run7:cust-dana"
    assert b.candidates[0].text.endswith("profile_fact: cust-dana is Dana")  # the prefix is stripped


def test_live_server_round_trip():
    url = need_server("statewave")
    s = Statewave(StatewaveParams(url=url))
    try:
        for e in FIRST_SESSION:
            s.observe(e)
        s.observe(Resolution(DANA, "T-1001-s1", "resolved", "Firmware 2.4.1 fixed the evening Wi-Fi drops.", T0))
        b = s.context(req(budget=400))
        assert b.tokens <= 400 and any(c.source_ids for c in b.candidates)
        assert all(set(c.source_ids) <= {"d-1", "d-2", "d-3", "d-4"} for c in b.candidates)
        r = s.health(DANA, T0)
        assert r.band in ("healthy", "watch", "at_risk")
    finally:
        s.close()


def test_open_puts_every_subject_under_the_scopes_namespace_and_close_deletes_them(tmp_path):
    from statewave_wire import pair

    from stores.protocol import Scope

    ns = "sb-0123456789abcdef0123"
    delete = pair("24")
    delete = {"request": {**delete["request"], "path": f"/v1/subjects/{ns}:cust-dana"}, "response": delete["response"]}
    wire = StatewaveWire("01", "05", delete)
    s = Statewave(StatewaveParams(url="http://statewave.test"), transport=wire.transport, namespace="")
    scope = Scope(namespace=ns, run_id="r", strategy="statewave", suite="t", scenario="x",
                  instance="plain", cache_dir=tmp_path / "cache", work_dir=tmp_path / "work")
    s.open(scope)
    s.observe(FIRST_SESSION[0])
    assert [r.url.path for r in wire.seen] == ["/healthz"]  # opening asks whether the server is up
    s.reset()  # a reset forgets the buffer: nothing was written, nothing is deleted
    assert len(wire.seen) == 1
    s.observe(FIRST_SESSION[0])
    s._flush()  # what a read does first
    assert json.loads(wire.seen[1].content)["episodes"][0]["subject_id"] == f"{ns}:cust-dana"
    s.close()
    assert wire.done()


def test_a_context_with_more_records_than_max_items_is_an_error_not_a_context():
    def answer(request: httpx.Request) -> httpx.Response:
        path = request.url.path
        if path == "/v1/episodes/batch":
            sent = json.loads(request.content)["episodes"]
            return httpx.Response(200, json={"episodes": [{"id": f"e{i}", **e} for i, e in enumerate(sent)]})
        if path == "/v1/context":
            return httpx.Response(200, json={"facts": [{"id": f"f{i}", "content": "a fact"} for i in range(6)]})
        return httpx.Response(200, json={})

    s = Statewave(StatewaveParams(url="http://statewave.test", max_items=5), transport=httpx.MockTransport(answer),
                  namespace="")
    s.observe(t("d-1", "The router drops Wi-Fi every evening.", 0))
    with pytest.raises(RemoteUnavailable, match="answered 6 records, more than max_items=5"):
        s.context(req())

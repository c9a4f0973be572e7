"""The raw `hindsight` strategy against the recorded API of a real Hindsight 1.1.0 server, and live when HINDSIGHT_URL is set."""

from __future__ import annotations

import copy
import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import httpx
import jsonschema
import pytest
from hindsight_wire import pair
from remote_env import need_server

from stores.protocol import ContextRequest, Forget, Resolution, Turn
from stores.remote.hindsight import Hindsight, HindsightParams
from stores.remote.receipt import RemoteUnavailable
from stores.tokens import count_tokens

SCHEMAS = json.loads((Path(__file__).resolve().parent.parent / "data" / "hindsight" / "request_schemas.json").read_text())
T0 = datetime(2024, 3, 4, 19, 55, tzinfo=timezone.utc)
DANA = "cust-dana"
REPORT = "Customer Dana Whitfield reported that her router (model AX3000) drops Wi-Fi every evening around 8pm."
ASKED = "Agent asked Dana to update the router firmware to 2.4.1; she said she prefers email follow-ups over phone calls."


def valid(schema: str, body: dict) -> None:
    """`body` is valid for the server's own request schema (its OpenAPI components)."""
    jsonschema.Draft202012Validator({**SCHEMAS, "$ref": f"#/components/schemas/{schema}"}).validate(body)


class Server:
    """Answers the strategy from recorded responses, validating every request against the server's schemas."""

    def __init__(self, *answers: tuple[str, str, dict]) -> None:
        self.answers = list(answers)  # (method, path, response json)
        self.seen: list[tuple[str, str, dict | None]] = []
        self.transport = httpx.MockTransport(self._handle)

    def _handle(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content) if request.content else None
        self.seen.append((request.method, request.url.path, body))
        assert self.answers, f"unexpected {request.method} {request.url.path}"
        method, path, answer = self.answers.pop(0)
        assert (request.method, request.url.path) == (method, path)
        if path.endswith("/memories/recall"):
            valid("RecallRequest", body)
        elif path.endswith("/memories") and method == "POST":
            valid("RetainRequest", body)
        return httpx.Response(200, json=answer)


BANK = "/v1/default/banks/bank7"
RETAINED = pair("05")["response"]["json"]


def recalled(*, item_ids: bool = False) -> dict:
    """The recorded recall (09) as this strategy's bank would answer it: the same units, in our documents."""
    answer = copy.deepcopy(pair("09")["response"]["json"])
    for r, item in zip(answer["results"], ("d-1", "d-2")):
        r["document_id"] = f"{DANA}:T-1001-s1"
        if item_ids:
            r["metadata"] = {**r["metadata"], "item_id": item}
    return answer


def t(id, text, minutes, session="T-1001-s1", role="customer", kind="message"):
    return Turn(id=id, subject=DANA, session=session, role=role, kind=kind, text=text, at=T0 + timedelta(minutes=minutes))


def req(task="router problem", budget=256, minutes=30):
    return ContextRequest(DANA, "T-1001-s2", task, budget, T0 + timedelta(minutes=minutes))


def strategy(server: Server) -> Hindsight:
    return Hindsight(HindsightParams(url="http://hindsight.test"), transport=server.transport, namespace="bank7")


def test_a_session_is_one_document_retained_before_the_recall_with_the_simulated_time():
    server = Server(("POST", f"{BANK}/memories", RETAINED), ("POST", f"{BANK}/memories/recall", recalled()))
    s = strategy(server)
    s.observe(t("d-1", REPORT, 0))
    s.observe(t("d-2", ASKED, 10, role="agent"))
    assert server.seen == []  # buffered until a read
    b = s.context(req())
    (_, _, retain), (_, _, recall) = server.seen
    assert [i["document_id"] for i in retain["items"]] == [f"{DANA}:T-1001-s1"] * 2
    assert [i["timestamp"] for i in retain["items"]] == ["2024-03-04T19:55:00Z", "2024-03-04T20:05:00Z"]
    assert all(i["tags"] == ["customer:cust-dana"] for i in retain["items"])
    assert retain["items"][1]["metadata"] == {"item_id": "d-2", "subject": DANA, "session": "T-1001-s1",
                                              "speaker": "agent", "kind": "message"}
    assert recall == {"query": "router problem", "max_tokens": 256, "budget": "mid", "tags": ["customer:cust-dana"],
                      "tags_match": "all_strict", "query_timestamp": "2024-03-04T20:25:00Z"}
    # the receipt: the recorded units, in the server's order, traced to our turns by their text
    assert [c.item_id for c in b.candidates] == ["d-1", "d-2"]
    assert [c.source_ids for c in b.candidates] == [("d-1",), ("d-2",)]
    first = b.candidates[0]
    assert first.text == f"[2024-03-04 19:55] (T-1001-s1) customer: {REPORT}"
    assert set(first.components) == {"semantic", "keyword", "fusion"}
    assert first.score == pytest.approx(0.9199999999999999) == sum(first.components.values())
    assert first.components["semantic"] == pytest.approx(0.36635104618364367)
    assert count_tokens(b.text) == b.tokens <= 256


def test_metadata_names_the_item_when_the_text_does_not():
    server = Server(("POST", f"{BANK}/memories", RETAINED), ("POST", f"{BANK}/memories/recall", recalled(item_ids=True)))
    s = strategy(server)
    s.observe(t("d-1", "something else entirely", 0))  # text no longer matches: the metadata decides
    s.observe(t("d-2", ASKED, 10, role="agent"))
    b = s.context(req())
    assert [c.source_ids for c in b.candidates] == [("d-1",), ("d-2",)]


def test_a_changed_session_is_retained_again_whole_and_a_repeat_delivery_sends_nothing():
    deleted = pair("15")["response"]["json"]
    server = Server(("POST", f"{BANK}/memories", RETAINED), ("POST", f"{BANK}/memories/recall", recalled()),
                    ("DELETE", f"{BANK}/documents/{DANA}:T-1001-s1", deleted),
                    ("POST", f"{BANK}/memories", RETAINED), ("POST", f"{BANK}/memories/recall", recalled()),
                    ("POST", f"{BANK}/memories/recall", recalled()))
    s = strategy(server)
    s.observe(t("d-1", REPORT, 0))
    s.context(req())
    s.observe(t("d-2", ASKED, 10, role="agent"))
    s.observe(t("d-2", ASKED, 10, role="agent"))
    s.context(req())
    s.observe(t("d-1", REPORT, 0))  # again: nothing changed, nothing to retain
    s.context(req())
    retains = [body for m, p, body in server.seen if p.endswith("/memories")]
    assert [len(r["items"]) for r in retains] == [1, 2]  # the whole document each time, written fresh
    assert s.calls.calls == {"POST /banks/{bank}/memories": 2, "POST /banks/{bank}/memories/recall": 3,
                             "DELETE /banks/{bank}/documents/{id}": 1}


def test_a_big_flush_is_split_between_documents_never_inside_one():
    server = Server(*[("POST", f"{BANK}/memories", RETAINED)] * 2, ("POST", f"{BANK}/memories/recall", {"results": []}))
    s = Hindsight(HindsightParams(url="http://hindsight.test", items_per_retain=3), transport=server.transport,
                  namespace="bank7")
    for n, session in enumerate(["a", "b", "c"]):
        for k in range(n + 1):  # documents of 1, 2 and 3 items
            s.observe(t(f"{session}-{k}", f"turn {k} of {session}", 10 * n + k, session=session))
    s.context(req())
    calls = [[i["document_id"] for i in body["items"]] for m, p, body in server.seen if p.endswith("/memories")]
    # a (1 item) and b (2) fill a call of 3; c (3 items) needs its own
    assert calls == [[f"{DANA}:a", f"{DANA}:b", f"{DANA}:b"], [f"{DANA}:c"] * 3]
    assert s.calls.calls["POST /banks/{bank}/memories"] == 2


def test_a_resolution_is_an_item_of_its_session_replaced_when_it_changes():
    server = Server(("POST", f"{BANK}/memories", RETAINED), ("POST", f"{BANK}/memories/recall", {"results": []}),
                    ("DELETE", f"{BANK}/documents/{DANA}:T-1001-s1", pair("15")["response"]["json"]),
                    ("POST", f"{BANK}/memories", RETAINED), ("POST", f"{BANK}/memories/recall", {"results": []}))
    s = strategy(server)
    s.observe(t("d-1", REPORT, 0))
    s.observe(Resolution(DANA, "T-1001-s1", "unresolved", "", T0 + timedelta(hours=1)))
    s.context(req())
    s.observe(Resolution(DANA, "T-1001-s1", "resolved", "Firmware 2.4.1 fixed the evening drops.", T0 + timedelta(hours=2)))
    s.context(req())
    first, second = [body["items"] for m, p, body in server.seen if p.endswith("/memories")]
    assert [i["content"] for i in first] == [REPORT, "unresolved (no summary)"]
    assert [i["content"] for i in second] == [REPORT, "Firmware 2.4.1 fixed the evening drops."]
    assert second[1]["metadata"]["status"] == "resolved" and second[1]["metadata"]["item_id"] == "T-1001-s1#resolution"


def test_forgetting_a_customer_deletes_their_documents_and_nothing_comes_back():
    deleted = pair("15")["response"]["json"]
    server = Server(("POST", f"{BANK}/memories", RETAINED), ("POST", f"{BANK}/memories/recall", recalled()),
                    ("DELETE", f"{BANK}/documents/{DANA}:T-1001-s1", deleted),
                    ("DELETE", f"{BANK}/documents/{DANA}:T-1001-s2", deleted))
    s = strategy(server)
    s.observe(t("d-1", REPORT, 0))
    s.observe(t("d-3", "Still dropping.", 60 * 24, session="T-1001-s2"))
    s.context(req())
    s.observe(Forget(DANA, T0 + timedelta(days=2)))
    b = s.context(req(minutes=60 * 24 * 3))
    assert list(b.candidates) == [] and server.answers == []  # no recall: nothing of theirs is stored


def test_reset_deletes_the_bank():
    server = Server(("POST", f"{BANK}/memories", RETAINED), ("POST", f"{BANK}/memories/recall", recalled()),
                    ("DELETE", BANK, pair("20")["response"]["json"]))
    s = strategy(server)
    s.observe(t("d-1", REPORT, 0))
    s.context(req())
    s.reset()
    assert server.answers == [] and list(s.context(req()).candidates) == []


def test_every_request_is_valid_for_the_servers_schema_and_non_strings_are_not_sent():
    # the recorded 422 (26): metadata values must be strings; ours always are
    with pytest.raises(jsonschema.ValidationError):
        valid("RetainRequest", pair("26")["request"]["json"])
    with pytest.raises(jsonschema.ValidationError):
        valid("RecallRequest", pair("19")["request"]["json"])  # budget "huge": the recorded 422
    valid("RetainRequest", pair("05")["request"]["json"])
    valid("RecallRequest", pair("28")["request"]["json"])


def test_without_a_url_opening_the_strategy_says_what_to_set(monkeypatch, tmp_path):
    from stores.protocol import Scope

    monkeypatch.delenv("HINDSIGHT_URL", raising=False)
    s = Hindsight()  # built (a registry lists it), but it cannot open
    with pytest.raises(RemoteUnavailable, match="set HINDSIGHT_URL"):
        s.open(Scope(namespace="sb-0", run_id="r", strategy="hindsight", suite="t", scenario="x", instance="plain",
                     cache_dir=tmp_path, work_dir=tmp_path))
    s.close()


def test_a_refused_connection_is_a_clear_error_naming_the_server():
    s = Hindsight(HindsightParams(url="http://127.0.0.1:9"), namespace="bank7")
    s.observe(t("d-1", REPORT, 0))
    with pytest.raises(RemoteUnavailable, match="no answer from http://127.0.0.1:9 .*HINDSIGHT_URL"):
        s.context(req())


def test_live_server_keeps_customers_apart():
    url = need_server("hindsight")
    s = Hindsight(HindsightParams(url=url))
    try:
        s.observe(t("d-1", REPORT, 0))
        s.observe(Turn("o-1", "cust-omar", "T-2002", "customer", "message",
                       "Customer Omar Haddad asked for a refund of the duplicate March invoice INV-7781.", T0))
        b = s.context(req(task="router drops Wi-Fi in the evening", budget=400))
        assert [c.source_ids for c in b.candidates] == [("d-1",)]
        other = s.context(ContextRequest("cust-omar", "T-2002", "refund invoice", 400, T0 + timedelta(minutes=5)))
        assert [c.source_ids for c in other.candidates] == [("o-1",)]
    finally:
        s.close()


def test_open_names_the_bank_after_the_scope_and_close_deletes_it(tmp_path):
    from stores.protocol import Scope

    ns = "sb-0123456789abcdef0123"
    bank = f"/v1/default/banks/{ns}"
    server = Server(("GET", "/health", pair("02")["response"]["json"]),
                    ("POST", f"{bank}/memories", RETAINED), ("POST", f"{bank}/memories/recall", {"results": []}),
                    ("DELETE", bank, pair("20")["response"]["json"]))
    s = Hindsight(HindsightParams(url="http://hindsight.test"), transport=server.transport)
    s.open(Scope(namespace=ns, run_id="r", strategy="hindsight", suite="t", scenario="x", instance="twice",
                 cache_dir=tmp_path / "cache", work_dir=tmp_path / "work"))
    s.observe(t("d-1", REPORT, 0))
    s.context(req())
    s.close()
    assert server.answers == []


def test_a_recall_with_more_memories_than_max_items_is_an_error_not_a_context():
    answer = recalled()
    n = len(answer["results"])
    server = Server(("POST", f"{BANK}/memories", RETAINED), ("POST", f"{BANK}/memories/recall", answer))
    s = Hindsight(HindsightParams(url="http://hindsight.test", max_items=n - 1), transport=server.transport,
                  namespace="bank7")
    s.observe(t("d-1", REPORT, 0))
    with pytest.raises(RemoteUnavailable, match=f"answered {n} memories, more than max_items={n - 1}"):
        s.context(req())


def test_the_answer_limits_are_parameters_with_ranges():
    from stores.registry import SpecError, parse_spec

    assert parse_spec("hindsight:max_response_bytes=2000,max_items=5").params().max_items == 5
    for bad in ("hindsight:max_response_bytes=10", "hindsight:max_items=0", "statewave:max_response_bytes=999999999999"):
        with pytest.raises(SpecError):
            parse_spec(bad).params()

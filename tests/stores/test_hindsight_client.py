"""The Hindsight client against pairs recorded from a real hindsight-api 1.1.0 server."""

from __future__ import annotations

import socket
from datetime import datetime, timezone

import httpx
import pytest
from hindsight_wire import Recorded

from stores.remote.hindsight_client import (
    HindsightBadRequest,
    HindsightClient,
    HindsightNotFound,
    HindsightServerError,
    HindsightUnavailable,
    HindsightValidationError,
    RetainItem,
)

BANK = "sb-fixture-bank"


def client(rec: Recorded, **kw) -> HindsightClient:
    return HindsightClient("http://127.0.0.1:8888", transport=rec.transport, **kw)


def dana_items():
    chat = {"ticket": "T-1001", "channel": "chat", "session": "s1"}
    return [
        RetainItem(
            "Customer Dana Whitfield reported that her router (model AX3000) drops Wi-Fi every evening around 8pm.",
            timestamp=datetime(2024, 3, 4, 19, 55, tzinfo=timezone.utc), context="support ticket T-1001, session 1",
            metadata=chat, document_id="T-1001-s1", tags=("customer:dana", "ticket:T-1001"),
        ),
        RetainItem(
            "Agent asked Dana to update the router firmware to 2.4.1; she said she prefers email follow-ups over phone calls.",
            timestamp="2024-03-04T20:05:00Z", context="support ticket T-1001, session 1", metadata=chat,
            document_id="T-1001-s1b", tags=["customer:dana", "ticket:T-1001"],
        ),
        RetainItem(
            "Customer Omar Haddad asked for a refund of the duplicate March invoice INV-7781.",
            timestamp="2024-03-05T09:12:00Z", context="billing ticket T-2002",
            metadata={"ticket": "T-2002", "channel": "email"}, document_id="T-2002", tags=["customer:omar", "ticket:T-2002"],
        ),
    ]


def test_server_and_bank_calls_send_the_recorded_requests_and_parse_the_answers():
    rec = Recorded("01", "02", "03", "04")
    c = client(rec)
    assert c.version()["api_version"] == "1.1.0"
    assert c.health()["status"] == "healthy"
    assert c.create_bank(BANK, name="supportbench fixture bank")["bank_id"] == BANK
    assert [b["bank_id"] for b in c.list_banks()] == [BANK]
    assert rec.done()


def test_retain_sends_items_with_document_ids_tags_timestamps_and_string_metadata():
    rec = Recorded("05", "06", "07")
    c = client(rec)
    r = c.retain(BANK, dana_items())
    assert (r.bank_id, r.items_count, r.operation_id) == (BANK, 3, None)
    later = RetainItem("Dana confirmed the firmware update fixed the evening drops.", timestamp="2024-03-06T10:00:00Z",
                       document_id="T-1001-s2", tags=["customer:dana", "ticket:T-1001"], metadata={"ticket": "T-1001"})
    queued = c.retain(BANK, [later], async_=True)
    assert queued.operation_id == "5e383c9b-dd8c-4972-861c-ae5ff29fc358"
    assert c.retain("sb-autocreated", [RetainItem("A bank that was never created explicitly.", document_id="auto-1")]).bank_id == "sb-autocreated"
    assert rec.done()


def test_recall_parses_text_document_metadata_tags_and_scores_best_first():
    rec = Recorded("08")
    hits = client(rec).recall(BANK, "How does Dana want to be contacted?", max_tokens=512, budget="low")
    assert [h.document_id for h in hits] == ["T-1001-s1b", "T-1001-s2", "T-1001-s1"]
    top = hits[0]
    assert "prefers email" in top.text
    assert top.metadata == {"ticket": "T-1001", "channel": "chat", "session": "s1"}
    assert top.tags == ("customer:dana", "ticket:T-1001")
    assert top.mentioned_at == "2024-03-04T20:05:00+00:00"
    assert top.score == pytest.approx(0.92) and top.scores["semantic"] == pytest.approx(0.478, abs=1e-3)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_recall_filters_by_tags_with_the_match_mode_on_the_wire():
    rec = Recorded("09", "10")
    c = client(rec)
    dana = c.recall(BANK, "router problem", tags=["customer:dana"], max_tokens=256, budget="mid")
    assert all("customer:dana" in h.tags for h in dana)
    omar = c.recall(BANK, "refund", tags=["customer:omar"], tags_match="all", max_tokens=256, budget="low")
    assert [h.document_id for h in omar] == ["T-2002"]
    assert rec.done()


def test_documents_are_listed_read_and_deleted_and_their_memories_go_with_them():
    rec = Recorded("13", "14", "15", "16")
    c = client(rec)
    docs, total = c.list_documents(BANK)
    assert total == len(docs) and {d.id for d in docs} >= {"T-1001-s1", "T-2002"}
    omar = next(d for d in docs if d.id == "T-2002")
    assert omar.metadata == {"ticket": "T-2002", "channel": "email"} and omar.memory_unit_count == 1
    assert c.get_document(BANK, "T-2002")["original_text"].startswith("Customer Omar Haddad")
    assert c.delete_document(BANK, "T-2002") == 1
    assert c.recall(BANK, "refund invoice", max_tokens=256, budget="low") == []
    assert rec.done()


def test_retaining_the_same_document_id_replaces_it():
    rec = Recorded("23", "24", "25")
    c = client(rec)
    for content, when, k in (("Plan: Basic, 10 GB.", "2024-01-01T00:00:00Z", "v1"),
                             ("Plan: Pro, 100 GB (upgraded).", "2024-02-01T00:00:00Z", "v2")):
        c.retain("sb-fixture-bank2", [RetainItem(content, timestamp=when, document_id="plan", tags=["customer:kim"],
                                                 metadata={"k": k})])
    units = c.list_memories("sb-fixture-bank2", limit=10)
    assert [(u["text"], u["metadata"]) for u in units] == [("Plan: Pro, 100 GB (upgraded).", {"k": "v2"})]


def test_list_memories_sends_tags_as_repeated_query_parameters():
    rec = Recorded("29")
    units = client(rec).list_memories("sb-fixture-bank2", tags=["customer:kim"], limit=5)
    assert len(units) == 2
    assert rec.seen[0].url.params.get_list("tags") == ["customer:kim"]


def test_query_timestamp_is_sent_and_later_memories_still_come_back():
    rec = Recorded("27", "28")
    c = client(rec)
    c.retain("sb-fixture-bank2", [RetainItem("Kim called about slow speeds.", timestamp="2024-01-15T00:00:00Z",
                                             document_id="call1", tags=["customer:kim"])])
    hits = c.recall("sb-fixture-bank2", "what plan is Kim on", max_tokens=256, budget="low",
                    query_timestamp=datetime(2024, 1, 20, tzinfo=timezone.utc))
    assert {h.document_id for h in hits} == {"call1", "plan"}


def test_non_string_metadata_is_a_typed_422_with_the_location():
    rec = Recorded("26")
    with pytest.raises(HindsightValidationError) as e:
        client(rec).retain("sb-fixture-bank2", [RetainItem("x", metadata={"n": 1})])
    assert e.value.status == 422
    assert e.value.errors == [("body.items.0.metadata.n", "Input should be a valid string")]
    assert "metadata.n" in str(e.value)


def test_a_budget_outside_low_mid_high_is_a_typed_422():
    rec = Recorded("19")
    with pytest.raises(HindsightValidationError) as e:
        client(rec).recall(BANK, "x", budget="huge")
    assert e.value.errors[0][0] == "body.budget"


def test_a_deleted_bank_answers_404_as_not_found():
    rec = Recorded("20", "22")
    c = client(rec)
    assert c.delete_bank(BANK) == 6
    with pytest.raises(HindsightNotFound) as e:
        c.recall(BANK, "router")
    assert e.value.status == 404 and "not found" in str(e.value)


def test_clearing_a_bank_empties_recall_then_the_bank_is_deleted():
    rec = Recorded("30", "31", "32")
    c = client(rec)
    assert c.clear_memories("sb-fixture-bank2") == 2
    assert c.recall("sb-fixture-bank2", "plan", budget="low") == []
    assert c.delete_bank("sb-fixture-bank2") == 0


def test_a_reflect_without_llm_style_400_is_a_bad_request():
    rec = Recorded(responses=[{"request": {"method": "GET", "path": "/v1/version", "params": None, "json": None},
                               "response": {"status": 400, "json": {"detail": "Reflect requires an LLM provider."}}}])
    with pytest.raises(HindsightBadRequest, match="400 Reflect requires"):
        client(rec).version()


def test_a_server_failure_is_a_typed_5xx():
    transport = httpx.MockTransport(lambda r: httpx.Response(503, json={"detail": "database unavailable"}))
    with pytest.raises(HindsightServerError) as e:
        HindsightClient("http://127.0.0.1:8888", transport=transport).health()
    assert e.value.status == 503 and "database unavailable" in str(e.value)


def test_connection_refused_is_unavailable_not_a_traceback():
    with socket.socket() as s:  # a port nothing listens on: bind, read the port, close
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(HindsightUnavailable) as e:
        HindsightClient(f"http://127.0.0.1:{port}", timeout=2.0).health()
    assert e.value.status is None and f"127.0.0.1:{port}" in str(e.value)


def test_the_api_key_travels_as_a_bearer_header_and_ids_are_path_encoded():
    seen = []

    def answer(r):
        seen.append(r)
        return httpx.Response(200, json={"success": True, "memory_units_deleted": 0})

    c = HindsightClient("http://127.0.0.1:8888/", api_key="k-123", transport=httpx.MockTransport(answer))
    c.delete_document("bank one", "doc/7")
    assert seen[0].headers["authorization"] == "Bearer k-123"
    assert seen[0].url.raw_path == b"/v1/default/banks/bank%20one/documents/doc%2F7"
    no_key = HindsightClient("http://127.0.0.1:8888", transport=httpx.MockTransport(answer))
    no_key.delete_document("b", "d")
    assert "authorization" not in seen[1].headers

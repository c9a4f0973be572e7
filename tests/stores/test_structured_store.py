"""The seed's store protocol, kept the same by the in-memory and the Hindsight store."""

from __future__ import annotations

import json

import httpx
import pytest
from helpers import at
from hindsight_fake import FakeHindsight
from hindsight_wire import Recorded, pair

from stores.remote.hindsight_client import HindsightClient, HindsightValidationError
from stores.structured.hindsight_store import HindsightStore, customer_tag, from_metadata, to_metadata
from stores.structured.model import Memory
from stores.structured.store import InMemoryStore, MemoryStore, StoreError, make_store


def mem(id, customer, text, type_="ATTEMPT", outcome="worked", minutes=0, **kw):
    status = "open" if type_ == "INCIDENT" else None
    return Memory(id=id, customer_id=customer, type=type_, text=text, created_at=at(minutes), updated_at=at(minutes),
                  source_ids=(f"{id}-src",), outcome=outcome if type_ == "ATTEMPT" else None, status=status, **kw)


def hindsight(fake=None):
    fake = fake or FakeHindsight()
    return HindsightStore(HindsightClient("http://127.0.0.1:8888", transport=fake.transport), "sb-test"), fake


@pytest.fixture(params=["memory", "hindsight"])
def store(request) -> MemoryStore:
    return InMemoryStore() if request.param == "memory" else hindsight()[0]


def seed_two_customers(store):
    store.add(mem("m1", "CUST-1042", "Update application", product="Acme PDF Suite"))
    store.add(mem("m2", "CUST-1042", "Restart application", outcome="failed", minutes=1))
    store.add(mem("m3", "CUST-1042", "App crashes on PDF upload", type_="INCIDENT", minutes=2))
    store.add(mem("x1", "CUST-2077", "Reinstall application", minutes=3))


def test_both_stores_keep_the_protocol(store):
    assert isinstance(store, MemoryStore)
    seed_two_customers(store)
    assert {m.id for m in store.all("CUST-1042")} == {"m1", "m2", "m3"}
    store.update(store.all("CUST-1042")[0].evolve(outcome="failed", previous_outcomes=("worked",)))
    assert {m.id: m.outcome for m in store.all("CUST-1042")}["m1"] == "failed"
    assert len(store.all("CUST-1042")) == 3  # updated in place, not duplicated


def test_search_returns_scored_memories_best_first_within_the_limit(store):
    seed_two_customers(store)
    hits = store.search("CUST-1042", "application crashing when uploading PDF", limit=2)
    assert len(hits) <= 2 and all(isinstance(m, Memory) and isinstance(s, float) for m, s in hits)
    assert [s for _, s in hits] == sorted((s for _, s in hits), reverse=True)
    assert hits[0][1] > 0


def test_a_customers_recall_never_holds_another_customers_memory(store):
    seed_two_customers(store)
    for query in ("Reinstall application", "application", "PDF crash"):
        assert all(m.customer_id == "CUST-1042" for m, _ in store.search("CUST-1042", query, limit=10))
    assert [m.text for m in store.all("CUST-2077")] == ["Reinstall application"]


def test_forget_deletes_one_customer_and_counts(store):
    seed_two_customers(store)
    assert store.forget("CUST-1042") == 3
    assert store.all("CUST-1042") == [] and store.search("CUST-1042", "application", 5) == []
    assert len(store.all("CUST-2077")) == 1
    assert store.forget("nobody") == 0


def test_the_in_memory_store_refuses_a_duplicate_add_and_a_missing_update():
    s = InMemoryStore()
    s.add(mem("m1", "c1", "Update application"))
    with pytest.raises(StoreError, match="already exists"):
        s.add(mem("m1", "c1", "Update application"))
    with pytest.raises(StoreError, match="no memory 'm9'"):
        s.update(mem("m9", "c1", "x"))


def test_the_in_memory_store_persists_to_json_atomically_and_reads_it_back(tmp_path):
    path = tmp_path / "memories.json"
    s = InMemoryStore(path)
    seed_two_customers(s)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["memories.json"]  # no temporary file left behind
    again = InMemoryStore(path)
    assert again.all("CUST-1042") == s.all("CUST-1042")
    path.write_text('{"version": 1, "memories": [{"id": "m1"}]}')
    with pytest.raises(StoreError, match=r"memories\[0\]: memory 'm1': field 'customer_id' must be a string"):
        InMemoryStore(path)
    path.write_text("{not json")
    with pytest.raises(StoreError, match=r"memories.json:1: not valid JSON"):
        InMemoryStore(path)


def test_the_factory_picks_hindsight_only_when_its_url_is_set():
    assert isinstance(make_store({}), InMemoryStore)
    fake = FakeHindsight()
    s = make_store({"HINDSIGHT_URL": "http://127.0.0.1:8888", "HINDSIGHT_BANK": "support-prod", "HINDSIGHT_API_KEY": "k1"},
                   transport=fake.transport)
    assert isinstance(s, HindsightStore) and s.bank == "support-prod"
    s.add(mem("m1", "c1", "Update application"))
    assert fake.requests[0].headers["authorization"] == "Bearer k1"
    assert fake.requests[0].url.path == "/v1/default/banks/support-prod/memories"


def test_hindsight_retains_one_document_per_memory_tagged_with_its_customer():
    s, fake = hindsight()
    m = mem("m1", "CUST-1042", "Update application", product="Acme PDF Suite", incident_id="i1")
    s.add(m)
    body = json.loads(fake.requests[0].content)
    (item,) = body["items"]
    assert item["document_id"] == "m1" and item["tags"] == [customer_tag("CUST-1042")] and item["content"] == "Update application"
    assert item["timestamp"] == "2026-03-02T09:00:00Z"  # the simulated clock, not the server's
    assert all(isinstance(v, str) for v in item["metadata"].values())
    assert from_metadata(item["metadata"]) == m


def test_hindsight_reads_ask_for_the_customers_tag_strictly():
    s, fake = hindsight()
    seed_two_customers(s)
    s.search("CUST-1042", "crash", 5)
    s.all("CUST-1042")
    recall = json.loads(fake.requests[-2].content)
    assert recall["tags"] == ["customer:CUST-1042"] and recall["tags_match"] == "all_strict"
    assert fake.requests[-1].url.params.get_list("tags") == ["customer:CUST-1042"]
    assert fake.requests[-1].url.params["tags_match"] == "all_strict"
    s.search("CUST-1042", "crash", 5, now=at(60))
    assert json.loads(fake.requests[-1].content)["query_timestamp"] == "2026-03-02T10:00:00Z"  # the simulated clock


def test_hindsight_isolation_holds_even_when_the_server_ignores_the_tag_filter():
    s, fake = hindsight(FakeHindsight(ignore_tags=True))
    seed_two_customers(s)
    assert len(fake.banks["sb-test"]) == 4
    assert "x1" not in {m.id for m, _ in s.search("CUST-1042", "Reinstall application", 10)}
    assert "x1" not in {m.id for m in s.all("CUST-1042")}


def test_hindsight_ignores_documents_that_are_not_supportbench_memories():
    recorded = pair("08")["response"]["json"]  # a real server's recall: other software's documents
    transport = httpx.MockTransport(lambda r: httpx.Response(200, json=recorded))
    s = HindsightStore(HindsightClient("http://127.0.0.1:8888", transport=transport), "sb-fixture-bank")
    assert s.search("dana", "How does Dana want to be contacted?", 5) == []


def test_hindsight_on_a_deleted_bank_reads_as_empty():
    rec = Recorded(responses=[{"request": {"method": "POST", "path": "/v1/default/banks/sb-fixture-bank/memories/recall",
                                           "params": None,
                                           "json": {"query": "router", "tags": ["customer:dana"], "tags_match": "all_strict",
                                                    "max_tokens": 2048, "budget": "low"}},
                               "response": pair("22")["response"]}])
    s = HindsightStore(HindsightClient("http://127.0.0.1:8888", transport=rec.transport), "sb-fixture-bank")
    assert s.search("dana", "router", 5) == []
    assert rec.done()


def test_hindsight_surfaces_a_refused_payload_as_a_typed_error():
    transport = httpx.MockTransport(lambda r: httpx.Response(422, json=pair("26")["response"]["json"]))
    s = HindsightStore(HindsightClient("http://127.0.0.1:8888", transport=transport), "sb")
    with pytest.raises(HindsightValidationError, match="metadata.n"):
        s.add(mem("m1", "c1", "x"))


def test_metadata_round_trips_every_field_as_strings():
    m = mem("m1", "c1", "Update application", previous_outcomes=("failed",), incident_id=None)
    meta = to_metadata(m)
    assert all(isinstance(v, str) for v in meta.values())
    assert from_metadata(meta) == m and from_metadata({"ticket": "T-1"}) is None

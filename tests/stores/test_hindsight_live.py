"""Live: the Hindsight client, store and strategy against a real server (`make test-hindsight`).

Runs only when HINDSIGHT_URL points at a server (HINDSIGHT_API_KEY if it needs one); each test
works in a bank of its own and deletes it.
"""

from __future__ import annotations

import os
import uuid

import pytest
from helpers import at, turn

from stores.protocol import ContextRequest
from stores.remote.hindsight_client import HindsightClient, HindsightNotFound, HindsightValidationError, RetainItem
from stores.structured.hindsight_store import HindsightStore
from stores.structured.strategy import Structured

URL = os.environ.get("HINDSIGHT_URL", "").strip()
pytestmark = pytest.mark.skipif(not URL, reason="HINDSIGHT_URL is not set: no Hindsight server to test against (make test-hindsight starts one)")


@pytest.fixture
def client():
    c = HindsightClient(URL, api_key=os.environ.get("HINDSIGHT_API_KEY") or None, timeout=120)
    yield c
    c.close()


@pytest.fixture
def bank(client):
    name = f"sb-live-{uuid.uuid4().hex[:10]}"
    yield name
    try:
        client.delete_bank(name)
    except HindsightNotFound:
        pass


def test_the_live_server_speaks_api_1_1_0(client):
    assert client.version()["api_version"] == "1.1.0"
    assert client.health()["status"] == "healthy"


def test_live_retain_recall_replace_and_errors(client, bank):
    client.retain(bank, [RetainItem("Dana's router drops Wi-Fi every evening.", document_id="d1", tags=["customer:dana"],
                                    metadata={"k": "v1"}, timestamp="2024-03-04T19:55:00Z")])
    client.retain(bank, [RetainItem("Omar asked for a refund of invoice INV-7781.", document_id="o1", tags=["customer:omar"])])
    hits = client.recall(bank, "router drops", tags=["customer:dana"], tags_match="all_strict", budget="low")
    assert [h.document_id for h in hits] == ["d1"] and hits[0].metadata == {"k": "v1"}
    client.retain(bank, [RetainItem("Dana's router is fixed.", document_id="d1", tags=["customer:dana"], metadata={"k": "v2"})])
    (doc,) = [d for d in client.iter_documents(bank, tags=["customer:dana"], tags_match="all_strict")]
    assert doc.metadata == {"k": "v2"}
    with pytest.raises(HindsightValidationError):
        client.retain(bank, [RetainItem("x", metadata={"n": 1})])
    client.delete_bank(bank)
    with pytest.raises(HindsightNotFound):
        client.recall(bank, "router")


def test_live_store_keeps_customers_apart(client, bank):
    from test_structured_store import seed_two_customers

    store = HindsightStore(client, bank)
    seed_two_customers(store)
    assert {m.id for m in store.all("CUST-1042")} == {"m1", "m2", "m3"}
    found = store.search("CUST-1042", "Reinstall application", 10)
    assert found and all(m.customer_id == "CUST-1042" for m, _ in found)
    assert store.forget("CUST-1042") == 3 and store.all("CUST-1042") == []
    assert [m.id for m in store.all("CUST-2077")] == ["x1"]


def test_live_strategy_recalls_the_known_fix_first(client, bank):
    store = HindsightStore(client, bank)
    s = Structured(store=store)
    for e in [turn("a1", "My Acme PDF Suite crashes whenever I upload a large PDF.", 0),
              turn("a3", "I restarted it but that did not help.", 2),
              turn("a5", "Cleared the cache, still crashing.", 4),
              turn("a6", "Updated the app and it fixed it.", 5),
              turn("z1", "Our Acme PDF Suite crashes too. Reinstalling fixed it.", 6, subject="c2", session="z")]:
        s.observe(e)
    b = s.context(ContextRequest("c1", "s2", "The application is crashing again when I upload a PDF.", 4000, at(9000)))
    assert "known fix (worked): Update application" in b.text.split("\n")[1]
    assert "Reinstall" not in b.text
    s.close()

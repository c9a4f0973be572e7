"""The `mem0` strategy: the real mem0ai package, offline, no LLM call, the simulated clock in metadata."""

from __future__ import annotations

import os
import socket

import httpx
import pytest
from remote_env import need_mem0
from store_events import at, forget, request, resolve, turn, two_customer_history

from stores.tokens import count_tokens

REQ = request("a3", "CSV export fails with error 502 again", at(days=10, minutes=5), budget=400)


@pytest.fixture(autouse=True)
def _mem0_here():
    need_mem0()


@pytest.fixture
def offline(monkeypatch):
    """Every socket connection a test makes, refused unless it goes to this machine; the attempts kept."""
    attempts: list = []
    real = socket.socket.connect

    def connect(self, address):
        attempts.append(address)
        host = address[0] if isinstance(address, tuple) else str(address)
        if host not in ("127.0.0.1", "::1", "localhost") and self.family != socket.AF_UNIX:
            raise OSError(f"test is offline: refused a connection to {address}")
        return real(self, address)

    monkeypatch.setattr(socket.socket, "connect", connect)
    return attempts


@pytest.fixture
def llm_requests(monkeypatch):
    """mem0's OpenAI client, built as usual but on a transport that records and refuses every request."""
    import mem0.llms.openai as mem0_openai
    import openai

    built: list = []
    sent: list[httpx.Request] = []

    def refuse(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return httpx.Response(599, json={"error": "the test forbids LLM calls"})

    def factory(*args, **kwargs):
        client = openai.OpenAI(*args, **kwargs, http_client=httpx.Client(transport=httpx.MockTransport(refuse)),
                               max_retries=0)
        built.append(client)
        return client

    monkeypatch.setattr(mem0_openai, "OpenAI", factory)
    return built, sent


def build(**kw):
    from stores.remote.mem0 import Mem0

    return Mem0(**kw)


def test_a_full_replay_never_asks_the_llm_and_never_leaves_the_machine(offline, llm_requests):
    built, sent = llm_requests
    s = build()
    try:
        for e in two_customer_history():
            s.observe(e)
        s.observe(resolve("a1", at(hours=4), "Rebuilt the CSV export index.", subject="acme"))  # an update
        b = s.context(REQ)
        s.observe(forget("globex", at(days=11)))
        s.context(request("g3", "CSV export 502", at(days=11), subject="globex"))
        s.reset()
    finally:
        s.close()
    assert b.included  # the replay did real work
    assert len(built) == 1  # mem0 built its LLM client through the trap...
    assert sent == []  # ...and never sent it a request
    assert all(a[0] in ("127.0.0.1", "::1") for a in offline if isinstance(a, tuple))


def test_the_llm_trap_would_catch_a_call(llm_requests):
    built, sent = llm_requests
    s = build()
    try:
        with pytest.raises(Exception):
            s.memory.llm.generate_response(messages=[{"role": "user", "content": "hi"}])
    finally:
        s.close()
    assert len(sent) == 1 and sent[0].url.host == "127.0.0.1"  # and even then it would stay on this machine


def test_telemetry_is_off_and_mems_home_is_in_the_project_cache(monkeypatch):
    import mem0.memory.telemetry as telemetry

    constructed = []
    monkeypatch.setattr(telemetry, "Posthog", lambda *a, **k: constructed.append(a) or pytest.fail("telemetry client built"))
    s = build()
    try:
        for e in two_customer_history()[:4]:
            s.observe(e)
        s.context(REQ)
        from stores.remote.mem0 import cache_dir

        assert telemetry.MEM0_TELEMETRY is False and os.environ["MEM0_TELEMETRY"] == "False"
        assert os.environ["MEM0_DIR"] == str(cache_dir() / "home")
        assert os.environ["HF_HUB_OFFLINE"] == "1" and os.environ["TRANSFORMERS_OFFLINE"] == "1"
        assert s.folder.parent == cache_dir() and (s.folder / "qdrant").is_dir()
    finally:
        s.close()
    assert constructed == []
    assert not s.folder.exists()  # close() removes the instance's collection and history


def test_the_receipt_is_mems_answer_mapped_to_our_ids():
    s = build()
    try:
        for e in two_customer_history():
            s.observe(e)
        b = s.context(REQ)
    finally:
        s.close()
    assert b.candidates and all(c.source_ids == (c.item_id,) for c in b.candidates)
    assert all(c.item_id.startswith("a") for c in b.candidates)  # acme's only
    # mem0's own score, split the way mem0 reports it (similarity only here: no spaCy, no fastembed)
    assert all(set(c.components) == {"semantic"} and c.score == c.components["semantic"] for c in b.candidates)
    scores = [c.score for c in b.candidates]
    assert scores == sorted(scores, reverse=True) and 0.1 <= scores[-1] <= scores[0] <= 1.0
    assert b.candidates[0].item_id in ("a1#2", "a3#1")  # the two 502 complaints lead
    assert count_tokens(b.text) == b.tokens <= 400
    assert s.calls.calls["mem0.add"] == 20 and s.calls.calls["mem0.search"] == 1


def test_the_simulated_time_travels_in_metadata_and_never_moves_the_ranking():
    s = build()
    try:
        s.observe(turn("old", "mar", "customer", "The Snowflake connector times out on the nightly load.", at(0)))
        s.observe(turn("new", "sep", "customer", "The Snowflake connector times out on the nightly load.", at(days=180)))
        b = s.context(request("sep", "connector timing out", at(days=180, minutes=1)))
    finally:
        s.close()
    by_id = {c.item_id: c for c in b.candidates}
    # mem0 has no recency: six months apart, the same words score the same
    assert by_id["old"].score == by_id["new"].score
    assert by_id["old"].text.startswith("[2024-03-01 09:00] (mar) customer:")
    assert by_id["new"].text.startswith("[2024-08-28 09:00] (sep) customer:")


def test_two_instances_keep_their_own_collections():
    a, b = build(), build()
    try:
        a.observe(turn("x1", "s", "customer", "My CSV export fails with error 502.", at(0)))
        assert b.context(request("s", "CSV export 502", at(1))).candidates == []
        assert [c.item_id for c in a.context(request("s", "CSV export 502", at(1))).candidates] == ["x1"]
        assert a.namespace != b.namespace and a.folder != b.folder
    finally:
        a.close()
        b.close()


def test_an_empty_task_gets_an_empty_answer_not_an_error():
    s = build()
    try:
        s.observe(turn("x1", "s", "customer", "hello", at(0)))
        b = s.context(request("s", "   ", at(1)))
    finally:
        s.close()
    assert list(b.candidates) == [] and b.text.startswith("Memory for customer acme")


@pytest.mark.slow
def test_the_canonical_suite_runs_through_the_cli_offline_with_no_error_rows(tmp_path):
    import subprocess
    import sys

    import pyarrow.parquet as pq

    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
           "SUPPORTBENCH_CACHE": str(tmp_path / "cache")}
    out = tmp_path / "runs"
    done = subprocess.run([sys.executable, "-m", "harness.cli", "run", "datasets/canonical", "--strategies", "mem0",
                           "--policies", "none", "--out", str(out), "--quiet"], env=env, capture_output=True, text=True,
                          timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    (run,) = [p for p in out.iterdir() if p.is_dir() and not p.name.startswith(".")]
    scores = [r for part in [run / "scores.parquet", *sorted(run.glob("scores*/*.parquet"))] if part.exists()
              for r in pq.read_table(part).to_pylist()]
    assert scores and not [r for r in scores if r["status"] == "error"]
    assert {r["strategy"] for r in scores} == {"mem0"}
    import json

    (entry,) = json.loads((run / "manifest.json").read_text())["strategies"]
    cost = entry["cost"]
    from harness.format.loader import load_suite

    suite = load_suite(["datasets/canonical"])
    assert cost["scenarios"] == len(suite) and cost["seconds"] > 0
    # at most one search per probe and replay (none where the customer has nothing stored yet)
    assert 0 < cost["calls"]["mem0.search"]["calls"] <= 3 * sum(len(s.probes) for s in suite)
    assert cost["calls"]["mem0.add"]["calls"] > 0 and cost["round_trips"] == sum(c["calls"] for c in cost["calls"].values())


def test_open_builds_mem0_in_the_scope_and_close_removes_its_folder(tmp_path):
    from stores.protocol import Scope

    scope = Scope(namespace="sb-0123456789abcdef0123", run_id="r", strategy="mem0", suite="t", scenario="x",
                  instance="plain", cache_dir=tmp_path / "cache", work_dir=tmp_path / "work")
    scope.work_dir.mkdir()
    s = build()
    s.open(scope)
    try:
        assert s.memory.collection_name == scope.namespace
        assert (scope.work_dir / "qdrant").is_dir() and (scope.work_dir / "history.db").exists()
        s.observe(turn("x1", "s", "customer", "My CSV export fails with error 502.", at(0)))
        assert [c.item_id for c in s.context(request("s", "CSV export 502", at(1))).candidates] == ["x1"]
    finally:
        s.close()
    assert not scope.work_dir.exists()

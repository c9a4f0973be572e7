"""The `http` strategy: protocol 1 against the reference server, and every way a call can fail."""

from __future__ import annotations

import json
import socket
import threading
import time
from datetime import datetime, timezone
from pathlib import Path

import httpx
import pyarrow.parquet as pq
import pytest
from helpers import outage_story
from http_reference import ReferenceService

from harness.analysis.results import Results
from harness.format.loader import load_suite
from harness.run.runner import execute
from stores.protocol import ContextRequest, Scope, Turn
from stores.registry import SpecError, parse_spec, parse_specs
from stores.remote.http_service import (DeadlineExceeded, HttpParams, HttpService, RemoteUnavailable, ServiceError,
                                        bounded_request)

ROOT = Path(__file__).resolve().parents[2]
TABLES = ("events", "probes", "candidates", "scores", "health")
T = datetime(2024, 3, 4, 9, 0, tzinfo=timezone.utc)


@pytest.fixture
def reference(monkeypatch):
    service = ReferenceService("session_aware")
    url = service.serve()
    monkeypatch.setenv("SUPPORTBENCH_HTTP_URL", url)
    yield service
    service.stop()


def _table(run: Path, table: str, served: str) -> list[dict]:
    rows = [r for f in sorted((run / table).glob("*.parquet")) for r in pq.read_table(f).to_pylist()]
    for r in rows:
        r.pop("latency_ms", None)  # wall time: the one thing that may differ
        for key in ("strategy", "strategy_name"):
            if r.get(key) == "http":
                r[key] = served
    return rows


@pytest.mark.slow  # the canonical suite twice, once over HTTP with two workers
def test_a_run_through_the_reference_server_equals_the_in_process_strategy_table_by_table(reference, tmp_path):
    scenarios = load_suite([str(ROOT / "datasets" / "canonical")])
    own = execute(scenarios, parse_specs("session_aware"), tmp_path, run_id="own")
    served = execute(scenarios, parse_specs("http"), tmp_path, run_id="served", workers=2)
    for table in TABLES:
        a, b = _table(own.path, table, "session_aware"), _table(served.path, table, "session_aware")
        assert len(a) == len(b), table
        differ = [(i, {k: (x[k], y.get(k)) for k in x if x[k] != y.get(k)}) for i, (x, y) in enumerate(zip(a, b)) if x != y]
        assert not differ, (table, len(differ), differ[:2])
    assert len(_table(own.path, "health", "x")) > 0 and len(_table(own.path, "candidates", "x")) > 0
    manifest = json.loads((served.path / "manifest.json").read_text())
    (entry,) = manifest["strategies"]
    assert entry["params"]["url"] == "<secret>" and reference.server is not None
    assert entry["capabilities"] == ["handoff", "health"]  # what the service claimed
    assert str(reference.server.server_address[1]) not in json.dumps(manifest)  # the URL is a secret
    calls = entry["cost"]
    assert "POST context" in json.dumps(calls) and "POST observe" in json.dumps(calls)
    assert not reference.namespaces  # every instance closed its namespace


def test_the_service_hears_only_the_simulated_clock(monkeypatch):
    seen: list[dict] = []

    def handler(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content) if request.content else None
        seen.append({"path": request.url.path, "body": body})
        if request.url.path == "/v1/info":
            return httpx.Response(200, json={"protocol": "supportbench-memory", "version": "1.0"})
        if request.url.path.endswith("/events"):
            return httpx.Response(200, json={"applied": len(body["events"]), "last_seq": body["events"][-1]["seq"]})
        if request.url.path.endswith("/context"):
            return httpx.Response(200, json={"items": [], "text": ""})
        return httpx.Response(200, json={"ok": True})

    s = HttpService(HttpParams(url="http://service.test"), transport=httpx.MockTransport(handler))
    s.open(Scope("sb-00000000000000000001", "r", "http", "suite", "sc", "plain", Path("."), Path(".")))
    s.observe(Turn("t1", "c1", "s1", "customer", "message", "hello", T))
    s.context(ContextRequest("c1", "s1", "hi", 100, T.replace(month=9)))
    times = [v for e in seen if e["body"] for v in _values(e["body"], ("at", "now"))]
    assert times == ["2024-03-04T09:00:00Z", "2024-09-04T09:00:00Z"]
    assert s.capabilities == frozenset()  # the service claimed nothing beyond context


def _values(body, keys):
    if isinstance(body, dict):
        for k, v in body.items():
            if k in keys:
                yield v
            yield from _values(v, keys)
    elif isinstance(body, list):
        for v in body:
            yield from _values(v, keys)


def test_a_service_that_is_down_gives_error_rows_and_the_run_goes_on(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens here once closed
    specs = parse_specs(f"http:url=http://127.0.0.1:{port},retries=1,retry_backoff_s=0,timeout_s=2,history_stuffing")
    run = execute([outage_story()], specs, tmp_path, run_id="down")
    with Results(run.path) as res:
        statuses = dict(res.rows("SELECT strategy, list(DISTINCT status) FROM scores WHERE probe_id <> '' GROUP BY 1"))
        err = res.rows("SELECT error FROM probes WHERE strategy LIKE 'http%'")[0][0]
    assert statuses[specs[0].label] == ["error"] and "error" not in statuses["history_stuffing"]
    assert "no answer after 2 tries" in err and "ConnectError" in err
    assert str(port) not in json.dumps(json.loads((run.path / "manifest.json").read_text())["strategies"])


class _Dribble(threading.Thread):
    """A server that answers 200 with a declared length, then one byte every `every` seconds."""

    def __init__(self, every: float = 0.1, declared: int = 100, chunked_total: int = 0) -> None:
        super().__init__(daemon=True)
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen()
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.every, self.declared, self.chunked_total = every, declared, chunked_total
        self.stop = threading.Event()
        self.requests = 0
        """Connections it accepted: one per try of the client."""

    def run(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.requests += 1
            threading.Thread(target=self.serve, args=(conn,), daemon=True).start()

    def serve(self, conn) -> None:
        with conn:
            conn.recv(65536)
            try:
                if self.chunked_total:
                    conn.sendall(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\ncontent-type: application/json\r\n\r\n")
                    sent = 0
                    while sent < self.chunked_total and not self.stop.is_set():
                        piece = b"x" * 4096
                        conn.sendall(b"%x\r\n%s\r\n" % (len(piece), piece))
                        sent += len(piece)
                    conn.sendall(b"0\r\n\r\n")
                    return
                conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\ncontent-type: application/json\r\n\r\n" % self.declared)
                for _ in range(self.declared):
                    if self.stop.is_set():
                        return
                    conn.sendall(b" ")
                    time.sleep(self.every)
            except OSError:
                return

    def close(self) -> None:
        self.stop.set()
        self.sock.close()


def test_the_whole_call_deadline_holds_however_slowly_the_bytes_arrive():
    server = _Dribble(every=0.1, declared=1000)  # would take 100 s; every byte arrives well within a read timeout
    server.start()
    try:
        client = httpx.Client(base_url=server.url)
        # the error proves the deadline cut it: without one the call ends with the server's 100 s, an answer
        with pytest.raises(DeadlineExceeded, match="no complete answer within 1 s"):
            bounded_request(client, "GET", "/v1/info", deadline_s=1.0, max_bytes=1 << 20)
        s = HttpService(HttpParams(url=server.url, timeout_s=0.5, retries=1, retry_backoff_s=0.0))
        before = server.requests
        with pytest.raises(RemoteUnavailable, match=r"info: no answer after 2 tries \(no complete answer within 0.5 s\)"):
            s.info()
        assert server.requests - before == 2
    finally:
        server.close()


def test_the_response_size_cap_holds_for_a_declared_and_a_streamed_length():
    declared = _Dribble(every=0.0, declared=5000)
    streamed = _Dribble(chunked_total=1 << 20)  # no length declared: counted as it streams
    for server in (declared, streamed):
        server.start()
    try:
        for server, why in ((declared, "declares 5000 bytes"), (streamed, "sent more than 2048 bytes")):
            s = HttpService(HttpParams(url=server.url, max_response_bytes=2048, retries=3))
            with pytest.raises(ServiceError, match=f"info: the answer {why}, over max_response_bytes=2048"):
                s.info()
            assert server.requests == 1  # refused at once, never retried
    finally:
        declared.close()
        streamed.close()


def test_a_busy_service_is_tried_again_and_numbered_events_make_that_safe():
    answers = iter([503, 503, 200])
    applied: list[int] = []

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/v1/info":
            return httpx.Response(200, json={"protocol": "supportbench-memory", "version": "1.3", "capabilities": ["health", "memories"]})
        if request.url.path.endswith("/events"):
            status = next(answers)
            seqs = [e["seq"] for e in json.loads(request.content)["events"]]
            if status != 200:
                applied.extend(s for s in seqs if s not in applied)  # applied, but the answer is lost
                return httpx.Response(status, json={"error": {"code": "internal", "message": "busy"}})
            return httpx.Response(200, json={"applied": 0, "last_seq": seqs[-1]})
        if request.url.path.endswith("/context"):
            return httpx.Response(200, json={"items": [], "text": ""})
        return httpx.Response(200, json={"ok": True})

    s = HttpService(HttpParams(url="http://service.test", retries=2, retry_backoff_s=0.0), transport=httpx.MockTransport(handler))
    assert s.capabilities == frozenset({"health"})  # what it claims, of what the protocol offers
    s.observe(Turn("t1", "c1", "s1", "customer", "message", "hello", T))
    s.context(ContextRequest("c1", "s1", "hi", 100, T))
    assert applied == [1]
    assert s.call_counts()["POST observe"]["calls"] == 3


@pytest.mark.parametrize("answer, why", [
    ({"items": [{"id": "a", "text": "x", "score": 2.0, "components": {"k": 1.0}, "included": True}], "text": "x"},
     r"item 0 \(a\): score 2.0 is not the sum of its components \(1.0\)"),
    ({"items": [{"text": "x", "score": 1.0, "components": {"k": 1.0}, "included": True}], "text": "x"},
     r"does not follow protocol 1.0: items.0.id: Field required"),
])
def test_an_answer_that_breaks_the_protocol_is_an_error_naming_what(answer, why):
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/v1/info":
            return httpx.Response(200, json={"protocol": "supportbench-memory", "version": "1.0"})
        if request.url.path.endswith("/context"):
            return httpx.Response(200, json=answer)
        return httpx.Response(200, json={"ok": True})

    s = HttpService(HttpParams(url="http://service.test"), transport=httpx.MockTransport(handler))
    with pytest.raises(ServiceError, match=why):
        s.context(ContextRequest("c1", "s1", "hi", 100, T))


def test_a_refusal_names_the_status_and_the_service_error_code(reference):
    s = HttpService(HttpParams(url=reference.server and f"http://127.0.0.1:{reference.server.server_address[1]}"))
    s.namespace, s._opened = "sb-never-opened", True  # as if open had been skipped
    with pytest.raises(ServiceError, match=r"context: status 404 \(not_found: no namespace 'sb-never-opened'"):
        s.context(ContextRequest("c1", "s1", "hi", 100, T))


def test_the_key_is_sent_as_a_bearer_and_never_shown(monkeypatch, tmp_path):
    service = ReferenceService("history_stuffing", api_key="k-123")
    url = service.serve()
    try:
        monkeypatch.setenv("SUPPORTBENCH_HTTP_URL", url)
        monkeypatch.setenv("SUPPORTBENCH_HTTP_KEY", "k-123")
        spec = parse_spec("http")
        assert spec.label == "http" and "k-123" not in repr(spec.params())
        run = execute([outage_story()], [spec], tmp_path, run_id="key")
        with Results(run.path) as res:
            assert res.rows("SELECT count(*) FROM scores WHERE status = 'error'")[0][0] == 0
        assert "k-123" not in (run.path / "manifest.json").read_text()
        monkeypatch.setenv("SUPPORTBENCH_HTTP_KEY", "wrong")
        with pytest.raises(ServiceError, match=r"status 401 \(unauthorized"):
            parse_spec("http").build().info()
    finally:
        service.stop()


@pytest.mark.parametrize("override, why", [
    ("timeout_s=0", "timeout_s"), ("retries=11", "retries"), ("max_response_bytes=10", "max_response_bytes"),
    ("batch_size=0", "batch_size"), ("retry_backoff_s=-1", "retry_backoff_s"),
])
def test_timeouts_retries_and_sizes_have_declared_ranges(override, why):
    with pytest.raises(SpecError, match=f"strategy 'http' parameter '{why}'"):
        parse_spec(f"http:{override}")


def test_the_manifest_records_what_the_service_claims(monkeypatch, tmp_path):
    service = ReferenceService("history_stuffing")  # claims nothing beyond context
    monkeypatch.setenv("SUPPORTBENCH_HTTP_URL", service.serve())
    try:
        run = execute([outage_story()], parse_specs("http"), tmp_path, run_id="claims")
        (entry,) = json.loads((run.path / "manifest.json").read_text())["strategies"]
        assert entry["capabilities"] == []
        with Results(run.path) as res:
            statuses = {r[0] for r in res.rows("SELECT DISTINCT status FROM scores")}
        assert "error" not in statuses
    finally:
        service.stop()

"""The reference server of the supportbench memory protocol: an in-process strategy behind HTTP.

It serves protocol 1 (`stores.remote.http_protocol`) on 127.0.0.1 with the standard library's
threading HTTP server, over any registered strategy spec (`session_aware` by default): each
namespace holds one instance of the strategy; events are applied once per sequence number;
context, health and handoff are the instance's own answers, sent as the protocol's messages. A
run of `http` against it therefore equals a run of the strategy itself, table by table.

`faults` makes it a deliberately broken service for the conformance check's tests, one
misbehaviour per name (`FAULTS`).
"""

from __future__ import annotations

import json
import re
import shutil
import socket
import tempfile
import threading
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from stores.protocol import ContextRequest, Forget, Resolution, Scope, Signal, Turn
from stores.registry import parse_spec
from stores.remote import http_protocol as wire

FAULTS = {
    "shared_namespaces": "every namespace is the same memory (scenarios see each other)",
    "applies_replays": "a batch sent again is applied again (sequence numbers ignored)",
    "gaps_accepted": "a batch that skips sequence numbers is applied",
    "reset_keeps": "reset answers ok and forgets nothing",
    "plain_errors": "errors are plain text, not the protocol's error body",
    "score_off": "an item's score is not the sum of its components",
    "no_batch_limit": "a batch over limits.max_batch is applied instead of refused",
    "wrong_version": "claims protocol 2.0",
    "wall_clock": "a health report is stamped with wall time, not the `now` it was asked for",
}
"""Misbehaviours the server can be told to have (name -> what it does wrong)."""

_ROUTE = re.compile(r"^/v1/namespaces/(?P<ns>[^/]+)(?P<op>/events|/context|/health|/handoff|/reset)?$")


class _Namespace:
    def __init__(self, strategy: Any, shared: "_Namespace | None" = None) -> None:
        self.strategy = strategy
        self.last_seq = 0
        self.lock = shared.lock if shared is not None else threading.Lock()  # one memory: one lock


class Refusal(Exception):
    """An answer other than 2xx: status, error code, message."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


class ReferenceService:
    """Protocol 1 over an in-process strategy spec; `serve()` puts it on 127.0.0.1."""

    def __init__(self, spec: str = "session_aware", *, api_key: str = "", faults: tuple[str, ...] = (),
                 max_batch: int = 500) -> None:
        unknown = set(faults) - set(FAULTS)
        if unknown:
            raise ValueError(f"unknown faults {sorted(unknown)} (known: {', '.join(FAULTS)})")
        self.spec = parse_spec(spec)
        self.api_key = api_key
        self.faults = frozenset(faults)
        self.max_batch = max_batch
        self.namespaces: dict[str, _Namespace] = {}
        self.lock = threading.Lock()
        self.work = Path(tempfile.mkdtemp(prefix="sb-reference-"))
        self.server: ThreadingHTTPServer | None = None

    # -- serving ----------------------------------------------------------------------------------
    def serve(self) -> str:
        """Start on a free port of 127.0.0.1 in a daemon thread; the base URL."""
        service = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def setup(self) -> None:
                super().setup()
                # headers and body are two writes: without this, each answer waits out a delayed ACK (~40 ms)
                self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

            def _answer(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                status, body = service.handle(self.command, self.path, raw, self.headers.get("authorization", ""))
                if isinstance(body, str):
                    data, kind = body.encode(), "text/plain"
                else:
                    data, kind = json.dumps(body).encode(), "application/json"
                self.send_response(status)
                self.send_header("content-type", kind)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_PUT = do_POST = do_DELETE = _answer

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, name="reference-service", daemon=True).start()
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
        for ns in list(self.namespaces.values()):
            close = getattr(ns.strategy, "close", None)
            if callable(close):
                close()
        self.namespaces.clear()
        shutil.rmtree(self.work, ignore_errors=True)  # the namespaces' folders and cache

    # -- the protocol -----------------------------------------------------------------------------
    def handle(self, method: str, path: str, raw: bytes, auth: str) -> tuple[int, Any]:
        """(status, JSON body or plain text) for one request."""
        try:
            if self.api_key and auth != f"Bearer {self.api_key}":
                raise Refusal(401, "unauthorized", "a valid bearer key is required")
            return 200, self._route(method, path, raw)
        except Refusal as r:
            if "plain_errors" in self.faults:
                return r.status, f"error: {r.message}"
            return r.status, {"error": {"code": r.code, "message": r.message}}
        except ValidationError as e:
            first = e.errors()[0]
            msg = f"{'.'.join(str(x) for x in first['loc']) or 'body'}: {first['msg']}"
            return (400, f"error: {msg}") if "plain_errors" in self.faults else (400, {"error": {"code": "bad_request", "message": msg}})

    def _route(self, method: str, path: str, raw: bytes) -> Any:
        if path == "/v1/info" and method == "GET":
            caps = sorted(set(self.spec.capabilities()) & set(wire.CAPABILITIES))
            version = "2.0" if "wrong_version" in self.faults else wire.VERSION
            return {"protocol": wire.PROTOCOL, "version": version, "capabilities": caps,
                    "limits": {"max_batch": self.max_batch}, "name": f"reference over {self.spec.label}"}
        m = _ROUTE.match(path)
        if not m or not re.match(wire.NAMESPACE, m["ns"]):
            raise Refusal(404, "not_found", f"no route {method} {path}")
        name, op = m["ns"], m["op"] or ""
        if op == "" and method == "PUT":
            wire.OpenRequest.model_validate_json(raw)
            with self.lock:
                if name not in self.namespaces:
                    shared = next(iter(self.namespaces.values()), None) if "shared_namespaces" in self.faults else None
                    self.namespaces[name] = _Namespace(shared.strategy if shared else self._build(name), shared)
            return {"ok": True}
        if op == "" and method == "DELETE":
            with self.lock:
                ns = self.namespaces.pop(name, None)
            if ns is not None:
                close = getattr(ns.strategy, "close", None)
                if callable(close):
                    close()
            return {"ok": True}
        if method != "POST" or not op:
            raise Refusal(405, "bad_request", f"{method} is not a method of {path}")
        ns = self.namespaces.get(name)
        if ns is None:
            raise Refusal(404, "not_found", f"no namespace {m['ns']!r}: open it first")
        with ns.lock:
            return getattr(self, f"_op_{op[1:]}")(ns, raw)

    def _build(self, name: str) -> Any:
        strategy = self.spec.build()
        opener = getattr(strategy, "open", None)
        if callable(opener):
            work = self.work / name
            work.mkdir(parents=True, exist_ok=True)
            opener(Scope(name, "reference", self.spec.label, "", name, "plain", self.work / "cache", work))
        return strategy

    def _op_events(self, ns: _Namespace, raw: bytes) -> Any:
        batch = wire.EventBatch.model_validate_json(raw)
        if len(batch.events) > self.max_batch and "no_batch_limit" not in self.faults:
            raise Refusal(413, "too_large", f"{len(batch.events)} events in one batch; limits.max_batch is {self.max_batch}")
        applied = 0
        for e in batch.events:
            if e.seq <= ns.last_seq and "applies_replays" not in self.faults:
                continue  # applied before: a batch sent again
            if e.seq > ns.last_seq + 1 and "gaps_accepted" not in self.faults and "applies_replays" not in self.faults:
                raise Refusal(409, "sequence_gap", f"event {e.seq} follows {ns.last_seq}: events {ns.last_seq + 1}..{e.seq - 1} are missing")
            ns.strategy.observe(_event(e))
            ns.last_seq = max(ns.last_seq, e.seq) if "applies_replays" not in self.faults else e.seq
            applied += 1
        return {"applied": applied, "last_seq": ns.last_seq}

    def _request(self, raw: bytes) -> ContextRequest:
        q = wire.ContextQuery.model_validate_json(raw)
        return ContextRequest(q.subject, q.session, q.task, q.budget_tokens, q.now)

    def _op_context(self, ns: _Namespace, raw: bytes) -> Any:
        bundle = ns.strategy.context(self._request(raw))
        items = []
        for c in bundle.candidates:
            components = {k: float(v) for k, v in c.components.items()}
            score = float(c.score) + (1.0 if "score_off" in self.faults else 0.0)
            items.append({"id": c.item_id, "text": c.text, "score": score, "components": components,
                          "source_ids": list(c.source_ids), "included": bool(c.included), "reason": c.reason,
                          "subject": c.subject, "session": c.session})
        return {"items": items, "text": bundle.text}

    def _op_health(self, ns: _Namespace, raw: bytes) -> Any:
        if "health" not in self.spec.capabilities():
            raise Refusal(404, "unsupported", "this service does not claim health")
        q = wire.HealthQuery.model_validate_json(raw)
        r = ns.strategy.health(q.subject, q.now)
        at = datetime.now().astimezone() if "wall_clock" in self.faults else r.at
        return {"subject": r.subject, "at": at.isoformat(), "base": r.base, "score": r.score, "band": r.band,
                "factors": [{"signal": f.signal, "impact": f.impact, "detail": f.detail, "source_ids": list(f.source_ids)}
                            for f in r.factors]}

    def _op_handoff(self, ns: _Namespace, raw: bytes) -> Any:
        if "handoff" not in self.spec.capabilities():
            raise Refusal(404, "unsupported", "this service does not claim handoff")
        q = wire.HandoffQuery.model_validate_json(raw)
        request = ContextRequest(q.subject, q.session, q.task, q.budget_tokens, q.now)
        h = ns.strategy.handoff(request) if q.brief_tokens is None else ns.strategy.handoff(request, budget_tokens=q.brief_tokens)
        return {"subject": h.subject, "session": h.session, "sections": [list(s) for s in h.sections], "text": h.text,
                "used_ids": list(h.used_ids)}

    def _op_reset(self, ns: _Namespace, raw: bytes) -> Any:
        if "reset_keeps" not in self.faults:
            ns.strategy.reset()
        ns.last_seq = 0
        return {"ok": True}


def _event(e: Any) -> Any:
    if isinstance(e, wire.TurnEvent):
        return Turn(e.id, e.subject, e.session, e.role, e.kind, e.text, e.at)
    if isinstance(e, wire.ResolutionEvent):
        return Resolution(e.subject, e.session, e.status, e.summary, e.at)
    if isinstance(e, wire.ForgetEvent):
        return Forget(e.subject, e.at)
    return Signal(e.subject, e.session, e.name, e.ref, e.at)


def main() -> None:  # `python tests/http_reference.py [spec]`: serve until interrupted
    import sys
    import time

    service = ReferenceService(sys.argv[1] if len(sys.argv) > 1 else "session_aware")
    print(service.serve(), flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        service.stop()


if __name__ == "__main__":
    main()

"""http: a team's own memory service, in any language, behind the supportbench memory protocol.

The strategy is a client of the protocol of `stores.remote.http_protocol` (version 1; the
published document is docs/http-protocol.openapi.json): each instance is one namespace on the
service, named by its `Scope`; events are numbered and sent in batches (a batch goes before
anything that reads, before a reset, and whenever `batch_size` events wait); a context request
returns every item the service considered, best first, with its score components, source ids
and whether it was included and why not, which becomes the bundle as it is (the service ranks,
renders and packs; only the tokens are counted here, by the project tokenizer, like every
strategy's). `health` and `handoff` are answered when the service claims them in `GET /v1/info`.

Only the simulated clock is sent (every `at` and `now`), never wall time.

Bounded calls: every round trip has a whole-call deadline (`timeout_s`, enforced however the
bytes arrive: a call that has not finished by then is abandoned) and a response size cap
(`max_response_bytes`, counted while the body streams in; a larger declared length is refused
before reading). A connection failure, a deadline, a 429 or a 5xx is tried again (`retries`,
waiting `retry_backoff_s` doubled each time); that is safe because events are numbered (a
service applies each number once) and everything else is a read, a reset or an idempotent
open/close. Whatever still fails raises `RemoteUnavailable` or `ServiceError` naming the call,
the status and the service's error code: the harness makes it an error row, never a crash.

`url` and `api_key` are secrets (`$SUPPORTBENCH_HTTP_URL`, `$SUPPORTBENCH_HTTP_KEY`, sent as
`Authorization: Bearer`): never in a manifest, a label or a baseline.
"""

from __future__ import annotations

import functools
import json
import os
import ssl
import threading
import time
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from typing import Annotated, Any, ClassVar

import httpx
from pydantic import BaseModel, Field, ValidationError

from stores.params import secret, with_environment
from stores.protocol import (Bundle, Candidate, ContextRequest, Event, Forget, Handoff, HealthFactor, HealthReport,
                             Resolution, Scope, Signal, Turn)
from stores.remote import http_protocol as wire
from stores.remote.receipt import CallLog, RemoteUnavailable
from stores.tokens import count_line_tokens, count_text_tokens


class ServiceError(RuntimeError):
    """The service answered, but not as the protocol says (an error status, a malformed body)."""


@dataclass(frozen=True)
class HttpParams:
    """Parameters of `http`; the service's address and key are secrets read from the environment."""

    url: str = secret(env="SUPPORTBENCH_HTTP_URL")
    """The service's base URL, e.g. `http://127.0.0.1:8700` (`$SUPPORTBENCH_HTTP_URL`; never written down)."""
    api_key: str = secret(env="SUPPORTBENCH_HTTP_KEY")
    """Sent as `Authorization: Bearer <key>` when set (`$SUPPORTBENCH_HTTP_KEY`)."""
    timeout_s: Annotated[float, Field(gt=0.0, le=600.0)] = 30.0
    """Whole-call deadline in wall seconds: connecting, sending and reading the whole answer."""
    retries: Annotated[int, Field(ge=0, le=10)] = 2
    """Further tries of a call that failed to connect, passed its deadline, or got 429/5xx."""
    retry_backoff_s: Annotated[float, Field(ge=0.0, le=60.0)] = 0.2
    """Wait before the first retry; doubled for each next one."""
    max_response_bytes: Annotated[int, Field(ge=1024, le=1 << 30)] = 16 << 20
    """Largest answer body read; a larger one fails the call (not retried)."""
    batch_size: Annotated[int, Field(ge=1, le=10_000)] = 256
    """Events sent in one batch at most (the service's `limits.max_batch` lowers it)."""


class DeadlineExceeded(Exception):
    """A round trip had no complete answer by its whole-call deadline (`bounded_request`)."""


class ResponseTooLarge(Exception):
    """An answer declared or sent more bytes than the cap (`bounded_request`)."""


@dataclass(frozen=True)
class Answer:
    """One finished round trip: status and the body as read (at most the size cap)."""

    status: int
    body: bytes


def bounded_request(client: httpx.Client, method: str, url: str, *, deadline_s: float, max_bytes: int,
                    json_body: Any = None, headers: dict[str, str] | None = None) -> Answer:
    """One HTTP round trip that ends by `deadline_s` (wall seconds) whatever the server does, and
    reads at most `max_bytes` of body. The exchange runs in a helper thread; at the deadline it is
    abandoned (its stream closed) and `DeadlineExceeded` raised here; a body over the cap raises `ResponseTooLarge`.
    It knows nothing of the protocol, so any remote client can bound its calls with it."""
    box: dict[str, Any] = {}
    done = threading.Event()
    holder: dict[str, httpx.Response] = {}

    def exchange() -> None:
        try:
            # per-operation timeouts equal to the whole deadline bound the helper thread too
            with client.stream(method, url, json=json_body, headers=headers, timeout=deadline_s) as r:
                holder["r"] = r
                declared = r.headers.get("content-length")
                if declared is not None and declared.isdigit() and int(declared) > max_bytes:
                    raise ResponseTooLarge(f"declares {declared} bytes")
                body = bytearray()
                for chunk in r.iter_bytes():
                    body += chunk
                    if len(body) > max_bytes:
                        raise ResponseTooLarge(f"sent more than {max_bytes} bytes")
                box["answer"] = Answer(r.status_code, bytes(body))
        except BaseException as e:  # handed to the caller
            box["error"] = e
        finally:
            done.set()

    thread = threading.Thread(target=exchange, name="http-call", daemon=True)
    thread.start()
    if not done.wait(deadline_s):
        r = holder.get("r")
        if r is not None:
            try:
                r.close()  # ends the abandoned read as soon as the socket allows
            except Exception:
                pass
        raise DeadlineExceeded(f"no complete answer within {deadline_s:g} s")
    if "error" in box:
        raise box["error"]
    return box["answer"]


@functools.cache
def _tls() -> ssl.SSLContext:
    """One TLS context per process: httpx would load the CA bundle again for every client (about
    50 ms), and every strategy instance has its own client."""
    import certifi

    return ssl.create_default_context(cafile=certifi.where())


def _iso(at: datetime) -> str:
    return at.astimezone(timezone.utc).isoformat()


class _Claims:
    """`capabilities`: on the class, the most the protocol offers (what the registry checks the
    methods against); on an instance, what its service claims in `GET /v1/info` (asked once), or
    the most when the service cannot be asked (then every call fails, and each case is an error
    row, which reading an attribute must never be)."""

    def __get__(self, obj: "HttpService | None", cls: type) -> frozenset[str]:
        if obj is None:
            return frozenset(wire.CAPABILITIES)
        try:
            return obj.info().claims
        except (RemoteUnavailable, ServiceError):
            return frozenset(wire.CAPABILITIES)


class HttpService:
    """A memory service behind the supportbench memory protocol (module docstring)."""

    name: ClassVar[str] = "http"
    Params = HttpParams
    capabilities = _Claims()

    def __init__(self, params: HttpParams | None = None, *, transport: httpx.BaseTransport | None = None) -> None:
        # built by the registry, the secrets are already read; built by hand, read them here
        self.params = params if params is not None else with_environment(HttpParams(), set(), dict(os.environ))
        self._claimed: _Service | None = None
        self.calls = CallLog()
        """Round trips made, per route."""
        self.namespace = ""
        self._transport = transport
        self._client: httpx.Client | None = None
        self._seq = 0
        self._pending: list[dict[str, Any]] = []
        self._max_batch = self.params.batch_size
        self._opened = False

    # -- the wire ---------------------------------------------------------------------------------
    def _http(self) -> httpx.Client:
        if not self.params.url:
            raise RemoteUnavailable("http needs the service's address: set SUPPORTBENCH_HTTP_URL (e.g. http://127.0.0.1:8700) "
                                    "or give url=... in the spec")
        if self._client is None:
            headers = {"Accept": "application/json", "User-Agent": "supportbench-http/1"}
            if self.params.api_key:
                headers["Authorization"] = f"Bearer {self.params.api_key}"
            self._client = httpx.Client(base_url=self.params.url.rstrip("/"), headers=headers, transport=self._transport,
                                        follow_redirects=False, trust_env=False, verify=_tls())
        return self._client

    def _call(self, op: str, method: str, path: str, body: BaseModel | None, answer: type[BaseModel]) -> Any:
        """One protocol call with retries; the validated answer, or `RemoteUnavailable`/`ServiceError`."""
        payload = body.model_dump(mode="json") if body is not None else ({} if method == "POST" else None)
        p = self.params
        last = ""
        for attempt in range(p.retries + 1):
            if attempt:
                time.sleep(p.retry_backoff_s * 2 ** (attempt - 1))
            try:
                with self.calls.timed(f"{method} {op}"):
                    got = bounded_request(self._http(), method, path, deadline_s=p.timeout_s, max_bytes=p.max_response_bytes,
                                          json_body=payload)
            except ResponseTooLarge as e:
                raise ServiceError(f"http service: {op}: the answer {e}, over max_response_bytes={p.max_response_bytes}") from None
            except (DeadlineExceeded, httpx.TransportError) as e:
                last = f"{type(e).__name__}: {e}" if not isinstance(e, DeadlineExceeded) else str(e)
                self._drop_client()  # an abandoned exchange may hold the connection
                continue
            if got.status == 429 or got.status >= 500:
                last = f"status {got.status}{_error_code(got.body)}"
                continue
            if not 200 <= got.status < 300:
                raise ServiceError(f"http service: {op}: status {got.status}{_error_code(got.body)}")
            try:
                return answer.model_validate_json(got.body)
            except ValidationError as e:
                first = e.errors()[0]
                where = ".".join(str(x) for x in first["loc"]) or "body"
                raise ServiceError(f"http service: {op}: the answer does not follow protocol {wire.VERSION}: "
                                   f"{where}: {first['msg']}") from None
        raise RemoteUnavailable(f"http service: {op}: no answer after {p.retries + 1} tries ({last})")

    def _drop_client(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    def _ns(self, suffix: str = "") -> str:
        return f"/v1/namespaces/{self.namespace}{suffix}"

    # -- lifecycle --------------------------------------------------------------------------------
    @classmethod
    def service_claims(cls, params: HttpParams) -> frozenset[str]:
        """What the service at `params.url` claims (what the run manifest records, so a rescore
        knows which cases are `unsupported`); the protocol's most when it cannot be asked (its
        cases are then error rows anyway). Asked once, without retries."""
        probe = cls(replace(params, retries=0))
        try:
            return probe.info().claims
        except Exception:
            return frozenset(wire.CAPABILITIES)
        finally:
            probe._drop_client()

    def info(self) -> "_Service":
        """What the service speaks and claims (`GET /v1/info`, asked once per instance); a service
        that does not speak protocol 1 fails here."""
        if self._claimed is None:
            info: wire.Info = self._call("info", "GET", "/v1/info", None, wire.Info)
            if info.version.split(".")[0] != wire.VERSION.split(".")[0]:
                raise ServiceError(f"http service speaks protocol {info.version}; this side speaks {wire.VERSION}")
            self._claimed = _Service(frozenset(info.capabilities) & frozenset(wire.CAPABILITIES), info.limits.max_batch)
        return self._claimed

    def open(self, scope: Scope) -> None:
        """Check the service speaks protocol 1, read its claims, and open the instance's namespace."""
        self._max_batch = min(self.params.batch_size, self.info().max_batch)
        self.namespace = scope.namespace
        self._call("open", "PUT", self._ns(), wire.OpenRequest(scope=wire.Scope(
            run_id=scope.run_id, strategy=scope.strategy, suite=scope.suite, scenario=scope.scenario,
            instance=scope.instance)), wire.Ack)
        self._opened = True

    def _need_open(self) -> None:
        if not self._opened:  # built by hand: a namespace of its own
            import uuid
            from pathlib import Path

            self.open(Scope(f"sb-{uuid.uuid4().hex[:20]}", "local", "http", "", "", "plain", Path("."), Path(".")))

    def close(self) -> None:
        """Drop the namespace on the service and the connection."""
        try:
            if self._opened:
                self._call("close", "DELETE", self._ns(), None, wire.Ack)
        finally:
            self._opened = False
            self._drop_client()

    def call_counts(self) -> dict[str, dict[str, float]]:
        """Round trips made so far, per route, with their wall seconds (for the run manifest)."""
        return self.calls.as_dict()

    # -- events -----------------------------------------------------------------------------------
    def observe(self, event: Event) -> None:
        self._need_open()
        self._seq += 1
        self._pending.append(_event(self._seq, event))
        if len(self._pending) >= self._max_batch:
            self._flush()

    def _flush(self) -> None:
        while self._pending:
            batch = self._pending[: self._max_batch]
            ack: wire.EventsAck = self._call("observe", "POST", self._ns("/events"),
                                             wire.EventBatch.model_validate({"events": batch}), wire.EventsAck)
            if ack.last_seq != batch[-1]["seq"]:
                raise ServiceError(f"http service: observe: applied up to event {ack.last_seq}, sent up to {batch[-1]['seq']}")
            del self._pending[: len(batch)]

    def reset(self) -> None:
        self._need_open()
        self._pending.clear()
        self._call("reset", "POST", self._ns("/reset"), None, wire.Ack)
        self._seq = 0

    # -- reads ------------------------------------------------------------------------------------
    def _query(self, request: ContextRequest) -> wire.ContextQuery:
        return wire.ContextQuery(subject=request.subject, session=request.session, task=request.task,
                                 budget_tokens=request.budget_tokens, now=request.now)

    def context(self, request: ContextRequest) -> Bundle:
        self._need_open()
        self._flush()
        answer: wire.ContextAnswer = self._call("context", "POST", self._ns("/context"), self._query(request), wire.ContextAnswer)
        candidates = []
        for i, item in enumerate(answer.items):
            total = sum(item.components.values())
            if abs(total - item.score) > 1e-9 * max(1.0, abs(item.score)):
                raise ServiceError(f"http service: context: item {i} ({item.id}): score {item.score!r} is not the sum "
                                   f"of its components ({total!r})")
            candidates.append(Candidate(item_id=item.id, text=item.text, score=item.score, components=dict(item.components),
                                        source_ids=tuple(item.source_ids), included=item.included, reason=item.reason,
                                        tokens=count_line_tokens(item.text), subject=item.subject, session=item.session))
        return Bundle(candidates=candidates, text=answer.text, tokens=count_text_tokens(answer.text))

    def health(self, subject: str, now: datetime) -> HealthReport:
        self._need_open()
        self._flush()
        a: wire.HealthAnswer = self._call("health", "POST", self._ns("/health"), wire.HealthQuery(subject=subject, now=now),
                                          wire.HealthAnswer)
        factors = tuple(HealthFactor(f.signal, f.impact, f.detail, tuple(f.source_ids)) for f in a.factors)
        return HealthReport(a.subject, a.at, a.base, factors, a.score, a.band)

    def handoff(self, request: ContextRequest, budget_tokens: int | None = None) -> Handoff:
        """The service's brief; `budget_tokens` bounds the brief (None: the service's default)."""
        self._need_open()
        self._flush()
        query = wire.HandoffQuery(**self._query(request).model_dump(), brief_tokens=budget_tokens)
        a: wire.HandoffAnswer = self._call("handoff", "POST", self._ns("/handoff"), query, wire.HandoffAnswer)
        return Handoff(a.subject, a.session, tuple((h, b) for h, b in a.sections), a.text, count_text_tokens(a.text),
                       tuple(a.used_ids))


@dataclass(frozen=True)
class _Service:
    claims: frozenset[str]
    max_batch: int


def _event(seq: int, event: Event) -> dict[str, Any]:
    """An observed event as the protocol's message (simulated time only)."""
    if isinstance(event, Turn):
        return {"type": "turn", "seq": seq, "id": event.id, "subject": event.subject, "session": event.session,
                "role": event.role, "kind": event.kind, "text": event.text, "at": _iso(event.at)}
    if isinstance(event, Resolution):
        return {"type": "resolution", "seq": seq, "id": event.id, "subject": event.subject, "session": event.session,
                "status": event.status, "summary": event.summary, "at": _iso(event.at)}
    if isinstance(event, Forget):
        return {"type": "forget", "seq": seq, "subject": event.subject, "at": _iso(event.at)}
    if isinstance(event, Signal):
        return {"type": "signal", "seq": seq, "subject": event.subject, "session": event.session, "name": event.name,
                "ref": event.ref, "at": _iso(event.at)}
    raise TypeError(f"http: unknown event {type(event).__name__}")


def _error_code(body: bytes) -> str:
    """`: <code>: <message>` from a protocol error body, or a short excerpt of whatever it was."""
    try:
        err = wire.ErrorBody.model_validate_json(body).error
        return f" ({err.code}: {' '.join(err.message.split())[:200]})"
    except (ValidationError, ValueError):
        text = body[:120].decode("utf-8", "replace").strip()
        return f" (not a protocol error body: {json.dumps(text)})" if text else ""

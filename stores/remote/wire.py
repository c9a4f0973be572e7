"""Every remote answer is untrusted bytes: one whole-call deadline and one size cap for each call.

httpx's `timeout` bounds each socket operation, not a call: a server that sends one byte a
second never trips a 5 s read timeout and holds the call forever, and nothing bounds how much it
sends. `request` makes one HTTP call under `Limits`:

- **a deadline on the whole call** (connect, send, the status line and headers, the body): every
  socket read and write of the call waits at most what is left of it (`deadline_transport`, a
  network backend under httpx's own transport), and the body is read in chunks with the clock
  checked after each, so bytes dripped at any rate stop at the deadline with `DeadlineExceeded`;
- **a cap on the answer's size**: a `Content-Length` above `max_bytes` is refused before the body
  is read, and a body is streamed and dropped the moment it passes the cap (`TooLarge`), so a
  50 MB answer costs `max_bytes` of memory, never 50 MB;
- **no redirects**: a 3xx answer is `Redirected` (a service that moved is a configuration to fix,
  and following it could send the credentials elsewhere).

Each error's message says what happened in words a row can carry ("no complete answer within the
5 s deadline", "answer larger than the 4,000,000-byte cap"), with the URL's credentials redacted.

    limits = Limits(deadline_s=5.0, max_bytes=4_000_000)
    client = make_client("http://127.0.0.1:8888", headers=..., limits=limits)
    answer = request(client, "POST", "/v1/...", limits, json=body)   # -> Answer(status, body, headers)
    data = answer.json()                                              # ValueError when not JSON

Pass `transport=` to `make_client` (an `httpx.BaseTransport`, e.g. `httpx.MockTransport`) to test
without a server; the body cap and the between-chunk deadline still apply, the per-read bound is
the real transport's.
"""

from __future__ import annotations

import contextvars
import json as jsonlib
import time
from dataclasses import dataclass
from typing import Any, Mapping

import httpcore
import httpx

from stores.redaction import redact_url

DEFAULT_DEADLINE_S = 30.0
"""The whole-call deadline when a caller declares none."""
DEFAULT_MAX_BYTES = 4_000_000
"""The answer size cap when a caller declares none (a memory service's recall or a chat reply is
kilobytes; four megabytes is far above any honest answer)."""


@dataclass(frozen=True)
class Limits:
    """What one call may cost: seconds of wall time in all, bytes of answer body."""

    deadline_s: float = DEFAULT_DEADLINE_S
    """The whole call, connect to last byte, in seconds (> 0)."""
    max_bytes: int = DEFAULT_MAX_BYTES
    """The answer body's size cap in bytes, after decompression (>= 1)."""

    def __post_init__(self) -> None:
        if not self.deadline_s > 0 or self.max_bytes < 1:
            raise ValueError(f"limits need deadline_s > 0 and max_bytes >= 1, got {self.deadline_s!r}, {self.max_bytes!r}")


class WireError(Exception):
    """A call that returned no usable answer; the message says why, credentials redacted."""


class DeadlineExceeded(WireError):
    """The call did not complete within its whole-call deadline."""


class TooLarge(WireError):
    """The answer was larger than the cap (reading stopped at the cap)."""


class Redirected(WireError):
    """The server answered with a redirect, which is never followed."""


class Unreachable(WireError):
    """No answer at all: refused, DNS, a connection reset."""


@dataclass(frozen=True)
class Answer:
    """A complete answer within the limits."""

    status: int
    """The HTTP status."""
    body: bytes
    """The whole body (at most `Limits.max_bytes`)."""
    headers: Mapping[str, str]
    """The answer's headers."""

    def json(self) -> Any:
        """The body as JSON (`ValueError` when it is not)."""
        return jsonlib.loads(self.body.decode("utf-8"))

    @property
    def text(self) -> str:
        """The body as text (undecodable bytes replaced)."""
        return self.body.decode("utf-8", errors="replace")


# -- the deadline at the socket ------------------------------------------------------------------
_DEADLINE: contextvars.ContextVar[float | None] = contextvars.ContextVar("supportbench_wire_deadline", default=None)


def _bounded(timeout: float | None) -> float | None:
    """A socket operation's timeout cut to what is left of the current call's deadline."""
    deadline = _DEADLINE.get()
    if deadline is None:
        return timeout
    left = deadline - time.monotonic()
    if left <= 0:
        raise httpcore.ReadTimeout("the whole-call deadline passed")
    return left if timeout is None else min(timeout, left)


class _Stream(httpcore.NetworkStream):
    def __init__(self, inner: httpcore.NetworkStream) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, _bounded(timeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _bounded(timeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(self, ssl_context, server_hostname=None, timeout=None) -> "_Stream":
        return _Stream(self._inner.start_tls(ssl_context, server_hostname, _bounded(timeout)))

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _Backend(httpcore.NetworkBackend):
    def __init__(self, inner: httpcore.NetworkBackend) -> None:
        self._inner = inner

    def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None) -> httpcore.NetworkStream:
        return _Stream(self._inner.connect_tcp(host, port, _bounded(timeout), local_address, socket_options))

    def connect_unix_socket(self, path, timeout=None, socket_options=None) -> httpcore.NetworkStream:
        return _Stream(self._inner.connect_unix_socket(path, _bounded(timeout), socket_options))

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


def deadline_transport() -> httpx.HTTPTransport:
    """httpx's own transport with every socket operation bounded by the current call's deadline.
    (httpx exposes no network-backend argument; its connection pool's backend is swapped, and
    `tests/stores/test_wire.py` fails if a new httpx moves it.)"""
    transport = httpx.HTTPTransport(retries=0)
    pool = getattr(transport, "_pool", None)
    if pool is None or not hasattr(pool, "_network_backend"):
        raise RuntimeError("this httpx has no connection pool backend to bound; supportbench pins httpx")
    pool._network_backend = _Backend(pool._network_backend)
    return transport


def make_client(base_url: str = "", *, headers: Mapping[str, str] | None = None, limits: Limits = Limits(),
                transport: httpx.BaseTransport | None = None) -> httpx.Client:
    """An httpx client for one service: the deadline transport (unless `transport` is given), no
    redirects followed, no proxies from the environment (nothing leaves for another host)."""
    # identity: a compressed answer could inflate far past the cap inside one chunk
    headers = {"Accept-Encoding": "identity", **dict(headers or {})}
    return httpx.Client(base_url=base_url, headers=headers, transport=transport or deadline_transport(),
                        timeout=limits.deadline_s, follow_redirects=False, trust_env=False)


def request(client: httpx.Client, method: str, url: str, limits: Limits, *, json: Any = None,
            params: Any = None) -> Answer:
    """One call within `limits` (module doc): the complete answer, or a `WireError` saying why not."""
    started = time.monotonic()
    deadline = started + limits.deadline_s
    token = _DEADLINE.set(deadline)
    where = f"{method} {redact_url(url)}"
    target = httpx.URL(str(client.base_url)).join(url) if client.base_url else httpx.URL(url)
    server = redact_url(f"{target.scheme}://{target.netloc.decode('ascii', 'replace')}")
    try:
        with client.stream(method, url, json=json, params=params, timeout=limits.deadline_s) as r:
            if 300 <= r.status_code < 400:
                raise Redirected(f"{where}: the server answered {r.status_code} redirecting to "
                                 f"{redact_url(r.headers.get('location', '(no location)'))}; redirects are not followed")
            declared = r.headers.get("content-length", "")
            if declared.isdigit() and int(declared) > limits.max_bytes:
                raise TooLarge(f"{where}: answer of {int(declared):,} bytes refused, larger than the "
                               f"{limits.max_bytes:,}-byte cap (max_response_bytes)")
            body = bytearray()
            for chunk in r.iter_bytes():
                body += chunk
                if len(body) > limits.max_bytes:
                    raise TooLarge(f"{where}: answer larger than the {limits.max_bytes:,}-byte cap "
                                   "(max_response_bytes); stopped reading at the cap")
                if time.monotonic() > deadline:
                    raise _late(where, server, limits, len(body))
            return Answer(r.status_code, bytes(body), dict(r.headers))
    except httpx.TimeoutException:
        raise (_late(where, server, limits, None) if time.monotonic() >= deadline - 0.05 else
               Unreachable(f"{where}: no answer from {server} (timed out)")) from None
    except httpx.TransportError as e:
        if time.monotonic() >= deadline:
            raise _late(where, server, limits, None) from None
        raise Unreachable(f"{where}: no answer from {server} ({type(e).__name__}: {redact_url(str(e))})") from None
    finally:
        _DEADLINE.reset(token)


def _late(where: str, server: str, limits: Limits, received: int | None) -> DeadlineExceeded:
    got = f" ({received:,} bytes of the body had arrived)" if received else ""
    return DeadlineExceeded(f"{where}: no complete answer from {server} within the {limits.deadline_s:g} s "
                            f"whole-call deadline{got}")


__all__ = ["Limits", "Answer", "WireError", "DeadlineExceeded", "TooLarge", "Redirected", "Unreachable",
           "deadline_transport", "make_client", "request", "DEFAULT_DEADLINE_S", "DEFAULT_MAX_BYTES"]

"""A small HTTP client for the Statewave server (the routes of server 0.7.1 that supportbench uses).

Why httpx and not the `statewave` SDK (1.5.0, PyPI): the SDK builds its own `httpx.Client`
with no way to pass a transport, so its wire contract could not be tested on recorded pairs
without patching its internals; it retries 500s by default (three more re-posts, with
wall-clock sleeps, of a resolution the recorded server already updated before answering
500); and its `ContextBundle` model drops the server's `sessions` field. What the adapter
needs is six routes and typed errors, so it speaks them here, over httpx, with an injected
transport in tests.

Every call returns the server's JSON or raises:
`StatewaveUnavailable` (no HTTP answer: refused, DNS, timeout), `StatewaveNotFound` (404),
`StatewaveValidationError` (422, with the server's `details`), `StatewaveServerError` (5xx),
`StatewaveError` (any other status). Observed server semantics (recorded against 0.7.1):
all timestamps are server wall clock (no field takes a simulated time); `idempotency_key`
is ignored; re-posting a resolution for a (subject, session) that already has one answers
500 although the row *was* updated (see `Statewave._post_resolution` for how that is handled).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import httpx

from stores.remote.receipt import RemoteUnavailable
from stores.remote.wire import (DEFAULT_MAX_BYTES, Answer, DeadlineExceeded, Limits, Unreachable, WireError, make_client,
                                request)


class StatewaveError(Exception):
    """A Statewave call that did not succeed."""

    def __init__(self, message: str, *, method: str, path: str, status: int | None = None,
                 code: str = "", details: Any = None, request_id: str = "") -> None:
        super().__init__(message)
        self.method = method
        """HTTP method of the failed call."""
        self.path = path
        """Path of the failed call."""
        self.status = status
        """HTTP status, or None when no answer came back."""
        self.code = code
        """The server's error code (`validation_error`, `internal_error`, ...)."""
        self.details = details
        """The server's `details` (validation errors), if any."""
        self.request_id = request_id
        """The server's request id (quote it when reporting a server bug)."""


class StatewaveUnavailable(StatewaveError, RemoteUnavailable):
    """No HTTP answer from the server (connection refused, DNS failure, timeout)."""


class StatewaveNotFound(StatewaveError):
    """404: the subject or record does not exist."""


class StatewaveValidationError(StatewaveError):
    """422: the server refused the payload (`details` lists why)."""


class StatewaveServerError(StatewaveError):
    """5xx: the server failed while handling the call."""


class StatewaveClient:
    """The Statewave HTTP API, one method per route used by the `statewave` strategy."""

    def __init__(self, base_url: str, *, api_key: str | None = None, transport: httpx.BaseTransport | None = None,
                 timeout: float = 30.0, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        headers = {"X-API-Key": api_key.strip()} if api_key and api_key.strip() else {}
        self.base_url = base_url.strip().rstrip("/")
        """Server root, e.g. `http://127.0.0.1:8100`."""
        self.limits = Limits(deadline_s=timeout, max_bytes=max_bytes)
        """Each call's whole-call deadline and answer size cap (`stores.remote.wire`)."""
        self._http = make_client(self.base_url, headers=headers, limits=self.limits, transport=transport)

    def close(self) -> None:
        """Close the connection pool."""
        self._http.close()

    # ---- server -----------------------------------------------------------------------------
    def healthz(self) -> dict[str, Any]:
        """`GET /healthz`: liveness (`{"status": "ok"}`)."""
        return self._call("GET", "/healthz")

    # ---- writes -----------------------------------------------------------------------------
    def create_episodes(self, episodes: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """`POST /v1/episodes/batch`: several episodes in one round trip; the created episodes, in order."""
        data = self._call("POST", "/v1/episodes/batch", json={"episodes": episodes})
        created = list(data.get("episodes") or [])
        if len(created) != len(episodes):
            raise StatewaveServerError(
                f"Statewave POST /v1/episodes/batch: sent {len(episodes)} episodes, the server returned {len(created)}",
                method="POST", path="/v1/episodes/batch", status=200)
        return created

    def create_resolution(self, subject_id: str, session_id: str, status: str, summary: str | None = None,
                          metadata: dict[str, Any] | None = None) -> dict[str, Any]:
        """`POST /v1/resolutions`: create or update the resolution of a (subject, session)."""
        body: dict[str, Any] = {"subject_id": subject_id, "session_id": session_id, "status": status}
        if summary:
            body["resolution_summary"] = summary
        if metadata:
            body["metadata"] = metadata
        return self._call("POST", "/v1/resolutions", json=body)

    def list_resolutions(self, subject_id: str) -> list[dict[str, Any]]:
        """`GET /v1/resolutions?subject_id=`: every resolution of the subject."""
        data = self._call("GET", "/v1/resolutions", params={"subject_id": subject_id})
        return list(data.get("value") or [])

    def compile(self, subject_id: str) -> dict[str, Any]:
        """`POST /v1/memories/compile`: compile the subject's new episodes into memories."""
        return self._call("POST", "/v1/memories/compile", json={"subject_id": subject_id})

    def delete_subject(self, subject_id: str) -> dict[str, Any]:
        """`DELETE /v1/subjects/{id}`: the subject's episodes and memories."""
        return self._call("DELETE", f"/v1/subjects/{_seg(subject_id)}")

    # ---- reads ------------------------------------------------------------------------------
    def context(self, subject_id: str, task: str, *, max_tokens: int | None = None,
                session_id: str | None = None) -> dict[str, Any]:
        """`POST /v1/context`: the assembled context for a task (session-aware when `session_id` is given)."""
        body: dict[str, Any] = {"subject_id": subject_id, "task": task}
        if max_tokens is not None:
            body["max_tokens"] = max_tokens
        if session_id is not None:
            body["session_id"] = session_id
        return self._call("POST", "/v1/context", json=body)

    def handoff(self, subject_id: str, session_id: str, *, reason: str, max_tokens: int | None = None) -> dict[str, Any]:
        """`POST /v1/handoff`: the handoff brief of a session."""
        body: dict[str, Any] = {"subject_id": subject_id, "session_id": session_id, "reason": reason}
        if max_tokens is not None:
            body["max_tokens"] = max_tokens
        return self._call("POST", "/v1/handoff", json=body)

    def health(self, subject_id: str) -> dict[str, Any]:
        """`GET /v1/subjects/{id}/health`: score, state and factors."""
        return self._call("GET", f"/v1/subjects/{_seg(subject_id)}/health")

    # ---- the one place HTTP happens ---------------------------------------------------------
    def _call(self, method: str, path: str, *, json: Any = None, params: Any = None) -> dict[str, Any]:
        try:
            r = request(self._http, method, path, self.limits, json=json, params=params)
        except (DeadlineExceeded, Unreachable) as e:
            raise StatewaveUnavailable(f"Statewave {e}; is the server running and STATEWAVE_URL right?",
                                       method=method, path=path) from None
        except WireError as e:  # too large, redirected: an answer we do not use
            raise StatewaveServerError(f"Statewave {e}", method=method, path=path) from None
        if r.status < 400:
            try:
                data = r.json()
            except ValueError:
                raise StatewaveServerError(f"Statewave {method} {path}: {r.status} with a body that is not JSON",
                                           method=method, path=path, status=r.status) from None
            return data if isinstance(data, dict) else {"value": data}
        raise _error(method, path, r)


def _seg(value: str) -> str:
    return quote(str(value), safe="")


def _error(method: str, path: str, r: Answer) -> StatewaveError:
    try:
        body = r.json()
    except ValueError:
        body = {}
    err = body.get("error") if isinstance(body, dict) and isinstance(body.get("error"), dict) else {}
    code, message = str(err.get("code", "")), str(err.get("message", "") or r.text[:300])
    details, request_id = err.get("details"), str(err.get("request_id", ""))
    said = message
    if isinstance(details, list):
        said += ": " + "; ".join(
            f"{'.'.join(str(x) for x in d.get('loc', ()))}: {d.get('msg', '')}" for d in details if isinstance(d, dict))
    status = r.status
    cls = (StatewaveNotFound if status == 404 else StatewaveValidationError if status == 422
           else StatewaveServerError if status >= 500 else StatewaveError)
    rid = f" (request {request_id})" if request_id else ""
    return cls(f"Statewave {method} {path}: {status} {code} {said}{rid}".replace("  ", " ").rstrip(),
               method=method, path=path, status=status, code=code, details=details, request_id=request_id)


__all__ = [
    "StatewaveClient", "StatewaveError", "StatewaveUnavailable", "StatewaveNotFound",
    "StatewaveValidationError", "StatewaveServerError",
]

"""A small, typed HTTP client for the Hindsight memory server (API version 1.1.0).

It speaks the server's own wire format (the `/v1/default/banks/...` routes) over httpx, and
nothing else: no retries, no caching, no guessing. Every call returns plain typed records
or raises one of the errors below, so a caller can tell "the bank is gone" (404) from "the
server refused the payload" (422) from "the server broke" (5xx) from "nothing is listening"
(connection refused or timed out).

    client = HindsightClient("http://127.0.0.1:8888", api_key=None)
    client.retain("support", [RetainItem("Update application worked", document_id="m1",
                                         tags=("customer:c1",), metadata={"type": "ATTEMPT"})])
    hits = client.recall("support", "app crashes", tags=["customer:c1"], tags_match="all_strict")
    client.delete_document("support", "m1"); client.delete_bank("support")

Observed server semantics a caller should know (recorded against a real 1.1.0 server):
banks are created on first retain; retaining again with the same `document_id` replaces that
document; metadata values must be strings (422 otherwise); `tags_match` `any`/`all` also
return untagged memories, the `*_strict` variants do not; recall has no result limit (cut
client-side), only `max_tokens` and a `budget` of `low` | `mid` | `high`; recall on a deleted
bank is a 404. Pass `transport=` (an `httpx.BaseTransport`) to test without a server.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Iterator, Literal, Mapping, Sequence
from urllib.parse import quote

import httpx

from stores.remote.wire import (DEFAULT_MAX_BYTES, Answer, DeadlineExceeded, Limits, Unreachable, WireError, make_client,
                                request)

TagsMatch = Literal["any", "all", "any_strict", "all_strict", "exact"]
"""How recall and listing match tags (`*_strict` exclude untagged memories)."""
Budget = Literal["low", "mid", "high"]
"""How much work recall may spend."""

API_PREFIX = "/v1/default"


class HindsightError(Exception):
    """A Hindsight call that did not succeed; `status` is None when no HTTP answer came back."""

    def __init__(self, message: str, *, method: str, path: str, status: int | None = None, detail: Any = None):
        super().__init__(message)
        self.method = method
        """HTTP method of the failed call."""
        self.path = path
        """Path of the failed call."""
        self.status = status
        """HTTP status, or None for a connection failure."""
        self.detail = detail
        """The server's `detail` field (a string, or a list of validation errors)."""


class HindsightNotFound(HindsightError):
    """404: the bank, document or memory does not exist (e.g. recall on a deleted bank)."""


class HindsightValidationError(HindsightError):
    """422: the server refused the payload; `errors` lists `(location, message)` pairs."""

    @property
    def errors(self) -> list[tuple[str, str]]:
        """Each validation error as (dotted location, message), e.g. `('body.items.0.metadata.n', ...)`."""
        out = []
        for e in self.detail if isinstance(self.detail, list) else []:
            loc = ".".join(str(x) for x in e.get("loc", ())) if isinstance(e, dict) else ""
            out.append((loc, str(e.get("msg", e)) if isinstance(e, dict) else str(e)))
        return out


class HindsightBadRequest(HindsightError):
    """Any other 4xx (400: e.g. reflect without an LLM; 401/403: a missing or wrong API key)."""


class HindsightServerError(HindsightError):
    """5xx: the server failed while handling the call."""


class HindsightUnavailable(HindsightError):
    """No HTTP answer: connection refused, DNS failure or timeout."""


@dataclass(frozen=True)
class RetainItem:
    """One item to retain (the server's `MemoryItem`)."""

    content: str
    """The text to remember (stored verbatim when the server has no LLM)."""
    document_id: str | None = None
    """The document it belongs to; retaining again with the same id replaces the document."""
    timestamp: datetime | str | None = None
    """When it happened (becomes `mentioned_at`); a datetime is sent as ISO 8601."""
    context: str | None = None
    """A short free-text context (e.g. `support ticket T-1001`)."""
    metadata: Mapping[str, str] | None = None
    """String-valued metadata, returned with every recalled memory (non-strings: 422)."""
    tags: Sequence[str] | None = None
    """Visibility tags, filtered on at recall (`customer:<id>`)."""

    def to_json(self) -> dict[str, Any]:
        """The item as the server expects it (unset fields omitted)."""
        out: dict[str, Any] = {"content": self.content}
        if self.timestamp is not None:
            out["timestamp"] = _iso(self.timestamp)
        if self.context is not None:
            out["context"] = self.context
        if self.metadata is not None:
            out["metadata"] = dict(self.metadata)
        if self.document_id is not None:
            out["document_id"] = self.document_id
        if self.tags is not None:
            out["tags"] = list(self.tags)
        return out


@dataclass(frozen=True)
class RetainResult:
    """What a retain call reported."""

    bank_id: str
    """The bank written to (created if it did not exist)."""
    items_count: int
    """Items accepted."""
    operation_id: str | None = None
    """For an async retain: the background operation to wait for."""


@dataclass(frozen=True)
class RecallHit:
    """One recalled memory unit."""

    id: str
    """The memory unit's id (server-generated)."""
    text: str
    """Its text."""
    document_id: str | None
    """The document it came from."""
    metadata: dict[str, str]
    """The metadata retained with it."""
    tags: tuple[str, ...]
    """Its tags."""
    mentioned_at: str | None
    """The retained timestamp, ISO 8601."""
    score: float
    """The server's final fused score (higher is better)."""
    scores: dict[str, float | None] = field(default_factory=dict)
    """Every score the server reported (`final`, `semantic`, `keyword`, `reranker`)."""


@dataclass(frozen=True)
class Document:
    """A document of a bank, as listed."""

    id: str
    """The document id given at retain."""
    tags: tuple[str, ...]
    """Its tags."""
    metadata: dict[str, str]
    """Its metadata (`document_metadata`)."""
    memory_unit_count: int
    """Memory units it holds."""
    updated_at: str | None = None
    """Server wall-clock time of its last write."""


def _iso(value: datetime | str) -> str:
    if isinstance(value, str):
        return value
    return value.isoformat().replace("+00:00", "Z")


class HindsightClient:
    """The Hindsight HTTP API, one method per route used by supportbench (see module docstring)."""

    def __init__(
        self,
        base_url: str,
        *,
        api_key: str | None = None,
        transport: httpx.BaseTransport | None = None,
        timeout: float = 30.0,
        max_bytes: int = DEFAULT_MAX_BYTES,
    ) -> None:
        headers = {"Authorization": f"Bearer {api_key.strip()}"} if api_key and api_key.strip() else {}
        self.base_url = base_url.strip().rstrip("/")
        """Server root, e.g. `http://127.0.0.1:8888`."""
        self.limits = Limits(deadline_s=timeout, max_bytes=max_bytes)
        """Each call's whole-call deadline and answer size cap (`stores.remote.wire`)."""
        self._http = make_client(self.base_url, headers=headers, limits=self.limits, transport=transport)

    def close(self) -> None:
        """Close the connection pool."""
        self._http.close()

    def __enter__(self) -> "HindsightClient":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ---- server ---------------------------------------------------------------------------
    def version(self) -> dict[str, Any]:
        """`GET /v1/version`: `api_version` and feature flags."""
        return self._call("GET", "/v1/version")

    def health(self) -> dict[str, Any]:
        """`GET /health`: `status` (`healthy`) and database state."""
        return self._call("GET", "/health")

    # ---- banks ----------------------------------------------------------------------------
    def create_bank(self, bank_id: str, *, name: str | None = None) -> dict[str, Any]:
        """`PUT /banks/{bank}`: create (or update) a bank explicitly."""
        body = {"name": name} if name is not None else {}
        return self._call("PUT", f"{API_PREFIX}/banks/{_seg(bank_id)}", json=body)

    def list_banks(self) -> list[dict[str, Any]]:
        """`GET /banks`: every bank (id, name, fact_count, ...)."""
        return list(self._call("GET", f"{API_PREFIX}/banks").get("banks", []))

    def delete_bank(self, bank_id: str) -> int:
        """`DELETE /banks/{bank}`: the bank and all its data; returns the count deleted."""
        return int(self._call("DELETE", f"{API_PREFIX}/banks/{_seg(bank_id)}").get("deleted_count", 0))

    # ---- memories -------------------------------------------------------------------------
    def retain(self, bank_id: str, items: Sequence[RetainItem], *, async_: bool = False) -> RetainResult:
        """`POST /banks/{bank}/memories`: remember items (synchronously unless `async_`)."""
        body: dict[str, Any] = {"items": [i.to_json() for i in items]}
        if async_:
            body["async"] = True
        data = self._call("POST", f"{API_PREFIX}/banks/{_seg(bank_id)}/memories", json=body)
        return RetainResult(str(data.get("bank_id", bank_id)), int(data.get("items_count", 0)), data.get("operation_id"))

    def recall(
        self,
        bank_id: str,
        query: str,
        *,
        tags: Sequence[str] | None = None,
        tags_match: TagsMatch | None = None,
        max_tokens: int | None = None,
        budget: Budget | None = None,
        query_timestamp: datetime | str | None = None,
    ) -> list[RecallHit]:
        """`POST /banks/{bank}/memories/recall`: memories for `query`, best first.

        Use `tags` with `tags_match="all_strict"` to keep to one scope (untagged memories excluded).
        """
        body: dict[str, Any] = {"query": query}
        if max_tokens is not None:
            body["max_tokens"] = max_tokens
        if budget is not None:
            body["budget"] = budget
        if tags is not None:
            body["tags"] = list(tags)
        if tags_match is not None:
            body["tags_match"] = tags_match
        if query_timestamp is not None:
            body["query_timestamp"] = _iso(query_timestamp)
        data = self._call("POST", f"{API_PREFIX}/banks/{_seg(bank_id)}/memories/recall", json=body)
        return [_hit(r) for r in data.get("results") or []]

    def list_memories(
        self, bank_id: str, *, tags: Sequence[str] | None = None, tags_match: TagsMatch | None = None,
        limit: int | None = None, offset: int | None = None,
    ) -> list[dict[str, Any]]:
        """`GET /banks/{bank}/memories/list`: memory units, newest first (raw records)."""
        params = _params(tags=tags, tags_match=tags_match, limit=limit, offset=offset)
        return list(self._call("GET", f"{API_PREFIX}/banks/{_seg(bank_id)}/memories/list", params=params).get("items", []))

    def clear_memories(self, bank_id: str) -> int:
        """`DELETE /banks/{bank}/memories`: every memory unit of the bank; returns the count."""
        return int(self._call("DELETE", f"{API_PREFIX}/banks/{_seg(bank_id)}/memories").get("deleted_count", 0))

    # ---- documents ------------------------------------------------------------------------
    def list_documents(
        self, bank_id: str, *, tags: Sequence[str] | None = None, tags_match: TagsMatch | None = None,
        limit: int | None = None, offset: int | None = None,
    ) -> tuple[list[Document], int]:
        """`GET /banks/{bank}/documents`: one page of documents and the server's total (server page size
        when `limit` is None)."""
        params = _params(tags=tags, tags_match=tags_match, limit=limit, offset=offset)
        data = self._call("GET", f"{API_PREFIX}/banks/{_seg(bank_id)}/documents", params=params)
        docs = [
            Document(
                id=str(d["id"]), tags=tuple(d.get("tags") or ()), metadata=dict(d.get("document_metadata") or {}),
                memory_unit_count=int(d.get("memory_unit_count") or 0), updated_at=d.get("updated_at"),
            )
            for d in data.get("items", [])
        ]
        return docs, int(data.get("total", len(docs)))

    def iter_documents(
        self, bank_id: str, *, tags: Sequence[str] | None = None, tags_match: TagsMatch | None = None,
        page_size: int = 100,
    ) -> Iterator[Document]:
        """Every document matching the tags, page by page."""
        offset = 0
        while True:
            docs, total = self.list_documents(bank_id, tags=tags, tags_match=tags_match, limit=page_size, offset=offset)
            yield from docs
            offset += len(docs)
            if not docs or len(docs) < page_size or offset >= total:
                return

    def get_document(self, bank_id: str, document_id: str) -> dict[str, Any]:
        """`GET /banks/{bank}/documents/{id}`: the document with its original text."""
        return self._call("GET", f"{API_PREFIX}/banks/{_seg(bank_id)}/documents/{_seg(document_id)}")

    def delete_document(self, bank_id: str, document_id: str) -> int:
        """`DELETE /banks/{bank}/documents/{id}`: the document and its memory units; returns units deleted."""
        data = self._call("DELETE", f"{API_PREFIX}/banks/{_seg(bank_id)}/documents/{_seg(document_id)}")
        return int(data.get("memory_units_deleted", 0))

    # ---- the one place HTTP happens -------------------------------------------------------
    def _call(self, method: str, path: str, *, json: Any = None, params: Any = None) -> dict[str, Any]:
        try:
            r = request(self._http, method, path, self.limits, json=json, params=params)
        except (DeadlineExceeded, Unreachable) as e:  # no (complete) answer in time
            raise HindsightUnavailable(f"Hindsight {e}", method=method, path=path) from None
        except WireError as e:  # too large, redirected: an answer we do not use
            raise HindsightServerError(f"Hindsight {e}", method=method, path=path) from None
        if r.status < 400:
            try:
                data = r.json()
            except ValueError:
                raise HindsightServerError(
                    f"Hindsight {method} {path}: {r.status} with a body that is not JSON",
                    method=method, path=path, status=r.status,
                ) from None
            return data if isinstance(data, dict) else {"value": data}
        raise _error(method, path, r)


def _seg(value: str) -> str:
    """One path segment, percent-encoded (ids may hold `/` or spaces)."""
    return quote(str(value), safe="")


def _params(**kw: Any) -> dict[str, Any]:
    return {k: (list(v) if isinstance(v, (list, tuple)) else v) for k, v in kw.items() if v is not None}


def _hit(r: Mapping[str, Any]) -> RecallHit:
    scores = dict(r.get("scores") or {})
    final = scores.get("final")
    return RecallHit(
        id=str(r.get("id", "")), text=str(r.get("text", "")), document_id=r.get("document_id"),
        metadata={str(k): str(v) for k, v in (r.get("metadata") or {}).items()}, tags=tuple(r.get("tags") or ()),
        mentioned_at=r.get("mentioned_at"), score=float(final) if final is not None else 0.0, scores=scores,
    )


def _error(method: str, path: str, r: Answer) -> HindsightError:
    try:
        detail = r.json().get("detail")
    except (ValueError, AttributeError):
        detail = r.text[:300]
    status = r.status
    if status == 422 and isinstance(detail, list):
        said = "; ".join(
            f"{'.'.join(str(x) for x in e.get('loc', ()))}: {e.get('msg', '')}" for e in detail if isinstance(e, dict)
        )
    else:
        said = str(detail)
    message = f"Hindsight {method} {path}: {status} {said}".rstrip()
    cls = (
        HindsightNotFound if status == 404
        else HindsightValidationError if status == 422
        else HindsightServerError if status >= 500
        else HindsightBadRequest
    )
    return cls(message, method=method, path=path, status=status, detail=detail)


__all__ = [
    "HindsightClient", "RetainItem", "RetainResult", "RecallHit", "Document", "TagsMatch", "Budget",
    "HindsightError", "HindsightNotFound", "HindsightValidationError", "HindsightBadRequest",
    "HindsightServerError", "HindsightUnavailable",
]

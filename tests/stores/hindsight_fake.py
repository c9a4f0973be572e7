"""A small in-process stand-in for a Hindsight 1.1.0 server, behind an `httpx.MockTransport`.

It answers the routes `HindsightStore` uses with the shapes recorded from the real server
(tests/data/hindsight) and the semantics observed there: banks auto-create on retain, the same
`document_id` replaces a document, non-string metadata is a 422, `tags_match` `any`/`all` include
untagged memories and the `*_strict` modes do not, a deleted bank is a 404. Scores are keyword
overlap (the real server fuses embeddings and BM25). With `ignore_tags=True` it returns every
memory of the bank whatever the filter, to prove the client-side isolation check on its own.
"""

from __future__ import annotations

import json
import re

import httpx

_WORD = re.compile(r"[a-z0-9]+")


class FakeHindsight:
    """Banks of documents in a dict; `requests` records every call made."""

    def __init__(self, *, ignore_tags: bool = False) -> None:
        self.banks: dict[str, dict[str, dict]] = {}
        self.ignore_tags = ignore_tags
        self.requests: list[httpx.Request] = []
        self.transport = httpx.MockTransport(self._handle)

    def _handle(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        parts = request.url.path.strip("/").split("/")
        body = json.loads(request.content) if request.content else None
        if parts[:3] != ["v1", "default", "banks"] or len(parts) < 4:
            return httpx.Response(404, json={"detail": "Not Found"})
        bank, rest, m = parts[3], parts[4:], request.method
        if m == "POST" and rest == ["memories"]:
            return self._retain(bank, body)
        if bank not in self.banks:
            return httpx.Response(404, json={"detail": f"Bank '{bank}' not found"})
        if m == "DELETE" and not rest:
            n = len(self.banks.pop(bank))
            return httpx.Response(200, json={"success": True, "message": f"Bank '{bank}' and all associated data deleted successfully", "deleted_count": n})
        if m == "POST" and rest == ["memories", "recall"]:
            return self._recall(bank, body)
        if m == "GET" and rest == ["documents"]:
            return self._documents(bank, request.url.params)
        if m == "DELETE" and len(rest) == 2 and rest[0] == "documents":
            doc = self.banks[bank].pop(rest[1], None)
            if doc is None:
                return httpx.Response(404, json={"detail": f"Document '{rest[1]}' not found"})
            return httpx.Response(200, json={"success": True, "document_id": rest[1], "memory_units_deleted": 1})
        return httpx.Response(404, json={"detail": "Not Found"})

    def _retain(self, bank, body):
        for i, item in enumerate(body["items"]):
            for k, v in (item.get("metadata") or {}).items():
                if not isinstance(v, str):
                    return httpx.Response(422, json={"detail": [{"type": "string_type", "loc": ["body", "items", i, "metadata", k],
                                                                 "msg": "Input should be a valid string", "input": v}]})
        docs = self.banks.setdefault(bank, {})
        for item in body["items"]:
            doc_id = item.get("document_id") or f"auto-{len(docs)}"
            docs[doc_id] = {"id": doc_id, "text": item["content"], "tags": list(item.get("tags") or []),
                            "metadata": dict(item.get("metadata") or {}), "mentioned_at": item.get("timestamp")}
        return httpx.Response(200, json={"success": True, "bank_id": bank, "items_count": len(body["items"]), "async": False,
                                         "operation_id": None, "operation_ids": None, "usage": None})

    def _match(self, doc, tags, mode) -> bool:
        if self.ignore_tags or not tags:
            return True
        have = set(doc["tags"])
        if not have:
            return mode in ("any", "all")
        return bool(have & set(tags)) if mode in ("any", "any_strict") else set(tags) <= have

    def _recall(self, bank, body):
        q = set(_WORD.findall(body["query"].lower()))
        out = []
        for doc in self.banks[bank].values():
            if not self._match(doc, body.get("tags"), body.get("tags_match", "any")):
                continue
            words = set(_WORD.findall(doc["text"].lower()))
            score = len(q & words) / max(1, len(q))
            out.append({"id": f"u-{doc['id']}", "text": doc["text"], "type": "world", "document_id": doc["id"],
                        "metadata": doc["metadata"], "tags": doc["tags"], "mentioned_at": doc["mentioned_at"],
                        "scores": {"final": score, "semantic": None, "keyword": score, "reranker": None}})
        out.sort(key=lambda r: -r["scores"]["final"])
        return httpx.Response(200, json={"results": out, "trace": None, "entities": None, "chunks": None})

    def _documents(self, bank, params):
        tags, mode = params.get_list("tags"), params.get("tags_match", "any_strict")
        docs = [d for d in self.banks[bank].values() if self._match(d, tags, mode)]
        offset, limit = int(params.get("offset", 0)), int(params.get("limit", 100))
        page = docs[offset: offset + limit]
        items = [{"id": d["id"], "bank_id": bank, "tags": d["tags"], "document_metadata": d["metadata"],
                  "memory_unit_count": 1, "updated_at": "2026-12-01T12:00:00+00:00"} for d in page]
        return httpx.Response(200, json={"items": items, "total": len(docs), "limit": limit, "offset": offset})

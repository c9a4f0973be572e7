"""`HindsightStore`: the seed's `MemoryStore` protocol on a Hindsight server.

Each memory is one Hindsight document (`document_id` = the memory id, so `update` is a retain
that replaces it), its text the content Hindsight embeds, its fields in string metadata
(Hindsight refuses non-string metadata) and its simulated `updated_at` the item timestamp.
Isolation (FR-01) holds twice: every memory carries the tag `customer:<id>` and every read asks
for that tag with `tags_match="all_strict"` (untagged memories excluded); and what comes back
is checked again against the customer id in its metadata, so a server that ignored the filter
still could not hand one customer another's memory.
"""

from __future__ import annotations

import json
from datetime import datetime

from stores.remote.hindsight_client import Budget, HindsightClient, HindsightNotFound, RecallHit, RetainItem
from stores.structured.model import Memory, MemoryFormatError

MARKER = "supportbench.memory"
"""Metadata key that marks a document as a supportbench memory (others in the bank are ignored)."""


def customer_tag(customer_id: str) -> str:
    """The tag that scopes a memory to its customer."""
    return f"customer:{customer_id}"


def to_metadata(m: Memory) -> dict[str, str]:
    """A memory as Hindsight metadata: every value a string (lists as JSON, None as empty)."""
    out: dict[str, str] = {MARKER: "1"}
    for k, v in m.to_dict().items():
        out[k] = json.dumps(v) if isinstance(v, list) else ("" if v is None else str(v))
    return out


def from_metadata(meta: dict[str, str]) -> Memory | None:
    """The memory a document's metadata holds, or None if it is not a (readable) supportbench memory."""
    if meta.get(MARKER) != "1":
        return None
    data: dict = {}
    for k in ("id", "customer_id", "type", "text", "created_at", "updated_at", "key"):
        data[k] = meta.get(k, "")
    for k in ("outcome", "status", "product", "incident_id"):
        data[k] = meta.get(k) or None
    try:
        for k in ("source_ids", "previous_outcomes"):
            data[k] = json.loads(meta.get(k) or "[]")
        return Memory.from_dict(data)
    except (ValueError, MemoryFormatError):
        return None


class HindsightStore:
    """Typed memories in one Hindsight bank, scoped per customer by tags."""

    def __init__(self, client: HindsightClient, bank: str, *, budget: Budget = "low", max_tokens: int = 2048) -> None:
        self.client = client
        """The HTTP client (its base URL and key come from the environment, never from a manifest)."""
        self.bank = bank
        """The bank every memory goes to (created on first retain)."""
        self.budget = budget
        """Recall effort (`low`, `mid`, `high`)."""
        self.max_tokens = max_tokens
        """Recall's token ceiling on the server side."""

    def add(self, memory: Memory) -> Memory:
        self._retain(memory)
        return memory

    def update(self, memory: Memory) -> Memory:
        self._retain(memory)  # same document_id: Hindsight replaces the document
        return memory

    def all(self, customer_id: str) -> list[Memory]:
        try:
            docs = list(self.client.iter_documents(self.bank, tags=[customer_tag(customer_id)], tags_match="all_strict"))
        except HindsightNotFound:  # nothing was ever retained in this bank
            return []
        mems = [m for m in (from_metadata(d.metadata) for d in docs) if m is not None and m.customer_id == customer_id]
        return sorted(mems, key=lambda m: (m.created_at, m.id))

    def forget(self, customer_id: str) -> int:
        n = 0
        for m in self.all(customer_id):
            try:
                self.client.delete_document(self.bank, m.id)
                n += 1
            except HindsightNotFound:
                pass
        return n

    def search(self, customer_id: str, query: str, limit: int = 5, *, now: datetime | None = None) -> list[tuple[Memory, float]]:
        try:  # `now` anchors the server's recency scoring to the simulated clock (it would use its wall clock)
            hits = self.client.recall(self.bank, query or " ", tags=[customer_tag(customer_id)], tags_match="all_strict",
                                      max_tokens=self.max_tokens, budget=self.budget, query_timestamp=now)
        except HindsightNotFound:
            return []
        return _own(hits, customer_id)[: max(0, limit)]

    def drop_bank(self) -> None:
        """Delete the whole bank (every customer's memories); a missing bank is not an error."""
        try:
            self.client.delete_bank(self.bank)
        except HindsightNotFound:
            pass

    def _retain(self, m: Memory) -> None:
        item = RetainItem(
            m.text, document_id=m.id, timestamp=m.updated_at, context=f"{m.type} {m.outcome or m.status or ''}".strip(),
            metadata=to_metadata(m), tags=(customer_tag(m.customer_id),),
        )
        self.client.retain(self.bank, [item])


def _own(hits: list[RecallHit], customer_id: str) -> list[tuple[Memory, float]]:
    """The recalled memories that are this customer's, one per memory id (best score), best first."""
    best: dict[str, tuple[Memory, float]] = {}
    for h in hits:
        m = from_metadata(h.metadata)
        if m is None or m.customer_id != customer_id or customer_tag(customer_id) not in h.tags:
            continue
        if m.id not in best or h.score > best[m.id][1]:
            best[m.id] = (m, h.score)
    return sorted(best.values(), key=lambda x: (-x[1], x[0].id))


__all__ = ["HindsightStore", "customer_tag", "to_metadata", "from_metadata", "MARKER"]

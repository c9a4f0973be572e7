"""The seed's storage protocol for typed memories, the in-memory store and the factory.

The agent depends only on `MemoryStore` (`add`, `update`, `all`, `forget`, `search`); which
backend answers is configuration: `make_store()` returns a `HindsightStore` when
`HINDSIGHT_URL` is set and an `InMemoryStore` otherwise, so production and tests run the same
code. (Not to be confused with `stores.memory.MemoryStore`, the raw turn history of the
retrieval strategies.)
"""

from __future__ import annotations

import json
import os
import tempfile
from datetime import datetime
from pathlib import Path
from typing import Mapping, Protocol, runtime_checkable

import httpx

from stores.structured.lexicon import content_words
from stores.structured.model import Memory, MemoryFormatError


class StoreError(ValueError):
    """A store call that cannot be honoured (adding an existing id, updating a missing one, a bad file)."""


@runtime_checkable
class MemoryStore(Protocol):
    """Where typed memories live; every call is scoped to one customer (FR-01)."""

    def add(self, memory: Memory) -> Memory:
        """Store a new memory (its id must be new)."""
        ...

    def update(self, memory: Memory) -> Memory:
        """Replace the stored memory with the same id."""
        ...

    def all(self, customer_id: str) -> list[Memory]:
        """Every memory of the customer, oldest first."""
        ...

    def forget(self, customer_id: str) -> int:
        """Delete every memory of the customer; returns how many were deleted."""
        ...

    def search(self, customer_id: str, query: str, limit: int = 5, *, now: datetime | None = None) -> list[tuple[Memory, float]]:
        """The customer's memories most relevant to `query`, best first, with their scores. `now` is the
        (simulated) moment of the question, for backends that score recency; never the wall clock."""
        ...


def lexical_score(query_words: frozenset[str], memory: Memory) -> float:
    """Share of the query's content words found in the memory's text (0..1). The product is left out: a
    customer's every memory shares it, so it would make everything look relevant."""
    if not query_words:
        return 0.0
    return len(query_words & content_words(memory.text)) / len(query_words)


class InMemoryStore:
    """Memories in a dict per customer; optionally persisted to a JSON file, written atomically.

    Search is lexical overlap (the seed's local implementation): the share of the query's content
    words the memory contains; ties go to the most recently updated, then to the id.
    """

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path is not None else None
        """JSON file the memories persist to, or None to keep them in memory only."""
        self._by_customer: dict[str, dict[str, Memory]] = {}
        if self.path is not None and self.path.exists():
            self._load(self.path)

    def add(self, memory: Memory) -> Memory:
        mine = self._by_customer.setdefault(memory.customer_id, {})
        if memory.id in mine:
            raise StoreError(f"memory {memory.id!r} already exists for customer {memory.customer_id!r}: use update()")
        mine[memory.id] = memory
        self._save()
        return memory

    def update(self, memory: Memory) -> Memory:
        mine = self._by_customer.get(memory.customer_id, {})
        if memory.id not in mine:
            raise StoreError(f"no memory {memory.id!r} for customer {memory.customer_id!r} to update: use add()")
        mine[memory.id] = memory
        self._save()
        return memory

    def all(self, customer_id: str) -> list[Memory]:
        return list(self._by_customer.get(customer_id, {}).values())

    def forget(self, customer_id: str) -> int:
        n = len(self._by_customer.pop(customer_id, {}))
        if n:
            self._save()
        return n

    def search(self, customer_id: str, query: str, limit: int = 5, *, now: datetime | None = None) -> list[tuple[Memory, float]]:
        q = content_words(query)
        scored = [(m, lexical_score(q, m)) for m in self.all(customer_id)]
        scored = [x for x in scored if x[1] > 0]
        scored.sort(key=lambda x: (-x[1], -x[0].updated_at.timestamp(), x[0].id))
        return scored[: max(0, limit)]

    def clear(self) -> None:
        """Forget every customer."""
        self._by_customer.clear()
        self._save()

    # ---- persistence ----------------------------------------------------------------------
    def _save(self) -> None:
        if self.path is None:
            return
        data = {"version": 1, "memories": [m.to_dict() for mine in self._by_customer.values() for m in mine.values()]}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{self.path.name}.", dir=self.path.parent)
        try:
            with os.fdopen(fd, "w") as f:
                json.dump(data, f, indent=1, sort_keys=True)
            os.replace(tmp, self.path)  # readers see the old file or the new one, never half of one
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def _load(self, path: Path) -> None:
        try:
            data = json.loads(path.read_text())
        except json.JSONDecodeError as e:
            raise StoreError(f"{path}:{e.lineno}: not valid JSON ({e.msg}); expected a memory store file") from None
        if not isinstance(data, dict) or data.get("version") != 1 or not isinstance(data.get("memories"), list):
            raise StoreError(f"{path}: expected {{\"version\": 1, \"memories\": [...]}}")
        for i, raw in enumerate(data["memories"]):
            try:
                m = Memory.from_dict(raw)
            except MemoryFormatError as e:
                raise StoreError(f"{path}: memories[{i}]: {e}") from None
            self._by_customer.setdefault(m.customer_id, {})[m.id] = m


DEFAULT_BANK = "supportbench"


def make_store(
    env: Mapping[str, str] | None = None, *, path: str | Path | None = None, transport: httpx.BaseTransport | None = None,
    bank: str | None = None,
) -> MemoryStore:
    """The store the environment asks for: Hindsight when `HINDSIGHT_URL` is set (bank from `HINDSIGHT_BANK`
    or `bank`, key from `HINDSIGHT_API_KEY`), else an in-memory store (persisted at `path` if given)."""
    env = os.environ if env is None else env
    url = env.get("HINDSIGHT_URL", "").strip()
    if not url:
        return InMemoryStore(path)
    from stores.remote.hindsight_client import HindsightClient
    from stores.structured.hindsight_store import HindsightStore

    client = HindsightClient(url, api_key=env.get("HINDSIGHT_API_KEY") or None, transport=transport)
    return HindsightStore(client, bank or env.get("HINDSIGHT_BANK", "").strip() or DEFAULT_BANK)


__all__ = ["MemoryStore", "InMemoryStore", "StoreError", "make_store", "lexical_score", "DEFAULT_BANK"]

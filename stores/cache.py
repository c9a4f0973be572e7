"""Where the project keeps its caches: `$SUPPORTBENCH_CACHE`, else `./.cache/supportbench`."""

from __future__ import annotations

import hashlib
import os
from functools import lru_cache
from pathlib import Path
from typing import Sequence

import numpy as np


def cache_root() -> Path:
    """`$SUPPORTBENCH_CACHE` or `./.cache/supportbench` (relative to the current folder)."""
    env = os.environ.get("SUPPORTBENCH_CACHE")
    return Path(env) if env else Path.cwd() / ".cache" / "supportbench"


@lru_cache(maxsize=1 << 16)
def text_key(text: str) -> bytes:
    """The cache key of a text under one model: its sha256 digest (memoized: a run's replays and
    probes ask for the same texts again). A lone surrogate (JSON may escape one) is kept as its
    bytes, not refused; every other text's key is its UTF-8 digest."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()


def chain_digest(chain: list[bytes], texts: Sequence[str], n: int) -> bytes:
    """The digest of `texts[:n]` in order (b"" for none), extending `chain` (digest i covers texts
    0..i) to `n`. Each link hashes the previous digest and the text's fixed-size `text_key`, so no
    two histories share an input. A caller whose text i changes deletes `chain[i:]` first."""
    for i in range(len(chain), n):
        chain.append(hashlib.blake2b((chain[-1] if i else b"") + text_key(texts[i]), digest_size=32).digest())
    return chain[n - 1] if n else b""


class ArrayMemo:
    """Arrays a pure function returned, kept by key for at most `limit` elements in all, the
    oldest forgotten first. What is kept is made read-only: every caller that asks for the same
    key gets the same array. For results a run asks for again with the same inputs (its
    idempotency replays ask every probe three times), never for state: a key must name
    everything the result depends on."""

    def __init__(self, limit: int = 1 << 20) -> None:  # 8 MB of float64: about ten LoCoMo conversations' probes
        self.limit = limit
        self.kept: dict[object, np.ndarray] = {}
        self.size = 0

    def get(self, key: object) -> np.ndarray | None:
        return self.kept.get(key)

    def put(self, key: object, value: np.ndarray) -> np.ndarray:
        """Keep `value` (made read-only) under `key` and return it."""
        value.flags.writeable = False
        if value.size <= self.limit and key not in self.kept:
            while self.kept and self.size + value.size > self.limit:
                self.size -= self.kept.pop(next(iter(self.kept))).size
            self.kept[key] = value
            self.size += value.size
        return value

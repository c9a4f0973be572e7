"""Where the project keeps its caches: `$SUPPORTBENCH_CACHE`, else `./.cache/supportbench`."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np


def cache_root() -> Path:
    """`$SUPPORTBENCH_CACHE` or `./.cache/supportbench` (relative to the current folder)."""
    env = os.environ.get("SUPPORTBENCH_CACHE")
    return Path(env) if env else Path.cwd() / ".cache" / "supportbench"


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

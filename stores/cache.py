"""Where the project keeps its caches: `$SUPPORTBENCH_CACHE`, else `./.cache/supportbench`."""

from __future__ import annotations

import os
from pathlib import Path


def cache_root() -> Path:
    """`$SUPPORTBENCH_CACHE` or `./.cache/supportbench` (relative to the current folder)."""
    env = os.environ.get("SUPPORTBENCH_CACHE")
    return Path(env) if env else Path.cwd() / ".cache" / "supportbench"

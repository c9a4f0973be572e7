"""The test session writes its caches outside the work tree (see tests/conftest.py)."""

from __future__ import annotations

import os
from pathlib import Path

from stores.retrieval.encoder import Encoder, cache_root

ROOT = Path(__file__).resolve().parents[1]


def test_every_cache_the_session_writes_is_outside_the_work_tree():
    for var in ("SUPPORTBENCH_CACHE", "HF_HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME"):
        folder = Path(os.environ[var]).resolve()
        assert not folder.is_relative_to(ROOT), f"{var}={folder} is inside the work tree"


def test_the_default_embedding_cache_is_the_sessions():
    assert cache_root() == Path(os.environ["SUPPORTBENCH_CACHE"])
    assert Encoder().dir.resolve().is_relative_to(Path(os.environ["SUPPORTBENCH_CACHE"]).resolve())

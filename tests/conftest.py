"""Shared test setup: `tests/` and the project root importable, caches kept out of the work tree.

Every cache a test session writes goes to one temporary folder, removed when the session ends:
the embedding cache (`SUPPORTBENCH_CACHE`), the model hub's home, and the XDG cache and config
folders (chromium writes there despite its temporary profile); pytest-xdist's workers share their
session's folder. That folder, and pytest's own temporary folders, are in memory when the machine
has a memory-backed folder (`RAM_TEMP`) and `TMPDIR` names no other. It is set here, at import, before any test module imports a library that reads
these variables once. Each session therefore starts cold: no test passes because an earlier session warmed a cache, and the encoder-cache tests that
compare cold and warm runs use folders of their own.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections import Counter
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
sys.path[:0] = [str(TESTS), str(ROOT)]  # `helpers`; the router (`app`) and `pages`, which are not installed
os.chdir(ROOT)  # scenario paths and default folders are relative to the project root

RAM_TEMP = Path("/dev/shm")
"""Where the session's temporary files go when the machine has it (Linux's memory-backed folder) and
`TMPDIR` names no other place: pytest's `tmp_path` folders, the session's caches, and the temporary
folders of the processes the tests start. The tests check behaviour, not the disk: on a disk, the
sqlite commits of mem0's local stores alone wait seconds for the disk to sync."""
RAM_TEMP_FREE = 4 << 30
"""The free bytes `RAM_TEMP` must have to be used (a container's small /dev/shm is left alone: a full
suite's temporary files, pytest keeping its last three sessions', reach a few hundred MB)."""


def _roomy(folder: Path) -> bool:
    try:
        return shutil.disk_usage(folder).free >= RAM_TEMP_FREE
    except OSError:
        return False


if ("TMPDIR" not in os.environ and RAM_TEMP.is_dir() and os.access(RAM_TEMP, os.W_OK | os.X_OK)
        and _roomy(RAM_TEMP)):
    os.environ["TMPDIR"] = str(RAM_TEMP)  # the workers and every process a test starts inherit it
    tempfile.tempdir = None  # read TMPDIR again

WORKER = os.environ.get("PYTEST_XDIST_WORKER")
"""This process's pytest-xdist worker name (`gw0`, ...), else None: the session's own process."""
if WORKER and os.environ.get("SUPPORTBENCH_TEST_SESSION"):  # a worker: the folder its session made
    SESSION_CACHE = Path(os.environ["SUPPORTBENCH_TEST_SESSION"])
else:
    SESSION_CACHE = Path(tempfile.mkdtemp(prefix="supportbench-tests-"))
    os.environ["SUPPORTBENCH_TEST_SESSION"] = str(SESSION_CACHE)  # the workers it starts inherit it
"""The one folder for every cache this test session writes, shared by its xdist workers (what one
encoded or trained, the others read: every cache file is written to a temporary name and renamed,
and the same inputs write the same bytes)."""
os.environ["SUPPORTBENCH_CACHE"] = str(SESSION_CACHE / "supportbench")
os.environ["HF_HOME"] = str(SESSION_CACHE / "huggingface")
os.environ["XDG_CACHE_HOME"] = str(SESSION_CACHE / "xdg-cache")
os.environ["XDG_CONFIG_HOME"] = str(SESSION_CACHE / "xdg-config")
os.environ["HF_HUB_OFFLINE"] = "1"  # nothing is downloaded, in this process or the ones it starts
os.environ["TRANSFORMERS_OFFLINE"] = "1"
import stores.cpu  # noqa: E402,F401  (MKL's strict numerics and the wait policy, before any test module loads torch)


def pytest_configure(config) -> None:
    if getattr(config.option, "dist", None) == "loadfile":
        # pytest-xdist hands out files in the order `pytest_collection_modifyitems` below leaves them,
        # not by its own reordering (most tests first), which put the files of a few long tests last
        config.option.loadscopereorder = False


def pytest_collection_modifyitems(config, items) -> None:
    """Files with a slow test first, in the order they were collected, then the others, most tests
    first: under `--dist loadfile` each file runs whole on one worker, and a file of a few long tests
    (the 60-customer separation test is one) handed out last would leave the other worker idle
    while it runs. The order of the tests within a file is kept (the sort is stable)."""
    slow = {item.path for item in items if item.get_closest_marker("slow")}
    count = Counter(item.path for item in items)
    items.sort(key=lambda item: (0, 0) if item.path in slow else (1, -count[item.path]))


def pytest_unconfigure(config) -> None:
    if WORKER is None:  # the session's own process, after its workers have ended
        shutil.rmtree(SESSION_CACHE, ignore_errors=True)


@pytest.fixture
def redis_server():
    """A fresh real redis-server on 127.0.0.1 for one test (see tests/redis_server.py)."""
    from redis_server import RedisServer, redis_binary

    server = RedisServer(redis_binary())
    server.start()
    try:
        yield server
    finally:
        server.stop()
        shutil.rmtree(server.dir, ignore_errors=True)  # its working folder (empty: nothing is persisted)


# --- the one canonical run -------------------------------------------------------------------


@pytest.fixture(scope="session")
def canonical_run(tmp_path_factory) -> Path:
    """The canonical suite run once for the whole test session, shared by every test that reads it
    (read it with `Results(path)`; never change it). Under pytest-xdist the workers of one session
    share it too: the first builds it under a file lock in the session's common temporary folder,
    the others wait for the lock and read what it wrote."""
    from canonical_run import build
    from filelock import FileLock

    from harness.run.runstore import is_run

    worker = os.environ.get("PYTEST_XDIST_WORKER")
    base = tmp_path_factory.getbasetemp()
    root = (base.parent if worker else base) / "canonical-runs"
    root.mkdir(parents=True, exist_ok=True)
    with FileLock(str(root) + ".lock"):
        path = root / "canonical"
        return path if is_run(path) else build(root)


@pytest.fixture
def plugins(tmp_path_factory, monkeypatch):
    """Register strategies, policies and criteria as an installed package would (tests/plugin_dist.py):
    `plugins.strategy("broken", "shortcut_strategies:Broken")`; worker processes see them too."""
    from plugin_dist import Plugins

    return Plugins(tmp_path_factory.mktemp("plugins"), monkeypatch)

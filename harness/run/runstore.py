"""Runs on disk: `runs/<run_id>/manifest.json` plus one folder of Parquet parts per table.

A run is written into a hidden temporary folder next to its final place and renamed when
complete, so a crash or a kill never leaves a half run that looks whole: readers only see
folders that hold a `manifest.json`, and a temporary folder never does until the rename.

The temporary folder `.tmp-<run_id>` is the run id's reservation: created atomically before any
work, so a second run with the same id stops at once instead of failing at the rename. Its
writer holds an exclusive `flock` on `.tmp-<run_id>/lock` for as long as it lives (the kernel
drops the lock when the process dies, however it dies), which is how `collect_stale` tells a
folder a live run is writing from one a killed run left behind.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import platform
import re
import shutil
import subprocess
import tempfile
import time
import uuid
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from harness.run.manifest import manifest_problem
from harness.run.tables import SCHEMAS

MANIFEST = "manifest.json"
TMP_PREFIX = ".tmp-"
LOCK = "lock"
RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
"""A run id is a safe folder name: visible (no leading dot), no separators, no quotes or spaces."""
_LIBS = ("supportbench", "torch", "sentence-transformers", "scikit-learn", "pandas", "duckdb", "pyarrow", "numpy", "streamlit", "tokenizers")


def new_run_id(now: datetime | None = None) -> str:
    """`YYYYmmdd-HHMMSS-xxxxxx`: sortable by start time, unique by a random suffix."""
    now = now or datetime.now(timezone.utc)
    return f"{now:%Y%m%d-%H%M%S}-{uuid.uuid4().hex[:6]}"


class RunIdError(ValueError):
    """A run id that is not a safe folder name."""


def check_run_id(run_id: str) -> str:
    """`run_id` if it is a safe, visible folder name, else `RunIdError` saying what is allowed."""
    if not isinstance(run_id, str) or not RUN_ID.fullmatch(run_id):
        raise RunIdError(f"run id {run_id!r} is not a safe folder name: use letters, digits, '.', '_' and '-', "
                         "starting with a letter or digit, at most 100 characters")
    return run_id


class DestinationError(OSError):
    """Runs cannot be written where asked (read-only, not a folder, run id taken)."""

    def __str__(self) -> str:
        return self.strerror or super().__str__()


def _why(e: OSError) -> str:
    return (e.strerror or str(e)).lower()


def check_destination(out_dir: str | Path, run_id: str | None) -> Path:
    """Before any work: the run id is safe and free, and runs can be written into `out_dir`
    (created if needed). Raises `RunIdError` or `DestinationError` with one line."""
    out = Path(out_dir)
    if run_id is not None:
        check_run_id(run_id)
        if (out / run_id).exists():
            raise DestinationError(errno.EEXIST, f"run {run_id!r} already exists in {out}; choose another --run-id")
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = tempfile.mkdtemp(prefix=".probe-", dir=out)
        os.rmdir(probe)
    except OSError as e:
        raise DestinationError(e.errno, f"cannot write runs into {out}: {_why(e)}") from None
    if run_id is not None:
        owner = _live_owner(out / f"{TMP_PREFIX}{run_id}")
        if owner is not None:
            raise DestinationError(errno.EBUSY, f"run {run_id!r} is being written in {out} by another run ({owner}); "
                                   "choose another --run-id")
    return out


def environment() -> dict[str, Any]:
    """Package, library and interpreter versions, and the git commit if there is one."""
    versions = {}
    for lib in _LIBS:
        try:
            versions[lib] = metadata.version(lib)
        except metadata.PackageNotFoundError:
            pass
    commit = None
    try:
        root = Path(__file__).resolve().parents[2]
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, timeout=5
        ).stdout.strip() or None
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"], cwd=root, capture_output=True, text=True, timeout=5
        ).stdout.strip()
        if commit and dirty:
            commit += "+dirty"
    except (OSError, subprocess.SubprocessError):
        pass
    return {"python": platform.python_version(), "platform": platform.platform(), "libraries": versions, "git_commit": commit}


def write_part(folder: str | Path, table: str, index: int, data: pa.Table) -> Path:
    """Write `data` as `<folder>/<table>/part-<index>.parquet`; sorted part names give a
    deterministic order whichever process wrote them."""
    path = Path(folder) / table / f"part-{index:06d}.parquet"
    pq.write_table(data, path, compression="zstd")
    return path


def write_parts(folder: str | Path, index: int, tables: dict[str, pa.Table]) -> None:
    """Write a shard's non-empty tables as parts numbered by the shard's index."""
    for name, table in tables.items():
        if table.num_rows:
            write_part(folder, name, index, table)


class RunWriter:
    """Writes a run's parts into a temporary folder; `commit` makes it visible atomically.

    Creating the writer reserves the run id (or fails at once with `DestinationError`) and
    collects temporary folders that killed runs left behind in `out_dir`.
    """

    def __init__(self, out_dir: str | Path, run_id: str | None = None) -> None:
        self.out_dir = Path(out_dir)
        self.run_id = check_run_id(run_id or new_run_id())
        self.final = self.out_dir / self.run_id
        self._lock: int | None = None
        check_destination(self.out_dir, self.run_id)
        collect_stale(self.out_dir)
        self.tmp = self.out_dir / f"{TMP_PREFIX}{self.run_id}"
        try:
            self.tmp.mkdir()
        except FileExistsError:
            raise DestinationError(errno.EBUSY, f"run {self.run_id!r} is being written in {self.out_dir} by another run; "
                                   "choose another --run-id") from None
        except OSError as e:
            raise DestinationError(e.errno, f"cannot write runs into {self.out_dir}: {_why(e)}") from None
        try:
            self._lock = _hold_lock(self.tmp)
            for name in SCHEMAS:
                (self.tmp / name).mkdir()
        except BaseException:
            self.abort()
            raise
        self._parts: dict[str, int] = {}

    def write(self, table: str, data: pa.Table) -> Path:
        """Write the next Parquet part of `table` (numbered in call order)."""
        n = self._parts.get(table, 0)
        self._parts[table] = n + 1
        return write_part(self.tmp, table, n, data)

    def commit(self, manifest: dict[str, Any]) -> Path:
        """Write the manifest and move the run into place in one rename."""
        for name, schema in SCHEMAS.items():  # every table exists, even when empty
            if not any((self.tmp / name).glob("*.parquet")):
                pq.write_table(schema.empty_table(), self.tmp / name / "part-empty.parquet")
        write_text_atomic(self.tmp / MANIFEST, json.dumps(manifest, indent=2, sort_keys=True, default=str))
        # the lock file goes before the rename (a run holds none); holding the fd keeps the
        # reservation until the folder has its final name
        (self.tmp / LOCK).unlink(missing_ok=True)
        try:
            os.rename(self.tmp, self.final)
        except OSError as e:
            if e.errno in (errno.EEXIST, errno.ENOTEMPTY):
                raise DestinationError(e.errno, f"run {self.run_id!r} appeared in {self.out_dir} while this run was "
                                       "being written; nothing was written") from None
            raise
        self._release()
        return self.final

    def abort(self) -> None:
        """Remove the temporary folder (on error or interrupt)."""
        shutil.rmtree(self.tmp, ignore_errors=True)
        self._release()

    def _release(self) -> None:
        if self._lock is not None:
            os.close(self._lock)
            self._lock = None


def _hold_lock(folder: Path) -> int:
    """Create `folder/lock`, already locked: it is written and locked under a private name
    first, so `collect_stale` never sees an unlocked lock file of a live run."""
    staged = folder / f".{LOCK}-{os.getpid()}"
    fd = os.open(staged, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.write(fd, f"pid {os.getpid()}\n".encode())
        os.rename(staged, folder / LOCK)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _live_owner(tmp: Path) -> str | None:
    """`pid N` when a live process holds the temporary folder's lock; None when nobody does
    (or there is no such folder)."""
    try:
        fd = os.open(tmp / LOCK, os.O_RDONLY)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return os.pread(fd, 64, 0).decode(errors="replace").strip() or "a live process"
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


LEGACY_AGE_S = 24 * 3600
"""A temporary folder without a lock file (written before runs held one) is collected only
when its writer's pid (the name's suffix) is gone and it has not changed for this long."""


def collect_stale(out_dir: str | Path) -> list[Path]:
    """Remove temporary folders of runs that died (their lock is free); returns what was removed.

    Never one a live run is writing: the lock is taken before removing, so a live writer (who
    holds it) is never touched, and two collectors never remove the same folder twice.
    Best effort: a folder that cannot be removed stays for the next run.
    """
    removed: list[Path] = []
    try:
        candidates = [p for p in Path(out_dir).iterdir() if p.name.startswith(TMP_PREFIX) and p.is_dir()]
    except OSError:
        return removed
    for tmp in candidates:
        try:
            if (tmp / LOCK).exists():
                fd = os.open(tmp / LOCK, os.O_RDONLY)
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    continue  # a live run holds it
                else:
                    shutil.rmtree(tmp)  # while holding the lock: nobody else collects or revives it meanwhile
                finally:
                    os.close(fd)
            elif _legacy_stale(tmp):
                shutil.rmtree(tmp)
            else:
                continue
            removed.append(tmp)
        except OSError:
            continue
    return removed


def _legacy_stale(tmp: Path) -> bool:
    m = re.fullmatch(re.escape(TMP_PREFIX) + r".+-(\d+)", tmp.name)
    if m is None or time.time() - tmp.stat().st_mtime < LEGACY_AGE_S:
        return False
    try:
        os.kill(int(m.group(1)), 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False
    return False


def is_run(path: Path) -> bool:
    """A complete run: a visible folder with a manifest."""
    return path.is_dir() and not path.name.startswith(".") and (path / MANIFEST).is_file()


def write_text_atomic(path: str | Path, text: str) -> Path:
    """Write `text` through a uniquely named temporary file and one rename: readers see the old
    file or the new one, never half of one, and two writers never share a temporary file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, 0o666 & ~_umask())  # mkstemp makes 0600; written files follow the umask like Parquet parts
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def _umask() -> int:
    """The process umask, read without changing it where Linux shows it (os.umask can only be
    read by setting it, a race with other threads creating files)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


class UnusableRun(FileNotFoundError):
    """A run folder that cannot be read: no manifest, a manifest readers cannot use, or
    damaged tables."""


def read_manifest(run: str | Path) -> dict[str, Any]:
    """The run's manifest, or `UnusableRun` naming the file and what was expected."""
    path = Path(run) / MANIFEST
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise UnusableRun(f"{path}: missing; expected the manifest of a complete run") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise UnusableRun(f"{path}: unreadable ({e}); expected the JSON manifest of a complete run") from None
    problem = manifest_problem(data)
    if problem:
        raise UnusableRun(f"{path}: {problem}")
    return data

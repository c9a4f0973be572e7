"""Runs on disk: `runs/<run_id>/manifest.json` plus one folder of Parquet parts per table.

A run is written into a hidden temporary folder next to its final place and renamed when
complete, so a crash or a kill never leaves a half run that looks whole: readers only see
folders that hold a `manifest.json`, and a temporary folder never does until the rename.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
import tempfile
import uuid
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from harness.run.tables import SCHEMAS

MANIFEST = "manifest.json"
_LIBS = ("supportbench", "torch", "sentence-transformers", "scikit-learn", "pandas", "duckdb", "pyarrow", "numpy", "streamlit", "tokenizers")


def new_run_id(now: datetime | None = None) -> str:
    """`YYYYmmdd-HHMMSS-xxxxxx`: sortable by start time, unique by a random suffix."""
    now = now or datetime.now(timezone.utc)
    return f"{now:%Y%m%d-%H%M%S}-{uuid.uuid4().hex[:6]}"


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
    """Writes a run's parts into a temporary folder; `commit` makes it visible atomically."""

    def __init__(self, out_dir: str | Path, run_id: str | None = None) -> None:
        self.out_dir = Path(out_dir)
        self.run_id = run_id or new_run_id()
        self.final = self.out_dir / self.run_id
        if self.final.exists():
            raise FileExistsError(f"{self.final} already exists")
        self.out_dir.mkdir(parents=True, exist_ok=True)
        self.tmp = self.out_dir / f".tmp-{self.run_id}-{os.getpid()}"
        self.tmp.mkdir()
        for name in SCHEMAS:
            (self.tmp / name).mkdir()
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
        os.rename(self.tmp, self.final)
        return self.final

    def abort(self) -> None:
        """Remove the temporary folder (on error or interrupt)."""
        shutil.rmtree(self.tmp, ignore_errors=True)


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
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


class UnusableRun(FileNotFoundError):
    """A run folder that cannot be read: no manifest, or one that is not a JSON object."""


def read_manifest(run: str | Path) -> dict[str, Any]:
    """The run's manifest, or `UnusableRun` naming the file and what was expected."""
    path = Path(run) / MANIFEST
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise UnusableRun(f"{path}: missing; expected the manifest of a complete run") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise UnusableRun(f"{path}: unreadable ({e}); expected the JSON manifest of a complete run") from None
    if not isinstance(data, dict):
        raise UnusableRun(f"{path}: expected a JSON object, got {type(data).__name__}")
    return data

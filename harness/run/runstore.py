"""Runs on disk: `runs/<run_id>/manifest.json` plus one folder of Parquet parts per table.

A run is written into a hidden temporary folder next to its final place and renamed when
complete, so a crash or a kill never leaves a half run that looks whole: readers only see
folders that hold a `manifest.json`, and a temporary folder never does until the rename.

The temporary folder `.tmp-<run_id>` is the run id's reservation, locked while its writer
lives (`harness.run.destination`): a second run with the same id stops before any work, and
folders that killed runs left behind are collected by the next run.
"""

from __future__ import annotations

import errno
import json
import os
import re
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

from stores.files import MANIFEST_BYTES, read_text_capped
from stores.redaction import KEY_PARAMS, SECRET, URL_KEY_PARAM, URL_USERINFO, registered, scrub, scrub_data

from harness.run.destination import (TMP_PREFIX, DestinationError, check_destination, check_run_id, collect_stale,
                                     hold_lock, reason)
from harness.run.arrow import empty_table
from harness.run.integrity import checksums
from harness.run.manifest import manifest_problem
from harness.run.tables import SCHEMAS

MANIFEST = "manifest.json"
ENV_RUNS = "SUPPORTBENCH_RUNS"


def runs_root(root: str | Path | None = None) -> Path:
    """The folder runs live in: the argument, else `$SUPPORTBENCH_RUNS`, else `runs/` (here, not in
    `harness.analysis.results`, so writing a run does not import DuckDB to name its folder)."""
    return Path(root or os.environ.get(ENV_RUNS) or "runs")
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


def scrub_table(data: pa.Table) -> pa.Table:
    """`data` with every string (list items included) passed through the project's one scrubber
    (`stores.redaction`): registered secrets and URL credentials become `<secret>`. Done in
    Arrow's compute kernels, column by column, only where a column holds something to replace."""
    # every registered spelling in one RE2 alternation, longest first: one pass per column
    literals = sorted(registered(), key=lambda v: (-len(v), v))
    pattern = "|".join(re.escape(v) for v in literals)
    try:  # a secret's bytes: a column whose data holds none has no literal to replace
        needles = tuple(v.encode() for v in literals)
    except UnicodeEncodeError:
        needles = None  # every column goes through the kernels
    columns = []
    changed = False
    for column in data.columns:
        new = pa.chunked_array([_scrub_array(chunk, pattern, needles) for chunk in column.chunks], type=column.type)
        changed |= new is not column and not new.equals(column)
        columns.append(new)
    return pa.Table.from_arrays(columns, schema=data.schema) if changed else data


_KEY_NEEDLES = tuple(f"{p}{k.lower()}=".encode() for p in "?&;" for k in KEY_PARAMS)
"""What a column's bytes, case-folded (`_folded`), hold wherever `URL_KEY_PARAM` matches."""


def _folded(held: bytes) -> bytes:
    """UTF-8 bytes with every character that RE2's case-insensitive matching takes for an ASCII letter
    written as that letter in lower case: ASCII capitals, and the two others Unicode's simple case
    folding sends to one (the Kelvin sign to `k`, the long s to `s`)."""
    if not held.isascii():
        held = held.replace("\u212a".encode(), b"k").replace("\u017f".encode(), b"s")
    return held.lower()


def _scrub_array(arr: pa.Array, pattern: str, needles: tuple[bytes, ...] | None = None) -> pa.Array:
    """`arr` scrubbed. With `needles` (the registered secrets' bytes), a string array's data buffer
    (every value's UTF-8 bytes, and for a slice more) is read first: a rule whose match needs bytes
    the buffer does not hold (a secret; `://` and `@`; `?key=`) is skipped, and when none is left the
    compute kernels, a run's only use of `pyarrow.compute`, are not even imported."""
    if pa.types.is_list(arr.type) and pa.types.is_string(arr.type.value_type):
        inner = arr.values  # a new wrapper at every access: kept, so an unchanged child is known as one
        values = _scrub_array(inner, pattern, needles)
        if values is inner:
            return arr
        return pa.ListArray.from_arrays(arr.offsets, values, type=arr.type, mask=arr.is_null() if arr.null_count else None)
    if not pa.types.is_string(arr.type) or len(arr) == 0:
        return arr
    literal = userinfo = key_param = True
    if needles is not None:
        data = arr.buffers()[2]
        held = bytes(data) if data is not None else b""
        literal = any(n in held for n in needles)
        userinfo = b"@" in held and b"://" in held
        if b"=" in held:  # folded once, not once per needle
            folded = _folded(held)
            key_param = any(k in folded for k in _KEY_NEEDLES)
        else:
            key_param = False
        if not (literal or userinfo or key_param):
            return arr
    import pyarrow.compute as pc

    out = arr
    if literal and pattern and pc.any(pc.match_substring_regex(out, pattern)).as_py():
        out = pc.replace_substring_regex(out, pattern, SECRET)
    if userinfo and pc.any(pc.match_substring(out, "@")).as_py():
        out = pc.replace_substring_regex(out, URL_USERINFO, "\\1" + SECRET + "@")
    if key_param and pc.any(pc.match_substring(out, "=")).as_py():
        out = pc.replace_substring_regex(out, URL_KEY_PARAM, "\\1" + SECRET)
    return out


def write_part(folder: str | Path, table: str, index: int, data: pa.Table) -> Path:
    """Write `data` as `<folder>/<table>/part-<index>.parquet` (scrubbed: `scrub_table`); sorted
    part names give a deterministic order whichever process wrote them."""
    path = Path(folder) / table / f"part-{index:06d}.parquet"
    pq.write_table(scrub_table(data), path, compression="zstd")
    return path


class PartStream:
    """One part of one table written as it is produced (`write` appends row groups), for a table
    that would not fit in memory whole: a long history's candidates. The file is opened by the
    first `write` (a shard with no rows writes none) and complete once `close` returns; a
    failed shard's half-written part goes with the run's temporary folder."""

    def __init__(self, folder: str | Path, table: str, index: int) -> None:
        self.path = Path(folder) / table / f"part-{index:06d}.parquet"
        self.schema = SCHEMAS[table]
        self._writer: pq.ParquetWriter | None = None

    def write(self, data: pa.Table) -> None:
        if not data.num_rows:
            return
        if self._writer is None:
            self._writer = pq.ParquetWriter(self.path, self.schema, compression="zstd")
        self._writer.write_table(scrub_table(data))

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None

    def __enter__(self) -> "PartStream":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


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
            raise DestinationError(e.errno, f"cannot write runs into {self.out_dir}: {reason(e)}") from None
        try:
            self._lock = hold_lock(self.tmp)
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
                pq.write_table(empty_table(schema), self.tmp / name / "part-empty.parquet")
        # every part's checksum: damage inside a part is found before the run is offered as usable
        manifest = {**manifest, "checksums": checksums(self.tmp)}
        text = json.dumps(scrub_data(manifest), indent=2, sort_keys=True, default=str)
        write_text_atomic(self.tmp / MANIFEST, text)
        # the lock file goes before the rename (a run holds none); holding the fd keeps the
        # reservation until the folder has its final name
        (self.tmp / "lock").unlink(missing_ok=True)
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


def is_run(path: Path) -> bool:
    """A complete run: a visible folder with a manifest."""
    return path.is_dir() and not path.name.startswith(".") and (path / MANIFEST).is_file()


def write_text_atomic(path: str | Path, text: str) -> Path:
    """Write `text` through a uniquely named temporary file and one rename: readers see the old
    file or the new one, never half of one, and two writers never share a temporary file. The
    text is scrubbed first (`stores.redaction.scrub`): no secret reaches a file written here."""
    text = scrub(text)
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
        data = json.loads(read_text_capped(path, MANIFEST_BYTES))
    except FileNotFoundError:
        raise UnusableRun(f"{path}: missing; expected the manifest of a complete run") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise UnusableRun(f"{path}: unreadable ({e}); expected the JSON manifest of a complete run") from None
    problem = manifest_problem(data)
    if problem:
        raise UnusableRun(f"{path}: {problem}")
    return data

"""Whether a committed run's tables can be read, checked without reading them.

A run folder is written whole and renamed into place, so damage comes from outside: a disk
that filled up, a copy cut short, a hand edit. The cheap test that catches those is the
Parquet framing of every part: `PAR1` at both ends and a footer that fits the file. It costs
one stat per part (results are kept by path, size and modification time), so listing many
runs on every page of the app stays fast.

Damage inside a well-framed part (a flipped bit with header and footer intact) is caught by the
part's checksum: a run's manifest records the SHA-256 of every part (`checksums`, written by
`harness.run.runstore.RunWriter.commit`), and `parts_problem` compares them, hashing each part
once per size and modification time (cached), before a run is listed as usable. A run written
before checksums were recorded is checked by its framing only.
"""

from __future__ import annotations

import hashlib
import os
from functools import lru_cache
from pathlib import Path
from typing import Mapping

from harness.run.tables import ADDED_LATER, SCHEMAS

_MAGIC = b"PAR1"


def checksums(run: str | Path) -> dict[str, str]:
    """`table/part-....parquet` -> SHA-256 of every Parquet part under the run folder."""
    run = Path(run)
    return {f"{table}/{p.name}": sha256_of(str(p))
            for table in SCHEMAS for p in sorted((run / table).glob("*.parquet"))}


def sha256_of(path: str) -> str:
    """The SHA-256 of a file, read in chunks."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


@lru_cache(maxsize=65536)
def _cached_sha256(path: str, size: int, mtime_ns: int) -> str:
    return sha256_of(path)


def parts_problem(run: str | Path, recorded: Mapping[str, str] | None = None) -> str | None:
    """Why the run's Parquet tables cannot be read (`scores/part-000000.parquet: truncated ...`,
    `... does not match its checksum`), or None. `recorded`: the manifest's `checksums`."""
    run = Path(run)
    seen: set[str] = set()
    for table in SCHEMAS:
        folder = run / table
        try:
            entries = sorted((e for e in os.scandir(folder) if e.name.endswith(".parquet")), key=lambda e: e.name)
        except FileNotFoundError:
            if table in ADDED_LATER:
                continue  # written before the table existed: read as empty
            return f"{table}/: missing (every run has a folder per table)"
        except OSError as e:
            return f"{table}/: unreadable ({e.strerror or e})"
        if not entries:
            return f"{table}/: no Parquet parts (every table has at least an empty part)"
        for entry in entries:
            try:
                st = entry.stat()
            except OSError as e:
                return f"{table}/{entry.name}: unreadable ({e.strerror or e})"
            problem = _part_problem(entry.path, st.st_size, st.st_mtime_ns)
            if problem:
                return f"{table}/{entry.name}: {problem}"
            if recorded:
                name = f"{table}/{entry.name}"
                seen.add(name)
                want = recorded.get(name)
                if want is None:
                    return f"{name}: not one of the parts the run wrote (no checksum in its manifest)"
                try:
                    got = _cached_sha256(entry.path, st.st_size, st.st_mtime_ns)
                except OSError as e:
                    return f"{name}: unreadable ({e.strerror or e})"
                if got != want:
                    return f"{name}: damaged (its content does not match the checksum the run recorded)"
    missing = sorted(set(recorded or ()) - seen)
    if missing:
        return f"{missing[0]}: missing (the run wrote it)"
    return None


@lru_cache(maxsize=65536)
def _part_problem(path: str, size: int, mtime_ns: int) -> str | None:
    """Framing of one part (cached by its size and time: a changed file is looked at again)."""
    if size < 12:
        return f"truncated ({size} bytes; a Parquet file has at least 12)"
    try:
        with open(path, "rb") as f:
            head = f.read(4)
            f.seek(size - 8)
            tail = f.read(8)
    except OSError as e:
        return f"unreadable ({e.strerror or e})"
    if head != _MAGIC:
        return "not a Parquet file (no PAR1 header)"
    if tail[4:] != _MAGIC:
        return f"truncated ({size} bytes, no Parquet footer at the end)"
    footer = int.from_bytes(tail[:4], "little")
    if footer + 12 > size:
        return f"damaged (a footer of {footer} bytes does not fit in {size} bytes)"
    return None

"""Whether a committed run's tables can be read, checked without reading them.

A run folder is written whole and renamed into place, so damage comes from outside: a disk
that filled up, a copy cut short, a hand edit. The cheap test that catches those is the
Parquet framing of every part: `PAR1` at both ends and a footer that fits the file. It costs
one stat per part (results are kept by path, size and modification time), so listing many
runs on every page of the app stays fast. Damage inside a well-framed part is caught where
the part is read, as an unreadable run.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

from harness.run.tables import ADDED_LATER, SCHEMAS

_MAGIC = b"PAR1"


def parts_problem(run: str | Path) -> str | None:
    """Why the run's Parquet tables cannot be read (`scores/part-000000.parquet: truncated ...`), or None."""
    run = Path(run)
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

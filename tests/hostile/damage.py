"""Ways a committed run gets damaged from outside: a cut copy, a hand edit, a bad disk."""

from __future__ import annotations

import json
import shutil
from pathlib import Path


def copy_run(runs: Path, name: str, newest: bool = True) -> Path:
    """A copy of `runs/good` named `name`, started after every other run (so `latest` would pick it)."""
    run = runs / name
    shutil.copytree(runs / "good", run)
    if newest:
        edit_manifest(run, started="2999-01-01T00:00:00+00:00")
    return run


def edit_manifest(run: Path, **fields) -> Path:
    path = run / "manifest.json"
    manifest = json.loads(path.read_text())
    manifest.update(fields)
    path.write_text(json.dumps(manifest))
    return run


def without_checksums(run: Path) -> Path:
    """The run as written before parts' checksums were recorded: only reading its rows finds damage inside a part."""
    path = run / "manifest.json"
    manifest = json.loads(path.read_text())
    manifest.pop("checksums", None)
    path.write_text(json.dumps(manifest))
    return run


def truncate(run: Path, table: str = "scores", size: int = 100) -> Path:
    part = sorted((run / table).glob("*.parquet"))[0]
    with open(part, "r+b") as f:
        f.truncate(size)
    return part


def scramble_middle(run: Path, table: str = "scores") -> Path:
    """Overwrite the data pages but keep the Parquet framing: only reading the rows finds it."""
    part = sorted((run / table).glob("*.parquet"))[0]
    data = bytearray(part.read_bytes())
    data[8 : len(data) // 2] = b"\xab" * (len(data) // 2 - 8)
    part.write_bytes(bytes(data))
    return part


def flip_bit(run: Path, table: str = "scores") -> Path:
    """One bit flipped in the middle of a part, header and footer intact (a bad disk sector)."""
    part = sorted((run / table).glob("*.parquet"))[0]
    data = bytearray(part.read_bytes())
    data[len(data) // 2] ^= 0x10
    part.write_bytes(bytes(data))
    return part


DAMAGES = {
    "truncated-part": lambda runs: (truncate(copy_run(runs, "damaged")), "scores/part-000000.parquet: truncated")[1],
    "strategies-oops": lambda runs: (edit_manifest(copy_run(runs, "damaged"), strategies="oops"),
                                     "strategies: input should be a valid list")[1],
    "seed-wrong-type": lambda runs: (edit_manifest(copy_run(runs, "damaged"), seed="seven"), "seed: input should be a valid integer")[1],
    "datasets-wrong-type": lambda runs: (edit_manifest(copy_run(runs, "damaged"), datasets=[{"suite": 1, "hash": "x"}]),
                                         "datasets[0].suite")[1],
    "missing-table": lambda runs: (shutil.rmtree(copy_run(runs, "damaged") / "health"), "health/: missing")[1],
    "scrambled-part": lambda runs: (scramble_middle(copy_run(runs, "damaged")),
                                    "scores/part-000000.parquet: damaged (its content does not match the checksum")[1],
    "flipped-bit": lambda runs: (flip_bit(copy_run(runs, "damaged")),
                                 "scores/part-000000.parquet: damaged (its content does not match the checksum")[1],
}
"""Damage name -> makes `runs/damaged` (the newest run) and returns a fragment of the reason given."""

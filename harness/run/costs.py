"""What each strategy cost a run: wall seconds and the round trips it made to its service.

Measured per (scenario, strategy spec) around the replays (plain, after reset, every event
twice) and summed per strategy label. Round trips come from the instances' optional
`call_counts()` hook (`stores.protocol.CallCountsHook`): a remote strategy counts each call
to its service by kind (`POST /v1/context`, `mem0.add`, ...). Wall time is measured here to
report cost only; it never reaches a strategy or a score, and it differs between runs, so it
lives in the manifest (`strategies[].cost`), not in the tables a run is compared by.

A shard's costs travel to the parent as one small JSON file per shard in the run's temporary
folder (`.costs/`), read and removed before the manifest is written, so every executor
(in-process, worker processes, dask) reports the same way.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any, Iterable

from stores.protocol import CallCountsHook

COSTS_DIR = ".costs"

Costs = dict[str, dict[str, Any]]
"""Strategy label -> `{"seconds": s, "scenarios": n, "calls": {kind: {"calls": n, "seconds": s}}}`."""


def service_calls(instances: Iterable[Any]) -> dict[str, dict[str, float]]:
    """The summed `call_counts()` of the instances that have the hook."""
    out: dict[str, dict[str, float]] = {}
    for s in instances:
        if isinstance(s, CallCountsHook):
            _add_calls(out, s.call_counts())
    return out


def _add_calls(into: dict[str, dict[str, float]], calls: dict[str, dict[str, float]]) -> None:
    for kind, c in calls.items():
        row = into.setdefault(kind, {"calls": 0, "seconds": 0.0})
        row["calls"] += int(c.get("calls", 0))
        row["seconds"] += float(c.get("seconds", 0.0))


def add(costs: Costs, label: str, seconds: float, calls: dict[str, dict[str, float]]) -> None:
    """Count one scenario of `label`: its wall seconds and its service calls."""
    row = costs.setdefault(label, {"seconds": 0.0, "scenarios": 0, "calls": {}})
    row["seconds"] += seconds
    row["scenarios"] += 1
    _add_calls(row["calls"], calls)


def merge(into: Costs, other: Costs) -> None:
    """Add another shard's costs."""
    for label, row in other.items():
        mine = into.setdefault(label, {"seconds": 0.0, "scenarios": 0, "calls": {}})
        mine["seconds"] += float(row.get("seconds", 0.0))
        mine["scenarios"] += int(row.get("scenarios", 0))
        _add_calls(mine["calls"], row.get("calls", {}))


def write_shard(folder: str | Path, index: int, costs: Costs) -> None:
    """A shard's costs as `.costs/shard-<index>.json` in the run's temporary folder."""
    d = Path(folder) / COSTS_DIR
    d.mkdir(exist_ok=True)
    tmp = d / f".shard-{index:06d}.json.tmp"
    tmp.write_text(json.dumps(costs, sort_keys=True))
    tmp.replace(d / f"shard-{index:06d}.json")


def collect(folder: str | Path) -> Costs:
    """Every shard's costs summed, and the `.costs/` folder removed (it is not part of a run)."""
    d = Path(folder) / COSTS_DIR
    out: Costs = {}
    for f in sorted(d.glob("shard-*.json")):
        merge(out, json.loads(f.read_text()))
    shutil.rmtree(d, ignore_errors=True)
    return out


def manifest_entry(costs: Costs, label: str) -> dict[str, Any]:
    """A strategy's `cost` in the manifest: wall seconds over its scenarios' replays, the round
    trips to its service in total and per kind (with their wall seconds)."""
    row = costs.get(label, {"seconds": 0.0, "scenarios": 0, "calls": {}})
    calls = {k: {"calls": int(v["calls"]), "seconds": round(float(v["seconds"]), 3)} for k, v in sorted(row["calls"].items())}
    return {"seconds": round(float(row["seconds"]), 3), "scenarios": int(row["scenarios"]),
            "round_trips": sum(v["calls"] for v in calls.values()), "calls": calls}

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
"""Strategy label -> `{"seconds": s, "scenarios": n, "calls": {kind: {"calls": n, "seconds": s}},
"embedding": {"encoded": n, "calls": n, "batches": n, "seconds": s}}` (`embedding` only for a
strategy that encoded something: what `stores.retrieval.encoder.encoder_stats` counted while its
work ran, the shard's prefetch included)."""

EMBEDDING_KEYS = ("encoded", "calls", "batches", "seconds")


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


def add_embedding(costs: Costs, label: str, before: dict[str, float], after: dict[str, float]) -> None:
    """Count what the encoders did for `label` between two `encoder_stats()` readings."""
    delta = {k: after.get(k, 0) - before.get(k, 0) for k in EMBEDDING_KEYS}
    if delta["calls"] or delta["encoded"]:
        row = costs.setdefault(label, {"seconds": 0.0, "scenarios": 0, "calls": {}})
        _add_embedding(row, delta)


def _add_embedding(row: dict[str, Any], delta: dict[str, float]) -> None:
    mine = row.setdefault("embedding", {k: 0 for k in EMBEDDING_KEYS})
    for k in EMBEDDING_KEYS:
        mine[k] = mine.get(k, 0) + delta.get(k, 0)


def merge(into: Costs, other: Costs) -> None:
    """Add another shard's costs."""
    for label, row in other.items():
        mine = into.setdefault(label, {"seconds": 0.0, "scenarios": 0, "calls": {}})
        mine["seconds"] += float(row.get("seconds", 0.0))
        mine["scenarios"] += int(row.get("scenarios", 0))
        _add_calls(mine["calls"], row.get("calls", {}))
        if "embedding" in row:
            _add_embedding(mine, row["embedding"])


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
    trips to its service in total and per kind (with their wall seconds), and what its sentence
    encodes cost when it made any (texts encoded, model calls and batches, seconds)."""
    row = costs.get(label, {"seconds": 0.0, "scenarios": 0, "calls": {}})
    calls = {k: {"calls": int(v["calls"]), "seconds": round(float(v["seconds"]), 3)} for k, v in sorted(row["calls"].items())}
    entry = {"seconds": round(float(row["seconds"]), 3), "scenarios": int(row["scenarios"]),
             "round_trips": sum(v["calls"] for v in calls.values()), "calls": calls}
    if "embedding" in row:
        e = row["embedding"]
        entry["embedding"] = {"encoded": int(e["encoded"]), "calls": int(e["calls"]), "batches": int(e["batches"]),
                              "seconds": round(float(e["seconds"]), 3)}
    return entry


def embedding_line(manifest: dict[str, Any]) -> str | None:
    """One line for the terminal on what a run's sentence encodes cost and with how many threads,
    or None when it encoded nothing (a warm cache, or no strategy that encodes)."""
    rows = [s.get("cost", {}).get("embedding") for s in manifest.get("strategies", [])]
    rows = [r for r in rows if r and r.get("encoded")]
    if not rows:
        return None
    encoded, calls, batches = (sum(int(r[k]) for r in rows) for k in ("encoded", "calls", "batches"))
    seconds = sum(float(r["seconds"]) for r in rows)
    execution = manifest.get("execution", {})
    plan = execution.get("threads") or {}
    busy = (f"{plan['busy_measured']} busy at start" if plan.get("busy_measured") is not None
            else f"load {plan.get('load')} at start")
    why = (f" (cores {plan['cores']}, {busy}, {plan['source']}, OMP_WAIT_POLICY={plan['wait_policy'] or 'unset'})"
           if plan else "")
    return (f"embeddings: {encoded} texts encoded in {calls} model call{'s' if calls != 1 else ''} ({batches} batches), "
            f"{seconds:.1f}s, torch threads {execution.get('torch_threads', '?')}{why}")

"""Run scenarios through strategies, score them, and write the run.

`run_shard` is the unit of work: a list of scenarios through every strategy spec, returning
Arrow tables. It is a pure function of its inputs (no wall time reaches a strategy), so
shards can run in any process or on any engine and merge deterministically.
"""

from __future__ import annotations

import hashlib
import sys
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Sequence

import pyarrow as pa

from stores.registry import StrategySpec, strategy_class
from stores.tokens import TOKENIZER_ID

from .criteria import registry as criteria_registry
from .criteria import score_probe, score_scenario
from .replay import build_seen, idempotency_signatures, replay
from .runstore import RunWriter, environment, new_run_id
from .scenario import Scenario
from .tables import TableBuffer

Progress = Callable[[int, int], None]
"""Called as `progress(probes_just_done, scenarios_just_done)`."""


class _Unbuildable:
    """Stands in for a strategy whose construction raised, so every case it owed becomes an error row."""

    capabilities = frozenset()

    def __init__(self, label: str, exc: BaseException) -> None:
        self.why = f"could not build strategy {label!r}: {type(exc).__name__}: {exc}"

    def observe(self, event):
        raise RuntimeError(self.why)

    def context(self, request):
        raise RuntimeError(self.why)

    def reset(self):
        pass


def _build(spec: StrategySpec):
    try:
        return spec.build()
    except Exception as exc:
        return _Unbuildable(spec.label, exc)


def run_scenario(scenario: Scenario, spec: StrategySpec, buf: TableBuffer) -> int:
    """Replay, check idempotency, score; add everything to `buf`. Returns the number of probes."""
    groups = {k: c.group for k, c in criteria_registry().items()}
    seen = build_seen(scenario)
    strategy = _build(spec)
    result = replay(scenario, strategy, seen=seen)
    idem = idempotency_signatures(scenario, lambda: _build(spec), result, strategy)
    for o in result.outcomes:
        buf.add_outcome(spec.label, spec.name, o)
        buf.add_scores(spec.label, spec.name, scenario, o.probe.id, score_probe(o), groups)
    buf.add_timeline(spec.label, scenario.id, result.timeline)
    extra = {"idempotency": idem, "observe_error": result.observe_error}
    buf.add_scores(spec.label, spec.name, scenario, "", score_scenario(scenario, result.outcomes, extra), groups)
    return len(result.outcomes)


def run_shard(
    scenarios: Sequence[Scenario], specs: Sequence[StrategySpec], progress: Progress | None = None
) -> dict[str, pa.Table]:
    """Every scenario through every spec; the tables of the shard."""
    buf = TableBuffer()
    for s in scenarios:
        buf.add_events(s)
        probes = 0
        for spec in specs:
            probes += run_scenario(s, spec, buf)
        if progress:
            progress(probes, 1)
    return buf.tables()


def suite_identity(scenarios: Sequence[Scenario]) -> list[dict[str, Any]]:
    """Per suite: its files with their content hashes and one hash over them (order-independent)."""
    suites: dict[str, list[Scenario]] = {}
    for s in scenarios:
        suites.setdefault(s.suite, []).append(s)
    out = []
    for name in sorted(suites):
        files = sorted(({"id": s.id, "path": s.path, "version": s.version, "sha256": s.content_hash} for s in suites[name]), key=lambda f: f["id"])
        h = hashlib.sha256("".join(f"{f['id']}:{f['sha256']}\n" for f in files).encode()).hexdigest()
        out.append({"suite": name, "hash": h, "scenarios": len(files), "files": files})
    return out


@dataclass
class RunResult:
    run_id: str
    path: Path
    probes: int
    scenarios: int
    seconds: float


def execute(
    scenarios: Sequence[Scenario],
    specs: Sequence[StrategySpec],
    out_dir: str | Path = "runs",
    *,
    seed: int = 0,
    progress: Progress | None = None,
    run_id: str | None = None,
    command: str | None = None,
    shard_size: int = 25,
) -> RunResult:
    """Run and write atomically; on any exception or interrupt nothing visible is left behind."""
    started = datetime.now(timezone.utc)
    run_id = run_id or new_run_id(started)
    writer = RunWriter(out_dir, run_id)
    t0 = time.perf_counter()
    probes = 0
    try:
        def counting(p: int, s: int) -> None:
            nonlocal probes
            probes += p
            if progress:
                progress(p, s)

        for i in range(0, len(scenarios), shard_size):
            writer.write_all(run_shard(scenarios[i : i + shard_size], specs, counting))
        manifest = {
            "run_id": run_id,
            "started": started.isoformat(),
            "finished": datetime.now(timezone.utc).isoformat(),
            "package": "supportbench",
            "command": command or " ".join(sys.argv),
            "seed": seed,
            "tokenizer": TOKENIZER_ID,
            "strategies": [
                {"label": s.label, "name": s.name, "variant": s.variant, "overrides": dict(s.overrides),
                 "params": _params(s), "params_hash": s.params_hash(), "capabilities": _capabilities(s)}
                for s in specs
            ],
            "datasets": suite_identity(scenarios),
            "criteria": [{"key": c.key, "title": c.title, "group": c.group, "level": c.level} for c in criteria_registry().values()],
            "counts": {"scenarios": len(scenarios), "probes": probes, "strategies": len(specs)},
            **environment(),
        }
        path = writer.commit(manifest)
    except BaseException:
        writer.abort()
        raise
    return RunResult(run_id, path, probes, len(scenarios), time.perf_counter() - t0)


def _capabilities(spec: StrategySpec) -> list[str]:
    """What the strategy can answer beyond context (a rescore needs it to tell `unsupported`)."""
    try:
        return sorted(getattr(strategy_class(spec.name), "capabilities", ()))
    except Exception:
        return []


def _params(spec: StrategySpec) -> dict[str, Any]:
    from dataclasses import asdict

    return asdict(spec.params())

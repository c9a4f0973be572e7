"""Read runs: DuckDB over the runs' Parquet parts, read-only.

Pages, the report and the CI check all read through here. Each table of the selected runs
is a view with an extra `run` column, so one query can span several runs. Nothing holds a
lock on the files: a run being read can be read by any number of processes.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import duckdb
import pandas as pd

from harness.run.runstore import MANIFEST, UnusableRun, is_run, read_manifest
from harness.run.tables import SCHEMAS

ENV_RUNS = "SUPPORTBENCH_RUNS"


def runs_root(root: str | Path | None = None) -> Path:
    """The folder runs live in: the argument, else `$SUPPORTBENCH_RUNS`, else `runs/`."""
    return Path(root or os.environ.get(ENV_RUNS) or "runs")


@dataclass(frozen=True)
class RunInfo:
    run_id: str
    path: Path
    manifest: dict[str, Any]

    @property
    def started(self) -> str:
        return self.manifest.get("started", "")

    @property
    def strategies(self) -> list[str]:
        return [s["label"] for s in self.manifest.get("strategies", [])]


def list_runs(root: str | Path | None = None) -> list[RunInfo]:
    """Complete runs under the root, newest first (half-written runs are invisible)."""
    base = runs_root(root)
    if not base.is_dir():
        return []
    runs = []
    for p in base.iterdir():
        if is_run(p):
            try:
                runs.append(RunInfo(p.name, p, read_manifest(p)))
            except UnusableRun:
                continue  # a damaged run is not offered; resolve_run names the problem when asked for it
    return sorted(runs, key=lambda r: (r.started, r.run_id), reverse=True)


def resolve_run(ref: str | Path, root: str | Path | None = None) -> Path:
    """A run folder from a path, a run id under the root, or `latest`."""
    p = Path(ref)
    if is_run(p):
        read_manifest(p)  # raises UnusableRun, naming the file, when the manifest is damaged
        return p
    if str(ref) == "latest":
        runs = list_runs(root)
        if not runs:
            raise FileNotFoundError(f"no runs under {runs_root(root)}")
        return runs[0].path
    q = runs_root(root) / str(ref)
    if is_run(q):
        read_manifest(q)
        return q
    if p.is_dir() and not (p / MANIFEST).exists():
        raise FileNotFoundError(f"{p} is not a complete run (no {MANIFEST}); an interrupted run leaves none")
    raise FileNotFoundError(f"no run {str(ref)!r} (looked for a folder with {MANIFEST} at {p} and {q})")


class Results:
    """One or more runs as DuckDB views: events, probes, candidates, scores, health."""

    def __init__(self, runs: str | Path | Sequence[str | Path]) -> None:
        paths = [runs] if isinstance(runs, (str, Path)) else list(runs)
        self.paths = [resolve_run(p) for p in paths]
        self.manifests = {p.name: read_manifest(p) for p in self.paths}
        self.con = duckdb.connect(":memory:")
        for table in SCHEMAS:
            parts = " UNION ALL ".join(
                f"SELECT '{p.name}' AS run, * FROM read_parquet('{_sql_path(p / table)}/*.parquet', union_by_name=true)"
                for p in self.paths
            )
            self.con.execute(f"CREATE VIEW {table} AS {parts}")

    @property
    def run_ids(self) -> list[str]:
        return [p.name for p in self.paths]

    def pick_run(self, run: str | None = None) -> str:
        """The run to read: the one named, else the only one open (several open runs need a name)."""
        if run is None:
            if len(self.run_ids) != 1:
                raise ValueError(f"these results hold {len(self.run_ids)} runs ({', '.join(self.run_ids)}); say which")
            return self.run_ids[0]
        if run not in self.run_ids:
            raise ValueError(f"run {run!r} is not among {', '.join(self.run_ids)}")
        return run

    def df(self, sql: str, params: Sequence[Any] | dict[str, Any] | None = None) -> pd.DataFrame:
        """Run a query and return a DataFrame."""
        return self.con.execute(sql, params or []).df()

    def rows(self, sql: str, params: Sequence[Any] | dict[str, Any] | None = None) -> list[tuple]:
        return self.con.execute(sql, params or []).fetchall()

    def close(self) -> None:
        self.con.close()

    def __enter__(self) -> "Results":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _sql_path(p: Path) -> str:
    return str(p).replace("'", "''")

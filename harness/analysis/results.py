"""Read runs: DuckDB over the runs' Parquet parts, read-only.

Pages, the report and the CI check all read through here. Each table of the selected runs
is a view with an extra `run` column, so one query can span several runs. Nothing holds a
lock on the files: a run being read can be read by any number of processes.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import duckdb
import pandas as pd

from harness.run.integrity import parts_problem
from harness.run.runstore import ENV_RUNS, MANIFEST, UnusableRun, is_run, read_manifest, runs_root
from harness.run.tables import ADDED_LATER, SCHEMAS

_QUERY_MISTAKES = (duckdb.BinderException, duckdb.ParserException, duckdb.CatalogException,
                   duckdb.NotImplementedException, duckdb.ConversionException)


@dataclass(frozen=True)
class RunInfo:
    """A run folder under the runs root."""

    run_id: str
    """The folder name."""
    path: Path
    """The folder."""
    manifest: dict[str, Any]
    """Its manifest (empty when it could not be read)."""
    problem: str | None = None
    """Why the run cannot be read (damaged manifest or tables), None for a usable run."""

    @property
    def started(self) -> str:
        return self.manifest.get("started", "")

    @property
    def strategies(self) -> list[str]:
        return [s["label"] for s in self.manifest.get("strategies", [])]


def list_runs(root: str | Path | None = None, *, include_damaged: bool = False) -> list[RunInfo]:
    """Complete runs under the root, newest first (half-written runs are invisible).

    A damaged run (a manifest readers cannot use, tables that are not whole) is left out, or
    with `include_damaged` listed after the usable ones with its `problem`.
    """
    base = runs_root(root)
    if not base.is_dir():
        return []
    runs, damaged = [], []
    for p in base.iterdir():
        if is_run(p):
            try:
                manifest = read_manifest(p)
            except UnusableRun as e:
                damaged.append(RunInfo(p.name, p, {}, _reason(e, p)))
                continue
            problem = parts_problem(p, manifest.get("checksums"))
            if problem:
                damaged.append(RunInfo(p.name, p, manifest, problem))
            else:
                runs.append(RunInfo(p.name, p, manifest))
    runs.sort(key=lambda r: (r.started, r.run_id), reverse=True)
    return runs + (sorted(damaged, key=lambda r: r.run_id) if include_damaged else [])


def _reason(e: UnusableRun, run: Path) -> str:
    """The problem relative to the run folder (a listing names the run already)."""
    return str(e).replace(f"{run}{os.sep}", "", 1)


def checked_run(p: Path) -> Path:
    """`p` if its manifest and tables are usable, else `UnusableRun` naming the problem."""
    manifest = read_manifest(p)  # raises UnusableRun, naming the file, when the manifest is damaged
    problem = parts_problem(p, manifest.get("checksums"))
    if problem:
        raise UnusableRun(f"run {p} is damaged: {problem}")
    return p


def resolve_run(ref: str | Path, root: str | Path | None = None) -> Path:
    """A usable run folder from a path, a run id under the root, or `latest` (the newest usable run)."""
    p = Path(ref)
    if is_run(p):
        return checked_run(p)
    if str(ref) == "latest":
        every = list_runs(root, include_damaged=True)
        usable = [r for r in every if r.problem is None]
        if not usable:
            damaged = f" ({len(every)} damaged: see `supportbench ls runs`)" if every else ""
            raise FileNotFoundError(f"no usable runs under {runs_root(root)}{damaged}")
        return usable[0].path
    q = runs_root(root) / str(ref)
    if is_run(q):
        return checked_run(q)
    if p.is_dir() and not (p / MANIFEST).exists():
        raise FileNotFoundError(f"{p} is not a complete run (no {MANIFEST}); an interrupted run leaves none")
    raise FileNotFoundError(f"no run {str(ref)!r} (looked for a folder with {MANIFEST} at {p} and {q})")


class Results:
    """One or more runs as DuckDB views: events, probes, candidates, scores, health, decisions."""

    def __init__(self, runs: str | Path | Sequence[str | Path]) -> None:
        paths = [runs] if isinstance(runs, (str, Path)) else list(runs)
        self.paths = [resolve_run(p) for p in paths]
        self.manifests = {p.name: read_manifest(p) for p in self.paths}
        self.con = duckdb.connect(":memory:")
        for table in SCHEMAS:
            # A view cannot take bound parameters (DuckDB refuses them in CREATE VIEW), so the
            # run name and the files are quoted literals; the files are listed, not globbed,
            # so a folder name is never read as a pattern.
            parts = " UNION ALL ".join(self._source(p, table) for p in self.paths)
            self.con.execute(f"CREATE VIEW {table} AS {parts}")

    def _source(self, run: Path, table: str) -> str:
        """The SELECT of one run's table; a table added after the run was written (`ADDED_LATER`)
        reads as empty, with its schema."""
        if table in ADDED_LATER and not (run / table).is_dir():
            empty = f"_empty_{table}"
            self.con.register(empty, SCHEMAS[table].empty_table())
            return f"SELECT {sql_string(run.name)} AS run, * FROM {empty}"
        return f"SELECT {sql_string(run.name)} AS run, * FROM read_parquet([{_files(run / table)}], union_by_name=true)"

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
        """Run a query and return a DataFrame; `UnusableRun` when the run's files cannot be read."""
        with self._reading():
            return self.con.execute(sql, params or []).df()

    def rows(self, sql: str, params: Sequence[Any] | dict[str, Any] | None = None) -> list[tuple]:
        """Run a query and return its rows; `UnusableRun` when the run's files cannot be read."""
        with self._reading():
            return self.con.execute(sql, params or []).fetchall()

    def records(self, sql: str, params: Sequence[Any] | dict[str, Any] | None = None) -> list[dict[str, Any]]:
        """Run a query and return its rows as dicts by column name."""
        with self._reading():
            cur = self.con.execute(sql, params or [])
            cols = [d[0] for d in cur.description]
            return [dict(zip(cols, row)) for row in cur.fetchall()]

    @contextmanager
    def _reading(self):
        """A damaged part that passed the framing check fails here, when DuckDB decodes it: say
        which run (a mistake in a query itself stays the DuckDB error it is)."""
        try:
            yield
        except _QUERY_MISTAKES:
            raise
        except duckdb.Error as e:
            first = (str(e).strip().splitlines() or [type(e).__name__])[0]
            raise UnusableRun(f"run {', '.join(self.run_ids)}: its tables cannot be read ({first})") from e

    def close(self) -> None:
        self.con.close()

    def __enter__(self) -> "Results":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def sql_string(text: str) -> str:
    """`text` as a DuckDB string literal (single quotes doubled; DuckDB has no backslash escapes)."""
    return "'" + str(text).replace("'", "''") + "'"


def _files(folder: Path) -> str:
    return ", ".join(sql_string(f) for f in sorted(str(f) for f in folder.glob("*.parquet")))

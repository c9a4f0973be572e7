"""The Failures page's list: every failing (or unsupported) case of a run, filtered, ordered,
grouped and exported in DuckDB, so a run of 30,000 failing cases moves only the rows shown.

A case is one score row: (strategy, scenario, probe, criterion). Every function takes the same
selection (`Filter`, statuses, a search text) and agrees on the same set of rows: `count` is
the number `page` pages through, `groups` sums it by one column, `export` writes all of it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

import pandas as pd

from harness.analysis.queries import FAILING, Filter
from harness.analysis.results import Results

ORDERS = {
    "worst": ("errors first, then lowest value",
              "s.status = 'error' DESC, s.status = 'fail' DESC, coalesce(s.value, 0), s.scenario, s.probe_id, s.criterion, s.strategy"),
    "value": ("lowest value first", "coalesce(s.value, 0), s.status = 'error' DESC, s.scenario, s.probe_id, s.criterion, s.strategy"),
    "scenario": ("scenario, then probe", "s.scenario, s.probe_id, s.criterion, s.strategy"),
    "strategy": ("strategy, then worst", "s.strategy, s.status = 'error' DESC, coalesce(s.value, 0), s.scenario, s.probe_id, s.criterion"),
    "criterion": ("criterion, then worst", "s.criterion, s.status = 'error' DESC, coalesce(s.value, 0), s.scenario, s.probe_id, s.strategy"),
}
"""How the list can be ordered: key -> (what a reader is told, SQL ORDER BY over every selected case)."""

GROUPS = ("criterion", "scenario", "strategy")
"""Columns the list can be summed by (`groups`)."""
_PLURAL = {"criterion": "criteria", "scenario": "scenarios", "strategy": "strategies"}

COLUMNS = ("status", "strategy", "scenario", "probe_id", "criterion", "value", "explanation", "task", "suite", "tags")
"""The columns of a listed (and exported) case."""

_FROM = "scores s LEFT JOIN probes p ON p.strategy = s.strategy AND p.scenario = s.scenario AND p.probe_id = s.probe_id"


def _where(f: Filter, statuses: Sequence[str], text: str) -> tuple[str, list[Any]]:
    where, params = f.sql()
    where += " AND list_contains(?::VARCHAR[], s.status)"
    params.append(list(statuses))
    if text:
        where += " AND (s.explanation ILIKE ? OR coalesce(p.task, '') ILIKE ? OR s.scenario ILIKE ?)"
        params += [f"%{text}%"] * 3
    return where, params


def _select(f: Filter, statuses: Sequence[str], text: str, order: str, *,
            neutral: bool = False) -> tuple[str, list[Any]]:
    if order not in ORDERS:
        raise ValueError(f"unknown order {order!r}; known: {', '.join(ORDERS)}")
    where, params = _where(f, statuses, text)
    cells = [("p.task" if c == "task" else f"s.{c}", c) for c in COLUMNS]
    cols = ", ".join(f"{neutralised(e)} AS {c}" if neutral and c in _TEXT_COLUMNS else e for e, c in cells)
    return f"SELECT {cols} FROM {_FROM} WHERE {where} ORDER BY {ORDERS[order][1]}", params


def count(res: Results, f: Filter = Filter(), statuses: Sequence[str] = FAILING, text: str = "") -> int:
    """How many cases the selection holds (what `page` pages through)."""
    where, params = _where(f, statuses, text)
    return int(res.rows(f"SELECT count(*) FROM {_FROM} WHERE {where}", params)[0][0])


def page(res: Results, f: Filter = Filter(), statuses: Sequence[str] = FAILING, text: str = "",
         limit: int = 50, offset: int = 0, order: str = "worst") -> pd.DataFrame:
    """One page of the selected cases, ordered over all of them (`ORDERS`) before paging."""
    sql, params = _select(f, statuses, text, order)
    return res.df(f"{sql} LIMIT ? OFFSET ?", params + [int(limit), int(offset)])


def group_count(res: Results, by: str, f: Filter = Filter(), statuses: Sequence[str] = FAILING, text: str = "") -> int:
    """How many groups `groups` pages through."""
    col = _group_column(by)
    where, params = _where(f, statuses, text)
    return int(res.rows(f"SELECT count(DISTINCT s.{col}) FROM {_FROM} WHERE {where}", params)[0][0])


def groups(res: Results, by: str, f: Filter = Filter(), statuses: Sequence[str] = FAILING, text: str = "",
           limit: int = 50, offset: int = 0) -> pd.DataFrame:
    """The selection summed by `by` (one of `GROUPS`): per group its `cases`, `fail`, `error` and
    `unsupported` counts, `mean_value` and the other two dimensions' spread (how many distinct
    strategies, scenarios or criteria it touches); most cases first."""
    col = _group_column(by)
    where, params = _where(f, statuses, text)
    others = ", ".join(f"count(DISTINCT s.{o}) AS {_PLURAL[o]}" for o in GROUPS if o != col)
    return res.df(f"""
        SELECT s.{col} AS "group", count(*) AS cases, count_if(s.status = 'fail')::BIGINT AS fail,
               count_if(s.status = 'error')::BIGINT AS error, count_if(s.status = 'unsupported')::BIGINT AS unsupported,
               avg(coalesce(s.value, 0)) AS mean_value, {others}
        FROM {_FROM} WHERE {where}
        GROUP BY s.{col} ORDER BY cases DESC, "group" LIMIT ? OFFSET ?
    """, params + [int(limit), int(offset)])


def _group_column(by: str) -> str:
    if by not in GROUPS:
        raise ValueError(f"cannot group by {by!r}; known: {', '.join(GROUPS)}")
    return by


FORMATS = {"csv": "(FORMAT csv, HEADER true)", "json": "(FORMAT json, ARRAY true)"}
"""Export formats: key -> DuckDB COPY options (JSON: one array of objects)."""

FORMULA_START = "=+-@\t\r"
"""First characters that make a spreadsheet read a CSV cell as a formula (or hide how it starts)."""

_TEXT_COLUMNS = frozenset({"status", "strategy", "scenario", "probe_id", "criterion", "explanation", "task", "suite"})


def neutralised(cell: str) -> str:
    """The SQL of a text cell with a leading `'` when a spreadsheet would read it as a formula
    (the usual rule: the cell then shows as the text it is). CSV only: JSON stays exact."""
    pattern = r"^[=+@\t\r-]"  # read by DuckDB's regex engine (RE2), which turns `\t` and `\r` into the characters
    return f"CASE WHEN regexp_matches({cell}, '{pattern}') THEN '''' || {cell} ELSE {cell} END"


def export(res: Results, path: str | Path, fmt: str, f: Filter = Filter(), statuses: Sequence[str] = FAILING,
           text: str = "", order: str = "worst") -> int:
    """Write every selected case, in `order`, to `path` as CSV or JSON; returns the number of rows.

    DuckDB streams the query into the file (`COPY ... TO`), so memory stays flat however many
    cases the selection holds. In CSV a text cell starting with `=`, `+`, `-`, `@`, a tab or a
    carriage return gets a leading `'` (`neutralised`); JSON keeps every text exact."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown export format {fmt!r}; known: {', '.join(FORMATS)}")
    sql, params = _select(f, statuses, text, order, neutral=fmt == "csv")
    target = str(Path(path)).replace("'", "''")
    res.con.execute(f"COPY ({sql}) TO '{target}' {FORMATS[fmt]}", params)
    return count(res, f, statuses, text)

"""Prove a change kept results identical: compare two runs table by table.

    python bench/same_tables.py RUN_A RUN_B [--new-columns events.labels,events.plan]

Every Parquet table of both runs is read whole, sorted on all its columns and compared cell by
cell; columns that measure time (`latency_ms`, and any column named in `--ignore`) are left out.
A change that adds columns names them in `--new-columns` (`table.column`): they may exist in B
only, and the tables are compared on the columns both runs have.
Exit 0 when every table is identical, 1 (naming the table, the row count and the first rows that
differ) when not. Runs are folders with a manifest, as `supportbench run` writes them.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import duckdb

TIMING = ("latency_ms",)


def table_names(run: Path) -> list[str]:
    return sorted(p.name for p in run.iterdir() if p.is_dir() and any(p.glob("*.parquet")))


def compare(a: Path, b: Path, ignore: tuple[str, ...], new: tuple[str, ...] = ()) -> list[str]:
    problems = []
    names_a, names_b = table_names(a), table_names(b)
    if names_a != names_b:
        problems.append(f"tables differ: {names_a} vs {names_b}")
    con = duckdb.connect()
    for t in sorted(set(names_a) & set(names_b)):
        cols_a = [r[0] for r in con.execute(f"DESCRIBE SELECT * FROM read_parquet('{a / t}/*.parquet', union_by_name=true)").fetchall()]
        cols_b = [r[0] for r in con.execute(f"DESCRIBE SELECT * FROM read_parquet('{b / t}/*.parquet', union_by_name=true)").fetchall()]
        added = [c for c in cols_b if c not in cols_a and f"{t}.{c}" in new]
        cols_b = [c for c in cols_b if c not in added]
        if cols_a != cols_b:
            problems.append(f"{t}: columns differ: {sorted(set(cols_a) ^ set(cols_b))}")
            continue
        if added:
            print(f"{t}: new in B, left out: {', '.join(added)}")
        cols = ", ".join(f'"{c}"' for c in cols_a if c not in ignore)
        q = lambda p: f"SELECT {cols} FROM read_parquet('{p / t}/*.parquet', union_by_name=true)"  # noqa: E731
        n_a = con.execute(f"SELECT count(*) FROM ({q(a)})").fetchone()[0]
        n_b = con.execute(f"SELECT count(*) FROM ({q(b)})").fetchone()[0]
        only_a = con.execute(f"SELECT count(*) FROM (({q(a)}) EXCEPT ALL ({q(b)}))").fetchone()[0]
        only_b = con.execute(f"SELECT count(*) FROM (({q(b)}) EXCEPT ALL ({q(a)}))").fetchone()[0]
        if n_a != n_b or only_a or only_b:
            sample = con.execute(f"SELECT * FROM (({q(a)}) EXCEPT ALL ({q(b)})) LIMIT 3").fetchall()
            problems.append(f"{t}: {n_a} vs {n_b} rows, {only_a} only in A, {only_b} only in B; e.g. {sample}")
        else:
            print(f"{t}: {n_a} rows identical")
    return problems


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run_a", type=Path)
    ap.add_argument("run_b", type=Path)
    ap.add_argument("--ignore", default="", help="more comma-separated columns to leave out")
    ap.add_argument("--new-columns", default="", help="comma-separated table.column that only B has (compared on the rest)")
    args = ap.parse_args(argv)
    ignore = TIMING + tuple(c for c in args.ignore.split(",") if c)
    new = tuple(c for c in args.new_columns.split(",") if c)
    problems = compare(args.run_a, args.run_b, ignore, new)
    for p in problems:
        print(p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

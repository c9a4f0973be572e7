"""How scores spread and how they move: per-case and per-scenario distributions of one run, and
which runs are of the same suite (for a trend of the leaderboard's totals across them).

Distributions are counted in DuckDB (a histogram is one GROUP BY, whatever the run's size); the
trend itself is the leaderboard's own shared total per run (`harness.analysis.queries.shared_totals`:
the Leaderboard's aggregate without its bootstrap intervals), so a point on it is the number the
Leaderboard showed for that run. A reader keeps each run's totals by `content_digest`, so a run is
read once however often the trend is drawn, and a run written again under the same id is read again.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Mapping

import pandas as pd

from harness.analysis.queries import Filter, scenario_scores
from harness.analysis.results import Results

BINS = 10
NO_VERDICT = "no verdict"
"""The histogram's bin for cases without a value (unsupported, error): counted as 0 in totals, shown apart."""


def case_histogram(res: Results, criterion: str, f: Filter = Filter(), bins: int = BINS) -> pd.DataFrame:
    """Per strategy, how its cases of `criterion` spread over `bins` equal value bins of [0, 1]
    (value 1 in the last), plus a `NO_VERDICT` bin: `strategy`, `bin` (label), `lo`, `cases`,
    `share` (of the strategy's cases). Every bin of every strategy has a row (0 where empty)."""
    where, params = f.sql()
    counts = res.df(f"""
        SELECT s.strategy, CASE WHEN s.status IN ('ok', 'fail') AND s.value IS NOT NULL
                               THEN least(floor(s.value * ?), ? - 1)::INT ELSE -1 END AS b, count(*) AS cases
        FROM scores s WHERE s.criterion = ? AND {where} GROUP BY ALL
    """, [bins, bins, criterion, *params])
    strategies = sorted(counts["strategy"].unique())
    grid = pd.MultiIndex.from_product([strategies, [-1, *range(bins)]], names=["strategy", "b"])
    out = counts.set_index(["strategy", "b"]).reindex(grid, fill_value=0).reset_index()
    out["lo"] = out["b"].where(out["b"] >= 0) / bins
    out["bin"] = [NO_VERDICT if b < 0 else f"{b / bins:.1f}–{(b + 1) / bins:.1f}" for b in out["b"]]
    total = out.groupby("strategy")["cases"].transform("sum")
    out["share"] = out["cases"] / total.where(total > 0)
    return out[["strategy", "bin", "lo", "cases", "share"]]


def scenario_distribution(res: Results, f: Filter = Filter()) -> pd.DataFrame:
    """Each strategy's score on every scenario (`strategy`, `scenario`, `score`: the per-scenario
    score of the Leaderboard's table by scenario), for a box per strategy."""
    return scenario_scores(res, f)


def same_suite(manifests: Mapping[str, Mapping[str, Any]], run: str) -> list[tuple[str, bool]]:
    """The runs of `run`'s suite(s), oldest first, each with whether its suite content equals
    `run`'s (the same suite names but edited scenarios are still a trend, marked as such).

    `manifests` maps run ids to their manifests (the app's listing)."""
    def suites(m: Mapping[str, Any]) -> tuple[str, ...]:
        return tuple(sorted(str(d.get("suite", "")) for d in m.get("datasets", [])))

    def content(m: Mapping[str, Any]) -> tuple[str, ...]:
        return tuple(sorted(str(d.get("hash", "")) for d in m.get("datasets", [])))

    mine = manifests[run]
    same = [(r, m) for r, m in manifests.items() if suites(m) == suites(mine)]
    same.sort(key=lambda rm: (str(rm[1].get("started", "")), rm[0]))
    return [(r, content(m) == content(mine)) for r, m in same]


def content_digest(manifest: Mapping[str, Any]) -> str:
    """A short digest of what a run holds, from its manifest alone: the checksums of its Parquet
    parts (`harness.run.integrity`), its start and finish. Two runs under one id (a rerun with the
    same `--run-id`) differ here, so a summary kept under (run id, digest) is never another run's."""
    what = {k: manifest.get(k) for k in ("checksums", "started", "finished", "counts")}
    return hashlib.sha256(json.dumps(what, sort_keys=True, default=str).encode()).hexdigest()[:16]

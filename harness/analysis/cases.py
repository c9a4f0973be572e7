"""Case-level rows and per-criterion statistics of one run, the common ground of baseline, check and JUnit
(compare computes the same numbers in SQL; a test holds the two to the same results).

A *case* is what a criterion judged once: `scenario/probe_id` for probe-level criteria,
`scenario` for scenario-level ones (idempotency), and `scenario/turn_id` for a decision policy's
customer turn (its rows carry the turn id as `probe_id` and the policy's label as `strategy`).
"""

from __future__ import annotations

from typing import Sequence

import pandas as pd

from harness.analysis.aggregate import aggregate
from harness.analysis.results import Results

CASE_COLUMNS = ["strategy", "strategy_name", "suite", "scenario", "probe_id", "case", "criterion", "grp",
                "value", "passed", "status", "explanation"]


def judged_specs(manifest: dict) -> dict[str, dict]:
    """What a run judges case by case, by label: its memory strategies and its decision policies
    (manifest entries with `name`, `params`, `params_hash`); CI guards both alike."""
    return {s["label"]: s for s in manifest.get("strategies", []) + manifest.get("policies", [])}


def case_id(scenario: str, probe_id: str | None) -> str:
    """`scenario/probe_id`, or `scenario` for a scenario-level case."""
    return f"{scenario}/{probe_id}" if probe_id else scenario


def case_rows(res: Results, run: str | None = None, strategies: Sequence[str] | None = None) -> pd.DataFrame:
    """Every score row of one run with its case id, sorted by strategy, criterion, case."""
    run = res.pick_run(run)
    df = res.df(
        "SELECT strategy, strategy_name, suite, scenario, coalesce(probe_id, '') AS probe_id, criterion, grp, "
        "value, coalesce(passed, false) AS passed, status, coalesce(explanation, '') AS explanation, meta "
        "FROM scores WHERE run = ?",
        [run],
    )
    if strategies is not None:
        df = df[df["strategy"].isin(list(strategies))]
    df = df.assign(case=[case_id(s, p) for s, p in zip(df["scenario"], df["probe_id"])])
    return df.sort_values(["strategy", "criterion", "case"], kind="stable").reset_index(drop=True)


def criterion_stats(res: Results, run: str | None = None, strategies: Sequence[str] | None = None) -> pd.DataFrame:
    """Per strategy x criterion with at least one case: mean, n, pass_rate, unsupported, errors.

    The numbers of `harness.analysis.aggregate.aggregate` (controls included: CI guards them too), with
    the run's own seed like `supportbench report`, so the check, the comparison, the report and
    the app agree; `mean` is each criterion's metric headline (F1 for a precision/recall metric).
    """
    run = res.pick_run(run)
    seed = int(res.manifests[run].get("seed", 0) or 0)
    df = aggregate(res, include_controls=True, run=run, seed=seed)
    df = df[df["n"] > 0]
    if strategies is not None:
        df = df[df["strategy"].isin(list(strategies))]
    cols = ["strategy", "criterion", "grp", "mean", "n", "pass_rate", "unsupported", "errors"]
    return df[cols].sort_values(["strategy", "criterion"], kind="stable").reset_index(drop=True)

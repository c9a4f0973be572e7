"""Case-level rows and per-criterion statistics of one run, the common ground of baseline, check and compare.

A *case* is what a criterion judged once: `scenario/probe_id` for probe-level criteria and
`scenario` for scenario-level ones (idempotency).
"""

from __future__ import annotations

from typing import Sequence

import pandas as pd

from harness.results import Results

CASE_COLUMNS = ["strategy", "strategy_name", "suite", "scenario", "probe_id", "case", "criterion", "grp",
                "value", "passed", "status", "explanation"]


def case_id(scenario: str, probe_id: str | None) -> str:
    """`scenario/probe_id`, or `scenario` for a scenario-level case."""
    return f"{scenario}/{probe_id}" if probe_id else scenario


def pick_run(res: Results, run: str | None) -> str:
    """The run to read: the one given, else the only run of `res`."""
    if run is not None:
        if run not in res.run_ids:
            raise ValueError(f"run {run!r} is not among {res.run_ids}")
        return run
    if len(res.run_ids) != 1:
        raise ValueError(f"{len(res.run_ids)} runs open; say which one")
    return res.run_ids[0]


def case_rows(res: Results, run: str | None = None, strategies: Sequence[str] | None = None) -> pd.DataFrame:
    """Every score row of one run with its case id, sorted by strategy, criterion, case."""
    run = pick_run(res, run)
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
    """Per strategy x criterion: mean, n, pass_rate, unsupported, errors (controls included).

    Private stand-in for `harness.aggregate.aggregate` until it lands: the same meaning
    (unsupported and error cases count in `n` and score 0; `repeat_issue`'s mean is F1).
    """
    cases = case_rows(res, run, strategies)
    rows = []
    for (strategy, criterion), g in cases.groupby(["strategy", "criterion"], sort=True):
        values = g["value"].fillna(0.0).where(g["status"].isin(["ok", "fail"]), 0.0)
        mean = float(values.mean()) if len(g) else 0.0
        if criterion == "repeat_issue":
            mean = _f1(g)
        rows.append({
            "strategy": strategy, "criterion": criterion, "grp": g["grp"].iloc[0], "mean": mean, "n": int(len(g)),
            "pass_rate": float(g["passed"].astype(bool).mean()) if len(g) else 0.0,
            "unsupported": int((g["status"] == "unsupported").sum()), "errors": int((g["status"] == "error").sum()),
        })
    return pd.DataFrame(rows, columns=["strategy", "criterion", "grp", "mean", "n", "pass_rate", "unsupported", "errors"])


def _f1(g: pd.DataFrame) -> float:
    import json

    tp = fp = fn = 0
    for status, meta in zip(g["status"], g["meta"]):
        outcome = (json.loads(meta or "{}") or {}).get("outcome")
        if status in ("error", "unsupported"):
            fn += 1
        elif outcome == "tp":
            tp += 1
        elif outcome == "fp":
            fp += 1
        elif outcome == "fn":
            fn += 1
    return 2 * tp / (2 * tp + fp + fn) if tp else 0.0

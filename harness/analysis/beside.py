"""Two runs side by side on the figures the front ends move: the in-sample run (the canonical suite,
say) beside a run of another suite (the challenge suite, never trained on), row by row.

`side_by_side(res, this, other)` reads the `scores` of both runs (`res` holds them) for
`FRONT_END_CRITERIA` (decisions and routes, irreversible errors, memory classes, expiry,
extraction, the reply criteria): per strategy or policy row and criterion, the mean over its cases
(unsupported and errors count 0, as everywhere) and the number of cases, in each run. Only rows
both runs have are shown; a criterion with no case in one run shows no figure there.
"""

from __future__ import annotations

import pandas as pd

from harness.analysis.results import Results

__all__ = ["FRONT_END_CRITERIA", "side_by_side"]

FRONT_END_CRITERIA = ("decision_accuracy", "route_accuracy", "irreversible_errors", "expiry_classes", "expiry",
                      "memory_extraction", "reply_known_fix", "reply_skips_failures", "returning_customer")
"""The criteria the issue asks to see in sample and out of sample, in the order shown."""

COLUMNS = ["row", "criterion", "this_mean", "this_n", "other_mean", "other_n"]


def side_by_side(res: Results, this: str, other: str) -> pd.DataFrame:
    """Per row both runs have and criterion of `FRONT_END_CRITERIA` either scored: the mean and the
    case count in `this` run and in the `other` (see the module docstring)."""
    this, other = res.pick_run(this), res.pick_run(other)
    keys = ", ".join("?" for _ in FRONT_END_CRITERIA)
    df = res.df(
        f"""SELECT run, strategy AS row, criterion, avg(coalesce(value, 0)) AS mean, count(*) AS n
            FROM scores WHERE run IN (?, ?) AND criterion IN ({keys}) GROUP BY ALL""",
        [this, other, *FRONT_END_CRITERIA],
    )
    if df.empty:
        return pd.DataFrame(columns=COLUMNS)
    rows = set(df.loc[df["run"] == this, "row"]) & set(df.loc[df["run"] == other, "row"])
    df = df[df["row"].isin(rows)]
    a = df[df["run"] == this].drop(columns="run").rename(columns={"mean": "this_mean", "n": "this_n"})
    b = df[df["run"] == other].drop(columns="run").rename(columns={"mean": "other_mean", "n": "other_n"})
    out = a.merge(b, on=["row", "criterion"], how="outer")
    if out.empty:
        return pd.DataFrame(columns=COLUMNS)
    order = {c: i for i, c in enumerate(FRONT_END_CRITERIA)}
    out["_c"] = out["criterion"].map(order)
    out = out.sort_values(["row", "_c"]).drop(columns="_c").reset_index(drop=True)
    for c in ("this_n", "other_n"):
        out[c] = out[c].astype("Int64")
    return out[COLUMNS]

"""Compare two runs, or two strategies within one run: per-criterion deltas and flipped cases.

`compare_runs` and `compare_strategies` return the same `CompareResult`, whose DataFrames
are what the CLI prints and what the app's Compare page shows, so both give the same numbers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import pandas as pd

from harness.results import Results

from ._cases import case_rows, criterion_stats

CRITERIA_COLUMNS = ["strategy", "criterion", "grp", "mean_a", "mean_b", "delta", "pass_rate_a", "pass_rate_b",
                    "pass_rate_delta", "n_a", "n_b"]
FLIP_COLUMNS = ["direction", "strategy", "criterion", "case", "scenario", "probe_id", "status_a", "status_b",
                "value_a", "value_b", "delta", "explanation_a", "explanation_b"]
ONE_SIDED_COLUMNS = ["strategy", "criterion", "case", "side"]


@dataclass
class CompareResult:
    """B measured against A. Positive deltas mean B is better."""

    a: str
    """What side A is: a run id, or `run:strategy` when comparing strategies."""
    b: str
    criteria: pd.DataFrame
    """One row per strategy x criterion present on either side (CRITERIA_COLUMNS); a side that lacks it has NaN."""
    flips: pd.DataFrame
    """Cases whose pass/fail verdict differs (FLIP_COLUMNS): regressions (pass -> not pass) first, worst
    value drop first, then improvements, biggest gain first."""
    one_sided: pd.DataFrame
    """Cases judged on one side only (ONE_SIDED_COLUMNS, side = `a` or `b`)."""

    @property
    def regressions(self) -> pd.DataFrame:
        return self.flips[self.flips["direction"] == "regression"]

    @property
    def improvements(self) -> pd.DataFrame:
        return self.flips[self.flips["direction"] == "improvement"]


def _stats(res: Results, run: str, strategies, rename: dict[str, str] | None) -> pd.DataFrame:
    s = criterion_stats(res, run, strategies)
    if rename:
        s = s.assign(strategy=s["strategy"].map(rename))
    return s


def _cases(res: Results, run: str, strategies, rename: dict[str, str] | None) -> pd.DataFrame:
    c = case_rows(res, run, strategies)
    if rename:
        c = c.assign(strategy=c["strategy"].map(rename))
    return c[["strategy", "criterion", "case", "scenario", "probe_id", "status", "value", "passed", "explanation", "grp"]]


def _build(a: str, b: str, sa: pd.DataFrame, sb: pd.DataFrame, ca: pd.DataFrame, cb: pd.DataFrame) -> CompareResult:
    key = ["strategy", "criterion"]
    crit = sa.merge(sb, on=key, how="outer", suffixes=("_a", "_b"))
    crit["grp"] = crit["grp_a"].fillna(crit["grp_b"])
    crit["delta"] = crit["mean_b"] - crit["mean_a"]
    crit["pass_rate_delta"] = crit["pass_rate_b"] - crit["pass_rate_a"]
    crit = crit[CRITERIA_COLUMNS].sort_values(key, kind="stable").reset_index(drop=True)

    ckey = ["strategy", "criterion", "case"]
    both = ca.merge(cb, on=ckey, how="outer", suffixes=("_a", "_b"), indicator=True)
    one = both[both["_merge"] != "both"]
    one_sided = pd.DataFrame({"strategy": one["strategy"], "criterion": one["criterion"], "case": one["case"],
                              "side": one["_merge"].map({"left_only": "a", "right_only": "b"}).astype(str)},
                             columns=ONE_SIDED_COLUMNS).sort_values(ckey, kind="stable").reset_index(drop=True)
    both = both[both["_merge"] == "both"]
    pa_, pb_ = both["passed_a"].astype(bool), both["passed_b"].astype(bool)
    fl = both[pa_ != pb_].copy()
    fl["direction"] = ["regression" if x else "improvement" for x in fl["passed_a"].astype(bool)]
    fl["scenario"], fl["probe_id"] = fl["scenario_a"], fl["probe_id_a"]
    fl["delta"] = fl["value_b"].fillna(0.0) - fl["value_a"].fillna(0.0)
    # regressions worst first, improvements best first; ties in a stable, readable order
    fl["_order"] = [0 if d == "regression" else 1 for d in fl["direction"]]
    fl["_size"] = [x if d == "regression" else -x for d, x in zip(fl["direction"], fl["delta"])]
    fl = fl.sort_values(["_order", "_size", "strategy", "criterion", "case"], kind="stable")
    return CompareResult(a, b, crit, fl[FLIP_COLUMNS].reset_index(drop=True), one_sided)


def compare_runs(
    res_a: Results,
    res_b: Results,
    *,
    run_a: str | None = None,
    run_b: str | None = None,
    strategies: Sequence[str] | None = None,
) -> CompareResult:
    """Run B against run A, strategy by strategy (matched by label), optionally only `strategies`."""
    ra, rb = res_a.pick_run(run_a), res_b.pick_run(run_b)
    if strategies is not None:
        known = {s["label"] for r, m in ((ra, res_a.manifests[ra]), (rb, res_b.manifests[rb])) for s in m.get("strategies", [])}
        unknown = [s for s in strategies if s not in known]
        if unknown:
            raise ValueError(f"strategy {', '.join(unknown)} is in neither run (they have: {', '.join(sorted(known))})")
    return _build(ra, rb, _stats(res_a, ra, strategies, None), _stats(res_b, rb, strategies, None),
                  _cases(res_a, ra, strategies, None), _cases(res_b, rb, strategies, None))


def compare_strategies(res: Results, a: str, b: str, *, run: str | None = None) -> CompareResult:
    """Strategy `b` against strategy `a` in one run; the strategy column reads `a -> b`."""
    run = res.pick_run(run)
    labels = {s["label"] for s in res.manifests[run].get("strategies", [])}
    unknown = [x for x in (a, b) if x not in labels]
    if unknown:
        raise ValueError(f"strategy {', '.join(unknown)} not in run {run} (it has: {', '.join(sorted(labels))})")
    pair = f"{a} -> {b}"
    return _build(f"{run}:{a}", f"{run}:{b}",
                  _stats(res, run, [a], {a: pair}), _stats(res, run, [b], {b: pair}),
                  _cases(res, run, [a], {a: pair}), _cases(res, run, [b], {b: pair}))

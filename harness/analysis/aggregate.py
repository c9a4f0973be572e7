"""Per-strategy, per-criterion results of a run, with their uncertainty.

Counting happens in DuckDB over the run's `scores` table (one `GROUP BY`); only the
bootstrap is done here, in numpy. The rules (docs/criteria.md, "Aggregation and intervals"):

- every case that has a row counts in `n`; `unsupported` and `error` rows score 0 (value and
  pass) and are also counted in their own columns so a reader sees why;
- `mean` is the mean per-case value; for `repeat_issue` it is the F1 over all positive and
  negative cases, with `precision` and `recall` beside it (an `error` row counts its positive
  as missed and each of its negatives as wrongly flagged);
- `pass_lo`/`pass_hi`: 95% Wilson interval of `pass_rate`;
- `lo`/`hi`: 95% percentile-bootstrap interval of `mean`, resampling whole scenarios (cases of
  one scenario are not independent). One resample matrix per criterion, drawn from `seed` and
  the criterion's key, is shared by every strategy, so intervals are paired and do not depend on
  which other strategies are in the table.
"""

from __future__ import annotations

import zlib

import numpy as np
import pandas as pd

from stores.registry import CONTROLS

from harness.analysis.results import Results

Z95 = 1.959963984540054
RESAMPLES = 1000
COLUMNS = ["strategy", "criterion", "grp", "mean", "n", "pass_rate", "lo", "hi", "pass_lo", "pass_hi",
           "unsupported", "errors", "precision", "recall"]
REPEAT = "repeat_issue"


def wilson(passes, n, z: float = Z95) -> tuple[np.ndarray, np.ndarray]:
    """Wilson score interval for `passes` successes out of `n` (NaN where n is 0)."""
    k = np.asarray(passes, dtype=float)
    n = np.asarray(n, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = k / n
        denom = 1 + z * z / n
        centre = (p + z * z / (2 * n)) / denom
        half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return np.clip(centre - half, 0, 1), np.clip(centre + half, 0, 1)


def prf(tp, fp, fn) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Precision, recall and F1 (vectorized). With nothing flagged, precision is 1 if nothing was
    missed either, else 0; with nothing to find, recall is 1 if nothing was wrongly flagged."""
    tp, fp, fn = (np.asarray(x, dtype=float) for x in (tp, fp, fn))
    with np.errstate(invalid="ignore", divide="ignore"):
        p = np.where(tp + fp > 0, tp / (tp + fp), (fn == 0).astype(float))
        r = np.where(tp + fn > 0, tp / (tp + fn), (fp == 0).astype(float))
        f = np.where(p + r > 0, 2 * p * r / (p + r), 0.0)
    return p, r, f


def resample_weights(n_scenarios: int, key: str, seed: int, resamples: int = RESAMPLES) -> np.ndarray:
    """(resamples, n_scenarios) counts: how often each scenario is drawn in each resample."""
    rng = np.random.default_rng([seed, zlib.crc32(key.encode())])
    idx = rng.integers(0, n_scenarios, size=(resamples, n_scenarios))
    flat = (np.arange(resamples)[:, None] * n_scenarios + idx).ravel()
    return np.bincount(flat, minlength=resamples * n_scenarios).reshape(resamples, n_scenarios).astype(float)


def _interval(boot: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """2.5 and 97.5 percentiles per column, ignoring resamples without a case."""
    out_lo = np.full(boot.shape[1], np.nan)
    out_hi = np.full(boot.shape[1], np.nan)
    for j in range(boot.shape[1]):
        col = boot[:, j][~np.isnan(boot[:, j])]
        if len(col):
            out_lo[j], out_hi[j] = np.percentile(col, [2.5, 97.5])
    return out_lo, out_hi


def _order(res: Results, run: str, df: pd.DataFrame) -> tuple[list[str], list[str]]:
    """Strategies in the manifest's order, criteria in the registry's (doc) order."""
    from harness.criteria import registry

    manifest = [s["label"] for s in res.manifests.get(run, {}).get("strategies", [])]
    present = list(dict.fromkeys(df["strategy"]))
    strategies = [s for s in manifest if s in present] + sorted(s for s in present if s not in manifest)
    known = list(registry())
    crits = list(dict.fromkeys(df["criterion"]))
    return strategies, [c for c in known if c in crits] + sorted(c for c in crits if c not in known)


CASE_COUNTS = "count(*) AS n, sum(coalesce(value, 0)) AS total, count_if(passed AND status = 'ok') AS passes"
"""SQL aggregates over a group of score rows: its cases `n`, their summed value `total` (no verdict
counts 0) and its `passes` (shared with `harness.ci.compare`)."""

_COUNTS = f"""
SELECT strategy, any_value(strategy_name) AS strategy_name, criterion, any_value(grp) AS grp, scenario,
       {CASE_COUNTS},
       count_if(status = 'unsupported') AS unsupported, count_if(status = 'error') AS errors
FROM scores WHERE run = $run
GROUP BY strategy, criterion, scenario
"""

# repeat detection counts: from each scored case's meta, and for cases without a verdict from the
# probe's gold (its positive missed, each negative wrongly flagged: a no-answer is never right)
_REPEAT = """
SELECT {by},
       sum(CASE WHEN s.status IN ('ok', 'fail') THEN coalesce(json_extract(s.meta, '$.tp')::INT, 0) ELSE 0 END)::DOUBLE AS tp,
       sum(CASE WHEN s.status IN ('ok', 'fail') THEN coalesce(json_extract(s.meta, '$.fp')::INT, 0)
                ELSE coalesce(json_array_length(json_extract(e.expect, '$.not_repeat_of')), 0) END)::DOUBLE AS fp,
       sum(CASE WHEN s.status IN ('ok', 'fail') THEN coalesce(json_extract(s.meta, '$.fn')::INT, 0)
                ELSE CASE WHEN json_extract_string(e.expect, '$.repeat_of') IS NOT NULL THEN 1 ELSE 0 END END)::DOUBLE AS fn
FROM {scores} s
LEFT JOIN events e ON e.run = s.run AND e.scenario = s.scenario AND e.kind = 'probe' AND e.item_id = s.probe_id
WHERE s.criterion = 'repeat_issue'
GROUP BY {by}
"""


def repeat_counts_sql(scores: str, by: str) -> str:
    """SQL for repeat detection's tp, fp and fn over the `repeat_issue` rows of `scores` (a table or
    a CTE of score rows, aliased `s`), grouped by `by` (e.g. `s.strategy`)."""
    return _REPEAT.format(scores=scores, by=by)


def aggregate(res: Results, *, include_controls: bool = False, run: str | None = None, seed: int = 0) -> pd.DataFrame:
    """One row per (strategy, criterion) of a run.

    Columns: `strategy`, `criterion`, `grp` (core | extra), `mean` (mean case value; F1 for
    `repeat_issue`), `n` (cases, unsupported and errors included), `pass_rate`, `lo`/`hi`
    (bootstrap 95% interval of `mean`, over scenarios), `pass_lo`/`pass_hi` (Wilson 95% interval
    of `pass_rate`), `unsupported`, `errors`, and `precision`/`recall` (repeat_issue only, else
    NaN). A strategy with no case of a criterion another strategy has (provenance of an always
    empty context) gets a row with `n` 0 and NaN values. Controls (`oracle`, `empty`) are left
    out unless `include_controls`. `run` picks one run when `res` holds several.
    """
    run = res.pick_run(run)
    per = res.df(_COUNTS, {"run": run})
    if per.empty:
        return pd.DataFrame(columns=COLUMNS)
    strategies, crits = _order(res, run, per)
    controls = set(per.loc[per["strategy_name"].isin(CONTROLS), "strategy"])
    shown = [s for s in strategies if include_controls or s not in controls]
    grp = per.groupby("criterion")["grp"].first().to_dict()
    rep = res.df(repeat_counts_sql("(SELECT * FROM scores WHERE run = $run)", "s.strategy, s.scenario"), {"run": run}) if REPEAT in crits else None

    rows = []
    for c in crits:
        sub = per[per["criterion"] == c]
        scenarios = sorted(sub["scenario"].unique())  # over every strategy, controls too: stable resamples
        W = resample_weights(len(scenarios), c, seed)
        totals = sub.pivot_table(index="scenario", columns="strategy", values="total", aggfunc="sum").reindex(index=scenarios, columns=shown).fillna(0.0)
        counts = sub.pivot_table(index="scenario", columns="strategy", values="n", aggfunc="sum").reindex(index=scenarios, columns=shown).fillna(0.0)
        summed = sub.groupby("strategy")[["n", "total", "passes", "unsupported", "errors"]].sum().reindex(shown).fillna(0)
        n = summed["n"].to_numpy(float)
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = summed["total"].to_numpy(float) / n
            pass_rate = summed["passes"].to_numpy(float) / n
            drawn = W @ counts.to_numpy()  # cases in each resample
            boot = (W @ totals.to_numpy()) / drawn
        precision = recall = np.full(len(shown), np.nan)
        if c == REPEAT and rep is not None:
            mats = [rep.pivot_table(index="scenario", columns="strategy", values=k, aggfunc="sum")
                    .reindex(index=scenarios, columns=shown).fillna(0.0).to_numpy() for k in ("tp", "fp", "fn")]
            precision, recall, mean = prf(*(m.sum(axis=0) for m in mats))
            _, _, boot = prf(*(W @ m for m in mats))
            boot = np.where(drawn > 0, boot, np.nan)
            mean = np.where(n > 0, mean, np.nan)
            precision, recall = np.where(n > 0, precision, np.nan), np.where(n > 0, recall, np.nan)
        lo, hi = _interval(boot)
        plo, phi = wilson(summed["passes"].to_numpy(float), n)
        for j, s in enumerate(shown):
            rows.append({
                "strategy": s, "criterion": c, "grp": grp.get(c, "core"), "mean": mean[j], "n": int(n[j]),
                "pass_rate": pass_rate[j], "lo": lo[j], "hi": hi[j], "pass_lo": plo[j], "pass_hi": phi[j],
                "unsupported": int(summed["unsupported"].iloc[j]), "errors": int(summed["errors"].iloc[j]),
                "precision": precision[j], "recall": recall[j],
            })
    return pd.DataFrame(rows, columns=COLUMNS)


def totals(df: pd.DataFrame) -> pd.DataFrame:
    """Each strategy's total: the equal-weight mean of its criterion means.

    Columns: `strategy`, `total` (over the core criteria), `core_criteria` (how many),
    `extra` (over the extra criteria, reported separately), `extra_criteria`. A criterion the
    strategy has no case of (n = 0) is left out of its mean rather than counted as 0.
    """
    rows = []
    for s in dict.fromkeys(df["strategy"]):
        d = df[(df["strategy"] == s) & (df["n"] > 0)]
        core, extra = d[d["grp"] == "core"], d[d["grp"] == "extra"]
        rows.append({
            "strategy": s,
            "total": core["mean"].mean() if len(core) else np.nan, "core_criteria": len(core),
            "extra": extra["mean"].mean() if len(extra) else np.nan, "extra_criteria": len(extra),
        })
    return pd.DataFrame(rows, columns=["strategy", "total", "core_criteria", "extra", "extra_criteria"])

"""Per-strategy, per-criterion results of a run, with their uncertainty.

Counting happens in DuckDB over the run's `scores` table (one `GROUP BY`); only the
bootstrap is done here, in numpy. The rules (docs/criteria.md, "Aggregation and intervals"):

- every case that has a row counts in `n`; `unsupported` and `error` rows score 0 (value and
  pass) and are also counted in their own columns so a reader sees why;
- `mean` is the criterion's metric over its cases (`harness.criteria.metrics`, declared where the
  criterion registers): the mean case value by default; a metric that counts (F1 over `tp`, `fp`,
  `fn`) sums its counts from each row's `meta` and adds its own columns (`precision`, `recall`);
  a row without a verdict carries the counts its metric gave it when it was scored;
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
from harness.criteria import groups, registry
from harness.criteria.metrics import Mean, Metric

Z95 = 1.959963984540054
RESAMPLES = 1000
BASE_COLUMNS = ["strategy", "criterion", "grp", "mean", "n", "pass_rate", "lo", "hi", "pass_lo", "pass_hi",
                "unsupported", "errors"]


def metric_of(criterion: str) -> Metric:
    """The metric `criterion` registered with (the plain mean for a key the registry does not know)."""
    c = registry().get(criterion)
    return c.metric if c is not None else Mean()


def metric_columns() -> list[str]:
    """The columns registered metrics add beside the headline, in registry order, once each."""
    return list(dict.fromkeys(col.key for c in registry().values() for col in c.metric.columns))


def count_keys() -> list[str]:
    """The per-case counts registered metrics sum (`Metric.counts`), in registry order, once each."""
    return list(dict.fromkeys(k for c in registry().values() for k in c.metric.counts))


def columns() -> list[str]:
    """The columns of `aggregate`'s frame."""
    return BASE_COLUMNS + metric_columns()


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
    """Strategies (then policies) in the manifest's order, criteria in the registry's (doc) order."""
    m = res.manifests.get(run, {})
    manifest = [s["label"] for s in m.get("strategies", []) + m.get("policies", [])]
    present = list(dict.fromkeys(df["strategy"]))
    strategies = [s for s in manifest if s in present] + sorted(s for s in present if s not in manifest)
    known = list(registry())
    crits = list(dict.fromkeys(df["criterion"]))
    return strategies, [c for c in known if c in crits] + sorted(c for c in crits if c not in known)


CASE_COUNTS = "count(*) AS n, sum(coalesce(value, 0)) AS total, count_if(passed AND status = 'ok') AS passes"
"""SQL aggregates over a group of score rows: its cases `n`, their summed value `total` (no verdict
counts 0) and its `passes` (shared with `harness.ci.compare`)."""


def count_sums(alias: str = "") -> str:
    """SQL aggregates summing each registered metric count from the rows' `meta` (a missing key
    counts 0), one `DOUBLE` column per count; empty when no metric counts anything."""
    col = f"{alias}.meta" if alias else "meta"
    return "".join(f", sum(coalesce(json_extract({col}, '$.{k}')::INT, 0))::DOUBLE AS {k}" for k in count_keys())


def _counts_sql(axis: groups.Axis | None = None) -> str:
    policy = ", ".join(f"'{k}'" for k in groups.keys("policy"))
    where = {None: "", "policy": f" AND grp IN ({policy})", "strategy": f" AND coalesce(grp, '') NOT IN ({policy})"}[axis]
    return f"""
SELECT strategy, any_value(strategy_name) AS strategy_name, criterion, any_value(grp) AS grp, scenario,
       {CASE_COUNTS},
       count_if(status = 'unsupported') AS unsupported, count_if(status = 'error') AS errors{count_sums()}
FROM scores WHERE run = $run{where}
GROUP BY strategy, criterion, scenario
"""


def metric_means(df: pd.DataFrame, value: str = "total", cases: str = "n") -> np.ndarray:
    """Each row's metric headline (`mean`) from its summed `value`, `cases` and metric counts, by
    the metric of the row's `criterion` (rows of one strategy x criterion each)."""
    out = np.full(len(df), np.nan)
    for crit, idx in df.groupby("criterion", sort=False).indices.items():
        sub = df.iloc[idx]
        m = metric_of(crit)
        sums = {"value": sub[value].to_numpy(float), "cases": sub[cases].to_numpy(float)}
        sums.update({k: sub[k].to_numpy(float) for k in m.counts})
        out[idx] = m.summarize(sums)["mean"]
    return out


def aggregate(res: Results, *, include_controls: bool = False, run: str | None = None, seed: int = 0,
              axis: groups.Axis | None = None) -> pd.DataFrame:
    """One row per (strategy, criterion) of a run.

    Columns (`columns()`): `strategy`, `criterion`, `grp` (its group), `mean` (the headline of
    the criterion's metric: the mean case value, or e.g. F1), `n` (cases, unsupported and errors
    included), `pass_rate`, `lo`/`hi` (bootstrap 95% interval of `mean`, over scenarios),
    `pass_lo`/`pass_hi` (Wilson 95% interval of `pass_rate`), `unsupported`, `errors`, then the
    columns registered metrics add (`precision`, `recall`), NaN for criteria whose metric has
    none. A strategy with no case of a criterion another strategy has (provenance of an always
    empty context) gets a row with `n` 0 and NaN values. Controls (`oracle`, `empty`) are left
    out unless `include_controls`. `run` picks one run when `res` holds several. `axis` keeps
    the rows of memory strategies (`strategy`) or of decision policies (`policy`: criteria whose
    group is a policy group, `harness.criteria.groups`); None keeps both (what CI compares).
    """
    cols = columns()
    run = res.pick_run(run)
    per = res.df(_counts_sql(axis), {"run": run})
    if per.empty:
        return pd.DataFrame(columns=cols)
    strategies, crits = _order(res, run, per)
    controls = set(per.loc[per["strategy_name"].isin(CONTROLS), "strategy"])
    shown = [s for s in strategies if include_controls or s not in controls]
    grp = per.groupby("criterion")["grp"].first().to_dict()
    extra_cols = metric_columns()

    rows = []
    for c in crits:
        metric = metric_of(c)
        sub = per[per["criterion"] == c]
        scenarios = sorted(sub["scenario"].unique())  # over every strategy, controls too: stable resamples
        W = resample_weights(len(scenarios), c, seed)

        def matrix(col: str) -> np.ndarray:
            """scenario x strategy sums of `col`."""
            return (sub.pivot_table(index="scenario", columns="strategy", values=col, aggfunc="sum")
                    .reindex(index=scenarios, columns=shown).fillna(0.0).to_numpy())

        summed = sub.groupby("strategy")[["n", "total", "passes", "unsupported", "errors", *metric.counts]].sum().reindex(shown).fillna(0)
        n = summed["n"].to_numpy(float)
        drawn = W @ matrix("n")  # cases in each resample
        overall = {"value": summed["total"].to_numpy(float), "cases": n}
        resampled = {"value": W @ matrix("total"), "cases": drawn}
        for k in metric.counts:
            overall[k] = summed[k].to_numpy(float)
            resampled[k] = W @ matrix(k)
        with np.errstate(invalid="ignore", divide="ignore"):
            pass_rate = summed["passes"].to_numpy(float) / n
            got = {k: np.where(n > 0, v, np.nan) for k, v in metric.summarize(overall).items()}
            boot = np.where(drawn > 0, metric.summarize(resampled)["mean"], np.nan)
        lo, hi = _interval(boot)
        plo, phi = wilson(summed["passes"].to_numpy(float), n)
        nan = np.full(len(shown), np.nan)
        for j, s in enumerate(shown):
            rows.append({
                "strategy": s, "criterion": c, "grp": grp.get(c, groups.DEFAULT), "mean": got["mean"][j], "n": int(n[j]),
                "pass_rate": pass_rate[j], "lo": lo[j], "hi": hi[j], "pass_lo": plo[j], "pass_hi": phi[j],
                "unsupported": int(summed["unsupported"].iloc[j]), "errors": int(summed["errors"].iloc[j]),
                **{k: got.get(k, nan)[j] for k in extra_cols},
            })
    return pd.DataFrame(rows, columns=cols)


def totals(df: pd.DataFrame, axis: groups.Axis = "strategy") -> pd.DataFrame:
    """Each strategy's totals: per group that feeds one (`harness.criteria.groups`), the
    equal-weight mean of its criterion means.

    Columns: `strategy`, then per such group, in order, its total column (`total` for the core
    criteria, `extra` for the extras) and `<group>_criteria` (how many criteria it averaged). A
    criterion the strategy has no case of (n = 0) is left out of its mean rather than counted as
    0; groups without a total (the gates) are in no mean. `axis`: whose totals (`policy` for the
    decision policies' `decisions` total).
    """
    feeding = groups.totals(axis)
    cols = ["strategy"] + [x for g in feeding for x in (g.total, f"{g.key}_criteria")]
    rows = []
    for s in dict.fromkeys(df["strategy"]):
        d = df[(df["strategy"] == s) & (df["n"] > 0)]
        row = {"strategy": s}
        for g in feeding:
            part = d[d["grp"] == g.key]
            row[g.total] = part["mean"].mean() if len(part) else np.nan
            row[f"{g.key}_criteria"] = len(part)
        rows.append(row)
    return pd.DataFrame(rows, columns=cols)

"""Per-strategy, per-criterion results of a run, with their uncertainty.

Counting happens in DuckDB over the run's `scores` table (one `GROUP BY`); only the
bootstrap is done here, in numpy. The rules (docs/criteria.md, "Aggregation and intervals"):

- every case that has a row counts in `n`; `unsupported` and `error` rows score 0 (value and
  pass) and are also counted in their own columns so a reader sees why;
- `mean` is the criterion's metric over its cases (`harness.criteria.metrics`, declared where the
  criterion registers): the mean case value by default; a metric that counts (F1 over `tp`, `fp`,
  `fn`) sums its counts from each row's `meta` and adds its own columns (`precision`, `recall`);
  a row without a verdict carries the counts its metric gave it when it was scored;
- `pass_lo`/`pass_hi`: 95% Wilson interval of `pass_rate`, which treats cases as independent;
  `pass_boot_lo`/`pass_boot_hi`: 95% cluster bootstrap of `pass_rate` over scenarios (the same
  resamples as `lo`/`hi`); `pass_interval` says which of the two a reader is shown: `bootstrap`
  where some scenario holds more than one of the strategy's cases of the criterion (they share
  a history, so Wilson is too narrow), `wilson` where every case has a scenario of its own;
- `lo`/`hi`: 95% percentile-bootstrap interval of `mean`, resampling whole scenarios (cases of
  one scenario are not independent). One resample matrix per criterion, drawn from `seed` and
  the criterion's key, is shared by every strategy, so intervals are paired and do not depend on
  which other strategies are in the table.
"""

from __future__ import annotations

import tomllib
import warnings
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd

from stores.registry import CONTROLS, SHORTCUTS

from harness.analysis.results import Results
from harness.criteria import groups, registry
from harness.criteria.metrics import Mean, Metric

Z95 = 1.959963984540054
RESAMPLES = 1000
BASE_COLUMNS = ["strategy", "criterion", "grp", "mean", "n", "pass_rate", "lo", "hi", "pass_lo", "pass_hi",
                "pass_boot_lo", "pass_boot_hi", "pass_interval", "unsupported", "errors"]
BOOTSTRAP, WILSON = "bootstrap", "wilson"
"""Values of `pass_interval`: which interval of the pass rate a reader should be shown."""


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
counts 0) and its `passes` (shared with `harness.analysis.compare`)."""


def count_sums(alias: str = "") -> str:
    """SQL aggregates summing each registered metric count from the rows' `meta` (a missing key
    counts 0), one `DOUBLE` column per count; empty when no metric counts anything."""
    col = f"{alias}.meta" if alias else "meta"
    return "".join(f", sum(coalesce(json_extract({col}, '$.{k}')::INT, 0))::DOUBLE AS {k}" for k in count_keys())


def _counts_sql(axis: groups.Axis | None = None) -> str:
    policy = ", ".join(f"'{k}'" for k in groups.keys("policy"))
    on_axis = {None: "", "policy": f" AND s.grp IN ({policy})", "strategy": f" AND coalesce(s.grp, '') NOT IN ({policy})"}[axis]
    return f"""
SELECT strategy, any_value(strategy_name) AS strategy_name, criterion, any_value(grp) AS grp, scenario,
       {CASE_COUNTS},
       count_if(status = 'unsupported') AS unsupported, count_if(status = 'error') AS errors{count_sums()}
FROM scores s WHERE s.run = ? AND ({{where}}){on_axis}
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
              where: str = "TRUE", params: Sequence[Any] = (), axis: groups.Axis | None = None,
              intervals: bool = True) -> pd.DataFrame:
    """One row per (strategy, criterion) of a run.

    Columns (`columns()`): `strategy`, `criterion`, `grp` (its group), `mean` (the headline of
    the criterion's metric: the mean case value, or e.g. F1), `n` (cases, unsupported and errors
    included), `pass_rate`, `lo`/`hi` (bootstrap 95% interval of `mean`, over scenarios),
    `pass_lo`/`pass_hi` (Wilson 95% interval of `pass_rate`), `pass_boot_lo`/`pass_boot_hi` (its
    cluster bootstrap over scenarios), `pass_interval` (`bootstrap` or `wilson`: the one to show,
    see `pass_interval_of`), `unsupported`, `errors`, then the
    columns registered metrics add (`precision`, `recall`), NaN for criteria whose metric has
    none. A strategy with no case of a criterion another strategy has (provenance of an always
    empty context) gets a row with `n` 0 and NaN values. Controls (`oracle`, `empty`) are left
    out unless `include_controls`. `run` picks one run when `res` holds several. `where` (with its
    positional `params`) narrows the score rows, aliased `s`, before anything is counted (the app's
    filters, `harness.analysis.queries.Filter.sql`); nothing of `res` is changed to do it. `axis`
    keeps the rows of memory strategies (`strategy`) or of decision policies (`policy`: criteria
    whose group is a policy group, `harness.criteria.groups`); None keeps both (what CI compares).
    `intervals=False` leaves every interval NaN (the bootstrap is most of the cost) and computes
    the same point figures: for a reader of totals only (a trend across runs).
    """
    cols = columns()
    run = res.pick_run(run)
    params = [run, *params]
    per = res.df(_counts_sql(axis).format(where=where), params)
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
        W = resample_weights(len(scenarios), c, seed) if intervals else None

        def matrix(col: str) -> np.ndarray:
            """scenario x strategy sums of `col`."""
            return (sub.pivot_table(index="scenario", columns="strategy", values=col, aggfunc="sum")
                    .reindex(index=scenarios, columns=shown).fillna(0.0).to_numpy())

        summed = sub.groupby("strategy")[["n", "total", "passes", "unsupported", "errors", *metric.counts]].sum().reindex(shown).fillna(0)
        n = summed["n"].to_numpy(float)
        overall = {"value": summed["total"].to_numpy(float), "cases": n}
        for k in metric.counts:
            overall[k] = summed[k].to_numpy(float)
        nan = np.full(len(shown), np.nan)
        with np.errstate(invalid="ignore", divide="ignore"):
            pass_rate = summed["passes"].to_numpy(float) / n
            got = {k: np.where(n > 0, v, np.nan) for k, v in metric.summarize(overall).items()}
        if intervals:
            drawn = W @ matrix("n")  # cases in each resample
            resampled = {"value": W @ matrix("total"), "cases": drawn, **{k: W @ matrix(k) for k in metric.counts}}
            with np.errstate(invalid="ignore", divide="ignore"):
                boot = np.where(drawn > 0, metric.summarize(resampled)["mean"], np.nan)
                boot_pass = np.where(drawn > 0, (W @ matrix("passes")) / drawn, np.nan)
            # cases of one scenario share its history: where a scenario holds several of them, Wilson
            # (which assumes independent cases) is too narrow and the cluster bootstrap is the one to show
            clustered = (matrix("n") > 1).any(axis=0) if len(scenarios) else np.zeros(len(shown), dtype=bool)
            lo, hi = _interval(boot)
            plo, phi = wilson(summed["passes"].to_numpy(float), n)
            blo, bhi = _interval(boot_pass)
        else:
            clustered = np.zeros(len(shown), dtype=bool)
            lo = hi = plo = phi = blo = bhi = nan
        for j, s in enumerate(shown):
            rows.append({
                "strategy": s, "criterion": c, "grp": grp.get(c, groups.DEFAULT), "mean": got["mean"][j], "n": int(n[j]),
                "pass_rate": pass_rate[j], "lo": lo[j], "hi": hi[j], "pass_lo": plo[j], "pass_hi": phi[j],
                "pass_boot_lo": blo[j], "pass_boot_hi": bhi[j], "pass_interval": BOOTSTRAP if clustered[j] else WILSON,
                "unsupported": int(summed["unsupported"].iloc[j]), "errors": int(summed["errors"].iloc[j]),
                **{k: got.get(k, nan)[j] for k in extra_cols},
            })
    return pd.DataFrame(rows, columns=cols)


def pass_interval_of(row: Any) -> tuple[float, float, str]:
    """(lo, hi, name) of the pass-rate interval to show for an `aggregate` row: the cluster
    bootstrap over scenarios where cases share a scenario, else Wilson (module doc)."""
    get = row.get if isinstance(row, dict) else lambda k: getattr(row, k)
    if get("pass_interval") == BOOTSTRAP:
        return get("pass_boot_lo"), get("pass_boot_hi"), "bootstrap over scenarios"
    return get("pass_lo"), get("pass_hi"), "Wilson"


def supports(df: pd.DataFrame) -> pd.Series:
    """Per `aggregate` row: whether the strategy supports the criterion, i.e. has at least one
    case of it that is not `unsupported` (a criterion it has no case of at all is not supported)."""
    return (df["n"] - df["unsupported"]) > 0


def quality_criteria(df: pd.DataFrame, axis: groups.Axis = "strategy") -> list[str]:
    """The quality criteria of an `aggregate` frame, in its order: those of every group of `axis`
    that is not a gate (`harness.criteria.groups`)."""
    quality = {g.key for g in groups.quality(axis)}
    return [c for c, g in dict.fromkeys(zip(df["criterion"], df["grp"])) if groups.of(g).key in quality]


def gate_criteria(df: pd.DataFrame) -> list[str]:
    """The pass/fail gates of an `aggregate` frame, in its order."""
    return [c for c, g in dict.fromkeys(zip(df["criterion"], df["grp"])) if groups.is_gate(g)]


MIN_CASES = int(tomllib.loads((Path(__file__).parents[1] / "criteria" / "config.toml").read_text(encoding="utf-8"))
                ["shared"]["min_cases"])
"""A quality criterion with fewer cases than this in a run is left out of the shared total (`thin_criteria`)."""


def thin_criteria(df: pd.DataFrame, comparison: Sequence[str] | None = None,
                  axis: groups.Axis = "strategy") -> list[tuple[str, int]]:
    """(criterion, cases) of the headline-group quality criteria with fewer than `MIN_CASES` cases
    for some strategy of `comparison` in this run: flagged, and left out of the shared total
    (unless every shared criterion is that thin: then none is left out, all are flagged)."""
    members = set(comparison) if comparison else set(df["strategy"])
    d = df[df["strategy"].isin(members)]
    n = d.groupby("criterion")["n"].min()
    return [(c, int(n[c])) for c in _supported_headline(df, comparison, axis) if 0 < n[c] < MIN_CASES]


def _supported_headline(df: pd.DataFrame, comparison: Sequence[str] | None, axis: groups.Axis) -> list[str]:
    """The quality criteria of headline groups that every strategy of `comparison` supports."""
    members = set(comparison) if comparison else set(df["strategy"])
    d = df[df["strategy"].isin(members)]
    ok = d.assign(ok=supports(d)).groupby("criterion")["ok"].agg(lambda x: bool(x.all()) and len(x) == len(members))
    # a headline group (not the reply engine's) whose criteria count once (not the rank metrics, which re-read recall's gold)
    headline = {c for c, g in zip(df["criterion"], df["grp"]) if groups.in_headline(g) and groups.of(g).shared}
    return [c for c in quality_criteria(df, axis) if ok.get(c, False) and c in headline]


def shared_criteria(df: pd.DataFrame, comparison: Sequence[str] | None = None,
                    axis: groups.Axis = "strategy") -> list[str]:
    """The quality criteria every strategy of `comparison` (default: every strategy of `df`)
    supports, of the groups that may enter the headline (`Group.headline`; the reply engine's
    criteria are reported apart), with at least `MIN_CASES` cases (`thin_criteria`): the criteria
    the shared headline total compares them on."""
    shared = _supported_headline(df, comparison, axis)
    thin = {c for c, _ in thin_criteria(df, comparison, axis)}
    # a run where every criterion is thin (a handful of probes) keeps them all: they are flagged, none outweighs another
    return [c for c in shared if c not in thin] or shared


def totals(df: pd.DataFrame, comparison: Sequence[str] | None = None, axis: groups.Axis = "strategy") -> pd.DataFrame:
    """Each strategy's totals, the headline first.

    Columns: `strategy`; `shared`, the headline: the equal-weight mean of the strategy's
    criterion means over `shared_criteria(df, comparison)`, the quality criteria every strategy
    of the comparison supports (so a capability only some strategies have cannot decide the
    order); `shared_criteria` (how many those are); `supported` and `shown`, its coverage: the
    quality criteria it supports, of the quality criteria shown that may decide the shared total
    (`Group.shared`: the rank metrics re-read recall's gold and are not counted); then per group that feeds a
    total (`harness.criteria.groups`), in order, its total column (`total` for the core
    criteria, `extra` for the extras: unsupported cases count 0 there) and `<group>_criteria`
    (how many criteria it averaged). Gates are in no total. A criterion the strategy has no case
    of (n = 0) is left out of its means rather than counted as 0. `comparison` is the strategies
    being compared (the report and the app pass every strategy shown but the controls, which are
    scored on the same criteria without deciding them). `axis`: whose totals (`policy` for the
    decision policies: their shared total over the decision criteria and the `decisions` total).
    """
    feeding = groups.totals(axis)
    shared = shared_criteria(df, comparison, axis)
    grp = dict(zip(df["criterion"], df["grp"]))
    quality = [c for c in quality_criteria(df, axis) if groups.of(grp[c]).shared]
    cols = ["strategy", "shared", "shared_criteria", "supported", "shown"] + [x for g in feeding for x in (g.total, f"{g.key}_criteria")]
    rows = []
    for s in dict.fromkeys(df["strategy"]):
        mine = df[df["strategy"] == s]
        d = mine[mine["n"] > 0]
        on_shared = d[d["criterion"].isin(shared)]
        row = {"strategy": s, "shared": on_shared["mean"].mean() if len(on_shared) else np.nan,
               "shared_criteria": len(shared), "shown": len(quality),
               "supported": int(supports(mine[mine["criterion"].isin(quality)]).sum())}
        for g in feeding:
            part = d[d["grp"] == g.key]
            row[g.total] = part["mean"].mean() if len(part) else np.nan
            row[f"{g.key}_criteria"] = len(part)
        rows.append(row)
    return pd.DataFrame(rows, columns=cols)


def control_labels(res: Results, run: str | None = None) -> set[str]:
    """Labels of the run's control strategies (`stores.registry.CONTROLS`), from its score rows."""
    run = res.pick_run(run)
    rows = res.rows("SELECT DISTINCT strategy FROM scores WHERE run = ? AND list_contains(?::VARCHAR[], strategy_name)",
                    [run, sorted(CONTROLS)])
    return {r[0] for r in rows}


def shortcut_labels(res: Results, run: str | None = None) -> list[str]:
    """Labels of the run's shortcut controls (`stores.registry.SHORTCUTS`), in the order they are registered."""
    run = res.pick_run(run)
    rows = res.rows("SELECT DISTINCT strategy, strategy_name FROM scores WHERE run = ? AND list_contains(?::VARCHAR[], strategy_name)",
                    [run, list(SHORTCUTS)])
    return [label for label, name in sorted(rows, key=lambda r: (SHORTCUTS.index(r[1]), r[0]))]


def comparison_of(strategies: Sequence[str], controls: set[str]) -> list[str]:
    """The strategies a comparison's shared criteria are decided by: every one shown but the
    controls (all of them when only controls are shown)."""
    members = [s for s in strategies if s not in controls]
    return members or list(strategies)


GATE_CASES = 5
"""How many failing cases of each (strategy, gate) reports list."""


def gates(res: Results, *, run: str | None = None, strategies: Sequence[str] | None = None, limit: int = GATE_CASES,
          where: str = "TRUE", params: Sequence[Any] = (), axis: groups.Axis | None = "strategy") -> pd.DataFrame:
    """The pass/fail gates of a run (criteria of a gate group, `harness.criteria.groups`), with
    their failing cases.

    One row per (strategy, gate), strategies as given (default: all) and gates in the registry's
    order: `strategy`, `criterion`, `n`, `failing` (cases that failed or raised), `passed` (n > 0
    and nothing failing; None when the strategy has no case of the gate) and `cases`, the first
    `limit` failing cases (dicts of `scenario`, `probe_id`, `status`, `explanation`), errors
    first. `where`/`params` narrow the score rows, aliased `s`, as in `aggregate`. `axis`: the
    gates of memory strategies (`strategy`), of decision policies (`policy`), or both (None).
    """
    cols = ["strategy", "criterion", "n", "failing", "passed", "cases"]
    keys = [g.key for g in groups.GROUPS.values() if g.gate and (axis is None or g.axis == axis)]
    run = res.pick_run(run)
    scope = f"s.run = ? AND ({where}) AND list_contains(?::VARCHAR[], s.grp)"
    args = [run, *params, keys]
    counts = res.df(f"""SELECT strategy, criterion, count(*) AS n, count_if(status IN ('fail', 'error')) AS failing
                        FROM scores s WHERE {scope} GROUP BY strategy, criterion""", args)
    if counts.empty:
        return pd.DataFrame(columns=cols)
    bad = res.df(f"""
        SELECT strategy, criterion, scenario, coalesce(probe_id, '') AS probe_id, status, explanation FROM (
            SELECT *, row_number() OVER (PARTITION BY strategy, criterion
                                         ORDER BY status = 'error' DESC, scenario, probe_id) AS k
            FROM scores s WHERE {scope} AND s.status IN ('fail', 'error')) WHERE k <= ?
    """, [*args, int(limit)])
    cases = {key: g[["scenario", "probe_id", "status", "explanation"]].to_dict("records")
             for key, g in bad.groupby(["strategy", "criterion"], sort=False)}
    known = list(registry())
    crits = sorted(set(counts["criterion"]), key=lambda c: (known.index(c) if c in known else len(known), c))
    shown = list(strategies) if strategies is not None else sorted(set(counts["strategy"]))
    by = counts.set_index(["strategy", "criterion"])
    rows = []
    for s in shown:
        for c in crits:
            n = int(by.at[(s, c), "n"]) if (s, c) in by.index else 0
            failing = int(by.at[(s, c), "failing"]) if (s, c) in by.index else 0
            rows.append({"strategy": s, "criterion": c, "n": n, "failing": failing,
                         "passed": None if not n else failing == 0, "cases": cases.get((s, c), [])})
    return pd.DataFrame(rows, columns=cols)


@dataclass(frozen=True)
class SharedSpread:
    """How sure the shared total's order is: one cluster bootstrap over scenarios for all the
    shared criteria at once (each resample draws whole scenarios; every criterion is recomputed
    on that same draw, so the criteria move together as they would on another suite like this)."""

    lo: dict[str, float]
    """Per strategy, the 2.5th percentile of its resampled shared total."""
    hi: dict[str, float]
    """Per strategy, the 97.5th percentile."""
    gaps: list[tuple[str, str, float, float]]
    """For each neighbour pair in the given order: (better, next, lo, hi), the 95 % paired interval
    of the first's shared total minus the second's; `lo > 0` means the order of the two is
    separated, an interval holding 0 that this suite does not tell them apart."""


def _resampled_total(per: pd.DataFrame, names: list[str], criteria: Sequence[str], key: str, seed: int,
                     resamples: int) -> np.ndarray | None:
    """(resamples + 1) x strategies: the equal-weight mean over `criteria` of each strategy's
    criterion metric, in each cluster-bootstrap resample of scenarios (drawn from `seed` and `key`),
    and last, on the whole run (every scenario once); None when no criterion has a case."""
    per = per[per["criterion"].isin(list(criteria)) & per["strategy"].isin(names)]
    if per.empty or not names:
        return None
    scenarios = sorted(per["scenario"].unique())
    W = np.vstack([resample_weights(len(scenarios), key, seed, resamples), np.ones((1, len(scenarios)))])
    means = []
    for c in criteria:
        sub = per[per["criterion"] == c]
        if sub.empty:
            continue
        metric = metric_of(c)

        def matrix(col: str) -> np.ndarray:
            return (sub.pivot_table(index="scenario", columns="strategy", values=col, aggfunc="sum")
                    .reindex(index=scenarios, columns=names).fillna(0.0).to_numpy())

        drawn = W @ matrix("n")
        sums = {"value": W @ matrix("total"), "cases": drawn, **{k: W @ matrix(k) for k in metric.counts}}
        with np.errstate(invalid="ignore", divide="ignore"):
            means.append(np.where(drawn > 0, metric.summarize(sums)["mean"], np.nan))
    if not means:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", category=RuntimeWarning)  # a resample with no case at all: NaN
        return np.nanmean(np.stack(means), axis=0)


def _counts(res: Results, run: str | None, where: str, params: Sequence[Any], axis: groups.Axis | None) -> pd.DataFrame:
    return res.df(_counts_sql(axis).format(where=where), [res.pick_run(run), *params])


def shared_spread(res: Results, strategies: Sequence[str], criteria: Sequence[str], *, run: str | None = None,
                  seed: int = 0, where: str = "TRUE", params: Sequence[Any] = (), axis: groups.Axis | None = None,
                  resamples: int = RESAMPLES) -> SharedSpread:
    """The shared total's 95 % interval per strategy and the paired intervals of the gaps between
    neighbours in `strategies`' order (best first), over the `criteria` the total averages.

    A resample's criterion mean is the criterion's metric over the drawn scenarios' cases (a
    criterion with no case in that draw is left out of that resample's total, as `totals` leaves
    out a criterion without cases). `where`/`params` narrow the score rows as in `aggregate`."""
    names = list(strategies)
    unknown = SharedSpread({s: np.nan for s in names}, {s: np.nan for s in names}, [])  # nothing to resample
    per = _counts(res, run, where, params, axis)
    total = _resampled_total(per, names, criteria, "shared total", seed, resamples)
    if total is None:
        return unknown
    total = total[:-1]  # the resamples only
    lo, hi = _interval(total)
    gaps = []
    for j in range(len(names) - 1):
        diff = total[:, j] - total[:, j + 1]
        d_lo, d_hi = _interval(diff[:, None])
        gaps.append((names[j], names[j + 1], float(d_lo[0]), float(d_hi[0])))
    return SharedSpread(dict(zip(names, lo.tolist())), dict(zip(names, hi.tolist())), gaps)


def order_sentence(gaps: Sequence[tuple[str, str, float, float]]) -> str:
    """`SharedSpread.gaps` as one sentence a reader can act on (the report and the Leaderboard
    say it the same way); empty when there is no pair to compare."""
    if not gaps:
        return ""
    parts = [f"{a} over {b}: gap interval [{lo:.3f}, {hi:.3f}], {'separated' if lo > 0 else 'not separated'}"
             for a, b, lo, hi in gaps]
    return ("How sure the order is (one cluster bootstrap over scenarios for every shared criterion at once; an "
            "interval that holds 0 means this suite does not tell the two apart): " + "; ".join(parts) + ".")


SHARED = "shared total"
"""The `criterion` of the headline's `Separation` (the shared total)."""


@dataclass(frozen=True)
class Separation:
    """Whether the best design on one criterion (or on the shared total) is separated from every
    shortcut control: the paired interval of its mean minus each shortcut's lies above 0."""

    criterion: str
    """A criterion key, or `SHARED` for the shared total."""
    best: str
    """The design (a strategy that is no control) with the highest mean on it."""
    best_mean: float
    against: tuple[tuple[str, float, float, float], ...]
    """(shortcut, its mean, lo, hi) for every shortcut that has a case of it: lo/hi bound the 95 %
    paired cluster-bootstrap interval of best minus that shortcut."""

    @property
    def separated(self) -> bool:
        """True when every shortcut's paired interval lies above 0 (vacuously, with no shortcut)."""
        return all(lo > 0 for _, _, lo, _ in self.against)

    @property
    def unseparated(self) -> list[str]:
        """The shortcuts the best design is not separated from."""
        return [s for s, _, lo, _ in self.against if not lo > 0]

    @property
    def beaten_by(self) -> list[str]:
        """The shortcuts that beat every design: their paired interval against the best design
        lies below 0 (ahead, and separated the other way)."""
        return [s for s, _, _, hi in self.against if hi < 0]

    @property
    def ahead(self) -> list[str]:
        """The shortcuts whose mean is above the best design's, though not by a separated
        margin (their interval holds 0): a tie on this suite, named so no lead is hidden."""
        return [s for s, m, _, hi in self.against if m > self.best_mean + 1e-12 and not hi < 0]


def shortcut_separation(res: Results, designs: Sequence[str], shortcuts: Sequence[str], shared: Sequence[str],
                        criteria: Sequence[str], *, run: str | None = None, seed: int = 0, where: str = "TRUE",
                        params: Sequence[Any] = (), axis: groups.Axis | None = "strategy",
                        resamples: int = RESAMPLES) -> list[Separation]:
    """The separation verdicts of a run: first the shared total (over `shared`, the best design by
    it against every shortcut), then each of `criteria` (the best design on that criterion against
    every shortcut that supports it). Resamples are drawn per criterion as `aggregate` draws them
    (the shared total's as `shared_spread` does), so every interval is paired. Empty when the run
    has no design or no shortcut."""
    designs, shortcuts = list(designs), list(shortcuts)
    if not designs or not shortcuts:
        return []
    per = _counts(res, run, where, params, axis)
    supported = per.assign(sup=per["n"] > per["unsupported"]).groupby(["strategy", "criterion"])["sup"].any()
    out = []
    for crit in [SHARED, *criteria]:
        if crit == SHARED:
            total = _resampled_total(per, designs + shortcuts, shared, "shared total", seed, resamples)
            mine, theirs = designs, shortcuts
        else:
            mine = [s for s in designs if supported.get((s, crit), False)]
            theirs = [s for s in shortcuts if supported.get((s, crit), False)]
            total = _resampled_total(per, mine + theirs, [crit], crit, seed, resamples) if mine else None
        if total is None:
            continue
        point = total[-1]
        j = int(np.nanargmax(np.where(np.isnan(point[: len(mine)]), -np.inf, point[: len(mine)])))
        against = []
        for k, s in enumerate(theirs):
            diff = total[:-1, j] - total[:-1, len(mine) + k]
            lo, hi = _interval(diff[:, None])
            against.append((s, float(point[len(mine) + k]), float(lo[0]), float(hi[0])))
        out.append(Separation(crit, mine[j], float(point[j]), tuple(against)))
    return out


def separation_sentence(seps: Sequence[Separation]) -> str:
    """The headline's verdict on the shortcut controls, one sentence; empty without any."""
    head = next((s for s in seps if s.criterion == SHARED), None)
    if head is None:
        return ""
    worst = max(head.against, key=lambda a: a[1])
    if head.separated:
        text = (f"The best design ({head.best}, shared total {head.best_mean:.3f}) is separated from every shortcut "
                f"control: the closest, {worst[0]} ({worst[1]:.3f}), trails by a paired interval of [{worst[2]:.3f}, {worst[3]:.3f}].")
    else:
        text = (f"NOT SEPARATED: the best design ({head.best}, shared total {head.best_mean:.3f}) is not told apart from "
                + ", ".join(f"{s} ({m:.3f}, paired interval [{lo:.3f}, {hi:.3f}])" for s, m, lo, hi in head.against if not lo > 0)
                + ": on this suite a trivial rule does as well, so the order of the designs proves little.")
    loose = [s for s in seps if s.criterion != SHARED and s.against and not s.separated]
    if loose:
        text += " Criteria where the best design is not separated from every shortcut: " + "; ".join(
            f"{s.criterion} ({s.best} {s.best_mean:.2f} vs " + ", ".join(
                f"{n} {m:.2f}" for n, m, lo, _ in s.against if not lo > 0) + ")" for s in loose) + "."
    beaten = [s for s in seps if s.beaten_by]
    if beaten:
        text += " A shortcut beats every design (separated) on " + "; ".join(
            f"{s.criterion} ({', '.join(s.beaten_by)})" for s in beaten) + "."
    ahead = [s for s in seps if s.ahead]
    if ahead:
        text += " A shortcut is ahead of every design, within the interval, on " + "; ".join(
            f"{s.criterion} ({', '.join(f'{n} {m:.3f}' for n, m, _, _ in s.against if n in s.ahead)} vs {s.best_mean:.3f})"
            for s in ahead) + "."
    return text

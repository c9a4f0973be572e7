"""Compare two runs, or two strategies within one run: per-criterion deltas and flipped cases.

`compare_runs`, `compare_pairs` and `compare_strategies` return the same `CompareResult`, whose
DataFrames are what the CLI prints and what the app's Compare page shows, so both give the same
numbers. `compare_pairs` pairs any strategy of run A with any of run B (a variant with its base:
`default_pairs`); `case_overlap` says how many cases two runs share, so a comparison of two
different suites is flagged instead of read as a result.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd

from harness.analysis.aggregate import CASE_COUNTS, count_keys, count_sums, metric_means
from harness.analysis.results import Results
from harness.analysis.cases import judged_specs

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


# The heavy lifting is DuckDB SQL over the `scores` view of `harness.analysis.results.Results`: per side one
# GROUP BY for the criterion numbers, and one join of the two sides' case rows for the flipped and
# one-sided cases, so only the rows shown (criteria, flips) reach pandas. The numbers are those of
# `harness.analysis.cases` (`criterion_stats`, `case_rows`): mean, n and pass rate of
# `harness.analysis.aggregate.aggregate` (each criterion's metric over the same sums, e.g. F1 over the
# cases' counts), verdicts with a missing `passed` as false.


def _stats_sql(label: str) -> str:
    counts = "".join(f", c.{k}" for k in count_keys())
    return f"""
WITH s AS (SELECT * FROM scores WHERE run = $run AND ($strategies IS NULL OR list_contains($strategies::VARCHAR[], strategy))),
counts AS (SELECT strategy, criterion, any_value(grp) AS grp, {CASE_COUNTS}{count_sums()} FROM s GROUP BY strategy, criterion)
SELECT {label} AS strategy, c.criterion, c.grp, c.total, c.n, c.passes / c.n AS pass_rate{counts}
FROM counts c
"""


# one side's case rows (`case_rows`): `case` is `scenario/probe_id`, or `scenario` for a scenario-level case
_SIDE = """
SELECT {label} AS strategy, criterion, scenario, coalesce(probe_id, '') AS probe_id,
       CASE WHEN coalesce(probe_id, '') = '' THEN scenario ELSE scenario || '/' || probe_id END AS "case",
       status, value, coalesce(passed, false) AS passed, coalesce(explanation, '') AS explanation
FROM scores WHERE run = ${side}_run AND (${side}_strategies IS NULL OR list_contains(${side}_strategies::VARCHAR[], strategy))
"""

_KEY = 'a.strategy = b.strategy AND a.criterion = b.criterion AND a."case" = b."case"'

# verdicts that differ: regressions (pass -> not pass) worst value drop first, then improvements,
# biggest gain first; ties by strategy, criterion, case
_FLIPS = f"""
WITH a AS ({{a}}), b AS ({{b}}),
f AS (
    SELECT CASE WHEN a.passed THEN 'regression' ELSE 'improvement' END AS direction,
           a.strategy, a.criterion, a."case", a.scenario, a.probe_id, a.status AS status_a, b.status AS status_b,
           a.value AS value_a, b.value AS value_b, coalesce(b.value, 0.0) - coalesce(a.value, 0.0) AS delta,
           a.explanation AS explanation_a, b.explanation AS explanation_b
    FROM a JOIN b ON {_KEY}
    WHERE a.passed <> b.passed
)
SELECT * FROM f
ORDER BY direction = 'improvement', CASE WHEN direction = 'regression' THEN delta ELSE -delta END,
         strategy, criterion, "case"
"""

_ONE_SIDED = f"""
WITH a AS ({{a}}), b AS ({{b}})
SELECT strategy, criterion, "case", side FROM (
    SELECT a.strategy, a.criterion, a."case", 'a' AS side FROM a ANTI JOIN b ON {_KEY}
    UNION ALL
    SELECT b.strategy, b.criterion, b."case", 'b' AS side FROM b ANTI JOIN a ON {_KEY}
)
ORDER BY strategy, criterion, "case"
"""


def _stats(res: Results, run: str, strategies: Sequence[str] | None, label: str | None) -> pd.DataFrame:
    """`criterion_stats`' mean, n and pass_rate per strategy x criterion (n > 0), by SQL; every row
    labelled `label` when given (one strategy compared with another)."""
    sql = _stats_sql("$label::VARCHAR" if label else "c.strategy")
    params = {"run": run, "strategies": list(strategies) if strategies is not None else None}
    if label:
        params["label"] = label
    df = res.df(sql, params)
    return df.assign(mean=metric_means(df))[["strategy", "criterion", "grp", "mean", "n", "pass_rate"]]


def _side(side: str, label: str | None) -> str:
    return _SIDE.format(label=f"${side}_label::VARCHAR" if label else "strategy", side=side)


def _build(a: str, b: str, sa: pd.DataFrame, sb: pd.DataFrame, flips: pd.DataFrame, one_sided: pd.DataFrame) -> CompareResult:
    key = ["strategy", "criterion"]
    crit = sa.merge(sb, on=key, how="outer", suffixes=("_a", "_b"))  # a few dozen rows
    crit["grp"] = crit["grp_a"].fillna(crit["grp_b"])
    crit["delta"] = crit["mean_b"] - crit["mean_a"]
    crit["pass_rate_delta"] = crit["pass_rate_b"] - crit["pass_rate_a"]
    crit = crit[CRITERIA_COLUMNS].sort_values(key, kind="stable").reset_index(drop=True)
    return CompareResult(a, b, crit, flips[FLIP_COLUMNS].reset_index(drop=True),
                         one_sided[ONE_SIDED_COLUMNS].reset_index(drop=True))


def _case_frames(res_a: Results, res_b: Results, run_a: str, run_b: str, strategies_a: Sequence[str] | None,
                 strategies_b: Sequence[str] | None, label: str | None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Flipped and one-sided cases, joined in DuckDB. With one `Results` over both runs (the app),
    the join reads both sides from its views; with two (the CLI), B's case rows are handed to A's
    connection as an Arrow table for the join."""
    pa = {"a_run": run_a, "a_strategies": list(strategies_a) if strategies_a is not None else None}
    pb = {"b_run": run_b, "b_strategies": list(strategies_b) if strategies_b is not None else None}
    if label:
        pa["a_label"], pb["b_label"] = label, label
    side_a, side_b = _side("a", label), _side("b", label)
    if res_a.con is res_b.con:
        params, registered = {**pa, **pb}, None
    else:
        registered = f"_compare_b_{id(res_b):x}"
        res_a.con.register(registered, res_b.con.sql(side_b, params=pb).to_arrow_table())
        params, side_b = pa, f"SELECT * FROM {registered}"
    try:
        flips = res_a.df(_FLIPS.format(a=side_a, b=side_b), params)
        one = res_a.df(_ONE_SIDED.format(a=side_a, b=side_b), params)
    finally:
        if registered:
            res_a.con.unregister(registered)
    return flips, one


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
        known = {label for m in (res_a.manifests[ra], res_b.manifests[rb]) for label in judged_specs(m)}
        unknown = [s for s in strategies if s not in known]
        if unknown:
            raise ValueError(f"strategy {', '.join(unknown)} is in neither run (they have: {', '.join(sorted(known))})")
    sa, sb = _stats(res_a, ra, strategies, None), _stats(res_b, rb, strategies, None)
    flips, one = _case_frames(res_a, res_b, ra, rb, strategies, strategies, None)
    return _build(ra, rb, sa, sb, flips, one)


def compare_strategies(res: Results, a: str, b: str, *, run: str | None = None) -> CompareResult:
    """Strategy `b` against strategy `a` in one run; the strategy column reads `a -> b`."""
    run = res.pick_run(run)
    labels = set(judged_specs(res.manifests[run]))
    unknown = [x for x in (a, b) if x not in labels]
    if unknown:
        raise ValueError(f"strategy {', '.join(unknown)} not in run {run} (it has: {', '.join(sorted(labels))})")
    pair = f"{a} -> {b}"
    flips, one = _case_frames(res, res, run, run, [a], [b], pair)
    return _build(f"{run}:{a}", f"{run}:{b}", _stats(res, run, [a], pair), _stats(res, run, [b], pair), flips, one)


def pair_label(a: str, b: str) -> str:
    """The strategy column of a pair: the label when both sides carry it, else `a -> b`."""
    return a if a == b else f"{a} -> {b}"


def compare_pairs(res_a: Results, res_b: Results, pairs: Sequence[tuple[str, str]], *, run_a: str | None = None,
                  run_b: str | None = None) -> CompareResult:
    """Run B against run A over chosen pairs `(strategy of A, strategy of B)`, each pair labelled by
    `pair_label` (a strategy may be in several pairs). Same numbers as `compare_runs` for pairs of
    equal labels."""
    ra, rb = res_a.pick_run(run_a), res_b.pick_run(run_b)
    # decision policies are scored like strategies (a row per customer turn): they pair the same way
    have_a = {s["label"] for key in ("strategies", "policies") for s in res_a.manifests[ra].get(key, [])}
    have_b = {s["label"] for key in ("strategies", "policies") for s in res_b.manifests[rb].get(key, [])}
    bad = [f"{a} (not in {ra})" for a, _ in pairs if a not in have_a] + [f"{b} (not in {rb})" for _, b in pairs if b not in have_b]
    if bad:
        raise ValueError(f"cannot pair {', '.join(bad)}")
    parts = []
    for a, b in dict.fromkeys(pairs):
        label = pair_label(a, b)
        flips, one = _case_frames(res_a, res_b, ra, rb, [a], [b], label)
        parts.append((_stats(res_a, ra, [a], label), _stats(res_b, rb, [b], label), flips, one))
    if not parts:
        stats = pd.DataFrame(columns=["strategy", "criterion", "grp", "mean", "n", "pass_rate"])
        return _build(ra, rb, stats, stats, pd.DataFrame(columns=FLIP_COLUMNS), pd.DataFrame(columns=ONE_SIDED_COLUMNS))
    sa, sb, flips, one = (_concat([p[i] for p in parts]) for i in range(4))
    # the order of `_FLIPS` across all pairs: regressions worst first, then improvements biggest first
    improvement = flips["direction"] == "improvement"
    flips = (flips.assign(_i=improvement, _k=np.where(improvement, -flips["delta"], flips["delta"]))
             .sort_values(["_i", "_k", "strategy", "criterion", "case"], kind="stable").drop(columns=["_i", "_k"]))
    return _build(ra, rb, sa, sb, flips, one.sort_values(["strategy", "criterion", "case"], kind="stable"))


def _concat(frames: list[pd.DataFrame]) -> pd.DataFrame:
    """The frames one after the other; empty ones left out, so column types stay what SQL gave them."""
    full = [f for f in frames if len(f)]
    return pd.concat(full or frames[:1], ignore_index=True)


def default_pairs(strategies_a: Sequence[dict], strategies_b: Sequence[dict]) -> list[tuple[str, str]]:
    """The pairs a reader most likely means, from two runs' manifest strategy entries (`label`,
    `name`): equal labels first; then each B strategy left over with the A strategy of the same
    registry name (a variant `session_aware[repeat_threshold=0.15]` with `session_aware`),
    preferring A's un-parameterised one. Every B strategy is in at most one default pair."""
    labels_a = [s["label"] for s in strategies_a]
    name_a = {s["label"]: s.get("name", s["label"]) for s in strategies_a}
    pairs = [(s["label"], s["label"]) for s in strategies_b if s["label"] in labels_a]
    for s in strategies_b:
        if s["label"] in labels_a:
            continue
        same = [a for a in labels_a if name_a[a] == s.get("name", s["label"])]
        if same:
            pairs.append((sorted(same, key=lambda a: (a != name_a[a], a))[0], s["label"]))
    return pairs


@dataclass(frozen=True)
class Overlap:
    """How many cases two runs share: (scenario, probe) keys judged in each."""

    a: int
    """Cases of run A."""
    b: int
    """Cases of run B."""
    shared: int
    """Cases in both: the only ones a comparison can speak for."""
    suites_a: tuple[str, ...]
    """The suites run A ran."""
    suites_b: tuple[str, ...]
    """The suites run B ran."""


def runs_overlap(res_a: Results, res_b: Results, run_a: str | None = None, run_b: str | None = None) -> Overlap:
    """`case_overlap` for two runs held by two `Results` (the CLI opens each run on its own)."""
    ra, rb = res_a.pick_run(run_a), res_b.pick_run(run_b)
    sql = "SELECT DISTINCT scenario, coalesce(probe_id, '') AS probe_id FROM scores WHERE run = $r"
    ka = set(res_a.df(sql, {"r": ra}).itertuples(index=False, name=None))
    kb = set(res_b.df(sql, {"r": rb}).itertuples(index=False, name=None))

    def suites(res: Results, run: str) -> tuple[str, ...]:
        return tuple(sorted({str(d.get("suite", "?")) for d in res.manifests.get(run, {}).get("datasets", [])}))

    return Overlap(len(ka), len(kb), len(ka & kb), suites(res_a, ra), suites(res_b, rb))


def case_overlap(res: Results, run_a: str, run_b: str) -> Overlap:
    """The cases (scenario, probe; scenario-level ones with an empty probe) of two runs held by one `Results`."""
    row = res.rows("""
        WITH k AS (SELECT DISTINCT run, scenario, coalesce(probe_id, '') AS probe_id FROM scores WHERE run IN ($a, $b))
        SELECT count(*) FILTER (WHERE run = $a), count(*) FILTER (WHERE run = $b),
               (SELECT count(*) FROM (SELECT scenario, probe_id FROM k WHERE run = $a
                                      INTERSECT SELECT scenario, probe_id FROM k WHERE run = $b))
        FROM k
    """, {"a": run_a, "b": run_b})[0]

    def suites(run: str) -> tuple[str, ...]:
        return tuple(sorted({str(d.get("suite", "?")) for d in res.manifests.get(run, {}).get("datasets", [])}))

    return Overlap(int(row[0]), int(row[1]), int(row[2]), suites(run_a), suites(run_b))

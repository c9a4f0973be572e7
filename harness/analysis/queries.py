"""Read-side queries the app pages share: DuckDB SQL over `Results`, plus small pure helpers.

Every aggregation happens in SQL so a page over a run of thousands of scenarios only moves
the rows it shows. Functions take a `Results` (one run unless said otherwise) and plain
parameters and return DataFrames, so the app can cache them by run id and parameters. No
Streamlit here: the harness never imports it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from datetime import timedelta
from typing import Any, Sequence

import numpy as np
import pandas as pd

from stores.expiry import EXPIRY_PREFIXES
from stores.protocol import DROP_BUDGET, DROP_CAP, DROP_CUTOFF
from stores.reply.model import SupportReply
from stores.session.health import HealthParams
from stores.registry import CONTROLS

from harness.criteria import bundle
from harness.criteria.expiry import CLASSES_KEY
from harness.analysis.expiry import classified_turns
from harness.criteria.bundle import View, gold_ref, hit, index, pair_verdict, present, received, repeat_flagged
from harness.analysis.decisions import (  # noqa: F401  the Decisions page's queries, reached through q()
    decision_policies, decision_scenarios, decision_turns, irreversible_list, policy_board,
)
from harness.analysis.aggregate import (aggregate, comparison_of, control_labels, gates, metric_of, shared_criteria,
                                        shared_spread, totals)
from harness.analysis.compare import case_overlap as overlap
from harness.analysis.compare import compare_pairs as pairs_of
from harness.analysis.compare import compare_runs, compare_strategies, pair_label
from harness.analysis.budget import budget_use
from harness.analysis.results import Results
from harness.criteria import groups
from harness.format.gold import ITEMS, declared, keys_of
from harness.format.model import Expect
from harness.format.schema import ExpectModel

_BAND = keys_of(ExpectModel, "band")[0]
"""The `expect` key of a probe's gold health band."""

FAILING = ("fail", "error")


# --- filters -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Filter:
    """Optional filters on the scores table; empty means no filter."""

    strategies: tuple[str, ...] = ()
    criteria: tuple[str, ...] = ()
    scenarios: tuple[str, ...] = ()
    suites: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    probe_tags: tuple[str, ...] = ()
    """Rows of probes carrying any of these tags (a benchmark's question category); a run made
    before probes had tags has none (`probe_tag_counts` is empty for it)."""
    include_controls: bool = True
    alias: str = "s"

    def sql(self) -> tuple[str, list[Any]]:
        """A `WHERE`-ready conjunction (always valid, `TRUE` when empty) and its parameters."""
        a = self.alias
        parts, params = ["TRUE"], []
        for col, vals in (("strategy", self.strategies), ("criterion", self.criteria),
                          ("scenario", self.scenarios), ("suite", self.suites)):
            if vals:
                parts.append(f"list_contains(?::VARCHAR[], {a}.{col})")
                params.append(list(vals))
        if self.tags:
            parts.append(f"len(list_intersect({a}.tags, ?::VARCHAR[])) > 0")
            params.append(list(self.tags))
        if self.probe_tags:
            parts.append(f"len(list_intersect({a}.probe_tags, ?::VARCHAR[])) > 0")
            params.append(list(self.probe_tags))
        if not self.include_controls:
            parts.append(f"NOT list_contains(?::VARCHAR[], {a}.strategy_name)")
            params.append(sorted(CONTROLS))
        return " AND ".join(parts), params


# --- run overview --------------------------------------------------------------------------


def probe_tag_counts(res: Results, run: str | None = None) -> pd.DataFrame:
    """The probe tags of a run (`tag`, `probes`: how many probes carry it), by name; empty for a run without tagged probes, or made before probes had tags."""
    run = res.pick_run(run)
    cols = ["tag", "probes"]
    if "probe_tags" not in res.df("SELECT * FROM events LIMIT 0").columns:
        return pd.DataFrame(columns=cols)
    return res.df("SELECT t AS tag, count(*) AS probes FROM (SELECT unnest(probe_tags) AS t FROM events "
                  "WHERE run = ? AND kind = 'probe') GROUP BY t ORDER BY tag", [run])[cols]


def criteria_meta(res: Results) -> pd.DataFrame:
    """Criteria that have rows in the run, with title, group and metric, groups in their order
    (`harness.criteria.groups`), criteria in the registry's order within a group.

    `group_title` is how readers call its group; `headline` is what the criterion's `mean` holds (`mean`, `F1`) and `metric_columns` the
    columns its metric reports beside it (`("precision", "recall")`), as `aggregate` computes them.
    """
    manifest = next(iter(res.manifests.values()))
    known = {c["key"]: {"title": c.get("title", c["key"]), "grp": c.get("group", groups.DEFAULT), "order": i}
             for i, c in enumerate(manifest.get("criteria", []))}
    keys = [r[0] for r in res.rows("SELECT DISTINCT criterion FROM scores")]
    rows = [{"criterion": k, **known.get(k, {"title": k, "grp": groups.DEFAULT, "order": 999})} for k in keys]
    for r in rows:
        m = metric_of(r["criterion"])
        r["headline"], r["metric_columns"] = m.headline, tuple(c.key for c in m.columns)
        r["group_title"] = groups.of(r["grp"]).title
    rows.sort(key=lambda r: (groups.order(r["grp"]), r["order"], r["criterion"]))
    return pd.DataFrame(rows, columns=["criterion", "title", "grp", "group_title", "order", "headline", "metric_columns"])


def total_columns() -> list[tuple[str, str]]:
    """(column of `leaderboard`'s totals, group title) per group that feeds a total (the shared
    headline total comes before them, as `shared`)."""
    return [(g.total, g.title) for g in groups.totals()]


def strategies(res: Results) -> pd.DataFrame:
    """Strategies of the run: label, registry name, whether it is a control."""
    df = res.df("SELECT DISTINCT strategy, strategy_name FROM scores ORDER BY strategy")
    df["control"] = df["strategy_name"].isin(CONTROLS)
    return df


def suites_and_tags(res: Results) -> tuple[list[str], list[str]]:
    suites = [r[0] for r in res.rows("SELECT DISTINCT suite FROM events ORDER BY 1")]
    tags = [r[0] for r in res.rows("SELECT DISTINCT unnest(tags) FROM events ORDER BY 1")]
    return suites, tags


# --- leaderboard -----------------------------------------------------------------------------


def run_seed(res: Results, run: str | None = None) -> int:
    """The run's seed from its manifest (what `supportbench report` aggregates with), 0 if none."""
    manifest = res.manifests[run or res.run_ids[0]]
    return int(manifest.get("seed", 0) or 0)


def _board(res: Results, f: Filter, run: str, *, intervals: bool = True) -> tuple[pd.DataFrame, str, list[Any]]:
    """The Leaderboard's `aggregate` of one run under the filters, with the WHERE clause it used."""
    # the filters narrow every query here by a WHERE clause; the caller's views stay as they are
    # (controls are counted in the resamples whatever the toggle says: stable intervals)
    where, params = replace(f, include_controls=True, alias="s").sql()
    agg = aggregate(res, include_controls=f.include_controls, run=run, seed=run_seed(res, run), where=where,
                    params=params, axis="strategy", intervals=intervals)
    return agg, where, params


def _comparison(res: Results, agg: pd.DataFrame, run: str) -> list[str]:
    """The strategies a board compares: every one shown but the controls."""
    return comparison_of(list(dict.fromkeys(agg["strategy"])), control_labels(res, run))


def shared_totals(res: Results, f: Filter = Filter()) -> pd.DataFrame:
    """Per run of `res` and strategy, the Leaderboard's headline for that run: `run`, `strategy`,
    `shared` (the very figure `leaderboard(...)[1]["shared"]` shows, from the same aggregate without
    its bootstrap intervals, which are most of the Leaderboard's cost and no part of a total). What
    a trend across runs reads: one pass over each run's scores."""
    out = []
    for run in res.run_ids:
        agg, _, _ = _board(res, f, run, intervals=False)
        if agg.empty:
            continue
        out.append(totals(agg, _comparison(res, agg, run))[["strategy", "shared"]].assign(run=run))
    return (pd.concat(out, ignore_index=True) if out else pd.DataFrame(columns=["strategy", "shared", "run"]))[["run", "strategy", "shared"]]


def leaderboard(res: Results, f: Filter = Filter()) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The leaderboard over the filtered scores, from one `harness.analysis.aggregate` pass: `(cells, totals)`.

    `cells`: strategy x criterion (mean, n, pass rate, intervals, unsupported, errors, the
    columns of each criterion's metric, e.g. precision/recall beside an F1) plus a `fails` count.
    `totals`: per strategy, `harness.analysis.aggregate.totals` (the shared headline total over the
    quality criteria every strategy shown but the controls supports, with `shared_criteria`, and
    the coverage `supported` of `shown`; one total per group that feeds one: `total` over the core
    criteria, `extra` over the extras), cases, failing and unsupported counts, tokens and latency
    at probes, budget use (`harness.analysis.budget`: `used`, the mean share of the budget a context
    takes, `cap` bundles stopped by an item cap, `empty_missing` probes that left most of the budget
    empty while gold was missing, `flagged`); best shared total first, with `shared_lo`/`shared_hi` (its 95 % interval) and
    `next_strategy`, `next_gap_lo`/`next_gap_hi` (the next strategy compared and the paired interval of the gap to it:
    above 0 means separated; `harness.analysis.aggregate.shared_spread`). Gates are in no total
    (`gate_table`).
    """
    run = res.run_ids[0]
    agg, where, params = _board(res, f, run)
    policy = list(groups.keys("policy"))  # decision policies have their own board
    counts = res.df(f"""SELECT strategy, criterion, count(*) AS cases, count(*) FILTER (WHERE status = 'fail') AS fails,
                              count(*) FILTER (WHERE status IN ('fail', 'error')) AS failing,
                              count(*) FILTER (WHERE status = 'unsupported') AS unsup,
                              count(*) FILTER (WHERE passed AND status = 'ok') AS passes
                       FROM scores s WHERE s.run = ? AND ({where}) AND NOT list_contains(?::VARCHAR[], coalesce(s.grp, ''))
                       GROUP BY ALL""", [run, *params, policy])
    cells = agg.merge(counts[["strategy", "criterion", "fails"]], on=["strategy", "criterion"], how="left").fillna({"fails": 0})
    per = counts.groupby("strategy")[["cases", "failing", "unsup", "passes"]].sum().reset_index()
    per = per.assign(pass_rate=per["passes"] / per["cases"]).rename(columns={"unsup": "unsupported"}).drop(columns="passes")
    controls = control_labels(res, run)
    comparison = _comparison(res, agg, run)
    tot = totals(agg, comparison)
    pf = Filter(strategies=tuple(tot["strategy"]), scenarios=f.scenarios, suites=f.suites, alias="p")
    pwhere, pparams = pf.sql()
    if f.tags:
        pwhere += " AND p.scenario IN (SELECT scenario FROM events WHERE len(list_intersect(tags, ?::VARCHAR[])) > 0)"
        pparams.append(list(f.tags))
    cost = res.df(f"""
        SELECT strategy, avg(tokens) AS tokens_mean, avg(budget) AS budget_mean,
               median(latency_ms) AS latency_p50, quantile_cont(latency_ms, 0.95) AS latency_p95,
               count(*) AS probes, count(*) FILTER (WHERE error IS NOT NULL) AS probe_errors
        FROM probes p WHERE {pwhere} GROUP BY strategy
    """, pparams)
    use = budget_use(res, run=run, where=pwhere, params=pparams)[["strategy", "used", "cap", "empty_missing", "flagged"]]
    out = tot.merge(per, on="strategy", how="left").merge(cost, on="strategy", how="left").merge(use, on="strategy", how="left")
    out = out.sort_values(["shared", "strategy"], ascending=[False, True], na_position="last").reset_index(drop=True)
    # how sure the order is: the shared total's interval, and whether each row is separated from the next
    compared = [s for s in out["strategy"] if s not in controls] or list(out["strategy"])
    spread = shared_spread(res, compared, shared_criteria(agg, comparison), run=run, seed=run_seed(res), where=where,
                           params=params, axis="strategy")
    gap = {a: (lo, hi) for a, _, lo, hi in spread.gaps}
    out["next_strategy"] = out["strategy"].map({a: b for a, b, _, _ in spread.gaps})
    out["shared_lo"] = out["strategy"].map(spread.lo)
    out["shared_hi"] = out["strategy"].map(spread.hi)
    out["next_gap_lo"] = out["strategy"].map(lambda s: gap.get(s, (np.nan, np.nan))[0])
    out["next_gap_hi"] = out["strategy"].map(lambda s: gap.get(s, (np.nan, np.nan))[1])
    return cells, out


def shortcut_verdict(res: Results, f: Filter) -> str:
    """The shortcut controls' verdict on the board (`harness.analysis.aggregate.separation_sentence`):
    whether the best design shown is separated from every shortcut control of the run, on the
    shared total and per criterion, under the filters `f` (whatever its controls toggle says);
    empty when the run has no shortcut control or no design."""
    from harness.analysis.aggregate import (aggregate, comparison_of, control_labels, quality_criteria, separation_sentence,
                                            shared_criteria, shortcut_labels, shortcut_separation)

    run = res.run_ids[0]
    shortcuts = shortcut_labels(res, run)
    if not shortcuts:  # nothing to compare against: no aggregation at all
        return ""
    where, params = replace(f, include_controls=True, alias="s").sql()
    agg = aggregate(res, run=run, seed=run_seed(res), where=where, params=params, axis="strategy")
    if agg.empty:
        return ""
    comparison = comparison_of(list(dict.fromkeys(agg["strategy"])), control_labels(res, run))
    seps = shortcut_separation(res, comparison, shortcuts, shared_criteria(agg, comparison),
                               quality_criteria(agg), run=run, seed=run_seed(res), where=where, params=params)
    return separation_sentence(seps)


def gate_table(res: Results, f: Filter = Filter()) -> pd.DataFrame:
    """The pass/fail gates over the filtered scores (`harness.analysis.aggregate.gates`): one row per
    (strategy, gate) with `n`, `failing`, `passed` and the first failing cases; controls as `f` says."""
    where, params = replace(f, alias="s").sql()
    return gates(res, run=res.run_ids[0], where=where, params=params)


# --- per scenario ----------------------------------------------------------------------------

_SCENARIO_CELLS = """
WITH crit AS (
    SELECT s.scenario, s.strategy, s.criterion, avg(coalesce(s.value, 0)) AS m,
           count_if(s.status IN ('fail', 'error')) AS failing
    FROM scores s WHERE s.grp = ? AND {where} GROUP BY ALL
)
SELECT scenario, strategy, avg(m) AS score, sum(failing)::BIGINT AS failing FROM crit GROUP BY ALL
"""

SCENARIO_ORDERS = {
    "hardest": "best, scenario",
    "spread": "spread DESC, scenario",
    "failing": "failing DESC, scenario",
    "name": "scenario",
}
"""How `scenario_table` can order its rows (key -> SQL ORDER BY over the per-scenario summary)."""


def scenario_count(res: Results, f: Filter = Filter()) -> int:
    """How many scenarios `scenario_table` pages through with the same filter."""
    where, params = f.sql()
    return int(res.rows(f"SELECT count(DISTINCT scenario) FROM scores s WHERE s.grp = ? AND {where}",
                        [_headline_group(), *params])[0][0])


def scenario_scores(res: Results, f: Filter = Filter()) -> pd.DataFrame:
    """Every (strategy, scenario) score of `scenario_table` in long form: `strategy`, `scenario`,
    `score`, `failing`."""
    where, params = f.sql()
    return res.df(_SCENARIO_CELLS.format(where=where) + " ORDER BY strategy, scenario", [_headline_group(), *params])


def _headline_group() -> str:
    return groups.totals()[0].key


def scenario_table(res: Results, f: Filter = Filter(), order: str = "hardest", limit: int = 25, offset: int = 0) -> pd.DataFrame:
    """One page of scenarios, each with every strategy's score there (a column per strategy: the
    mean over the headline total's criteria (`harness.criteria.groups`) of the criterion's mean case
    value in the scenario), `spread` (best minus worst strategy), `failing` (fail and error cases of
    all strategies, in those criteria), title and suite. Ordered in SQL over every scenario
    (`SCENARIO_ORDERS`), then paged."""
    where, params = f.sql()
    params = [_headline_group(), *params]
    if order not in SCENARIO_ORDERS:
        raise ValueError(f"unknown order {order!r}; known: {', '.join(SCENARIO_ORDERS)}")
    cells = _SCENARIO_CELLS.format(where=where)
    page = res.df(f"""
        WITH cells AS ({cells}),
        per AS (SELECT scenario, max(score) AS best, max(score) - min(score) AS spread, sum(failing)::BIGINT AS failing
                FROM cells GROUP BY scenario)
        SELECT * FROM per ORDER BY {SCENARIO_ORDERS[order]} LIMIT ? OFFSET ?
    """, [*params, int(limit), int(offset)])
    if page.empty:
        return pd.DataFrame(columns=["scenario", "title", "suite", "spread", "failing"])
    long = res.df(f"WITH cells AS ({cells}) SELECT * FROM cells WHERE list_contains(?::VARCHAR[], scenario)",
                  [*params, list(page["scenario"])])
    wide = long.pivot_table(index="scenario", columns="strategy", values="score", aggfunc="first")
    info = res.df("""SELECT scenario, any_value(scenario_title) AS title, any_value(suite) AS suite FROM events
                     WHERE list_contains(?::VARCHAR[], scenario) GROUP BY scenario""", [list(page["scenario"])])
    out = page.merge(info, on="scenario", how="left").merge(wide, left_on="scenario", right_index=True, how="left")
    return out.drop(columns="best").reset_index(drop=True)


# --- one case ------------------------------------------------------------------------------


def score_row(res: Results, strategy: str, scenario: str, probe_id: str, criterion: str) -> pd.DataFrame:
    return res.df("""SELECT * FROM scores WHERE strategy = ? AND scenario = ? AND probe_id = ? AND criterion = ?""",
                  [strategy, scenario, probe_id, criterion])


def _of_strategies(sql: str, params: list[Any], strategies: Sequence[str], column: str) -> tuple[str, list[Any]]:
    """`sql` (ending in a WHERE clause) narrowed to these strategies; no narrowing when none are given."""
    if not strategies:
        return sql, params
    return sql + f" AND list_contains(?::VARCHAR[], {column})", [*params, list(strategies)]


# --- scenarios, probes, transcripts ------------------------------------------------------------


def scenarios(res: Results) -> pd.DataFrame:
    """One row per scenario: title, suite, tags, subjects, number of probes."""
    return res.df("""
        SELECT scenario, any_value(scenario_title) AS title, any_value(suite) AS suite, any_value(tags) AS tags,
               count(*) FILTER (WHERE kind = 'probe') AS probes, count(DISTINCT subject) AS subjects,
               count(*) AS events
        FROM events GROUP BY scenario ORDER BY scenario
    """)


def events(res: Results, scenario: str, upto: int | None = None) -> pd.DataFrame:
    """The scenario's events in order (up to and including `upto` when given)."""
    sql = "SELECT * EXCLUDE (run) FROM events WHERE scenario = ?"
    params: list[Any] = [scenario]
    if upto is not None:
        sql += " AND event_index <= ?"
        params.append(int(upto))
    return res.df(sql + " ORDER BY event_index", params)


def probe_events(res: Results, scenario: str) -> pd.DataFrame:
    """The scenario's probes; `unlabelled` is false for runs made before probes could be."""
    has = "unlabelled" in res.df("SELECT * FROM events LIMIT 0").columns
    unl = "coalesce(unlabelled, false)" if has else "false"
    return res.df(f"""SELECT item_id AS probe_id, event_index, subject, session, text AS task, "at", budget, expect, on_turn,
                      {unl} AS unlabelled FROM events WHERE scenario = ? AND kind = 'probe' ORDER BY event_index""", [scenario])


def probe_rows(res: Results, scenario: str, probe_id: str, strategies: Sequence[str] = ()) -> pd.DataFrame:
    """The probes table rows (context, tokens, latency, handoff) for one probe."""
    sql, params = _of_strategies("SELECT * EXCLUDE (run) FROM probes WHERE scenario = ? AND probe_id = ?",
                                 [scenario, probe_id], strategies, "strategy")
    return res.df(sql + " ORDER BY strategy", params)


INCLUDED, BUDGET, CUTOFF, EXPIRED, DROPPED = ("included", "dropped for budget", "dropped by rank cutoff or item cap",
                                             "expired before ranking", "dropped")
"""What happened to a candidate (`candidates()`' `status`), read from the bundle's own flag and reason."""
STATUSES = (INCLUDED, BUDGET, CUTOFF, EXPIRED, DROPPED)
EXPIRY_REASONS = EXPIRY_PREFIXES
"""How the expiry stage's receipt reasons begin ("expired: sentiment older than 7 days, ...",
"superseded by pref-email ...", "not stored: system-owned fact ..."): `stores.expiry`'s own list."""

STATUS_SQL = f"""CASE WHEN included THEN '{INCLUDED}'
     WHEN reason = '{DROP_BUDGET}' THEN '{BUDGET}'
     WHEN reason IN ('{DROP_CUTOFF}', '{DROP_CAP}') THEN '{CUTOFF}'
     WHEN {" OR ".join(f"starts_with(coalesce(reason, ''), '{p}')" for p in EXPIRY_REASONS)} THEN '{EXPIRED}'
     ELSE '{DROPPED}' END"""
"""SQL for a candidate row's status (one of `STATUSES`) from its `included` and `reason` columns."""


def candidates(res: Results, strategy: str, scenario: str, probe_id: str) -> pd.DataFrame:
    """All ranked candidates of a probe, with `status` (one of `STATUSES`: what the strategy did
    with it, from its `included` flag and `reason`, not recomputed from token sums) and the
    running token total of the included ones (`used_tokens`)."""
    return res.df(f"""
        SELECT rank, item_id, subject, session, text, score, components, source_ids, included, reason, tokens,
               {STATUS_SQL} AS status,
               sum(CASE WHEN included THEN tokens ELSE 0 END) OVER (ORDER BY rank) AS used_tokens
        FROM candidates WHERE strategy = ? AND scenario = ? AND probe_id = ?
        ORDER BY rank
    """, [strategy, scenario, probe_id])


# --- health ------------------------------------------------------------------------------------


def health_bands(res: Results, strategy: str | None = None) -> tuple[tuple[str, float, float], ...]:
    """Health bands as (name, low, high), healthy first, from the thresholds the strategy ran
    with (`params.health` in the run manifest), else the `stores.session.health.HealthParams` defaults.
    With no strategy given, the first strategy of the run that has health thresholds."""
    defaults = HealthParams()
    manifest = next(iter(res.manifests.values()))
    health = None
    for s in manifest.get("strategies", []):
        if strategy is not None and strategy not in (s.get("label"), s.get("name")):
            continue
        params = s.get("params") or {}
        if isinstance(params.get("health"), dict):
            health = params["health"]
            break
    health = health or {}
    healthy = float(health.get("healthy_min", defaults.healthy_min))
    watch = float(health.get("watch_min", defaults.watch_min))
    return (("healthy", healthy, 100.0), ("watch", watch, healthy), ("at_risk", 0.0, watch))


def health_strategies(res: Results, scenario: str) -> list[str]:
    return [r[0] for r in res.rows("SELECT DISTINCT strategy FROM health WHERE scenario = ? ORDER BY 1", [scenario])]


def health_subjects(res: Results, scenario: str) -> pd.DataFrame:
    return res.df("""SELECT subject, any_value(subject_name) AS name FROM events
                     WHERE scenario = ? AND subject IS NOT NULL GROUP BY subject ORDER BY subject""", [scenario])


def health_timeline(res: Results, scenario: str, subject: str, strategies: Sequence[str] = ()) -> pd.DataFrame:
    """Health reports over time (rows with an empty probe id), with the event each followed."""
    sql = """
        SELECT h.strategy, h.event_index, h.at, h.score, h.band, h.base, h.factors, e.kind, e.item_id, e.text
        FROM health h LEFT JOIN events e ON e.scenario = h.scenario AND e.event_index = h.event_index
        WHERE h.scenario = ? AND h.subject = ? AND coalesce(h.probe_id, '') = ''
    """
    sql, params = _of_strategies(sql, [scenario, subject], strategies, "h.strategy")
    return res.df(sql + " ORDER BY h.strategy, h.event_index", params)


def health_gold(res: Results, scenario: str, subject: str) -> pd.DataFrame:
    """Probes of the subject with a gold health band, and each strategy's report at that probe."""
    return res.df("""
        SELECT e.item_id AS probe_id, e.at, e.event_index, json_extract_string(e.expect, $band) AS gold,
               h.strategy, h.score, h.band
        FROM events e LEFT JOIN health h ON h.scenario = e.scenario AND h.probe_id = e.item_id AND h.subject = e.subject
        WHERE e.scenario = $scenario AND e.subject = $subject AND e.kind = 'probe' AND json_extract_string(e.expect, $band) IS NOT NULL
        ORDER BY e.event_index, h.strategy
    """, {"scenario": scenario, "subject": subject, "band": f"$.{_BAND}"})


# --- compare -----------------------------------------------------------------------------------


def compare(res: Results, run_a: str, run_b: str, strategy_a: str | None = None, strategy_b: str | None = None,
            strategies: Sequence[str] | None = None):
    """B against A via `harness.analysis.compare` (the CLI's numbers): two runs matched by strategy label,
    or, with `strategy_a` and `strategy_b`, two strategies of one run (`run_a`)."""
    if strategy_a and strategy_b:
        return compare_strategies(res, strategy_a, strategy_b, run=run_a)
    return compare_runs(res, res, run_a=run_a, run_b=run_b, strategies=list(strategies) if strategies else None)


def compare_pairs(res: Results, run_a: str, run_b: str, pairs: Sequence[tuple[str, str]]):
    """B against A over chosen (strategy of A, strategy of B) pairs (`harness.analysis.compare.compare_pairs`)."""
    return pairs_of(res, res, list(pairs), run_a=run_a, run_b=run_b)


PAIRED_DELTA = """
WITH a AS (SELECT criterion, scenario, coalesce(probe_id, '') AS probe, coalesce(value, 0.0) AS v
           FROM scores WHERE run = $run_a AND strategy = $strategy_a),
     b AS (SELECT criterion, scenario, coalesce(probe_id, '') AS probe, coalesce(value, 0.0) AS v
           FROM scores WHERE run = $run_b AND strategy = $strategy_b)
SELECT criterion, count(*) AS n_paired, avg(b.v - a.v) AS paired_delta, stddev_samp(b.v - a.v) AS sd
FROM a JOIN b USING (criterion, scenario, probe)
GROUP BY criterion ORDER BY criterion
"""

INTERVAL_METRICS = ("mean", "mean+count")
"""Metrics whose headline is the mean of the case values: a per-case difference averages to their delta."""


def delta_intervals(res: Results, run_a: str, run_b: str, pairs: Sequence[tuple[str, str]], z: float = 1.96) -> pd.DataFrame:
    """Per (pair label, criterion): the cases both runs judged (`n_paired`), the mean of B's value
    minus A's over them (unsupported and errors as 0, as in every mean) and its 95% interval, the
    normal approximation over the per-case differences (mean ± z·sd/√n). Only for criteria whose
    metric is the mean of the case values (an F1 is not an average of cases): the others get no
    interval. The strategy column is `harness.analysis.compare.pair_label`, as in `compare_pairs`."""

    frames = []
    for sa, sb in dict.fromkeys(pairs):
        df = res.df(PAIRED_DELTA, {"run_a": run_a, "run_b": run_b, "strategy_a": sa, "strategy_b": sb})
        frames.append(df.assign(strategy=pair_label(sa, sb)))
    out = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(
        columns=["criterion", "n_paired", "paired_delta", "sd", "strategy"])
    half = z * out["sd"].fillna(0.0) / np.sqrt(out["n_paired"].clip(lower=1))
    ok = out["criterion"].map(lambda c: metric_of(c).name in INTERVAL_METRICS) & (out["n_paired"] > 1)
    out["lo"] = (out["paired_delta"] - half).where(ok)
    out["hi"] = (out["paired_delta"] + half).where(ok)
    return out[["strategy", "criterion", "n_paired", "paired_delta", "lo", "hi"]]


def case_overlap(res: Results, run_a: str, run_b: str):
    """How many cases two runs share (`harness.analysis.compare.case_overlap`)."""
    return overlap(res, run_a, run_b)


# --- pure helpers ------------------------------------------------------------------------------


def gap_label(delta: timedelta) -> str:
    """'3 days later', '2 hours later': how a reader should feel the silence between two events."""
    s = delta.total_seconds()
    for unit, secs in (("month", 30 * 86400), ("week", 7 * 86400), ("day", 86400), ("hour", 3600), ("minute", 60)):
        if s >= secs:
            n = int(s // secs)
            return f"{n} {unit}{'s' if n != 1 else ''} later"
    return "moments later"


def components(js: str | None) -> dict[str, float]:
    """A candidate's score components (empty when missing or unparsable)."""
    try:
        d = json.loads(js or "{}")
    except (TypeError, ValueError):
        return {}
    return {str(k): float(v) for k, v in d.items() if isinstance(v, (int, float))}


@dataclass(frozen=True)
class ReplyView:
    """A probe's stored reply, ready to show: the reply and its metadata, and the memories it used."""

    reply: SupportReply
    """The reply engine's answer to the strategy's context."""
    used: pd.DataFrame
    """One row per memory the reply used: text, type, outcome, score, reason, sources."""


def reply_view(js: Any) -> ReplyView | None:
    """The `reply` column of a probes row, parsed (None when there is none, e.g. a run before replies)."""
    if not isinstance(js, str) or not js:
        return None
    try:
        r = SupportReply.from_dict(json.loads(js))
    except (TypeError, ValueError, KeyError):
        return None
    used = pd.DataFrame([{"text": u.text, "type": u.type, "outcome": u.outcome or "", "score": u.score, "reason": u.reason,
                          "sources": ", ".join(u.source_ids)} for u in r.used_memories],
                        columns=["text", "type", "outcome", "score", "reason", "sources"])
    return ReplyView(r, used)


def memories_table(js: Any) -> pd.DataFrame | None:
    """The `memories` column of a probes row as a table (None for a strategy without typed memories)."""
    if not isinstance(js, str) or not js:
        return None
    try:
        rows = json.loads(js)
    except (TypeError, ValueError):
        return None
    return pd.DataFrame([{"type": m.get("type"), "text": m.get("text"), "state": m.get("outcome") or m.get("status") or "",
                          "was": ", ".join(m.get("previous_outcomes") or ()), "updated": m.get("updated_at", "")[:16],
                          "sources": ", ".join(m.get("source_ids") or ())} for m in rows if isinstance(m, dict)],
                        columns=["type", "text", "state", "was", "updated", "sources"])


def parse_expect(js: str | None) -> dict[str, Any]:
    try:
        return json.loads(js or "{}") or {}
    except (TypeError, ValueError):
        return {}


def _ranked(cands: pd.DataFrame) -> pd.DataFrame:
    return cands.sort_values("rank") if len(cands) and not cands["rank"].is_monotonic_increasing else cands


def gold_view(cands: pd.DataFrame, context: str | None, budget: int | None = None) -> View:
    """What the criteria read of a probe's bundle (`harness.criteria.bundle.index`), from the
    candidate rows of a run (`candidates()`) and the probe's context text; with the probe's
    `budget`, as the criteria read it: the context cut at the budget (what the model receives)."""
    cands = _ranked(cands)
    return index(cands.itertuples(index=False) if len(cands) else (), context, budget)


def received_context(cands: pd.DataFrame, context: str | None, budget: int) -> str:
    """The context the model receives at a probe: the strategy's text, or, over the budget, the
    criteria's cut of it (`harness.criteria.bundle.received`: whole lines, lowest ranks dropped first)."""
    cands = _ranked(cands)
    return received(context or "", int(budget), cands.itertuples(index=False) if len(cands) else ())


def gold_check(expect: dict[str, Any], cands: pd.DataFrame, context: str | None, budget: int | None = None) -> pd.DataFrame:
    """The probe's gold labels against what a strategy put in the context, by the criteria's rules.

    Returns one row per gold item of every key with a polarity (`harness.format.gold`): first
    what must be in the context, then what must stay out, then the orderings, each key in
    declaration order, judged on the context as the criteria judge it (cut at `budget` when
    given: pass the probe's budget). `kind` is the key's display name (`harness.format.gold.Gold.display`),
    `ref`, `ok` (bool), `mark` (✓ included / ✗ missing / ⚠ present / ✓ absent, ...) and `detail`.
    Whether an item counts is decided by the criteria's own functions (`harness.criteria.bundle`),
    so a mark never disagrees with the verdict; the detail only says where the item was among
    the candidates. A resolved session that must stay out is judged on its resolution record
    and the criteria's repeat limit (`bundle.REPEAT_TOP`).
    """
    gold = Expect.from_data(expect)
    v = gold_view(cands, context, budget)
    considered: dict[str, tuple[int, bool]] = {}
    for r in cands.itertuples(index=False) if len(cands) else ():
        for i in r.source_ids if r.source_ids is not None else ():
            considered.setdefault(i, (int(r.rank), bool(r.included)))

    def where(g: Any) -> str:
        ref = gold_ref(g)
        if not isinstance(ref, str):
            return "found in context text" if hit(v, ref) else "not in context text"
        if ref in v.rank:
            return f"in the context at rank {v.rank[ref]}"
        if ref in considered:
            r, inc = considered[ref]
            if inc and v.hidden.get(ref) in v.past_cut:
                return f"ranked {r} and included, but past the budget cut"
            return f"ranked {r} and included, but not in the context" if inc else f"ranked {r} but dropped"
        return "not among the candidates"

    def disp(g: Any) -> str:
        ref = gold_ref(g)
        return ref if isinstance(ref, str) else f'"{ref.text}"'

    rows: list[dict[str, Any]] = []
    for key, g in declared(ExpectModel, "in"):
        for item in getattr(gold, key):
            ok = hit(v, item)
            rows.append({"kind": g.name(key), "ref": disp(item), "ok": ok, "mark": "✓ included" if ok else "✗ missing",
                         "detail": where(item)})
    for key, g in declared(ExpectModel, "out"):
        for item in getattr(gold, key):
            if g.ref == "sessions":  # a resolved session: judged on its resolution record near the top
                ref = f"{item}#resolution"
                r, top = repeat_flagged(v, item), bundle.REPEAT_TOP
                rows.append({"kind": g.name(key), "ref": ref, "ok": r is None,
                             "mark": f"⚠ in top {top}" if r is not None else f"✓ not in top {top}", "detail": where(ref)})
                continue
            bad = present(v, item)
            detail = where(item)
            if bad and detail.startswith("ranked"):  # shown although not in the context by the positive reading
                detail = detail.split(",")[0].split(" but")[0] + "; shown: marked included or its text is in the context"
            rows.append({"kind": g.name(key), "ref": disp(item), "ok": not bad, "mark": "⚠ present" if bad else "✓ absent",
                         "detail": detail})
    for key, g in declared(ExpectModel, "order"):
        for first, second in getattr(gold, key):
            ok, why = pair_verdict(v, first, second)
            rows.append({"kind": g.name(key), "ref": f"{first} above {second}", "ok": ok,
                         "mark": "✓ right order" if ok else "✗ wrong order", "detail": why})
    return pd.DataFrame(rows, columns=["kind", "ref", "ok", "mark", "detail"])


GOLD_MARK = "◆"
"""Marks an item the probe expects in the context (a gold item), wherever candidates are listed.
Not ✓: ✓ and ✗ are verdicts (right, wrong) in the gold tables beside the lists."""
OUT_MARK = "⊘"
"""Marks an item that must stay out of the context. Not ⚠: ⚠ is the verdict "present though it must not be"."""


def gold_marks(expect: dict[str, Any]) -> dict[str, str]:
    """Item id -> marker for candidate lists: `GOLD_MARK` gold (should be in: every item of a key of
    polarity `in`, and the first of each ordered pair), `OUT_MARK` must stay out (an item of a key
    of polarity `out`; it wins over gold when an id is both)."""
    gold = Expect.from_data(expect)
    marks: dict[str, str] = {}
    for key, g in declared(ExpectModel, "out"):
        if g.ref in ITEMS:
            for item in getattr(gold, key):
                if isinstance(item, str):
                    marks[item] = f"{OUT_MARK} must stay out"
    positives: list[Any] = [item for key, _ in declared(ExpectModel, "in") for item in getattr(gold, key)]
    positives += [first for key, _ in declared(ExpectModel, "order") for first, _second in getattr(gold, key)]
    for item in positives:
        if isinstance(item, str):
            marks.setdefault(item, f"{GOLD_MARK} gold")
    return marks


# --- the expiry stage ------------------------------------------------------------------------------


def memory_classes(res: Results, strategies: Sequence[str] = ()) -> pd.DataFrame:
    """The labelled turns the expiry stage's classes were judged on: one row per strategy and
    turn, `strategy`, `scenario` and the columns of `harness.analysis.expiry.classified_turns`
    (strategies without the stage have no rows)."""
    sql, params = _of_strategies("SELECT strategy, scenario, meta FROM scores WHERE criterion = ? AND status IN ('ok', 'fail')",
                                 [CLASSES_KEY], strategies, "strategy")
    rows = res.df(sql + " ORDER BY strategy, scenario", params)
    parts = [classified_turns([m]).assign(strategy=s, scenario=sc) for s, sc, m in rows.itertuples(index=False)]
    cols = ["strategy", "scenario", "turn", "labels", "gold", "assigned", "rule", "correct"]
    return pd.concat(parts, ignore_index=True)[cols] if parts else pd.DataFrame(columns=cols)

"""How much of its token budget each strategy used, and why it stopped filling (issue: no hidden
item cap below the budget).

Read from the run's `probes` table (the bundle's own `tokens`, the probe's `budget` and `stop`)
and the `recall` criterion's rows in `scores` (whether the gold the probe names reached the
context). A strategy is *flagged* when, on some probe, it left most of the budget empty
(used less than `EMPTY_SHARE` of it) while gold was missing: a reader should then ask whether a
cap or a cutoff, not the budget, kept the gold out.
"""

from __future__ import annotations

from typing import Sequence

import pandas as pd

from stores.protocol import STOP_BUDGET, STOP_CAP, STOP_EXHAUSTED

from harness.analysis.results import Results

EMPTY_SHARE = 0.5
"""A probe whose context uses less than this share of its budget left most of it empty."""

GOLD_CRITERION = "recall"
"""The criterion whose case value below 1 says gold the probe names is missing from the context."""

COLUMNS = ["strategy", "probes", "used", "used_median", STOP_BUDGET, STOP_CAP, STOP_EXHAUSTED, "gold_missing",
           "empty_missing", "flagged"]


def _has_stop(res: Results) -> bool:
    """Runs written before the `stop` column have none (their bundles' stop reasons are unknown)."""
    return "stop" in {r[0] for r in res.rows("DESCRIBE probes")}


def budget_use(res: Results, strategies: Sequence[str] | None = None, run: str | None = None, *,
               where: str = "TRUE", params: Sequence = ()) -> pd.DataFrame:
    """One row per strategy: probes answered, mean and median share of the budget used, how many
    bundles stopped on the budget / the item cap / with candidates exhausted, on how many probes
    gold was missing, on how many of those the context used less than `EMPTY_SHARE` of the
    budget (`empty_missing`), and `flagged` (that count is above 0). `where` (over `probes p`,
    with `params`) narrows the probes, as the app's filters do."""
    run = res.pick_run(run)
    stop = "p.stop" if _has_stop(res) else "NULL"
    df = res.df(f"""
        WITH p AS (
            SELECT p.strategy, p.scenario, p.probe_id,
                   CASE WHEN p.budget > 0 THEN p.tokens / p.budget ELSE 0 END AS used, {stop} AS stop
            FROM probes p WHERE p.run = ? AND p.error IS NULL AND p.tokens IS NOT NULL AND ({where})),
        g AS (
            SELECT strategy, scenario, probe_id, min(value) < 1 AS missing
            FROM scores WHERE run = ? AND criterion = ? GROUP BY ALL)
        SELECT p.strategy, count(*) AS probes, avg(used) AS used, median(used) AS used_median,
               count(*) FILTER (WHERE stop = '{STOP_BUDGET}') AS "{STOP_BUDGET}",
               count(*) FILTER (WHERE stop = '{STOP_CAP}') AS "{STOP_CAP}",
               count(*) FILTER (WHERE stop = '{STOP_EXHAUSTED}') AS "{STOP_EXHAUSTED}",
               count(*) FILTER (WHERE coalesce(g.missing, false)) AS gold_missing,
               count(*) FILTER (WHERE coalesce(g.missing, false) AND used < {EMPTY_SHARE}) AS empty_missing
        FROM p LEFT JOIN g USING (strategy, scenario, probe_id)
        GROUP BY p.strategy ORDER BY p.strategy""", [run, *params, run, GOLD_CRITERION])
    if strategies is not None:
        keep = list(strategies)
        df = df[df["strategy"].isin(keep)].set_index("strategy").reindex([s for s in keep if s in set(df["strategy"])]).reset_index()
    df["flagged"] = df["empty_missing"] > 0
    return df[COLUMNS].reset_index(drop=True)


def budget_sentence(row: dict) -> str:
    """One line a reader can check: the share used, the stop reasons, and the flag's reason."""
    stops = ", ".join(f"{int(row[k])} {k}" for k in (STOP_BUDGET, STOP_CAP, STOP_EXHAUSTED) if row[k])
    text = (f"{row['strategy']}: used {row['used']:.0%} of its budget on average (median {row['used_median']:.0%}) "
            f"over {int(row['probes'])} probes; stopped on {stops or 'unknown (run written before stop reasons)'}")
    if row["flagged"]:
        text += (f"; left more than half of the budget empty on {int(row['empty_missing'])} of the "
                 f"{int(row['gold_missing'])} probes where gold was missing")
    return text + "."

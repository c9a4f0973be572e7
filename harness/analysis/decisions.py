"""The Decisions page's queries: what each decision policy decided, turn by turn.

Read from a run's `decisions` table (one row per policy x turn or fault; see
`harness.replay.decide.rows`) and its `scores` rows of the decision criteria. Every function takes
the open `Results` first and returns plain data or a DataFrame.
"""

from __future__ import annotations

import json

import pandas as pd

from stores.decisions.vocabulary import LOCKER_ACTS

from harness.analysis.results import Results

__all__ = ["LOCKER_ACTS", "DECISION_CRITERIA", "decision_policies", "decision_scenarios", "decision_turns", "policy_board",
           "irreversible_list", "locker_table", "fired"]

DECISION_CRITERIA = ("decision_accuracy", "route_accuracy", "irreversible_errors", "fail_open")
"""The decision criteria, in the order the page shows them."""


def decision_policies(res: Results, run: str | None = None) -> list[str]:
    """The policy labels of the run, in the run's order (the manifest's), then any others."""
    run = res.pick_run(run)
    listed = [p["label"] for p in res.manifests[run].get("policies", [])]
    found = [r[0] for r in res.rows("SELECT DISTINCT policy FROM decisions WHERE run = ? ORDER BY policy", [run])]
    return [p for p in listed if p in found] + [p for p in found if p not in listed]


def decision_scenarios(res: Results, run: str | None = None) -> pd.DataFrame:
    """Scenarios with decision cases: title, cases, and per policy the mismatches and irreversible errors."""
    run = res.pick_run(run)
    return res.df(
        """
        SELECT d.scenario, any_value(e.scenario_title) AS title,
               count(DISTINCT d.turn_id) FILTER (WHERE d.decision_case) AS cases,
               count(*) FILTER (WHERE d.decision_case AND NOT coalesce(d.correct, false)) AS mismatches,
               count(*) FILTER (WHERE coalesce(d.irreversible, '') <> '') AS irreversible,
               count(*) FILTER (WHERE d.error IS NOT NULL) AS errors
        FROM decisions d LEFT JOIN (SELECT DISTINCT run, scenario, scenario_title FROM events) e
          ON e.run = d.run AND e.scenario = d.scenario
        WHERE d.run = ?
        GROUP BY d.scenario
        HAVING count(*) FILTER (WHERE d.decision_case) > 0
        ORDER BY d.scenario
        """,
        [run],
    )


def decision_turns(res: Results, scenario: str, policies: list[str] | tuple[str, ...], run: str | None = None) -> pd.DataFrame:
    """Every turn and fault of one scenario for the chosen policies, in event order, one row per policy."""
    run = res.pick_run(run)
    if not policies:
        return pd.DataFrame()
    marks = ", ".join("?" for _ in policies)
    return res.df(
        f"""
        SELECT policy, event_index, kind, fault, turn_id, session, role, turn_kind, "at", text, scripted, signals,
               locker_state, locker_down, locker_before, locker_after, card, plan, proposed, rule, why, escalation,
               route, route_rule, gold_plan, gold_route, decision_case, correct, irreversible, log, error
        FROM decisions WHERE run = ? AND scenario = ? AND policy IN ({marks})
        ORDER BY event_index, policy
        """,
        [run, scenario, *policies],
    )


def policy_board(res: Results, run: str | None = None) -> pd.DataFrame:
    """Per policy and decision criterion: mean, cases, failures, errors (the policy leaderboard's cells)."""
    run = res.pick_run(run)
    policies = decision_policies(res, run)
    if not policies:
        return pd.DataFrame(columns=["policy", "criterion", "mean", "n", "failed", "errors"])
    marks = ", ".join("?" for _ in policies)
    keys = ", ".join("?" for _ in DECISION_CRITERIA)
    df = res.df(
        f"""
        SELECT strategy AS policy, criterion, avg(coalesce(value, 0)) AS mean, count(*) AS n,
               count(*) FILTER (WHERE NOT passed) AS failed, count(*) FILTER (WHERE status = 'error') AS errors
        FROM scores WHERE run = ? AND strategy IN ({marks}) AND criterion IN ({keys})
        GROUP BY strategy, criterion
        """,
        [run, *policies, *DECISION_CRITERIA],
    )
    order = {p: i for i, p in enumerate(policies)}
    crit = {c: i for i, c in enumerate(DECISION_CRITERIA)}
    return df.sort_values(by=["policy", "criterion"], key=lambda s: s.map(order if s.name == "policy" else crit)).reset_index(drop=True)


def irreversible_list(res: Results, run: str | None = None) -> pd.DataFrame:
    """Every irreversible error of the run: policy, scenario, turn, what it did against the gold."""
    run = res.pick_run(run)
    return res.df(
        """
        SELECT policy, scenario, turn_id, text, plan, gold_plan, irreversible, rule
        FROM decisions WHERE run = ? AND coalesce(irreversible, '') <> ''
        ORDER BY policy, scenario, event_index
        """,
        [run],
    )


def locker_table(cell: str | None) -> list[dict[str, str]]:
    """A `locker_before` / `locker_after` cell as rows of key, value and simulated expiry."""
    if cell is None or (isinstance(cell, float) and pd.isna(cell)):
        return []
    return [{"key": k, "value": v["value"], "expires": v["expires_at"].replace("T", " ")[:19]}
            for k, v in json.loads(cell).items()]


def fired(cell: str | None) -> dict[str, object]:
    """The signals or card facts of a cell that are set (true, or an enum other than `none`)."""
    if cell is None or (isinstance(cell, float) and pd.isna(cell)):
        return {}
    return {k: v for k, v in json.loads(cell).items() if v not in (False, None, "none", "", "up", "unused")}

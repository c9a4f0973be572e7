"""The controls keep the scorers honest on the canonical suite: the oracle scores 1.0 wherever the
gold can be met, the empty strategy 0 wherever something has to be recalled."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.analysis.aggregate import aggregate
from harness.analysis.results import Results

CANONICAL = Path(__file__).resolve().parents[2] / "datasets" / "canonical"
ORACLE_PERFECT = ("identity_persistence", "preference_surfacing", "token_budget", "provenance", "session_ranking",
                  "repeat_issue", "recall", "isolation", "self_recall", "stale_suppression", "known_fix_first",
                  "returning_customer", "reply_known_fix", "reply_skips_failures", "expiry")
EMPTY_ZERO = ("identity_persistence", "preference_surfacing", "session_ranking", "repeat_issue", "known_fix_first", "recall",
              "reply_known_fix", "reply_skips_failures")


CONTROLS = ("oracle", "empty", "history_stuffing")


@pytest.fixture(scope="module")
def run(canonical_run):
    """The shared canonical run (tests/conftest.py), read for the controls and the baseline."""
    assert sorted(CANONICAL.glob("*.yaml")), f"the canonical suite is missing: no scenario files in {CANONICAL}"
    res = Results(canonical_run)
    df = aggregate(res, include_controls=True)
    yield res, df[df.strategy.isin(CONTROLS)]
    res.close()


def failing(res: Results, strategy: str, criterion: str, bad: str) -> str:
    rows = res.rows(f"SELECT scenario, probe_id, status, explanation FROM scores WHERE strategy = ? AND criterion = ? AND {bad}",
                    [strategy, criterion])
    return "\n".join(f"{s}/{p or '(scenario)'} [{st}]: {e}" for s, p, st, e in rows[:10])


@pytest.mark.parametrize("criterion", ORACLE_PERFECT)
def test_oracle_scores_one(run, criterion):
    res, df = run
    r = df[(df.strategy == "oracle") & (df.criterion == criterion)]
    assert len(r) and r.n.iloc[0] > 0, f"the canonical suite has no {criterion} case"
    assert r["mean"].iloc[0] == 1.0, failing(res, "oracle", criterion, "NOT passed")


@pytest.mark.parametrize("criterion", EMPTY_ZERO)
def test_empty_scores_zero_where_something_must_be_recalled(run, criterion):
    res, df = run
    r = df[(df.strategy == "empty") & (df.criterion == criterion)]
    assert len(r) and r.n.iloc[0] > 0
    assert r["mean"].iloc[0] == 0.0, failing(res, "empty", criterion, "value > 0")


def test_no_control_holds_typed_memories(run):
    _, df = run
    r = df[df.criterion == "memory_extraction"].set_index("strategy")
    assert (r.loc[["oracle", "empty"], "unsupported"] == r.loc[["oracle", "empty"], "n"]).all() and r.loc["oracle", "n"] > 0


def test_empty_never_calls_a_customer_returning(run):
    res, _ = run
    rows = res.rows("SELECT value FROM scores WHERE strategy = 'empty' AND criterion = 'returning_customer'")
    assert rows and all(v == 0.0 for (v,) in rows)  # every canonical returning gold is true


def test_no_control_or_baseline_case_errors(run):
    res, df = run
    errors = res.rows("SELECT strategy, scenario, probe_id, criterion, explanation FROM scores WHERE status = 'error' "
                      "AND strategy IN ('oracle', 'empty', 'history_stuffing') LIMIT 10")
    assert df.errors.sum() == 0 and not errors, errors

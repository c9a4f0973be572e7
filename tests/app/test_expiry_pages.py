"""The expiry stage in the app: what it removed (Rankings, a Failures case) and its classifier's confusion table."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from helpers import HANG
from streamlit.testing.v1 import AppTest

from harness.format.loader import load_suite
from harness.run.runner import execute
from stores.registry import parse_specs

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
RUN = "20260301-000000-expiry"
SCENARIOS = [ROOT / "datasets" / "canonical" / f for f in ("sentiment-september-large-budget.yaml", "plan-tier-not-trusted-later.yaml")]
STAGED = "history_stuffing[expiry]"


@pytest.fixture(scope="module")
def expiry_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("expiry-runs")
    execute(load_suite([str(p) for p in SCENARIOS]), parse_specs("history_stuffing,history_stuffing:expiry=on"), root,
            run_id=RUN, command="expiry app test")
    old = os.environ.get("SUPPORTBENCH_RUNS")
    os.environ["SUPPORTBENCH_RUNS"] = str(root)
    yield root
    if old is None:
        os.environ.pop("SUPPORTBENCH_RUNS", None)
    else:
        os.environ["SUPPORTBENCH_RUNS"] = old


def open_page(page: str, **params) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=HANG)
    at.query_params.update({"run": RUN, **params})
    if page != "leaderboard":
        at.switch_page(f"pages/{page}.py")
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def frames(at: AppTest) -> list:
    return [d.value for d in at.dataframe]


def test_rankings_lists_what_the_stage_removed_with_each_rule(expiry_run):
    at = open_page("rankings", scenario="sentiment-september-large-budget", probe="p-sep-vat", strategies=[STAGED])
    (panel,) = [e for e in at.expander if e.label.startswith("Removed by the expiry stage before ranking")]
    removed = next(f for f in frames(at) if "rule" in f.columns)
    assert panel.label == f"Removed by the expiry stage before ranking: {len(removed)} ({len(removed)} expired)"
    row = removed[removed["item_id"] == "mar-angry-1"].iloc[0]
    assert row["reason"] == "expired: sentiment older than 7 days, said 2026-03-04" and row["rule"] == "expired"


def test_a_strategy_without_the_stage_shows_no_removed_items(expiry_run):
    at = open_page("rankings", scenario="sentiment-september-large-budget", probe="p-sep-vat", strategies=["history_stuffing"])
    assert not [e for e in at.expander if e.label.startswith("Removed by the expiry stage")]


def test_a_failures_case_shows_the_removed_items_beside_the_context(expiry_run):
    at = open_page("failures", case=f"{STAGED}|plan-tier-not-trusted-later|p-fourth-project|expiry", unsupported="true")
    (panel,) = [e for e in at.expander if e.label.startswith("Removed by the expiry stage before ranking")]
    removed = next(f for f in frames(at) if "rule" in f.columns)
    assert set(removed.loc[removed["rule"] == "not stored", "item_id"]) == {"plan-1", "plan-2"}


def test_the_leaderboard_shows_the_classifiers_confusion_table(expiry_run):
    at = open_page("leaderboard")
    assert "Memory classes (expiry stage)" in [s.value for s in at.subheader]
    table = next(f for f in frames(at) if f.index.name == "gold label")
    assert table.loc["sentiment", "sentiment"] == 3 and table.loc["system_owned", "system_owned"] == 3
    assert int(table.to_numpy().sum()) == 9  # every labelled turn of the two scenarios, once


def test_a_case_of_the_classifiers_criterion_lists_its_turns(expiry_run):
    at = open_page("failures", case=f"{STAGED}|sentiment-september-large-budget||expiry_classes")
    assert any(m.value == "#### Labelled turns and their classes" for m in at.markdown)
    turns = next(f for f in frames(at) if "assigned" in f.columns)
    assert set(turns["turn"]) == {"mar-late", "mar-sorry", "mar-angry-1", "mar-angry-2", "pref-invoice"}

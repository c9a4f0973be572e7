"""The Leaderboard beside another run: a run of canonical decision scenarios beside a run of the
challenge suite's (chosen in the sidebar, `?beside=`), the figures the front ends move row by row,
read from the two runs (harness.analysis.beside), checked against a direct count of their tables."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import HANG
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
IN_SAMPLE, CHALLENGE = "20990101-000000-in-sample", "20990101-000001-challenge"


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory) -> Path:
    from harness.format.loader import load_suite
    from harness.run.runner import execute
    from stores.decisions.registry import parse_policies
    from stores.registry import parse_specs

    root = tmp_path_factory.mktemp("beside-runs")
    policies = parse_policies("session_state,per_message")
    for suites, run_id in ((("canonical/decision-routing.yaml", "canonical/seed-known-fix-stops-working.yaml"), IN_SAMPLE),
                           (("challenge/decision-kinds.yaml", "challenge/extraction.yaml"), CHALLENGE)):
        execute(load_suite([str(ROOT / "datasets" / s) for s in suites]), parse_specs("structured,empty"), root,
                run_id=run_id, policies=policies)
    return root


def test_side_by_side_gives_each_runs_mean_and_cases_per_row_and_criterion(two_runs):
    import duckdb

    from harness.analysis.beside import side_by_side
    from harness.analysis.results import Results

    with Results([two_runs / IN_SAMPLE, two_runs / CHALLENGE]) as res:
        t = side_by_side(res, IN_SAMPLE, CHALLENGE)
    assert set(t["row"]) == {"session_state", "per_message", "structured", "empty"}
    assert set(t[t["row"] == "structured"]["criterion"]) >= {"memory_extraction", "reply_skips_failures"}
    row = t[(t["row"] == "session_state") & (t["criterion"] == "decision_accuracy")].iloc[0]
    for run, mean, n in ((IN_SAMPLE, row.this_mean, row.this_n), (CHALLENGE, row.other_mean, row.other_n)):
        want = duckdb.connect().execute(f"SELECT avg(coalesce(value, 0)), count(*) FROM read_parquet('{two_runs / run}/scores/*.parquet') "
                          "WHERE strategy = 'session_state' AND criterion = 'decision_accuracy'").fetchone()
        assert (mean, n) == pytest.approx(want)
    assert list(t[t["row"] == "session_state"]["criterion"])[:2] == ["decision_accuracy", "route_accuracy"]


def _page(root: Path, monkeypatch, **params) -> AppTest:
    monkeypatch.setenv("SUPPORTBENCH_RUNS", str(root))
    at = AppTest.from_file(APP, default_timeout=HANG)
    at.query_params.update({"run": IN_SAMPLE, **params})
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def test_leaderboard_shows_the_run_beside_the_one_chosen_in_the_sidebar(two_runs, monkeypatch):
    at = _page(two_runs, monkeypatch)
    assert "Beside another run" not in [h.value for h in at.subheader]  # nothing until a run is chosen
    picker = next(s for s in at.sidebar.selectbox if s.label == "Beside another run")
    assert picker.value == "" and CHALLENGE in picker.options[1]
    at = _page(two_runs, monkeypatch, beside=CHALLENGE)
    assert "Beside another run" in [h.value for h in at.subheader]
    table = next(d.value for d in at.dataframe if list(d.value.columns) == ["row", "criterion", "this run", "beside"])
    acc = table[(table["row"] == "session_state") & (table["criterion"] == "decision accuracy")].iloc[0]
    from harness.analysis.beside import side_by_side
    from harness.analysis.results import Results

    with Results([two_runs / IN_SAMPLE, two_runs / CHALLENGE]) as res:
        t = side_by_side(res, IN_SAMPLE, CHALLENGE)
    want = t[(t["row"] == "session_state") & (t["criterion"] == "decision_accuracy")].iloc[0]
    assert acc["this run"] == f"{want.this_mean:.3f} (n={want.this_n})"
    assert acc["beside"] == f"{want.other_mean:.3f} (n={want.other_n})"

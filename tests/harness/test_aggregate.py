"""Aggregation: counts in SQL, Wilson for pass rates, seeded bootstrap over scenarios, F1 for repeats."""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pytest

from harness.analysis.aggregate import aggregate, pass_interval_of, resample_weights, totals, wilson
from harness.analysis.results import Results
from harness.criteria.metrics import precision_recall_f1
from harness.run.runstore import RunWriter
from harness.run.tables import SCHEMAS


def row(strategy, scenario, probe, criterion, value, status=None, name=None, grp="core", **meta):
    status = status or ("ok" if value == 1.0 else "fail")
    return {"strategy": strategy, "strategy_name": name or strategy, "suite": "t", "scenario": scenario, "tags": [],
            "probe_id": probe, "criterion": criterion, "grp": grp, "value": None if status in ("error", "unsupported") else value,
            "passed": status == "ok", "status": status, "explanation": "", "evidence": [], "meta": json.dumps(meta)}


def make_run(tmp_path, scores, events=(), run_id="r", strategies=("a", "b")):
    w = RunWriter(tmp_path, run_id)
    w.write("scores", pa.Table.from_pylist(list(scores), schema=SCHEMAS["scores"]))
    if events:
        w.write("events", pa.Table.from_pylist(list(events), schema=SCHEMAS["events"]))
    return w.commit({"run_id": run_id, "strategies": [{"label": s, "name": s} for s in strategies]})


def by(df, strategy, criterion):
    return df[(df.strategy == strategy) & (df.criterion == criterion)].iloc[0]


def test_wilson_matches_known_values():
    lo, hi = wilson(8, 10)
    assert (round(float(lo), 4), round(float(hi), 4)) == (0.4902, 0.9433)
    lo, hi = wilson([0, 10], [10, 10])
    assert lo[0] == 0.0 and round(float(hi[0]), 4) == 0.2775 and round(float(lo[1]), 4) == 0.7225 and hi[1] == pytest.approx(1.0)
    assert np.isnan(wilson(0, 0)[0])


def test_f1_conventions():
    p, r, f = precision_recall_f1([1, 0, 0], [1, 0, 0], [0, 2, 0])
    assert list(p) == [0.5, 0.0, 1.0] and list(r) == [1.0, 0.0, 1.0] and round(float(f[0]), 4) == 0.6667 and f[1] == 0.0


def test_resamples_are_seeded_and_draw_whole_scenarios():
    a, b = resample_weights(5, "recall", 0), resample_weights(5, "recall", 0)
    assert (a == b).all() and a.shape == (1000, 5) and (a.sum(axis=1) == 5).all()
    assert not (a == resample_weights(5, "recall", 1)).all()


def test_unsupported_and_errors_count_in_n_as_zero(tmp_path):
    run = make_run(tmp_path, [
        row("a", "s1", "p1", "health", 1.0), row("a", "s1", "p2", "health", None, "unsupported"),
        row("a", "s2", "p3", "health", None, "error"), row("a", "s2", "p4", "health", 1.0),
    ])
    with Results(run) as res:
        r = by(aggregate(res), "a", "health")
    assert (r.n, r["mean"], r.pass_rate, r.unsupported, r.errors) == (4, 0.5, 0.5, 1, 1)
    assert round(r.pass_lo, 4) == round(float(wilson(2, 4)[0]), 4)


def test_bootstrap_is_deterministic_with_the_seed_and_brackets_the_mean(tmp_path):
    rows = [row("a", f"s{i}", f"p{i}{j}", "recall", float(j < i % 4)) for i in range(8) for j in range(3)]
    run = make_run(tmp_path, rows, strategies=("a",))
    with Results(run) as res:
        one, two, other = aggregate(res, seed=7), aggregate(res, seed=7), aggregate(res, seed=8)
    r = by(one, "a", "recall")
    assert one.equals(two)
    assert r.lo <= r["mean"] <= r.hi and r.lo < r.hi
    assert by(other, "a", "recall")["mean"] == r["mean"]  # the seed moves only the interval


def test_intervals_of_a_strategy_do_not_depend_on_the_others_shown(tmp_path):
    rows = [row(s, f"s{i}", f"p{i}", "recall", float((i * (k + 1)) % 2)) for k, s in enumerate(("a", "oracle")) for i in range(6)]
    rows += [row("oracle", f"s{i}", f"p{i}", "recall", 1.0) for i in range(6, 9)]  # scenarios only the control has
    run = make_run(tmp_path, rows, strategies=("a", "oracle"))
    with Results(run) as res:
        alone, with_controls = aggregate(res), aggregate(res, include_controls=True)
    assert list(alone.strategy.unique()) == ["a"] and set(with_controls.strategy) == {"a", "oracle"}
    assert by(alone, "a", "recall").lo == by(with_controls, "a", "recall").lo


def test_repeat_issue_reports_f1_with_precision_and_recall_and_errors_count_against(tmp_path):
    rows = [
        row("a", "s1", "p1", "repeat_issue", 1.0, tp=1, fp=0, fn=0, tn=0),
        row("a", "s1", "p2", "repeat_issue", 0.0, tp=0, fp=1, fn=0, tn=1),
        row("a", "s2", "p3", "repeat_issue", 0.0, tp=0, fp=0, fn=1, tn=0),
        # no verdict: the counts its metric stamped when it was scored (the repeat missed, the look-alike flagged)
        row("a", "s2", "p4", "repeat_issue", None, "error", tp=0, fp=1, fn=1),
    ]
    with Results(make_run(tmp_path, rows, strategies=("a",))) as res:
        r = by(aggregate(res), "a", "repeat_issue")
    # tp 1, fp 1 + 1 (the error's negative), fn 1 + 1 (the error's positive)
    assert (r.precision, r.recall) == (pytest.approx(1 / 3), pytest.approx(1 / 3)) and r["mean"] == pytest.approx(1 / 3)
    assert r.n == 4 and r.errors == 1 and r.pass_rate == 0.25


def test_a_criterion_without_columns_has_nan_in_the_metric_columns(tmp_path):
    with Results(make_run(tmp_path, [row("a", "s1", "p1", "recall", 1.0, grp="extra")], strategies=("a",))) as res:
        r = by(aggregate(res), "a", "recall")
    assert np.isnan(r.precision) and np.isnan(r.recall) and r["mean"] == 1.0


def test_a_strategy_without_cases_of_a_criterion_gets_n_zero_and_is_left_out_of_its_total(tmp_path):
    rows = [row("a", "s1", "p1", "provenance", 1.0), row("a", "s1", "p1", "recall", 1.0, grp="extra"),
            row("b", "s1", "p1", "recall", 0.0, grp="extra"), row("a", "s1", "p1", "token_budget", 0.0),
            row("b", "s1", "p1", "token_budget", 1.0)]
    with Results(make_run(tmp_path, rows)) as res:
        df = aggregate(res)
    r = by(df, "b", "provenance")
    assert r.n == 0 and np.isnan(r["mean"])
    t = totals(df).set_index("strategy")
    assert (t.loc["a", "total"], t.loc["a", "core_criteria"], t.loc["a", "extra"]) == (0.5, 2, 1.0)
    assert (t.loc["b", "total"], t.loc["b", "core_criteria"], t.loc["b", "extra"]) == (1.0, 1, 0.0)


def test_several_runs_need_a_choice(tmp_path):
    one = make_run(tmp_path, [row("a", "s1", "p1", "recall", 1.0)], run_id="one")
    two = make_run(tmp_path, [row("a", "s1", "p1", "recall", 0.0)], run_id="two")
    with Results([one, two]) as res:
        with pytest.raises(ValueError, match="say which"):
            aggregate(res)
        assert by(aggregate(res, run="two"), "a", "recall")["mean"] == 0.0


def test_pass_rates_of_cases_that_share_scenarios_get_the_cluster_bootstrap(tmp_path):
    # 4 scenarios x 5 cases, passing together or failing together: 10 of 20 pass, but only
    # 4 independent histories. Wilson counts 20 independent cases; the cluster bootstrap does not.
    scores = [row("a", f"s{k}", f"p{k}-{i}", "recall", 1.0 if k % 2 else 0.0) for k in range(4) for i in range(5)]
    scores += [row("a", f"t{k}", "p", "identity_persistence", 1.0 if k % 2 else 0.0) for k in range(20)]  # one case each
    run = make_run(tmp_path, scores, strategies=("a",))
    with Results(run) as res:
        df = aggregate(res)
    clustered, single = by(df, "a", "recall"), by(df, "a", "identity_persistence")
    assert clustered.pass_rate == single.pass_rate == 0.5
    assert (clustered.pass_lo, clustered.pass_hi) == (single.pass_lo, single.pass_hi)  # Wilson sees the same 10 of 20
    assert clustered.pass_interval == "bootstrap" and single.pass_interval == "wilson"
    assert clustered.pass_boot_hi - clustered.pass_boot_lo > 1.5 * (clustered.pass_hi - clustered.pass_lo)
    lo, hi, name = pass_interval_of(clustered)
    assert (lo, hi, name) == (clustered.pass_boot_lo, clustered.pass_boot_hi, "bootstrap over scenarios")
    assert pass_interval_of(single)[2] == "Wilson"


# -- the shared headline total and the gates -----------------------------------------------------


def _capability_run(tmp_path, with_control=False):
    """a has health and is worse at everything else; b lacks health (unsupported) and is better."""
    rows = []
    for k in range(2):
        rows += [row("a", f"s{k}", "p", "identity_persistence", 0.5), row("a", f"s{k}", "p", "recall", 0.5, grp="extra"),
                 row("a", f"s{k}", "p", "health", 1.0),
                 row("b", f"s{k}", "p", "identity_persistence", 0.9), row("b", f"s{k}", "p", "recall", 0.9, grp="extra"),
                 row("b", f"s{k}", "p", "health", None, "unsupported"),
                 row("a", f"s{k}", "p", "token_budget", 1.0, grp="gate"), row("b", f"s{k}", "p", "token_budget", 0.0, grp="gate")]
        if with_control:
            rows += [row("e", f"s{k}", "p", c, 0.0, name="empty", grp=g) for c, g in (("identity_persistence", "core"), ("recall", "extra"))]
            rows += [row("e", f"s{k}", "p", "health", None, "unsupported", name="empty")]
    strategies = ("a", "b", "e") if with_control else ("a", "b")
    return make_run(tmp_path, rows, strategies=strategies)


def test_the_shared_total_compares_on_the_criteria_every_strategy_supports(tmp_path):
    from harness.analysis.aggregate import shared_criteria

    with Results(_capability_run(tmp_path)) as res:
        df = aggregate(res)
    assert shared_criteria(df) == ["identity_persistence", "recall"]  # health: b has no case it could answer
    t = totals(df).set_index("strategy")
    assert t.loc["b", "shared"] == pytest.approx(0.9) and t.loc["a", "shared"] == pytest.approx(0.5)
    # the core total still counts b's unsupported health as 0, and there the capability decides: a leads
    assert t.loc["a", "total"] == pytest.approx(0.75) and t.loc["b", "total"] == pytest.approx(0.45)
    assert (t.loc["a", "supported"], t.loc["a", "shown"]) == (3, 3) and (t.loc["b", "supported"], t.loc["b", "shown"]) == (2, 3)
    # the gate (b fails every case) is in no total
    assert t.loc["b", "extra"] == pytest.approx(0.9)


def test_controls_are_scored_on_the_shared_criteria_without_deciding_them(tmp_path):
    from harness.analysis.aggregate import comparison_of, control_labels, shared_criteria

    with Results(_capability_run(tmp_path, with_control=True)) as res:
        df = aggregate(res, include_controls=True)
        controls = control_labels(res)
    assert controls == {"e"} and comparison_of(["a", "b", "e"], controls) == ["a", "b"]
    assert comparison_of(["e"], controls) == ["e"]  # only controls shown: they are the comparison
    t = totals(df, ["a", "b"]).set_index("strategy")
    assert t.loc["e", "shared"] == 0.0 and t.loc["e", "shared_criteria"] == 2
    assert shared_criteria(df, ["a"]) == ["identity_persistence", "health", "recall"]


def test_the_report_orders_by_the_shared_total_and_shows_gates_as_pass_or_fail_with_their_cases(tmp_path):
    from harness.analysis.aggregate import gates
    from harness.cli.report import as_json, markdown

    with Results(_capability_run(tmp_path)) as res:
        df = aggregate(res)
        g = gates(res, strategies=["a", "b"])
    md = markdown("r", df, False, 0, g)
    assert md.index("| criterion | b | a |") > 0  # b first: better on what both support
    assert "| shared total (2 criteria all support) | 0.90 | 0.50 |" in md
    assert "| coverage (supported of shown) | 2 of 3 | 3 of 3 |" in md
    assert "token budget" not in md.split("## Gates")[0]  # a gate is not a row of the quality table
    assert "| token budget compliance (token_budget) n=2 | FAIL 2 of 2 | pass |" in md
    assert "- `b` · token_budget · `s0/p` (fail)" in md
    obj = as_json("r", df, g)["strategies"]
    assert obj["b"]["totals"] == {"shared": pytest.approx(0.9), "coverage": [2, 3], "core": pytest.approx(0.45),
                                  "extra": pytest.approx(0.9), "reply": None, "reply_engine": None}  # no reply case in this run
    assert obj["b"]["token_budget"]["gate"]["passed"] is False and obj["b"]["token_budget"]["gate"]["failing"] == 2
    assert [c["scenario"] for c in obj["b"]["token_budget"]["gate"]["cases"]] == ["s0", "s1"]
    assert obj["a"]["token_budget"]["gate"] == {"passed": True, "failing": 0, "cases": []}

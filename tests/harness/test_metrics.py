"""Criteria carry their metrics and their role: every consumer reads them from the registration."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest
from helpers import probe, scenario, turn

from harness.analysis.aggregate import aggregate, totals
from harness.analysis.queries import criteria_meta
from harness.analysis.results import Results
from harness.analysis.cases import criterion_stats
from harness.analysis.compare import compare_strategies
from harness.cli.report import as_json, cell, grid, markdown
from harness.criteria import CRITERIA, Criterion, criterion, ok_or_fail, registry, score_probe
from harness.criteria.groups import GROUPS, Group
from harness.criteria.metrics import MetricColumn, mean, prf
from harness.format.model import Probe
from harness.replay.probes import ProbeOutcome, build_seen
from harness.run.runstore import RunWriter
from harness.run.tables import SCHEMAS


def _flags(p: Probe) -> tuple[int, int]:
    return (1 if p.expect.repeat_of else 0), len(p.expect.not_repeat_of)


def register(monkeypatch, key, fn, **kw) -> Criterion:
    """Register `fn` as criterion `key` for this test only."""
    registry()  # load the real ones first, so the temporary one comes last
    monkeypatch.setitem(CRITERIA, key, None)  # monkeypatch removes the key again when the test ends
    del CRITERIA[key]
    criterion(key, title=kw.pop("title", key.replace("_", " ")), **kw)(fn)
    return CRITERIA[key]


def row(strategy, scenario_id, probe_id, criterion_key, value, status=None, grp="core", **meta):
    status = status or ("ok" if value == 1.0 else "fail")
    return {"strategy": strategy, "strategy_name": strategy, "suite": "t", "scenario": scenario_id, "tags": [],
            "probe_id": probe_id, "criterion": criterion_key, "grp": grp,
            "value": None if status in ("error", "unsupported") else value, "passed": status == "ok", "status": status,
            "explanation": "", "evidence": [], "meta": json.dumps(meta)}


def make_run(tmp_path, rows, strategies=("a", "b")):
    w = RunWriter(tmp_path, "r")
    w.write("scores", pa.Table.from_pylist(rows, schema=SCHEMAS["scores"]))
    return w.commit({"run_id": "r", "seed": 0, "strategies": [{"label": s, "name": s} for s in strategies],
                     "criteria": [{"key": k, "title": c.title, "group": c.group} for k, c in registry().items()]})


def errored_outcome(**expect) -> ProbeOutcome:
    sc = scenario([turn("t1", "exports fail", 0), probe("p", "exports", 1, **expect)])
    return ProbeOutcome(sc, sc.events[1], 1, None, error="context() raised RuntimeError: down", seen=build_seen(sc))


def test_a_case_without_a_verdict_gets_the_counts_its_metric_gives_it_when_scored():
    (s,) = [x for x in score_probe(errored_outcome(repeat_of="old", not_repeat_of=("a", "b"))) if x.criterion == "repeat_issue"]
    assert s.status == "error" and (s.meta["tp"], s.meta["fp"], s.meta["fn"]) == (0, 2, 1)


def test_an_unsupported_case_is_counted_by_its_metric_too(monkeypatch):
    register(monkeypatch, "needs_flags", lambda o: None, requires="flags", metric=prf(_flags),
             applies=lambda p: bool(p.expect.not_repeat_of))
    o = errored_outcome(not_repeat_of=("a",))
    (s,) = [x for x in score_probe(o) if x.criterion == "needs_flags"]
    assert s.status == "unsupported" and s.meta == {"tp": 0, "fp": 1, "fn": 0}


def test_a_verdict_without_the_counts_its_metric_sums_is_a_scorer_error(monkeypatch):
    register(monkeypatch, "forgets_counts", lambda o: ok_or_fail("forgets_counts", 1.0, True, "fine"), metric=prf(_flags))
    sc = scenario([turn("t1", "exports fail", 0), probe("p", "exports", 1)])
    from stores.protocol import Bundle

    o = ProbeOutcome(sc, sc.events[1], 1, Bundle([], "", 0), seen=build_seen(sc))
    (s,) = [x for x in score_probe(o) if x.criterion == "forgets_counts"]
    assert s.status == "error" and "recorded no tp, fp, fn count" in s.explanation


@pytest.mark.parametrize("kw, message", [
    (dict(group="gates"), "unknown criterion group 'gates' (known: core, extra, reply, reply_engine, expiry, rank, gate, decisions, decision_gates)"),
    (dict(level="turn"), "level must be one of probe, scenario"),
    (dict(metric=object()), "lacks name, headline, columns, counts, summarize, no_verdict"),
])
def test_registration_refuses_an_unknown_group_level_or_metric(kw, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        criterion("bad", title="bad", **kw)
    assert "bad" not in CRITERIA


def test_a_metric_may_not_shadow_the_sums_every_metric_gets():
    from harness.criteria.metrics import PRF

    with pytest.raises(ValueError, match="metric key 'cases'"):
        criterion("bad", title="bad", metric=PRF(_flags, counts=("cases", "fp", "fn")))


def test_a_criterion_registered_with_a_metric_is_aggregated_by_it_in_every_consumer(monkeypatch, tmp_path):
    """A new precision/recall criterion is one declaration: aggregate, CI stats, compare, the report
    (table cell, markdown note, JSON) and the app's criteria meta read it without naming it."""
    register(monkeypatch, "flag_detection", lambda o: None, title="flag detection", metric=prf(_flags))
    rows = [row("a", "s1", "p1", "flag_detection", 1.0, tp=1, fp=0, fn=0), row("a", "s1", "p2", "flag_detection", 0.0, tp=0, fp=1, fn=0),
            row("a", "s2", "p3", "flag_detection", None, "error", tp=0, fp=0, fn=1),
            row("b", "s1", "p1", "flag_detection", 1.0, tp=1, fp=0, fn=0), row("b", "s1", "p2", "flag_detection", 1.0, tp=0, fp=0, fn=0),
            row("b", "s2", "p3", "flag_detection", 0.0, tp=0, fp=0, fn=1)]
    with Results(make_run(tmp_path, rows)) as res:
        df = aggregate(res, run="r")
        stats = criterion_stats(res).set_index("strategy")
        cmp = compare_strategies(res, "a", "b").criteria.iloc[0]
        meta = criteria_meta(res).set_index("criterion")
    a = df[df.strategy == "a"].iloc[0]
    # a: tp 1, fp 1, fn 1 -> P 1/2, R 1/2, F1 1/2 (the plain mean would be 1/3)
    assert (a.precision, a.recall, a["mean"]) == (0.5, 0.5, 0.5)
    assert stats.loc["a", "mean"] == 0.5 and cmp.mean_a == 0.5 and cmp.mean_b == pytest.approx(2 / 3)
    cells = as_json("r", df)["strategies"]["a"]["flag_detection"]
    assert (cells["mean"], cells["precision"], cells["recall"]) == (0.5, 0.5, 0.5)
    assert " P 0.50 R 0.50 (1 errors)" in cell(a.to_dict())
    assert "For flag detection the mean is F1, with precision (P) and recall (R). " in markdown("r", df, False, 0)
    assert (meta.loc["flag_detection", "headline"], meta.loc["flag_detection", "metric_columns"]) == ("F1", ("precision", "recall"))


def test_a_metric_with_its_own_columns_adds_them_to_the_aggregate(monkeypatch, tmp_path):
    from dataclasses import dataclass

    import numpy as np

    @dataclass(frozen=True)
    class Worst:
        """The smallest case value, with the share of zeros beside it."""

        name: str = "worst"
        headline: str = "min"
        columns: tuple = (MetricColumn("zeros", "Z"),)
        counts: tuple = ("zero",)

        def summarize(self, sums):
            with np.errstate(invalid="ignore", divide="ignore"):
                return {"mean": 1 - sums["zero"] / sums["cases"], "zeros": sums["zero"] / sums["cases"]}

        def no_verdict(self, case):
            return {"zero": 1}

    register(monkeypatch, "worst_case", lambda o: None, metric=Worst())
    rows = [row("a", "s1", "p1", "worst_case", 1.0, zero=0), row("a", "s1", "p2", "worst_case", 0.0, zero=1)]
    with Results(make_run(tmp_path, rows, strategies=("a",))) as res:
        df = aggregate(res)
    r = df.iloc[0]
    assert "zeros" in df.columns and (r["mean"], r.zeros) == (0.5, 0.5)
    assert as_json("r", df)["strategies"]["a"]["worst_case"]["zeros"] == 0.5


def test_the_group_decides_the_total_a_criterion_feeds_and_its_row_label(monkeypatch, tmp_path):
    monkeypatch.setitem(GROUPS, "gate", Group("gate", "gates", total=None, marker=" ·gate"))
    register(monkeypatch, "stays_out", lambda o: None, group="gate")
    rows = [row("a", "s1", "p1", "recall", 1.0, grp="extra"), row("a", "s1", "p1", "token_budget", 1.0),
            row("a", "s1", "p1", "stays_out", 0.0, grp="gate")]
    with Results(make_run(tmp_path, rows, strategies=("a",))) as res:
        df = aggregate(res)
    t = totals(df).iloc[0]
    assert (t.total, t.extra) == (1.0, 1.0) and "gate_criteria" not in t  # a group without a total is in no mean
    _, table = grid(df, titled=False)
    labels = [r[0] for r in table]
    # the reply group has no case here, so it has no total row
    assert "stays_out ·gate n=1" in labels and labels[-2:] == ["total (core, equal weight)", "total (extras)"]


def test_the_default_metric_is_the_mean_and_every_shipped_criterion_declares_a_known_group():
    reg = registry()
    assert all(c.group in GROUPS for c in reg.values())
    assert reg["recall"].metric == mean() and reg["repeat_issue"].metric.headline == "F1"

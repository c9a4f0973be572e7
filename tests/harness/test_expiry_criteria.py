"""The expiry criteria: `expiry` (out of the context AND the receipt names the rule) and
`expiry_classes` (accuracy over labelled turns, its counts, its threshold), through real replays.
The stage reads classes with the rules (`expiry.classifier=rules`, a named variant), whose rule
names the explanations quote; the learned default is tested in tests/stores/test_frontend.py."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest
from helpers import probe, resolve, scenario, turn

from harness.analysis.rescore import rescore
from harness.analysis.results import Results
from harness.criteria import registry, score_probe, score_scenario
from harness.criteria.expiry import THRESHOLD
from harness.criteria.metrics import accuracy
from harness.format.model import TurnGold
from harness.replay.probes import replay
from harness.run.runner import execute
from harness.run.runstore import read_manifest
from stores.registry import parse_spec

DAYS = 60 * 24


def story(**expect):
    """March anger, a wait a resolution closed, a plan tier, then a September question that expects them gone."""
    s = scenario([
        turn("angry-1", "This is unacceptable, the third failed sync this month.", 0, session="mar"),
        turn("mar-2", "We're still waiting on the new sync token from your team.", 1, session="mar"),
        turn("mar-fix", "Re-issued the sync token and re-ran the invoice sync.", 9, session="mar", role="agent", kind="action"),
        resolve("mar", "Sync token revoked; re-issued it.", 20),
        turn("plan-1", "We're on the Team plan with 45 seats.", 30, session="mar"),
        probe("p-sep", "switch invoices to annual billing", 190 * DAYS, session="sep", budget=4000, **expect),
        turn("sep-1", "Could we switch invoices to annual billing?", 190 * DAYS + 1, session="sep"),
    ], id="sept", subjects=("c1",))
    return replace(s, turn_gold={"angry-1": TurnGold(label=("sentiment",)), "plan-1": TurnGold(label=("profile",)),
                                 "mar-2": TurnGold(label=("episodic",))})


def scores_of(spec: str, s, key: str):
    strategy = parse_spec(spec).build()
    r = replay(s, strategy)
    if registry()[key].level == "probe":
        return [x for o in r.outcomes for x in score_probe(o) if x.criterion == key]
    extra = {"capabilities": frozenset(strategy.capabilities), "memory_classes": r.memory_classes}
    return [x for x in score_scenario(s, r.outcomes, extra) if x.criterion == key]


def test_expired_items_out_of_the_context_with_their_rule_pass():
    s = story(expired=("angry-1", "mar-2", "plan-1"))
    s = replace(s, turn_gold={**s.turn_gold, "plan-1": TurnGold(label=("system_owned",))})  # the plan tier: another system's value
    (sc,) = scores_of("history_stuffing:expiry=on,expiry.classifier=rules", s, "expiry")
    assert (sc.status, sc.value) == ("ok", 1.0)
    assert "angry-1: expired: sentiment older than 7 days, said 2026-03-02" in sc.explanation
    assert "plan-1: not stored: system-owned fact (plan tier); pointer kept" in sc.explanation


def test_an_item_removed_by_another_class_rule_or_the_catch_all_fails():
    # the story labels the plan tier a profile fact; the classifier calls it system-owned and that rule removes it
    (sc,) = scores_of("history_stuffing:expiry=on,expiry.classifier=rules", story(expired=("angry-1", "plan-1")), "expiry")
    assert sc.status == "fail" and sc.value == 0.5 and sc.evidence == ("plan-1",)
    assert "plan-1 was removed by the system_owned rule" in sc.explanation and "its gold class is profile" in sc.explanation
    odd = scenario([
        turn("x-1", "Blue seven kettle.", 0, session="a"),  # fits no class: only the catch-all removes it
        probe("p", "hello again", 500 * DAYS, session="b", budget=4000, expired=("x-1",)),
        turn("b-1", "Hello again.", 500 * DAYS + 1, session="b"),
    ], id="odd", subjects=("c1",))
    (sc,) = scores_of("history_stuffing:expiry=on,expiry.classifier=rules", replace(odd, turn_gold={"x-1": TurnGold(label=("episodic",))}), "expiry")
    assert sc.status == "fail" and "catch-all for unclassified items" in sc.explanation
    assert "a classification miss (its gold class is episodic)" in sc.explanation


def test_an_item_that_is_only_out_of_the_budget_does_not_count_as_expired():
    s = story(expired=("mar-fix",))  # the support record lives a year: only the budget can drop it
    (sc,) = scores_of("history_stuffing:expiry=on,expiry.classifier=rules", replace(s, events=tuple(
        replace(e, budget=30) if hasattr(e, "budget") else e for e in s.events)), "expiry")
    assert sc.status == "fail" and "its receipt says 'budget', not an expiry rule" in sc.explanation


def test_an_expired_item_in_the_context_fails():
    (sc,) = scores_of("history_stuffing:expiry=on,expiry.classifier=rules", story(expired=("mar-fix",)), "expiry")
    assert sc.status == "fail" and sc.value == 0.0 and "mar-fix: 'Re-issued the sync token" in sc.explanation
    assert sc.evidence == ("mar-fix",)


def test_a_strategy_without_the_stage_is_unsupported_for_both():
    (a,) = scores_of("history_stuffing", story(expired=("angry-1",)), "expiry")
    (b,) = scores_of("history_stuffing", story(), "expiry_classes")
    assert a.status == b.status == "unsupported"
    assert b.meta == {"correct": 0, "judged": 3}  # a case without a verdict counts every labelled turn wrong


def test_the_oracle_keeps_the_gold_expired_items_out_and_names_the_gold():
    (sc,) = scores_of("oracle", story(expired=("angry-1",)), "expiry")
    assert sc.status == "ok" and "named by the probe's gold (oracle control)" in sc.explanation
    (c,) = scores_of("oracle", story(), "expiry_classes")
    assert c.status == "unsupported" and "no memory class" in c.explanation


def test_the_classes_are_judged_against_the_labels_with_their_counts_and_turns():
    (sc,) = scores_of("session_aware:expiry=on,expiry.classifier=rules", story(), "expiry_classes")
    assert sc.meta["correct"] == 2 and sc.meta["judged"] == 3 and sc.value == pytest.approx(2 / 3)
    assert sc.passed is (2 / 3 >= THRESHOLD) and sc.status == "fail"
    turns = {t["id"]: t for t in sc.meta["turns"]}
    assert turns["plan-1"] == {"id": "plan-1", "labels": ["profile"], "assigned": "system_owned",
                               "rule": "system-owned: plan tier"}
    assert "plan-1 labelled profile but classed system_owned (system-owned: plan tier)" in sc.explanation


def test_a_scenario_without_labelled_turns_is_no_case():
    assert scores_of("session_aware:expiry=on,expiry.classifier=rules", replace(story(), turn_gold={}), "expiry_classes") == []


def test_accuracy_sums_items_over_cases_not_case_shares():
    m = accuracy(lambda case: case)
    got = m.summarize({"value": np.array([1.5]), "cases": np.array([2.0]), "correct": np.array([1 + 18]),
                       "judged": np.array([2 + 20])})
    assert got["mean"][0] == pytest.approx(19 / 22)
    assert m.no_verdict(7) == {"correct": 0, "judged": 7}


def test_a_run_records_the_stage_in_its_manifest_and_a_rescore_keeps_the_classes(tmp_path):
    r = execute([story(expired=("angry-1",))], [parse_spec("tfidf:expiry=on,expiry.sentiment_days=3"), parse_spec("tfidf")],
                tmp_path, run_id="exp")
    m = {s["label"]: s for s in read_manifest(r.path)["strategies"]}
    staged = m["tfidf[expiry,expiry.sentiment_days=3]"]
    assert "expiry" in staged["capabilities"] and staged["expiry"]["sentiment_days"] == 3.0
    assert "expiry" not in m["tfidf"]["capabilities"] and "expiry" not in m["tfidf"]
    again = rescore(r.path, tmp_path)
    with Results(r.path) as a, Results(again) as b:
        q = "SELECT strategy, criterion, status, value, meta FROM scores WHERE criterion LIKE 'expiry%' ORDER BY ALL"
        assert a.rows(q) == b.rows(q) and len(a.rows(q)) == 4
        meta = json.loads(a.rows("SELECT meta FROM scores WHERE criterion = 'expiry_classes' AND status <> 'unsupported'")[0][0])
        assert meta["judged"] == 3


def test_the_registry_keeps_the_documented_order_whichever_criteria_module_was_imported_first(monkeypatch):
    import harness.criteria as criteria

    documented = list(registry())
    monkeypatch.setattr(criteria, "CRITERIA", dict(reversed(list(registry().items()))))  # the expiry module first
    monkeypatch.setattr(criteria, "_loaded_for", None)
    assert list(criteria.registry()) == documented

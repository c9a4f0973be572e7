"""The scenario generator: deterministic, valid, labelled from its plan, enough cases per criterion."""

from __future__ import annotations

import re

import pytest
import yaml

from harness.criteria import registry
from harness.generate import catalog, generate_suite, label_counts, write_suite
from harness.format.loader import load_suite, validate_paths


def test_same_seed_gives_the_same_bytes():
    assert generate_suite(12, seed=5, profile="small") == generate_suite(12, seed=5, profile="small")


def test_another_seed_gives_other_files():
    assert generate_suite(12, seed=5, profile="small") != generate_suite(12, seed=6, profile="small")


@pytest.mark.parametrize("profile,customers", [("small", 20), ("realistic", 20), ("long-history", 4)])
def test_generated_files_validate(tmp_path, profile, customers):
    write_suite(tmp_path, customers, seed=1, profile=profile)
    assert validate_paths([str(tmp_path)]) == []


def test_every_kind_of_label_comes_out_of_the_plan():
    c = label_counts(generate_suite(40, seed=2))
    for key in ("identity", "preferences", "superseded", "include", "exclude", "above", "repeat_of", "evidence",
                "not_repeat_of", "fix_before", "on", "forget", "health=healthy", "health=watch", "health=at_risk"):
        assert c[key] > 0, key
    assert c["subjects"] == 40 and c["scenarios"] < 40  # some files hold several customers (isolation)


def _report_patterns() -> list[tuple[str, re.Pattern]]:
    pats = []
    for key, issue in catalog.ISSUES.items():
        pats += [(key, t) for t in issue.reports]
    for area, texts in catalog.OUTAGES.items():
        pats += [(f"outage:{area}", t) for t in texts["report"]]
    return [(k, re.compile(re.sub(r"\\\{\w+\\\}", ".+?", re.escape(t)) + "$")) for k, t in pats]


def _issue_of(text: str, patterns) -> str:
    keys = {k for k, p in patterns if p.search(text)}
    assert len(keys) == 1, (text, keys)
    return keys.pop()


def test_a_look_alike_is_never_labelled_a_repeat():
    patterns = _report_patterns()
    checked = 0
    for text in generate_suite(60, seed=3).values():
        doc = yaml.safe_load(text)
        reports = {e["id"].removesuffix("-report"): e["turn"] for e in doc["events"] if str(e.get("id", "")).endswith("-report")}
        session = None
        for e in doc["events"]:
            session = e.get("session", session)
            exp = e.get("expect", {}) if "probe" in e else {}
            if not exp or session not in reports:
                continue
            mine = _issue_of(reports[session], patterns)
            if "repeat_of" in exp:
                assert _issue_of(reports[exp["repeat_of"]], patterns) == mine
                checked += 1
            for other in exp.get("not_repeat_of", []):
                assert _issue_of(reports[other], patterns) != mine
                checked += 1
    assert checked > 50


def test_a_repeat_is_told_in_other_words_than_its_original():
    for text in list(generate_suite(30, seed=4).values()):
        doc = yaml.safe_load(text)
        turns = {e["id"]: e["turn"] for e in doc["events"] if "turn" in e}
        session = None
        for e in doc["events"]:
            session = e.get("session", session)
            if "probe" in e and "repeat_of" in e.get("expect", {}):
                assert turns[f"{session}-report"] != turns[f"{e['expect']['repeat_of']}-report"]


NOT_GENERATED = {"memory_extraction", "returning_customer", "reply_known_fix", "reply_skips_failures"}
"""Criteria whose gold (seed 002: typed memories, the reply) the generator does not write yet; they are
judged on the canonical suite only. When the generator starts writing one, take it off this list."""


@pytest.mark.slow
def test_a_200_customer_suite_gives_every_criterion_100_cases(tmp_path):
    write_suite(tmp_path, 200, seed=0)
    scenarios = load_suite([str(tmp_path)])
    for key, c in registry().items():
        if c.level == "decision":  # a decision policy's turns: the generator writes no decision gold
            continue
        n = len(scenarios) if c.level == "scenario" else sum(c.applies(p) for s in scenarios for p in s.probes)
        if key in NOT_GENERATED:
            assert n == 0, f"the generator now writes gold for {key}: take it off NOT_GENERATED ({n} cases)"
        else:
            assert n >= 100, (key, n)

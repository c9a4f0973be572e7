"""The seed 002 criteria: typed memory extraction and the reply the context leads to."""

from __future__ import annotations

from dataclasses import replace

import pytest
from helpers import probe, scenario, turn

from harness.criteria import score_probe
from harness.format.model import ExpectMemory, TextNeedle
from harness.replay.probes import replay
from stores.registry import strategy_class
from stores.reply.model import SupportReply

WEEK = 60 * 24 * 7
FIRST = [
    turn("a1", "My Acme PDF Suite crashes whenever I upload a large PDF.", 0),
    turn("a3", "I restarted it but that did not help.", 2),
    turn("a4", "Please clear the cache and try again.", 3, role="agent"),
    turn("a5", "Cleared the cache, still crashing.", 4),
    turn("a6", "Updated the app and it fixed it.", 5),
]
GOLD_MEMORIES = (
    ExpectMemory(type="INCIDENT", text="crash", outcome=None, status="resolved", source="a1"),
    ExpectMemory(type="ATTEMPT", text="restart", outcome="failed", status=None, source="a3"),
    ExpectMemory(type="ATTEMPT", text="cache", outcome="failed", status=None, source="a5"),
    ExpectMemory(type="ATTEMPT", text="update", outcome="worked", status=None, source="a6"),
    ExpectMemory(type="PROFILE", text="acme pdf suite", outcome=None, status=None, source=None),
)


def seed_scenario(**expect):
    gold = dict(returning=True, memories=GOLD_MEMORIES, known_fixes=("a6",), known_failures=("a3", "a5"))
    gold.update(expect)
    return scenario([*FIRST,
                     probe("p-back", "The application is crashing again when I upload a PDF.", WEEK, session="s2",
                           on="b1", **gold),
                     turn("b1", "The application is crashing again when I upload a PDF.", WEEK + 1, session="s2")])


def scores(name, sc=None, **reply_changes):
    sc = sc or seed_scenario()
    (o,) = replay(sc, strategy_class(name)()).outcomes
    if reply_changes:
        o.reply = replace(o.reply, **reply_changes)
    return {s.criterion: s for s in score_probe(o)}


def test_structured_holds_exactly_the_gold_memories_and_its_reply_passes():
    s = scores("structured")
    m = s["memory_extraction"]
    assert (m.value, m.status, m.meta["tp"], m.meta["fp"], m.meta["fn"]) == (1.0, "ok", 5, 0, 0)
    for key in ("returning_customer", "reply_known_fix", "reply_skips_failures"):
        assert (s[key].value, s[key].status) == (1.0, "ok"), s[key].explanation
    assert "leads with 'Update application'" in s["reply_known_fix"].explanation


def test_a_raw_turn_strategy_has_no_typed_memories_but_its_context_still_gets_a_reply():
    s = scores("history_stuffing")
    assert s["memory_extraction"].status == "unsupported" and s["memory_extraction"].meta["fn"] == 5
    assert all(s[k].status == "ok" for k in ("returning_customer", "reply_known_fix", "reply_skips_failures"))


def test_an_empty_context_misses_the_returning_customer_and_the_fix():
    s = scores("empty")
    assert s["returning_customer"].value == 0.0 and "held no relevant history" in s["returning_customer"].explanation
    assert s["reply_known_fix"].value == 0.0 and "the reply knows no fix" in s["reply_known_fix"].explanation
    assert s["reply_skips_failures"].value == 0.0 and "not listed: a3, a5" in s["reply_skips_failures"].explanation


def test_missed_and_extra_memories_are_named_and_counted():
    gold = (*GOLD_MEMORIES[:4], ExpectMemory(type="PROFILE", text="iphone", outcome=None, status=None, source=None))
    m = scores("structured", seed_scenario(memories=gold))["memory_extraction"]
    assert (m.meta["tp"], m.meta["fp"], m.meta["fn"]) == (4, 1, 1) and m.value == pytest.approx(0.8)
    assert "missed: PROFILE 'iphone'" in m.explanation and "not in the gold: PROFILE 'Uses Acme PDF Suite'" in m.explanation


def test_proposing_a_known_failure_scores_zero_however_many_are_listed():
    s = scores("structured", next_steps=("Cleared application cache",))
    f = s["reply_skips_failures"]
    assert f.value == 0.0 and "proposes 'Cleared application cache' as the next step, but it already failed (a5)" in f.explanation


def test_a_known_fix_that_does_not_lead_is_worth_half():
    two = seed_scenario(known_fixes=("a6", TextNeedle("restart")))
    s = scores("structured", two, known_fixes=("Restart application", "Update application"),
               sources={"Restart application": ("a3",), "Update application": ("a6",)})
    k = s["reply_known_fix"]
    assert k.value == pytest.approx(0.5) and k.status == "fail" and "not with the gold first fix a6" in k.explanation


def test_a_first_contact_called_returning_fails():
    sc = scenario([turn("a1", "My Acme PDF Suite crashes on upload.", 0),
                   probe("p1", "Still crashing.", 1, returning=False)])
    (o,) = replay(sc, strategy_class("structured")()).outcomes
    assert {s.criterion: s.value for s in score_probe(o)}["returning_customer"] == 1.0
    o.reply = replace(o.reply, is_returning_customer=True)
    assert {s.criterion: s.value for s in score_probe(o)}["returning_customer"] == 0.0


def test_a_reply_the_engine_could_not_give_is_an_error_row():
    (o,) = replay(seed_scenario(), strategy_class("structured")()).outcomes
    o.reply, o.reply_error = None, "the reply engine raised ValueError: boom"
    s = {x.criterion: x for x in score_probe(o)}
    assert s["returning_customer"].status == "error" and "boom" in s["returning_customer"].explanation


def test_the_reply_round_trips_through_its_json():
    (o,) = replay(seed_scenario(), strategy_class("structured")()).outcomes
    assert isinstance(o.reply, SupportReply) and SupportReply.from_dict(o.reply.to_dict()) == o.reply


def test_a_fix_known_from_another_line_than_the_gold_turn_still_counts():
    s = scores("structured", sources={"Update application": ("s1#resolution",), "Restart application": ("a3",),
                                      "Cleared application cache": ("a5",)})
    assert s["reply_known_fix"].value == 1.0  # a6 says "Updated the app and it fixed it": the same step
    other = scores("structured", known_fixes=("Reinstall application",), sources={"Reinstall application": ("zz",)})
    assert other["reply_known_fix"].value == 0.0

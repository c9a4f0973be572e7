"""Matching typed memories to `expect.memories` gold: the rule of the scenario format, one to one."""

from __future__ import annotations

import pytest

from harness.criteria.typed_memory import match_memories, matches


def mem(type_, text, outcome=None, status=None, sources=("t1",)):
    return {"type": type_, "text": text, "outcome": outcome, "status": status, "source_ids": sources}


def test_type_outcome_status_needle_and_source_must_all_agree():
    m = mem("ATTEMPT", "Update application", "worked", sources=("t7",))
    assert matches({"type": "ATTEMPT", "text": "UPDATE", "outcome": "worked", "source": "t7"}, m)
    assert not matches({"type": "INCIDENT", "text": "update"}, m)
    assert not matches({"type": "ATTEMPT", "text": "update", "outcome": "failed"}, m)
    assert not matches({"type": "ATTEMPT", "text": "reinstall"}, m)
    assert not matches({"type": "ATTEMPT", "text": "update", "source": "t3"}, m)
    assert matches({"type": "INCIDENT", "text": "crash", "status": "open"}, mem("INCIDENT", "App crashes", status="open"))


def test_one_memory_answers_one_gold_memory_and_the_best_pairing_is_found():
    gold = [{"type": "ATTEMPT", "text": "a"}, {"type": "ATTEMPT", "text": "ab"}]
    memories = [mem("ATTEMPT", "ab", "failed"), mem("ATTEMPT", "a", "failed")]  # greedy would give "ab" to "a"
    r = match_memories(gold, memories)
    assert r.pairs == ((0, 1), (1, 0)) and r.recall == r.precision == 1.0
    dup = match_memories(gold[:1] * 2, memories[1:])
    assert (dup.recall, dup.precision, dup.missed) == (0.5, 1.0, (1,))


def test_extra_memories_cost_precision_and_missing_ones_cost_recall():
    gold = [{"type": "ATTEMPT", "text": "restart", "outcome": "failed"}, {"type": "PROFILE", "text": "acme"}]
    memories = [mem("ATTEMPT", "Restart application", "failed"), mem("ATTEMPT", "Upload crash", "failed"),
                mem("PROFILE", "Uses Globex")]
    r = match_memories(gold, memories)
    assert r.missed == (1,) and r.extra == (1, 2)
    assert (r.precision, r.recall) == (pytest.approx(1 / 3), 0.5) and r.f1 == pytest.approx(0.4)


def test_empty_sets():
    assert match_memories([], []).f1 == 1.0
    assert match_memories([{"type": "PROFILE", "text": "x"}], []).f1 == 0.0
    assert match_memories([], [mem("PROFILE", "x")]).precision == 0.0

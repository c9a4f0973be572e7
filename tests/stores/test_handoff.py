"""The handoff brief: seven sections in order, a hard ceiling, whole lines, an exact receipt."""

from __future__ import annotations

import re

import pytest
from store_events import at, request, two_customer_history

from stores.session.handoff import HEADINGS
from stores.session.session_aware import SessionAware
from stores.tokens import count_tokens

REQ = request("a3", "CSV export fails with error 502 again", at(days=10, minutes=5))
CITED = re.compile(r"\[([^\]\s]+#[^\]\s]+)\]")


@pytest.fixture(scope="module")
def strategy():
    s = SessionAware()
    for e in two_customer_history():
        s.observe(e)
    return s


def test_seven_sections_in_the_reference_order(strategy):
    h = strategy.handoff(REQ)
    assert tuple(t for t, _ in h.sections) == HEADINGS
    positions = [h.text.index(t) for t in HEADINGS]
    assert positions == sorted(positions)
    assert h.tokens <= 4000 and count_tokens(h.text) == h.tokens


def test_content_lands_in_the_right_sections(strategy):
    body = dict(strategy.handoff(REQ).sections)
    assert "a1#1" in body["Profile facts that matter"]  # "I'm Dana ... enterprise plan"
    assert "a3#1" in body["The active issue"]
    assert "known fix" in body["Related history"] and "a1#resolution" in body["Related history"]
    assert "Latest request" in body["What the next agent needs now"]


@pytest.mark.parametrize("budget", [0, 5, 20, 40, 60, 90, 130, 200, 4000])
def test_ceiling_never_exceeded_and_lines_cut_whole(strategy, budget):
    full_lines = set(strategy.handoff(REQ).text.split("\n"))
    h = strategy.handoff(REQ, budget_tokens=budget)
    assert count_tokens(h.text) == h.tokens <= budget
    assert all(line in full_lines for line in h.text.split("\n") if line)


@pytest.mark.parametrize("budget", [40, 90, 130, 4000])
def test_receipt_is_exactly_what_the_text_cites(strategy, budget):
    h = strategy.handoff(REQ, budget_tokens=budget)
    assert set(h.used_ids) == set(CITED.findall(h.text))
    assert len(h.used_ids) == len(set(h.used_ids))


def test_default_budget_is_4000_and_the_request_budget_bounds_only_context(strategy):
    small = request("a3", REQ.task, REQ.now, budget=10)
    assert strategy.handoff(small).text == strategy.handoff(REQ).text
    assert strategy.params.handoff_budget == 4000

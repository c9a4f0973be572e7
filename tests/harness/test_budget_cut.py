"""Going over the budget never pays: the retrieval criteria judge the context cut at the budget
(`stores.packing.cut_to_budget`), the gates judge the whole bundle."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.analysis.aggregate import aggregate
from harness.analysis.results import Results
from harness.format.loader import load_suite
from harness.run.runner import execute
from stores.packing import cut_to_budget
from plugin_dist import Plugins
from stores.registry import parse_specs
from stores.tokens import count_text_tokens, count_tokens

CANONICAL = Path("datasets/canonical")
RETRIEVAL = ("identity_persistence", "preference_surfacing", "session_ranking", "repeat_issue", "recall",
             "known_fix_first", "stale_suppression", "returning_customer", "reply_known_fix", "reply_skips_failures")
"""Every criterion that reads the context (the reply ones through the reply engine, which reads the cut too)."""


def test_a_text_within_its_budget_is_received_whole():
    text = "Memory for customer c1\n[a] first line\n[b] second line"
    assert cut_to_budget(text, count_text_tokens(text), ["[b] second line", "[a] first line"]) == text


def test_the_cut_keeps_the_header_then_the_best_ranked_lines_that_fit_in_text_order():
    header, a, b, c = "Memory for customer c1", "[a] " + "alpha " * 10, "[b] beta", "[c] " + "gamma " * 3
    text = "\n".join([header, a, b, c])
    budget = count_tokens(header) + count_tokens(b) + count_tokens(c)
    # ranked c, a, b: c fits, a does not (skipped, not a stop), b still fits; kept in the text's order
    assert cut_to_budget(text, budget, [c, a, b]) == "\n".join([header, b, c])
    assert count_text_tokens(cut_to_budget(text, budget, [c, a, b])) <= budget
    # lines are whole: nothing of the line that did not fit is kept
    assert "alpha" not in cut_to_budget(text, budget, [c, a, b])


@pytest.fixture(scope="module")
def over_budget_run(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    Plugins(tmp_path_factory.mktemp("plugins"), mp).strategy("over_budget", "shortcut_strategies:OverBudget")
    try:
        scenarios = load_suite([str(CANONICAL)])
        run = execute(scenarios, parse_specs("history_stuffing,over_budget"), tmp_path_factory.mktemp("runs"), run_id="over")
    finally:
        mp.undo()
    with Results(run.path) as res:
        yield res, aggregate(res)


def test_an_over_budget_strategy_fails_the_token_budget_gate(over_budget_run):
    _, df = over_budget_run
    gate = df[(df.criterion == "token_budget")].set_index("strategy")
    assert gate.loc["history_stuffing", "mean"] == 1.0
    assert gate.loc["over_budget", "mean"] < 0.5  # most canonical probes hold more history than their budget


@pytest.mark.parametrize("criterion", RETRIEVAL)
def test_an_over_budget_strategy_gains_nothing_on_retrieval_criteria(over_budget_run, criterion):
    res, df = over_budget_run
    cells = df[df.criterion == criterion].set_index("strategy")
    assert cells.loc["over_budget", "n"] == cells.loc["history_stuffing", "n"] > 0
    assert cells.loc["over_budget", "mean"] <= cells.loc["history_stuffing", "mean"] + 1e-9, cells["mean"].to_dict()


def test_what_the_cut_removed_is_explained_as_past_the_budget_cut(over_budget_run):
    res, _ = over_budget_run
    rows = res.rows("""SELECT explanation FROM scores WHERE strategy = 'over_budget' AND status = 'fail'
                       AND criterion IN ('identity_persistence', 'recall')""")
    assert any("past the budget cut" in r[0] for r in rows), rows[:3]


def test_the_app_marks_the_same_cut_as_the_criteria(over_budget_run):
    from harness.analysis.queries import candidates, gold_check, parse_expect, received_context

    res, _ = over_budget_run
    cases = res.df("""SELECT s.scenario, s.probe_id, s.value, p.context, p.budget, e.expect
                      FROM scores s JOIN probes p USING (strategy, scenario, probe_id)
                      JOIN events e ON e.scenario = s.scenario AND e.kind = 'probe' AND e.item_id = s.probe_id
                      WHERE s.strategy = 'over_budget' AND s.criterion = 'recall'""")
    cut = 0
    for r in cases.itertuples(index=False):
        cands = candidates(res, "over_budget", r.scenario, r.probe_id)
        gold = gold_check(parse_expect(r.expect), cands, r.context, int(r.budget))
        wanted = gold[gold["kind"] == "must include"]  # the rows of `include`, the key recall judges
        assert wanted["ok"].mean() == pytest.approx(r.value), (r.scenario, r.probe_id)
        seen = received_context(cands, r.context, int(r.budget))
        assert count_text_tokens(seen) <= r.budget
        cut += seen != r.context
    assert cut > 5


def test_the_reply_engine_reads_the_context_the_model_receives(monkeypatch):
    """An over-budget context reaches the reply engine cut at the budget, as it reaches the criteria."""
    from helpers import probe, scenario, turn
    from shortcut_strategies import OverBudget

    import harness.run.replay as replay_module

    history = [turn(f"t{i}", f"Message {i} about the nightly export job that keeps failing on batch {i}.", i) for i in range(40)]
    sc = scenario([*history, probe("p", "export still failing", 50, budget=120, include=("t39",))])
    seen: list[tuple[int, str]] = []

    class Recorder:
        def reply(self, request, bundle, memories=None):
            seen.append((request.budget_tokens, bundle.text))
            raise RuntimeError("recorded")  # the reply itself does not matter here

    monkeypatch.setattr(replay_module, "reply_engine", lambda: Recorder())
    out = replay_module.replay(sc, OverBudget())
    (o,) = out.outcomes
    ((budget, text),) = seen
    assert count_text_tokens(text) <= budget == 120 < count_text_tokens(o.bundle.text)
    assert "Message 39" in text and "Message 0 " not in text  # the newest history survives the cut, as packing would keep it

"""The shortcut controls: what each rule ranks first, that they are controls, and that the
report's separation verdict can say "not separated"."""

from __future__ import annotations

import json

from helpers import probe, resolve, scenario, turn

from harness.cli import main
from harness.generate import write_suite
from harness.format.loader import load_suite
from harness.run.runner import execute
from stores.protocol import ContextRequest
from stores.registry import CONTROLS, DEFAULT_STRATEGIES, SHORTCUTS, parse_specs, strategy_class
from stores.shortcuts import SHORTCUTS as CLASSES


def _history():
    return [
        turn("a1", "Hi, I'm Dana from Globex, workspace WS-1.", 0, session="s1"),
        turn("a2", "We prefer email.", 1, session="s1"),
        turn("a3", "Our export to S3 fails.", 2, session="s1"),
        turn("g1", "Raised the export timeout.", 3, session="s1", role="agent", kind="action"),
        resolve("s1", "Export fixed by raising the timeout.", 4),
        turn("b1", "Billing question about the invoice.", 100, session="s2"),
        turn("b2", "It is the VAT line.", 101, session="s2"),
        turn("h1", "Added the VAT id.", 102, session="s2", role="agent", kind="action"),
    ]


def _ranked(name: str, task: str = "the export to S3 fails again") -> list[str]:
    s = strategy_class(name)()
    for ev in _history():
        s.observe(ev)
    b = s.context(ContextRequest("c1", "s3", task, 2000, _history()[-1].at))
    return list(b.candidates.item_ids)


def test_every_shortcut_is_a_registered_control_in_the_default_run():
    assert [c.name for c in CLASSES] == list(SHORTCUTS)
    for name in SHORTCUTS:
        assert name in CONTROLS and name in DEFAULT_STRATEGIES
        assert strategy_class(name).capabilities == frozenset()  # no gold side door


def test_each_rule_ranks_what_it_says():
    assert _ranked("recency")[:3] == ["h1", "b2", "b1"]
    assert _ranked("first_turn_pin")[:3] == ["a1", "h1", "b2"]
    assert _ranked("nth_turn_pin")[:4] == ["a2", "a3", "b2", "h1"]  # each session's 2nd and 3rd customer turn, oldest first
    assert _ranked("role_first")[:3] == ["h1", "s1#resolution", "g1"]
    assert _ranked("keyword_only")[:2] == ["a3", "s1#resolution"]  # the export session first, its best-matching items first


def test_the_report_says_when_a_shortcut_ties_the_best_design(tmp_path, capsys):
    # history_stuffing ranks newest first: the recency shortcut is the same rule, so nothing separates them
    write_suite(tmp_path / "suite", 6, seed=1, profile="small")
    run = execute(load_suite([str(tmp_path / "suite")]), parse_specs("history_stuffing,recency,empty"), tmp_path / "runs", run_id="r")
    assert main(["report", str(run.path), "--format", "json"]) == 0
    seps = json.loads(capsys.readouterr().out)["shortcut_separation"]
    head = seps[0]
    assert head["criterion"] == "shared total" and head["best"] == "history_stuffing"
    assert head["against"][0]["shortcut"] == "recency" and not head["separated"]
    assert head["against"][0]["lo"] <= 0 <= head["against"][0]["hi"]
    md = (run.path / "report.md").read_text()
    assert "NOT SEPARATED" in md and "## Shortcut controls" in md


def test_a_design_ahead_of_a_shortcut_is_separated(tmp_path, capsys):
    sc = scenario([
        *_history(),
        probe("p", "the export to S3 fails again", 200, session="s3", include=["a3", "g1"], above=[["a3", "b1"]]),
    ], subjects=("c1",))
    run = execute([sc], parse_specs("tfidf,nth_turn_pin"), tmp_path, run_id="r")
    assert main(["report", str(run.path), "--format", "json"]) == 0
    seps = {s["criterion"]: s for s in json.loads(capsys.readouterr().out)["shortcut_separation"]}
    assert seps["session_ranking"]["best"] == "tfidf" and seps["session_ranking"]["beaten_by"] == []

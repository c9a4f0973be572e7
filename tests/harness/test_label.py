"""Labelling from the transcript: gold written into the scenario file with its comments and order
kept, validated first, refused when the file changed since it was read; `rescore --gold` then
scores it without a new replay."""

import json

import pytest

from harness.cli import main
from harness.format.label import LabelError, preview, read_target, write_gold
from harness.format.loader import load_scenario
from label_scenario import SCENARIO



@pytest.fixture
def scenario_file(tmp_path):
    p = tmp_path / "suite" / "lbl.yaml"
    p.parent.mkdir()
    p.write_text(SCENARIO, encoding="utf-8")
    return p


def test_gold_is_written_with_comments_and_order_kept(scenario_file):
    t = read_target(scenario_file, "back")
    assert t.unlabelled and t.expect == {}
    gold = {"include": ["t1", "t2"], "repeat_of": "s1", "health": None}
    shown = preview("back", t.expect, gold)
    assert "include: [t1, t2]" in shown and "repeat_of: s1" in shown and "health" not in shown
    write_gold(t, "back", gold)
    text = scenario_file.read_text()
    assert text.startswith("# a hand-written comment that must survive\n")
    assert '"My invoice shows a double charge"   # the complaint' in text and "  # she comes back\n" in text
    assert "unlabelled" not in text and "expect:\n      include: [t1, t2]\n      repeat_of: s1\n" in text
    (p,) = load_scenario(scenario_file).probes
    assert p.expect.include == ("t1", "t2") and p.expect.repeat_of == "s1" and not p.unlabelled
    # everything but the probe is byte for byte what it was
    before, after = SCENARIO.split("  - probe: back")[0], text.split("  - probe: back")[0]
    assert before == after


def test_a_file_changed_since_it_was_read_is_refused(scenario_file):
    t = read_target(scenario_file, "back")
    scenario_file.write_text(SCENARIO.replace("Dana", "Dana R."), encoding="utf-8")
    with pytest.raises(LabelError, match="changed on disk since it was read"):
        write_gold(t, "back", {"include": ["t1"]})
    assert "unlabelled: true" in scenario_file.read_text()


def test_invalid_gold_is_refused_and_the_file_left_as_it_was(scenario_file):
    t = read_target(scenario_file, "back")
    with pytest.raises(LabelError, match="unknown id 'nope'"):
        write_gold(t, "back", {"include": ["nope"]})
    with pytest.raises(LabelError, match="only include, repeat_of, health"):
        write_gold(t, "back", {"exclude": ["t1"]})
    assert scenario_file.read_text() == SCENARIO
    assert [p.name for p in scenario_file.parent.iterdir()] == ["lbl.yaml"]  # no temporary file left


def test_label_then_rescore_with_the_files_gold(scenario_file, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    runs = tmp_path / "runs"
    assert main(["run", "suite", "--strategies", "tfidf", "--out", str(runs), "--run-id", "r", "--quiet"]) == 0
    write_gold(read_target("suite/lbl.yaml", "back"), "back", {"include": ["t1"]})
    assert main(["rescore", str(runs / "r"), "--run-id", "r2", "--gold"]) == 0
    capsys.readouterr()
    assert main(["report", str(runs / "r2"), "--format", "json"]) == 0
    cells = json.loads(capsys.readouterr().out)["strategies"]["tfidf"]
    assert cells["recall"]["n"] == 1 and cells["recall_at_5"]["n"] == 1
    assert main(["report", str(runs / "r"), "--format", "json"]) == 0
    assert "recall" not in json.loads(capsys.readouterr().out)["strategies"].get("tfidf", {})
    # a file whose history changed needs a new run, not a rescore
    p = tmp_path / "suite" / "lbl.yaml"
    p.write_text(p.read_text().replace("I refunded", "We refunded"), encoding="utf-8")
    assert main(["rescore", str(runs / "r"), "--run-id", "r3", "--gold"]) == 2
    assert "changed since the run, not only its gold" in capsys.readouterr().err

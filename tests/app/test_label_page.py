"""Labelling in the app: on the Rankings case view of an unlabelled probe, the reviewer ticks the
items, sees the YAML, saves; the scenario file gets the gold (comments kept) through the harness."""

from __future__ import annotations

from label_scenario import SCENARIO
from test_pages import no_exception, open_page

from harness.format.loader import load_scenario, load_suite
from harness.run.runner import execute
from stores.registry import parse_specs


def test_a_reviewer_labels_an_unlabelled_probe_and_the_file_gets_the_gold(tmp_path, monkeypatch):
    suite = tmp_path / "suite"
    suite.mkdir()
    f = suite / "lbl.yaml"
    f.write_text(SCENARIO, encoding="utf-8")
    run = execute(load_suite([str(suite)]), parse_specs("tfidf"), tmp_path / "runs", run_id="20990101-000000-label").path
    monkeypatch.setenv("SUPPORTBENCH_RUNS", str(tmp_path / "runs"))
    at = open_page("rankings", run=run.name, scenario="lbl", probe="back", strategies=["tfidf"])
    no_exception(at)
    box = next(e for e in at.expander if e.label.startswith("Label this probe"))
    assert "unlabelled" in box.label
    pick = next(m for m in at.multiselect if m.label.startswith("include"))
    assert set(pick.options) == {"t1 — My invoice shows a double charge", "t2 — I refunded the duplicate charge.",
                                 "s1#resolution — refunded"}
    pick.set_value(["t1"]).run()
    assert "include: [t1]" in at.code[0].value
    next(b for b in at.button if b.label == "Save the gold into the scenario file").click().run()
    no_exception(at)
    assert any("Saved into" in s.value for s in at.success)
    text = f.read_text()
    assert text.startswith("# a hand-written comment that must survive") and "include: [t1]" in text
    (p,) = load_scenario(f).probes
    assert p.expect.include == ("t1",) and not p.unlabelled

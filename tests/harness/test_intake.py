"""Checking and loading a run's files in its worker processes (harness.run.intake)."""

import shutil
from pathlib import Path

import pytest

from harness.cli import main
from harness.format.loader import ScenarioError, load_suite, validate_paths
from harness.run.intake import ScenarioHandle, load_in_workers
from harness.run.workers import run_pool

BAD = ("id: x\nversion: 1\ntitle: t\nstart: 2026-01-01T00:00:00Z\nsubjects: {c: {}}\nevents:\n"
       "  - turn: hi\n    subject: c\n    session: s\n    colour: red\n")


def _suite(tmp_path, bad: bool):
    folder = tmp_path / "suite"
    folder.mkdir()
    for name in ("health-bands.yaml", "outage-vs-closed-fix.yaml", "forget-request.yaml"):
        shutil.copy(Path("datasets/canonical") / name, folder / name)
    if bad:
        (folder / "a-bad.yaml").write_text(BAD)
        (folder / "z-nul.yaml").write_bytes(b"id: y\nversion: 1\x00\n")
        shutil.copy(folder / "health-bands.yaml", folder / "zz-duplicate-id.yaml")
    return folder


@pytest.mark.slow
def test_workers_load_the_same_scenarios_the_run_process_would(tmp_path):
    folder = _suite(tmp_path, bad=False)
    with run_pool(2) as pool:
        handles = load_in_workers([str(folder)], pool, 2)
    here = load_suite([str(folder)])
    assert all(isinstance(h, ScenarioHandle) for h in handles)
    assert [h.load() for h in handles] == here
    assert [(h.id, h.path, h.content_hash, h.n_events, h.n_probes) for h in handles] == [
        (s.id, s.path, s.content_hash, len(s.events), len(s.probes)) for s in here]


@pytest.mark.slow
def test_workers_report_every_problem_of_every_file_as_validate_does(tmp_path):
    folder = _suite(tmp_path, bad=True)
    with pytest.raises(ScenarioError) as e, run_pool(2) as pool:
        load_in_workers([str(folder)], pool, 2)
    assert [str(i) for i in e.value.issues] == [str(i) for i in validate_paths([str(folder)])]
    text = " ".join(str(i) for i in e.value.issues)
    assert "colour" in text and "z-nul.yaml" in text and "duplicate scenario id" in text


@pytest.mark.slow
def test_a_run_with_workers_refuses_a_bad_suite_before_any_work_and_names_every_problem(tmp_path, capsys):
    folder = _suite(tmp_path, bad=True)
    with pytest.raises(SystemExit) as e:
        main(["run", str(folder), "-q", "-w", "2", "-s", "history_stuffing", "--out", str(tmp_path / "runs")])
    assert e.value.code == 1
    err = capsys.readouterr().err
    assert "a-bad.yaml" in err and "z-nul.yaml" in err and "duplicate scenario id" in err and "nothing was run" in err
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())

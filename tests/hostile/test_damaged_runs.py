"""One damaged run breaks nothing: it is listed as damaged, skipped by `latest`, and every command
that is pointed at it exits 2 with one line (the regression code 1 is never a lie)."""

from __future__ import annotations

import json
import shutil

import pytest
from damage import DAMAGES, copy_run, edit_manifest, truncate
from hostile_cli import CORPUS, sb

from harness.cli import main

FRAMING = list(DAMAGES)  # every damage is found without reading the rows: framing, manifest, checksums


def commands(runs) -> dict[str, list[str]]:
    baseline = runs / "baseline.json"
    return {
        "report": ["report", "damaged", "--runs", str(runs)],
        "compare": ["compare", "good", "damaged", "--runs", str(runs)],
        "rescore": ["rescore", str(runs / "damaged"), "--out", str(runs.parent / "rescored")],
        "check": ["check", "damaged", "--runs", str(runs), "--baseline", str(baseline)],
        "baseline": ["baseline", "damaged", "--runs", str(runs), "--out", str(runs.parent / "new-baseline.json")],
    }


def one_line_exit_2(capsys, argv) -> str:
    code = main(argv)
    captured = capsys.readouterr()
    err = captured.err
    assert code == 2, (code, err, captured.out)
    assert "Traceback" not in err
    return err


@pytest.mark.parametrize("damage", list(DAMAGES))
@pytest.mark.parametrize("command", ["report", "compare", "rescore", "check", "baseline"])
def test_every_command_pointed_at_a_damaged_run_exits_2_with_its_reason(runs, pristine_baseline, capsys, damage, command):
    shutil.copy(pristine_baseline, runs / "baseline.json")  # the good run's baseline, made once per session
    reason = DAMAGES[damage](runs)
    err = one_line_exit_2(capsys, commands(runs)[command])
    first = next(line for line in err.splitlines() if line.startswith("error"))
    assert reason in first and "damaged" in first, err
    assert not (runs.parent / "rescored").exists() or not any((runs.parent / "rescored").iterdir())


@pytest.mark.slow  # starts supportbench in a subprocess
@pytest.mark.parametrize("damage", FRAMING)
def test_ls_runs_lists_a_damaged_run_as_damaged_with_its_reason(runs, damage):
    reason = DAMAGES[damage](runs)
    p = sb("ls", "runs", SUPPORTBENCH_RUNS=str(runs), COLUMNS="300")
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr
    damaged = next(line for line in p.stdout.splitlines() if " damaged " in line)
    assert "damaged: " in damaged and reason in damaged, p.stdout
    assert any(" good " in line and " ok " in line for line in p.stdout.splitlines())


@pytest.mark.slow  # starts supportbench in a subprocess
@pytest.mark.parametrize("damage", FRAMING)
def test_latest_skips_a_damaged_newer_run(runs, damage):
    DAMAGES[damage](runs)
    p = sb("report", "latest", "--format", "json", "--runs", runs)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["run"] == "good"


def test_latest_with_only_damaged_runs_says_so(runs, capsys):
    truncate(runs / "good")
    err = one_line_exit_2(capsys, ["report", "latest", "--runs", str(runs)])
    assert "no usable runs" in err and "1 damaged" in err


@pytest.mark.slow  # starts supportbench in a subprocess
def test_a_binary_baseline_file_is_exit_2_not_a_traceback(runs):
    p = sb("check", "good", "--runs", runs, "--baseline", CORPUS / "binary.toml")
    assert p.returncode == 2 and "Traceback" not in p.stderr + p.stdout
    assert "not UTF-8 text" in p.stdout + p.stderr and "UNUSABLE (exit 2)" in p.stdout + p.stderr


@pytest.mark.slow  # starts supportbench in a subprocess
def test_the_oops_manifest_of_the_issue_no_longer_crashes_ls_check_or_rescore(runs):
    edit_manifest(copy_run(runs, "oops"), strategies="oops")
    assert main(["baseline", "good", "--runs", str(runs), "--out", str(runs / "b.json")]) == 0
    for argv, code in ((["ls", "runs"], 0), (["check", "oops", "--runs", runs, "--baseline", runs / "b.json"], 2),
                       (["rescore", runs / "oops"], 2)):
        p = sb(*argv, SUPPORTBENCH_RUNS=str(runs))
        assert p.returncode == code and "Traceback" not in p.stderr + p.stdout, (argv, p.stderr)

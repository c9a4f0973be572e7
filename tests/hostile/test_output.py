"""What the CLI prints and writes: labels whole, files that follow the umask, strategies that
raised said loudly (and fatal with --strict)."""

from __future__ import annotations

import os
import stat
import subprocess

import pytest
from hostile_cli import ROOT, cli_command, cli_env, sb

SCENARIO = "datasets/canonical/health-bands.yaml"


@pytest.mark.slow  # starts supportbench in a subprocess
def test_bracketed_labels_are_printed_whole(tmp_path):
    config = tmp_path / "s.toml"
    config.write_text('[[strategy]]\nname = "session_aware"\nvariant = "no_repeat_boost"\n'
                      'params = {repeat_issue = 0.0, repeat_issue_with_summary = 0.0}\n')
    p = sb("run", SCENARIO, "--config", config, "--out", tmp_path / "runs", "--run-id", "r", "-q")
    assert p.returncode == 0, p.stderr
    assert "(session_aware[no_repeat_boost])" in p.stderr
    report = sb("report", tmp_path / "runs" / "r", COLUMNS="200")
    assert "session_aware[no_repeat_boost]" in report.stdout, report.stdout
    assert "mean [95% interval]" in report.stdout


@pytest.mark.slow  # starts supportbench in a subprocess
def test_a_bad_spec_is_printed_with_its_brackets():
    p = sb("run", SCENARIO, "-s", "tfidf[v1:top_k=3")
    assert p.returncode == 2
    assert p.stderr.strip() == "error: bad strategy spec 'tfidf[v1:top_k=3': expected name[variant]"


@pytest.mark.slow  # starts supportbench in a subprocess
@pytest.mark.parametrize("umask,mode", [(0o022, 0o644), (0o027, 0o640)])
def test_manifest_baseline_and_parquet_parts_follow_the_umask_alike(tmp_path, umask, mode):
    runs, baseline = tmp_path / "runs", tmp_path / "baseline.json"
    for args in (("run", SCENARIO, "-s", "oracle", "--out", runs, "--run-id", "r", "-q"),
                 ("baseline", runs / "r", "--out", baseline)):
        p = subprocess.run(cli_command(*args), cwd=ROOT, env=cli_env(), capture_output=True, text=True,
                           preexec_fn=lambda: os.umask(umask))
        assert p.returncode == 0, p.stderr
    files = [runs / "r" / "manifest.json", baseline, *sorted((runs / "r").glob("*/part-*.parquet"))]
    assert {f.name: stat.S_IMODE(f.stat().st_mode) for f in files} == {f.name: mode for f in files}


@pytest.fixture(scope="module")
def not_a_model(tmp_path_factory):
    """A folder that looks like a local model (config.json) but is not one: loading it raises."""
    folder = tmp_path_factory.mktemp("not-a-model")
    (folder / "config.json").write_text("{}")
    return folder


@pytest.mark.slow
def test_a_strategy_that_raised_on_every_case_is_said_loudly(tmp_path, not_a_model):
    p = sb("run", SCENARIO, "-s", f"embedding:model={not_a_model},oracle", "--out", tmp_path, "-q")
    assert p.returncode == 0, p.stderr
    line = next(x for x in p.stderr.splitlines() if x.startswith("WARNING"))
    assert f"strategy embedding[model={not_a_model}] raised on every case" in line and "First error:" in line
    assert "oracle" not in line and p.stdout.strip().startswith(str(tmp_path))  # the run is still written


@pytest.mark.slow
def test_strict_makes_a_strategy_that_raised_exit_1(tmp_path, not_a_model):
    p = sb("run", SCENARIO, "-s", f"embedding:model={not_a_model},oracle", "--out", tmp_path, "-q", "--strict")
    assert p.returncode == 1, p.stderr
    assert "--strict: 1 strategy(ies) raised; exit 1" in p.stderr


@pytest.mark.slow  # starts supportbench in a subprocess
def test_strict_passes_a_clean_run(tmp_path):
    p = sb("run", SCENARIO, "-s", "oracle,history_stuffing", "--out", tmp_path, "-q", "--strict")
    assert p.returncode == 0 and "raised" not in p.stderr, p.stderr

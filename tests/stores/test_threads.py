"""Torch's thread count: each process of a run gets its share of the cores, and the run says so."""

import json

import pytest

from helpers import outage_story
from harness.cli import main
from harness.run.runner import execute
from stores.registry import parse_specs
from stores.retrieval.encoder import cores, torch_threads


def test_a_process_gets_the_cores_divided_by_the_workers_at_least_one(monkeypatch):
    monkeypatch.delenv("SUPPORTBENCH_TORCH_THREADS", raising=False)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    assert torch_threads(1) == cores()
    assert torch_threads(2) == max(1, cores() // 2)
    assert torch_threads(cores() * 4) == 1


def test_the_environment_variable_overrides_the_share(monkeypatch):
    monkeypatch.setenv("SUPPORTBENCH_TORCH_THREADS", "3")
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    assert torch_threads(1) == torch_threads(8) == 3


def test_omp_num_threads_is_honoured_when_ours_is_not_set(monkeypatch):
    monkeypatch.delenv("SUPPORTBENCH_TORCH_THREADS", raising=False)
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    assert torch_threads(1) == 1
    monkeypatch.setenv("OMP_NUM_THREADS", "auto")  # not a count: the share decides
    assert torch_threads(1) == cores()


@pytest.mark.parametrize("value", ["0", "two", "-1"])
def test_a_bad_thread_count_is_refused_with_the_value(monkeypatch, value):
    monkeypatch.setenv("SUPPORTBENCH_TORCH_THREADS", value)
    with pytest.raises(ValueError, match="SUPPORTBENCH_TORCH_THREADS"):
        torch_threads(1)


def test_a_bad_thread_count_is_exit_2_before_any_work(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("SUPPORTBENCH_TORCH_THREADS", "many")
    assert main(["run", "datasets/canonical/health-bands.yaml", "-q", "-s", "empty", "--out", str(tmp_path)]) == 2
    assert "SUPPORTBENCH_TORCH_THREADS" in capsys.readouterr().err
    assert not any(tmp_path.iterdir())


def test_the_manifest_records_the_threads_of_each_process(monkeypatch, tmp_path):
    monkeypatch.delenv("SUPPORTBENCH_TORCH_THREADS", raising=False)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    r = execute([outage_story()], parse_specs("empty"), tmp_path)
    assert json.loads((r.path / "manifest.json").read_text())["execution"]["torch_threads"] == cores()

"""A real run to damage: a small generated suite through the cheap strategies, written by the CLI."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness.cli import main  # noqa: E402


def cli(*args) -> None:
    """`supportbench ARGS` in this process (the tests that need a process of its own use `sb`)."""
    code = main([str(a) for a in args])
    assert code == 0, (code, args)


@pytest.fixture(scope="session")
def small_suite(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("hostile-suite") / "small"
    cli("generate", "--customers", "5", "--seed", "1", "--profile", "small", "--out", out)
    return out


@pytest.fixture(scope="session")
def pristine_run(small_suite, tmp_path_factory) -> Path:
    runs = tmp_path_factory.mktemp("hostile-runs")
    cli("run", small_suite, "-s", "oracle,empty,history_stuffing", "--out", runs, "--run-id", "good", "-q")
    return runs / "good"


@pytest.fixture(scope="session")
def pristine_baseline(pristine_run, tmp_path_factory) -> Path:
    """The good run's approved baseline (`supportbench baseline good`), written once per session."""
    out = tmp_path_factory.mktemp("hostile-baseline") / "baseline.json"
    cli("baseline", "good", "--runs", pristine_run.parent, "--out", out)
    return out


@pytest.fixture
def runs(pristine_run, tmp_path) -> Path:
    """A fresh runs folder holding a copy of the good run."""
    folder = tmp_path / "runs"
    folder.mkdir()
    shutil.copytree(pristine_run, folder / "good")
    return folder

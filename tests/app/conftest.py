"""Fixture runs for the app tests, written once per session into a temporary runs folder."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fixture_runs import build_pair_runs, build_runs  # noqa: E402


@pytest.fixture(scope="session")
def app_runs(tmp_path_factory) -> dict[str, Path]:
    """`{"tight": path, "main": path}` under a fresh folder that `SUPPORTBENCH_RUNS` points to."""
    root = tmp_path_factory.mktemp("runs")
    runs = build_runs(root)
    old = os.environ.get("SUPPORTBENCH_RUNS")
    os.environ["SUPPORTBENCH_RUNS"] = str(root)
    yield runs
    if old is None:
        os.environ.pop("SUPPORTBENCH_RUNS", None)
    else:
        os.environ["SUPPORTBENCH_RUNS"] = old


@pytest.fixture(scope="session")
def pair_runs(tmp_path_factory) -> dict[str, Path]:
    """`{"base", "variant", "other"}` runs (see `fixture_runs.build_pair_runs`) in a runs folder of their own."""
    return build_pair_runs(tmp_path_factory.mktemp("pair-runs"))

"""`--executor dask`: the same shard function on a local dask.distributed cluster gives the same run."""

from __future__ import annotations

import importlib.util
import os

import pytest

from harness.generate import write_suite
from harness.format.loader import load_suite
from harness.run.runner import execute
from stores.registry import parse_specs

from test_workers import assert_same_run

if importlib.util.find_spec("distributed") is None:
    if os.environ.get("CI") == "true":
        raise RuntimeError("CI=true but dask.distributed is not installed: .ci/run must install '.[dask]'")
    pytest.skip("dask.distributed is not installed (pip install -e '.[dask]'); the dask executor is optional",
                allow_module_level=True)


@pytest.mark.slow  # starts a local dask cluster
def test_a_dask_run_equals_the_local_run(tmp_path):
    folder = tmp_path / "suite"
    write_suite(folder, 10, seed=12, profile="small")
    scenarios = load_suite([str(folder)])
    specs = parse_specs("oracle,history_stuffing,session_aware")
    local = execute(scenarios, specs, tmp_path / "runs", run_id="local")
    seen = []
    remote = execute(scenarios, specs, tmp_path / "runs", run_id="dask", workers=2, executor="dask",
                     progress=lambda p, s: seen.append(s))
    assert remote.probes == local.probes and sum(seen) == len(scenarios)
    assert_same_run(local.path, remote.path)

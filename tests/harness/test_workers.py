"""Parallel runs: the same run whatever the number of worker processes."""

from __future__ import annotations

import duckdb
import pytest
from helpers import HANG

from harness.generate import write_suite
from harness.format.loader import load_suite
from harness.run.runner import execute, make_shards
from stores.registry import parse_specs

KEYS = {
    "scores": "strategy, scenario, probe_id, criterion",
    "candidates": "strategy, scenario, probe_id, rank",
    "probes": "strategy, scenario, probe_id",
    "events": "scenario, event_index",
    "health": "strategy, scenario, subject, event_index, probe_id",
}


def table(run, name: str):
    df = duckdb.sql(f"select * from read_parquet('{run}/{name}/*.parquet') order by {KEYS[name]}").df()
    return df.drop(columns=["latency_ms"], errors="ignore").reset_index(drop=True)


def assert_same_run(a, b):
    for name in KEYS:
        x, y = table(a, name), table(b, name)
        assert len(x) == len(y) and x.equals(y), name


@pytest.fixture(scope="module")
def scenarios(tmp_path_factory):
    folder = tmp_path_factory.mktemp("suite")
    write_suite(folder, 14, seed=11, profile="small")
    return load_suite([str(folder)])


SPECS = "oracle,empty,history_stuffing,session_aware"


def test_shards_cover_every_scenario_once_in_order(scenarios):
    shards = make_shards(scenarios, 25, workers=2)
    assert [s.id for _, shard in shards for s in shard] == [s.id for s in scenarios]
    assert [i for i, _ in shards] == list(range(len(shards))) and len(shards) > 2


@pytest.mark.slow  # starts worker processes
def test_two_workers_write_the_same_run_as_one(scenarios, tmp_path):
    specs = parse_specs(SPECS)
    done = {1: [0, 0], 2: [0, 0]}

    def progress(w):
        def f(p, s):
            done[w][0] += p
            done[w][1] += s
        return f

    one = execute(scenarios, specs, tmp_path, run_id="one", workers=1, progress=progress(1))
    two = execute(scenarios, specs, tmp_path, run_id="two", workers=2, progress=progress(2))
    assert one.probes == two.probes == done[1][0] == done[2][0] > 0
    assert done[1][1] == done[2][1] == len(scenarios)
    assert_same_run(one.path, two.path)


def test_an_unknown_executor_leaves_no_run_behind(scenarios, tmp_path):
    with pytest.raises(ValueError, match=r"^unknown executor 'nope' \(known: process, dask\)$"):
        execute(scenarios, parse_specs("oracle"), tmp_path, run_id="bad", workers=2, executor="nope")
    assert not any(tmp_path.iterdir())


def _what_a_worker_sees(key: str) -> tuple[str | None, list[str]]:
    import os
    import sys

    return os.environ.get(key), list(sys.path)


@pytest.mark.slow  # starts worker processes
def test_workers_take_the_run_s_environment_and_import_path_even_from_an_older_fork_server(tmp_path, monkeypatch):
    """The fork server keeps what it started with; a variable or a path set afterwards (a service's
    address, a plugin's folder) still reaches the workers of the next pool."""
    from harness.run.workers import open_pool

    with open_pool(2) as pool:  # the fork server is up before the changes
        assert pool.submit(_what_a_worker_sees, "SB_WORKER_PROBE").result()[0] is None
    monkeypatch.setenv("SB_WORKER_PROBE", "seen")
    monkeypatch.syspath_prepend(str(tmp_path))
    with open_pool(2) as pool:
        env, path = pool.submit(_what_a_worker_sees, "SB_WORKER_PROBE").result()
    assert env == "seen" and path[0] == str(tmp_path)


@pytest.mark.slow  # starts worker processes
def test_a_worker_forked_after_its_run_is_gone_prints_no_traceback():
    import subprocess
    import sys

    # the fork server's hook (harness.run.orphans): quiet once the run is gone, Python's report while it lives
    raising = "import os, sys, harness.run.orphans as o; o.RUN_PID = {}; raise FileNotFoundError('semaphore gone')"
    gone = subprocess.run([sys.executable, "-c", raising.format(2 ** 22 + 1)], capture_output=True, text=True, timeout=HANG)
    assert gone.returncode == 1 and "Traceback" not in gone.stderr
    alive = subprocess.run([sys.executable, "-c", raising.format("os.getpid()")], capture_output=True, text=True, timeout=HANG)
    assert "Traceback" in alive.stderr and "semaphore gone" in alive.stderr

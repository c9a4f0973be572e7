"""Killing a `--workers 2` run: no process and no visible run survive; SIGTERM cleans up like Ctrl-C.

These start the real `supportbench run` in a subprocess on a generated suite, wait until its
workers have written parts into the temporary folder, signal the run process (only it: the
signal a supervisor or `kill` sends), and watch every process it had started.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from hostile_cli import ROOT, cli_command, cli_env, sb

from harness.analysis.results import list_runs

pytestmark = pytest.mark.slow

STRATEGIES = "history_stuffing,tfidf,session_aware"


@pytest.fixture(scope="module")
def suite(tmp_path_factory) -> Path:
    """A suite that takes two workers about half a minute on 2 idle cores: long enough to be killed midway."""
    out = tmp_path_factory.mktemp("faults") / "c150"
    p = sb("generate", "--customers", "150", "--seed", "3", "--out", out)
    assert p.returncode == 0, p.stderr
    return out


def _stat(pid: int) -> list[str] | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text[text.rindex(")") + 2:].split()  # fields after the command name: state, ppid, ...


def descendants(pid: int) -> set[tuple[int, str]]:
    """Every live process under `pid`, as (pid, start time) so a reused pid is not mistaken for it."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (st := _stat(int(entry))) is not None:
            children.setdefault(int(st[1]), []).append(int(entry))
    out, todo = set(), [pid]
    while todo:
        for kid in children.get(todo.pop(), []):
            st = _stat(kid)
            if st is not None:
                out.add((kid, st[19]))
                todo.append(kid)
    return out


def alive(pid: int, started: str) -> bool:
    st = _stat(pid)
    return st is not None and st[19] == started and st[0] not in ("Z", "X")


def start_run(suite: Path, runs: Path) -> subprocess.Popen:
    """The run in its own session (so the test's signal reaches the run process alone)."""
    return subprocess.Popen(cli_command("run", suite, "-s", STRATEGIES, "--workers", "2", "--out", runs, "-q"),
                            cwd=ROOT, env=cli_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)


def wait_for_workers(proc: subprocess.Popen, runs: Path, busy: float = 2.0, timeout: float = 120) -> set[tuple[int, str]]:
    """Wait until both workers (with the fork server and resource tracker: 4 processes) have
    been replaying for `busy` seconds, mid-shard; returns the run's processes."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, f"the run ended before it could be killed: {proc.communicate()}"
        if len(descendants(proc.pid)) >= 4 and list(runs.glob(".tmp-*")):
            time.sleep(busy)
            assert proc.poll() is None, "the run ended before it could be killed"
            return descendants(proc.pid)
        time.sleep(0.1)
    raise AssertionError("the run never started its workers")


def survivors(kids: set[tuple[int, str]], within: float) -> set[int]:
    deadline = time.monotonic() + within
    while True:
        left = {pid for pid, started in kids if alive(pid, started)}
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.1)


def visible(runs: Path) -> list[str]:
    return sorted(p.name for p in runs.iterdir() if not p.name.startswith("."))


def test_kill_9_of_a_two_worker_run_leaves_no_process_and_no_visible_run(suite, tmp_path):
    runs = tmp_path / "runs"
    proc = start_run(suite, runs)
    try:
        kids = wait_for_workers(proc, runs)
        assert len(kids) >= 4
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
        assert survivors(kids, within=10) == set()
    finally:
        for pid, started in descendants(proc.pid):
            os.kill(pid, signal.SIGKILL)
        if proc.poll() is None:
            proc.kill()
    assert visible(runs) == [] and list_runs(runs) == []
    (tmp,) = runs.glob(".tmp-*")  # a killed process cannot clean up; its folder stays hidden
    parts = sorted(tmp.glob("*/part-*.parquet"))
    time.sleep(1.0)
    assert sorted(tmp.glob("*/part-*.parquet")) == parts, "something still writes into the dead run's folder"


def test_the_next_run_collects_the_folder_a_killed_run_left(suite, tmp_path):
    runs = tmp_path / "runs"
    proc = start_run(suite, runs)
    try:
        wait_for_workers(proc, runs)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
    (stale,) = runs.glob(".tmp-*")
    time.sleep(0.5)  # the killed run's workers exit on their own
    p = sb("run", next(suite.glob("*.yaml")), "-s", "oracle", "--out", runs, "--run-id", "after", "-q")
    assert p.returncode == 0, p.stderr
    assert not stale.exists() and visible(runs) == ["after"]


def test_sigterm_of_a_two_worker_run_cleans_up_like_ctrl_c(suite, tmp_path):
    runs = tmp_path / "runs"
    proc = start_run(suite, runs)
    try:
        kids = wait_for_workers(proc, runs)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
        assert proc.returncode == 143, err
        assert "terminated: nothing was written" in err and "Traceback" not in err
        assert survivors(kids, within=10) == set()
    finally:
        if proc.poll() is None:
            proc.kill()
    assert list(runs.iterdir()) == [], "a terminated run leaves nothing, not even its temporary folder"


def test_sigint_of_a_two_worker_run_stops_the_workers_at_once(suite, tmp_path):
    runs = tmp_path / "runs"
    proc = start_run(suite, runs)
    try:
        kids = wait_for_workers(proc, runs)
        t0 = time.monotonic()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
        assert time.monotonic() - t0 < 15, "the run waited for its shards instead of stopping them"
        assert proc.returncode == 130 and "Traceback" not in err, err
        assert survivors(kids, within=10) == set()
    finally:
        if proc.poll() is None:
            proc.kill()
    assert list(runs.iterdir()) == []

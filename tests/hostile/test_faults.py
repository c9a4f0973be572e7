"""Killing a `--workers 2` run: no process and no visible run survive; SIGTERM cleans up like Ctrl-C.

These start the real `supportbench run` in a subprocess, wait until both of its workers are
mid-shard, signal the run process (only it: the signal a supervisor or `kill` sends), and watch
every process it had started. Nothing is timed: the run replays the `stuck` strategy
(tests/fake_strategies.py), whose shards never finish, so a run that waited for its shards instead
of stopping its workers would never end, and every wait here fails only on such a hang.
"""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import pytest
from helpers import HANG, eventually, finished
from hostile_cli import ROOT, cli_command, cli_env, sb

from harness.analysis.results import list_runs

pytestmark = pytest.mark.slow

SUITE = ROOT / "datasets" / "canonical"
STRATEGIES = "history_stuffing,fake_strategies.Stuck"


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


def start_run(runs: Path, stuck: Path) -> subprocess.Popen:
    """The run in its own session (so the test's signal reaches the run process alone); its
    workers mark `stuck` as they block."""
    stuck.mkdir()
    env = cli_env(PYTHONPATH=os.pathsep.join([str(ROOT), str(ROOT / "tests")]), SB_STUCK_DIR=str(stuck))
    return subprocess.Popen(cli_command("run", SUITE, "-s", STRATEGIES, "--workers", "2", "--out", runs, "-q"),
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, preexec_fn=_ctrl_c_as_in_a_terminal)


def _ctrl_c_as_in_a_terminal() -> None:
    """SIGINT at its default in the run, as a terminal's command has it. A test session started in the
    background of a shell without job control (`nohup make test &`) ignores SIGINT and hands that on,
    and a program that inherits an ignored SIGINT keeps ignoring it (Python then installs no
    KeyboardInterrupt): the Ctrl-C tests would wait on a run that never hears them."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def wait_for_workers(proc: subprocess.Popen, runs: Path, stuck: Path) -> set[tuple[int, str]]:
    """Wait until both workers are mid-shard (each has marked `stuck`), with the fork server and
    resource tracker (4 processes); returns the run's processes."""
    def ready() -> set[tuple[int, str]] | None:
        assert proc.poll() is None, f"the run ended before it could be killed: {proc.communicate()}"
        kids = descendants(proc.pid)
        if len(list(stuck.iterdir())) >= 2 and len(kids) >= 4 and list(runs.glob(".tmp-*")):
            return kids
        return None

    return eventually(ready, "both workers of the run blocking mid-shard", poll=0.1)


def all_gone(kids: set[tuple[int, str]], what: str) -> None:
    """Wait until none of `kids` lives; only one that never exits fails (as a hang)."""
    eventually(lambda: not {pid for pid, started in kids if alive(pid, started)}, what, poll=0.1)


def visible(runs: Path) -> list[str]:
    return sorted(p.name for p in runs.iterdir() if not p.name.startswith("."))


def test_kill_9_of_a_two_worker_run_leaves_no_process_and_no_visible_run(tmp_path):
    runs = tmp_path / "runs"
    proc = start_run(runs, tmp_path / "stuck")
    try:
        kids = wait_for_workers(proc, runs, tmp_path / "stuck")
        assert len(kids) >= 4
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(HANG)
        all_gone(kids, "every process of the killed run gone (its workers watch the run and exit)")
    finally:
        for pid, started in descendants(proc.pid):
            os.kill(pid, signal.SIGKILL)
        if proc.poll() is None:
            proc.kill()
    assert visible(runs) == [] and list_runs(runs) == []
    (tmp,) = runs.glob(".tmp-*")  # a killed process cannot clean up; its folder stays hidden (and nothing is left to write to it)


def test_the_next_run_collects_the_folder_a_killed_run_left(tmp_path):
    runs = tmp_path / "runs"
    proc = start_run(runs, tmp_path / "stuck")
    try:
        kids = wait_for_workers(proc, runs, tmp_path / "stuck")
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(HANG)
    finally:
        if proc.poll() is None:
            proc.kill()
    (stale,) = runs.glob(".tmp-*")
    all_gone(kids, "the killed run's workers exiting on their own")
    p = sb("run", next(SUITE.glob("*.yaml")), "-s", "oracle", "--out", runs, "--run-id", "after", "-q")
    assert p.returncode == 0, p.stderr
    assert not stale.exists() and visible(runs) == ["after"]


def test_sigterm_of_a_two_worker_run_cleans_up_like_ctrl_c(tmp_path):
    runs = tmp_path / "runs"
    proc = start_run(runs, tmp_path / "stuck")
    try:
        kids = wait_for_workers(proc, runs, tmp_path / "stuck")
        proc.send_signal(signal.SIGTERM)
        out, err = finished(proc, "the run after SIGTERM (its shards never finish: only stopping its workers ends it)")
        assert proc.returncode == 143, err
        assert "terminated: nothing was written" in err and "Traceback" not in err
        all_gone(kids, "every process of the terminated run gone")
    finally:
        if proc.poll() is None:
            proc.kill()
    assert list(runs.iterdir()) == [], "a terminated run leaves nothing, not even its temporary folder"


def test_sigint_of_a_two_worker_run_stops_the_workers_at_once(tmp_path):
    runs = tmp_path / "runs"
    proc = start_run(runs, tmp_path / "stuck")
    try:
        kids = wait_for_workers(proc, runs, tmp_path / "stuck")
        proc.send_signal(signal.SIGINT)
        # the shards in flight never finish: a run that waited for them instead of stopping them would hang here
        out, err = finished(proc, "the run after SIGINT, waiting for its shards instead of stopping them")
        assert proc.returncode == 130 and "Traceback" not in err, err
        all_gone(kids, "every process of the interrupted run gone")
    finally:
        if proc.poll() is None:
            proc.kill()
    assert list(runs.iterdir()) == []


def test_sigusr1_prints_where_a_stuck_run_waits_and_the_run_goes_on(tmp_path):
    runs = tmp_path / "runs"
    proc = start_run(runs, tmp_path / "stuck")
    try:
        wait_for_workers(proc, runs, tmp_path / "stuck")
        proc.send_signal(signal.SIGUSR1)
        with pytest.raises(subprocess.TimeoutExpired):
            proc.communicate(timeout=2)  # it goes on: only stopping it ends it
        proc.send_signal(signal.SIGINT)
        out, err = finished(proc, "the run after SIGUSR1 then SIGINT")
        assert proc.returncode == 130
        assert "Current thread" in err or "Thread 0x" in err, err
        assert "_run_in_processes" in err, err  # the main thread, waiting on its shards
    finally:
        if proc.poll() is None:
            proc.kill()

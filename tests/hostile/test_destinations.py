"""Where a run goes: safe run ids, run folder names as data (never SQL), the destination checked
before any work, and temporary folders of dead runs collected, never those of live ones."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import HANG
from hostile_cli import ROOT, cli_env, sb

from harness.analysis.results import Results
from harness.run.destination import collect_stale
from harness.run.runstore import RunWriter


def can_mount() -> bool:
    if shutil.which("unshare") is None:
        return False
    p = subprocess.run(["unshare", "-rm", "sh", "-c", "mount -t tmpfs tmpfs /mnt"], capture_output=True)
    return p.returncode == 0


needs_mount = pytest.mark.skipif(not can_mount(), reason="needs unshare -rm (user and mount namespaces) to mount read-only")


def in_read_only(mount: Path, command: str, bind: Path | None = None) -> subprocess.CompletedProcess:
    """Run `command` where `mount` is a read-only filesystem: a fresh read-only tmpfs, or `bind`
    re-mounted read-only at `mount` (in a private mount namespace: nothing outside changes)."""
    setup = (f"mount --bind {bind} {mount} && mount -o remount,bind,ro {mount}" if bind
             else f"mount -t tmpfs -o ro tmpfs {mount}")
    return subprocess.run(["unshare", "-rm", "sh", "-c", f"{setup} && {command}"], cwd=ROOT, env=cli_env(),
                          capture_output=True, text=True, timeout=HANG)


def cli(*args: str) -> str:
    return " ".join([sys.executable, "-m", "harness.cli", *(f"'{a}'" for a in args)])


@pytest.mark.slow  # starts a subprocess
@pytest.mark.parametrize("run_id", ["o'neil", ".hidden", "a/b", "a b", "..", "-rf", "x" * 101, "ünïcode"])
def test_a_run_id_that_is_not_a_safe_folder_name_is_refused_before_any_work(small_suite, tmp_path, run_id):
    out = tmp_path / "runs"
    p = sb("run", small_suite, "-s", "oracle", "--out", out, f"--run-id={run_id}")
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
    assert "is not a safe folder name" in p.stderr and "running" not in p.stderr
    assert not out.exists()


@pytest.mark.slow  # starts a subprocess
def test_rescore_refuses_an_unsafe_run_id_too(runs):
    p = sb("rescore", runs / "good", "--run-id", "o'neil")
    assert p.returncode == 2 and "is not a safe folder name" in p.stderr
    assert sorted(x.name for x in runs.iterdir()) == ["good"]


@pytest.mark.slow  # starts a subprocess
@pytest.mark.parametrize("name", ["o'neil", "x'; DROP VIEW scores; --", "a[1]*?", "q'' || 'z"])
def test_a_run_folder_name_is_data_not_sql(runs, name):
    """Older versions wrote such folders; they read like any other run."""
    shutil.copytree(runs / "good", runs / name)
    with Results(runs / name) as res:
        assert res.rows("SELECT DISTINCT run FROM scores") == [(name,)]
        assert res.rows("SELECT count(*) FROM scores")[0][0] > 0
    p = sb("report", name, "--runs", runs)
    assert p.returncode == 0, p.stderr


@pytest.mark.slow  # starts a subprocess
def test_a_second_run_with_the_same_id_stops_before_any_work(small_suite, runs):
    p = sb("run", small_suite, "-s", "oracle", "--out", runs, "--run-id", "good")
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert "run 'good' already exists" in p.stderr and "running" not in p.stderr


@pytest.mark.slow  # starts a subprocess
def test_a_run_id_another_live_run_is_writing_is_refused_at_once(small_suite, tmp_path):
    live = RunWriter(tmp_path, "busy")
    try:
        p = sb("run", small_suite, "-s", "oracle", "--out", tmp_path, "--run-id", "busy")
        assert p.returncode == 2 and f"run 'busy' is being written in {tmp_path} by another run (pid {os.getpid()})" in p.stderr
        assert live.tmp.is_dir(), "the live run's folder was touched"
    finally:
        live.abort()
    p = sb("run", small_suite, "-s", "oracle", "--out", tmp_path, "--run-id", "busy", "-q")
    assert p.returncode == 0, p.stderr


@pytest.mark.slow  # starts a subprocess
@needs_mount
def test_out_on_a_read_only_filesystem_is_exit_2_before_any_work(small_suite, tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    p = in_read_only(ro, cli("run", str(small_suite), "-s", "oracle", "--out", str(ro / "runs")))
    assert p.returncode == 2, p.stderr
    assert p.stderr.strip() == f"error: cannot write runs into {ro / 'runs'}: read-only file system"


@pytest.mark.slow  # starts a subprocess
@needs_mount
def test_report_on_a_read_only_run_warns_and_does_not_claim_it_wrote(runs):
    run = runs / "good"
    p = in_read_only(run, cli("report", str(run)), bind=run)
    assert p.returncode == 0, p.stderr
    assert f"warning: could not write {run / 'report.md'}: read-only file system" in p.stderr
    assert "report written" not in p.stderr and "good" in p.stdout


def test_stale_collection_never_removes_the_folder_of_a_live_run(tmp_path):
    live = RunWriter(tmp_path, "live")
    try:
        assert collect_stale(tmp_path) == [] and live.tmp.is_dir()
    finally:
        live.abort()


@pytest.mark.slow  # starts a subprocess
def test_stale_collection_removes_the_folder_of_a_killed_run(tmp_path):
    script = f"from harness.run.runstore import RunWriter; import time; RunWriter({str(tmp_path)!r}, 'dead'); print('ready', flush=True); time.sleep(60)"
    proc = subprocess.Popen([sys.executable, "-c", script], cwd=ROOT, env=cli_env(), stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "ready"
        assert collect_stale(tmp_path) == [], "collected while its writer was alive"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert collect_stale(tmp_path) == [tmp_path / ".tmp-dead"] and list(tmp_path.iterdir()) == []


@pytest.mark.slow  # starts a subprocess
def test_a_legacy_temporary_folder_is_collected_only_when_old_and_its_pid_is_gone(tmp_path):
    dead_pid = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True).stdout.strip()
    old, mine = tmp_path / f".tmp-r1-{dead_pid}", tmp_path / f".tmp-r2-{os.getpid()}"
    for folder in (old, mine):
        (folder / "scores").mkdir(parents=True)
        os.utime(folder, (time.time() - 2 * 86400,) * 2)
    young = tmp_path / f".tmp-r3-{dead_pid}"
    young.mkdir()
    assert collect_stale(tmp_path) == [old]
    assert mine.exists() and young.exists()

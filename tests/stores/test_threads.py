"""Torch's thread count: each process of a run gets its share of the cores nobody else is using,
OpenMP threads wait passively, and the run says so."""

import json
import os
import subprocess
import sys

import pytest

import stores.cpu as cpu
from helpers import outage_story
from harness.cli import main
from harness.run.runner import execute
from stores.registry import parse_specs
from stores.retrieval.encoder import torch_threads


@pytest.fixture
def four_cores_idle(monkeypatch):
    """A process that may run on 4 cores, no cgroup quota, an idle machine, no thread variables."""
    monkeypatch.delenv("SUPPORTBENCH_TORCH_THREADS", raising=False)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.setattr(cpu, "affinity_cores", lambda: 4)
    monkeypatch.setattr(cpu, "cgroup_quota", lambda: None)
    monkeypatch.setattr(cpu, "_LOAD_AT_START", 0.0)
    monkeypatch.setattr(cpu, "_BUSY_AT_START", 0.0)
    monkeypatch.setattr(cpu, "_THREADS", None)  # a run in this process hands its plan down
    monkeypatch.setattr(cpu, "_WORKERS", 1)
    import torch

    before = torch.get_num_threads()
    yield
    torch.set_num_threads(before)


def test_a_process_gets_the_cores_divided_by_the_workers_at_least_one(four_cores_idle):
    assert torch_threads(1) == 4
    assert torch_threads(2) == 2
    assert torch_threads(16) == 1


def test_where_cpu_time_cannot_be_read_the_load_average_decides(four_cores_idle):
    assert cpu.plan_threads(1, load=0.9, measured=None).threads == 4  # a part of a core is not a core taken
    assert cpu.plan_threads(1, load=1.0, measured=None).threads == 3
    assert cpu.plan_threads(2, load=2.5, measured=None).threads == 1
    assert cpu.plan_threads(1, load=12.0, measured=None).threads == 1  # never fewer than one


def test_cores_kept_busy_by_other_processes_are_left_to_them(four_cores_idle):
    assert cpu.plan_threads(1, measured=0.3).threads == 4  # an idle machine's noise takes no core
    assert cpu.plan_threads(1, measured=0.95).threads == 3  # one spinning neighbour
    assert cpu.plan_threads(2, measured=2.6).threads == 1
    assert cpu.plan_threads(1, measured=4.0).threads == 1  # never fewer than one


def test_the_busy_cores_measured_now_win_over_a_lagging_load_average(four_cores_idle):
    plan = cpu.plan_threads(1, load=2.4, measured=0.1)  # the load still counts a spell that is over
    assert (plan.threads, plan.busy) == (4, 0)
    assert plan.as_manifest()["busy_from"] == "cpu time"
    assert cpu.plan_threads(1, load=2.4, measured=None).as_manifest()["busy_from"] == "load average"


def stat_file(path, rows: dict[str, tuple[int, ...]]) -> None:
    """A /proc/stat with an aggregate line and one line per CPU (user nice system idle iowait irq softirq steal)."""
    lines = ["cpu  " + " ".join(str(sum(r[i] for r in rows.values())) for i in range(8))]
    lines += [f"{name} " + " ".join(map(str, r)) + " 0 0" for name, r in rows.items()]
    lines += ["intr 1 2 3", "ctxt 99", "btime 1700000000", "procs_running 3"]
    path.write_text("\n".join(lines) + "\n")


def test_busy_cores_are_read_from_two_samples_of_proc_stat(tmp_path):
    stat = tmp_path / "stat"
    stat_file(stat, {"cpu0": (100, 0, 50, 1000, 10, 0, 0, 0), "cpu1": (10, 0, 5, 2000, 0, 0, 0, 0),
                     "cpu2": (0, 0, 0, 500, 0, 0, 0, 0)})

    def elapse(seconds: float) -> None:
        assert seconds == cpu.SAMPLE_S
        # over the sample: cpu0 spun all 25 ticks (20 user, 5 system), cpu1 was idle but for 2 of
        # 25 ticks waiting on disk (idle too) and 3 stolen by the hypervisor (busy), cpu2 idle
        stat_file(stat, {"cpu0": (120, 0, 55, 1000, 10, 0, 0, 0), "cpu1": (10, 0, 5, 2020, 2, 0, 0, 3),
                         "cpu2": (0, 0, 0, 525, 0, 0, 0, 0)})

    assert cpu.busy_cores(stat=stat, cpus={0, 1, 2}, sleep=elapse) == pytest.approx(1.12)
    stat_file(stat, {"cpu0": (100, 0, 50, 1000, 10, 0, 0, 0), "cpu1": (10, 0, 5, 2000, 0, 0, 0, 0),
                     "cpu2": (0, 0, 0, 500, 0, 0, 0, 0)})
    assert cpu.busy_cores(stat=stat, cpus={1, 2}, sleep=elapse) == pytest.approx(0.12)  # only the cores we may use


def test_busy_cores_is_none_where_proc_stat_is_missing_or_says_nothing(tmp_path):
    assert cpu.busy_cores(stat=tmp_path / "absent", sleep=lambda s: None) is None
    stat = tmp_path / "stat"
    stat_file(stat, {"cpu0": (1, 0, 0, 1, 0, 0, 0, 0)})
    assert cpu.busy_cores(stat=stat, sleep=lambda s: None) is None  # no tick went by


def test_the_busy_cores_are_measured_once_per_process(monkeypatch, four_cores_idle):
    monkeypatch.setattr(cpu, "_BUSY_AT_START", False)
    readings = iter([1.0, 0.0])
    monkeypatch.setattr(cpu, "busy_cores", lambda *a, **k: next(readings))
    assert torch_threads(1) == torch_threads(1) == 3  # the run's own work, measured later, changes nothing


def test_an_idle_machine_measured_for_real_leaves_a_spinning_neighbour_its_core(monkeypatch):
    """Real /proc/stat: one process spinning on one of our cores is seen as (about) one busy core."""
    monkeypatch.setattr(cpu, "_BUSY_AT_START", False)
    mine = sorted(os.sched_getaffinity(0))[0]
    spin = subprocess.Popen([sys.executable, "-c", f"import os; os.sched_setaffinity(0, {{{mine}}})\nwhile True: pass"])
    try:
        import time

        time.sleep(0.5)  # let it start spinning
        measured = cpu.busy_cores(cpus={mine})
    finally:
        spin.kill()
        spin.wait()
    assert measured is not None and measured >= 0.5


def test_the_load_is_read_once_when_the_run_starts(monkeypatch, four_cores_idle):
    monkeypatch.setattr(cpu, "_LOAD_AT_START", None)
    monkeypatch.setattr(cpu, "_BUSY_AT_START", None)  # no /proc/stat: the load decides
    readings = iter([3.0, 0.0])
    monkeypatch.setattr(cpu.os, "getloadavg", lambda: (next(readings), 0.0, 0.0))
    assert torch_threads(1) == torch_threads(1) == 1  # the run's own work, counted later, changes nothing


def test_a_cgroup_quota_caps_the_cores(monkeypatch, four_cores_idle):
    monkeypatch.setattr(cpu, "cgroup_quota", lambda: 1.5)
    assert cpu.plan_threads(1).threads == 1
    monkeypatch.setattr(cpu, "cgroup_quota", lambda: 0.5)  # less than a core still runs on one
    assert cpu.plan_threads(1).threads == 1


def test_the_cgroup_quota_is_read_from_the_process_group_up(tmp_path):
    (tmp_path / "proc").write_text("0::/user.slice/job\n")
    group = tmp_path / "fs" / "user.slice" / "job"
    group.mkdir(parents=True)
    (group / "cpu.max").write_text("max 100000\n")
    assert cpu.cgroup_quota(tmp_path / "fs", tmp_path / "proc") is None
    (tmp_path / "fs" / "user.slice" / "cpu.max").write_text("150000 100000\n")
    (group / "cpu.max").unlink()
    assert cpu.cgroup_quota(tmp_path / "fs", tmp_path / "proc") == 1.5
    v1 = tmp_path / "v1"
    (v1 / "cpu").mkdir(parents=True)
    (v1 / "cpu" / "cpu.cfs_quota_us").write_text("200000\n")
    (v1 / "cpu" / "cpu.cfs_period_us").write_text("100000\n")
    assert cpu.cgroup_quota(v1, tmp_path / "no-such-file") == 2.0
    (v1 / "cpu" / "cpu.cfs_quota_us").write_text("-1\n")
    assert cpu.cgroup_quota(v1, tmp_path / "no-such-file") is None


@pytest.mark.slow  # starts a subprocess
@pytest.mark.parametrize("given, seen", [(None, "PASSIVE"), ("ACTIVE", "ACTIVE")])
def test_openmp_threads_wait_passively_unless_the_user_said_otherwise(given, seen):
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    if given:
        env["OMP_WAIT_POLICY"] = given
    code = "import os, stores; print(os.environ['OMP_WAIT_POLICY'])"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    assert out.strip() == seen


def test_the_environment_variable_overrides_the_share(monkeypatch):
    monkeypatch.setenv("SUPPORTBENCH_TORCH_THREADS", "3")
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    assert torch_threads(1) == torch_threads(8) == 3


def test_omp_num_threads_is_honoured_when_ours_is_not_set(monkeypatch):
    monkeypatch.delenv("SUPPORTBENCH_TORCH_THREADS", raising=False)
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    assert torch_threads(1) == 1
    monkeypatch.setenv("OMP_NUM_THREADS", "auto")  # not a count: the share decides
    monkeypatch.setattr(cpu, "_LOAD_AT_START", 0.0)
    monkeypatch.setattr(cpu, "_BUSY_AT_START", 0.0)
    assert torch_threads(1) == cpu.plan_threads(1).threads


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


def test_the_manifest_records_the_threads_of_each_process_and_why(four_cores_idle, tmp_path):
    r = execute([outage_story()], parse_specs("empty"), tmp_path)
    execution = json.loads((r.path / "manifest.json").read_text())["execution"]
    assert execution["torch_threads"] == 4
    assert execution["threads"] == {"threads": 4, "source": "cores", "cores": 4, "quota": None, "load": 0.0, "busy": 0,
                                    "busy_measured": 0.0, "busy_from": "cpu time", "workers": 1,
                                    "wait_policy": os.environ["OMP_WAIT_POLICY"]}



def test_numpy_blas_keeps_its_own_thread_count_so_cosines_do_not_follow_the_load(four_cores_idle, tmp_path):
    """BLAS threads change the last bits of a probe's cosines: a run must not set them from the load."""
    from threadpoolctl import threadpool_info

    before = {p["filepath"]: p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"}
    execute([outage_story()], parse_specs("empty"), tmp_path)
    assert {p["filepath"]: p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"} == before


def test_a_run_in_a_long_lived_process_measures_the_cores_again_and_hands_its_plan_to_torch(
        four_cores_idle, monkeypatch, tmp_path):
    """The app starts runs in its own process: a look at the cores older than a minute is taken again."""
    import torch

    from harness.run import runner

    seen = iter([3.0, 0.0])
    monkeypatch.setattr(cpu, "busy_cores", lambda *a, **k: next(seen))
    monkeypatch.setattr(cpu, "_BUSY_AT_START", False)
    assert torch_threads(1) == 1  # three of four cores busy at the first look (torch is loaded, as in the app after a run)
    monkeypatch.setattr(runner, "FRESH_PLAN_S", 0.0)
    r = execute([outage_story()], parse_specs("empty"), tmp_path)
    execution = json.loads((r.path / "manifest.json").read_text())["execution"]
    assert (execution["torch_threads"], execution["threads"]["busy_measured"]) == (4, 0.0)
    assert torch_threads() == torch.get_num_threads() == 4  # the encoder, mem0 and the loaded torch take the run's plan


class _Clock:
    """time.monotonic() giving `ticks` in turn (the last one after), and a sleep that records."""

    def __init__(self, *ticks: float):
        self.ticks, self.slept = list(ticks), []

    def monotonic(self) -> float:
        return self.ticks.pop(0) if len(self.ticks) > 1 else self.ticks[0]

    def sleep(self, s: float) -> None:
        self.slept.append(round(s, 6))


def _window(monkeypatch, clock: _Clock, after: dict, own: tuple[float, float]):
    readings = iter([{0: (0, 0), 1: (0, 0)}, after])
    owns = iter(own)
    monkeypatch.setattr(cpu, "_BUSY_AT_START", False)
    monkeypatch.setattr(cpu, "_WINDOW", None)
    monkeypatch.setattr(cpu, "time", clock)
    monkeypatch.setattr(cpu, "cpu_times", lambda stat="/proc/stat": next(readings))
    monkeypatch.setattr(cpu, "_own_cpu", lambda: next(owns))
    monkeypatch.setattr(cpu.os, "sched_getaffinity", lambda pid: {0, 1})
    monkeypatch.setattr(cpu, "busy_cores", lambda *a, **k: pytest.fail("the open window is read, no new sample"))
    cpu.start_busy_window()


def test_the_window_a_run_opens_at_start_leaves_its_own_cpu_time_out(monkeypatch):
    """A second of loading the suite on one core, a neighbour on the other: one busy core, no sleep."""
    clock = _Clock(10.0, 11.0, 11.0)
    _window(monkeypatch, clock, {0: (100, 100), 1: (100, 100)}, (2.0, 3.0))  # both cores busy; one second was ours
    assert cpu.busy_at_start() == 1.0
    assert clock.slept == []  # the quarter second had long passed
    assert cpu._WINDOW is None and cpu.busy_at_start() == 1.0  # read once


def test_a_window_shorter_than_the_sample_sleeps_only_what_is_left(monkeypatch):
    clock = _Clock(10.0, 10.1, 10.25)
    _window(monkeypatch, clock, {0: (5, 25), 1: (0, 25)}, (1.0, 1.0))  # a fifth of one core busy, none of it ours
    assert cpu.busy_at_start() == 0.2
    assert clock.slept == [0.15]


def test_a_run_with_no_proc_stat_opens_no_window(monkeypatch):
    monkeypatch.setattr(cpu, "_BUSY_AT_START", False)
    monkeypatch.setattr(cpu, "_WINDOW", None)

    def missing(stat="/proc/stat"):
        raise OSError("no /proc/stat")

    monkeypatch.setattr(cpu, "cpu_times", missing)
    cpu.start_busy_window()
    assert cpu._WINDOW is None

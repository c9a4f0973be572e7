"""How many threads torch (and the OpenMP and BLAS pools under it) may use in this process.

Two traps, both measured on a 2-core machine with one other CPU-bound process running: torch's
default two threads made a cold canonical embedding run take 145-158 s, against 26 s with one
thread; and OpenMP's default wait policy lets idle threads spin on a core someone else wants
(31 s with `OMP_WAIT_POLICY=PASSIVE` at two threads). So:

- the wait policy is passive unless the user set one (`OMP_WAIT_POLICY`), set when this module is
  imported, which `stores` does before anything can import torch (OpenMP reads it once, when torch
  loads it);
- the thread count comes from the cores this process may actually use: its CPU affinity, the
  cgroup's CPU quota (a container limited to 1.5 CPUs has one usable core, not the host's 64),
  minus the cores other processes keep busy right now, shared between the run's worker
  processes, at least 1. "Right now" is measured: the busy share of each usable core over a
  quarter of a second of `/proc/stat` when the run starts, summed, rounded (`busy_cores`), while
  this process sleeps. The 1-minute load average lags by a minute: after a busy spell it still
  said 2.4 on an idle 2-core machine and left a free core unused; it decides only where
  `/proc/stat` cannot be read (its whole part). Both are read once per process. A run opens that
  quarter-second window when its command starts (`start_busy_window`) and reads it when it first
  needs the plan, after loading its suite, with its own CPU time over the window taken out, so it
  sleeps only what is left of the quarter second (nothing, when loading took longer). `SUPPORTBENCH_TORCH_THREADS` overrides all of it, and a
  whole `OMP_NUM_THREADS` is honoured when ours is not set.

MKL (torch's matrix products) runs in strict reproducible mode (`NUMERICS`, `MKL_CBWR`), set here
for the same reason as the wait policy: so a text's vector does not depend on its batch or on
the thread count (see `NUMERICS`).

numpy's BLAS (OpenBLAS, its own pthreads that also spin after each call) is left at its own
count on purpose: a matrix-vector product of 2,000 x 384 floats (one probe's cosines against a long
history) ran 2-8x slower on two BLAS threads than on one with the other core busy, but the thread
count changes the last bits of those cosines, and a count that followed the load would let the
same run rank differently on a busy machine (seen: 7 canonical probes of `hybrid` moved at the
6th decimal). Same inputs, same results comes first.

The decision is made once, in the run process, and handed to its workers (`harness.run.workers`),
whose own view of the load would count the run itself. The manifest keeps it
(`execution.torch_threads` and `execution.threads`).
"""

from __future__ import annotations

import math
import os
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable

WAIT_POLICY = os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
"""The OpenMP wait policy this process runs with: PASSIVE unless the user set another."""

STRICT_NUMERICS = "AUTO,STRICT"
"""MKL's strict conditional numerical reproducibility (`MKL_CBWR`), on the ISA MKL would pick anyway."""
if "STRICT" not in [w.strip() for w in os.environ.get("MKL_CBWR", "").upper().replace("=", ",").split(",")]:
    os.environ["MKL_CBWR"] = STRICT_NUMERICS
NUMERICS = os.environ["MKL_CBWR"]
"""The MKL numerics this process asked for: strict reproducibility (a user's own strict branch is kept).

Without it, MKL's matrix products (torch's linear layers and attention) pick their kernels by the
shape of the whole product, so a text's vector changed in its last bits with the texts it was
batched with and with the thread count (measured on the canonical suite: 82 of 747 vectors
differed between one whole-suite encode and per-scenario encodes, up to 2e-7). In strict mode each
row is computed the same way whatever the batch and the threads, at no measurable cost on this
ISA; it is read by MKL at its first matrix product, so it is set here, before anything loads torch
(`stores.retrieval.encoder.batch_independent` checks that it took)."""

_LOAD_AT_START: float | None = None
_BUSY_AT_START: float | None | bool = False  # False: not measured yet; None: could not be
_BUSY_MEASURED_AT = 0.0  # time.monotonic() of that measurement
SAMPLE_S = 0.25
"""How long `busy_cores` watches the cores when a run starts."""
_WINDOW: tuple[float, dict[int, tuple[int, int]], float] | None = None
"""(time.monotonic(), `cpu_times()`, this process's CPU seconds) when `start_busy_window` opened it."""


def affinity_cores() -> int:
    """Cores this process may be scheduled on (its CPU affinity)."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def cgroup_quota(root: str | Path = "/sys/fs/cgroup", proc_cgroup: str | Path = "/proc/self/cgroup") -> float | None:
    """The CPU quota of this process's cgroup in cores (`1.5` for `150000 100000`), or None when
    there is none (`max`) or it cannot be read. cgroup v2 (`cpu.max`, looked for from the
    process's own group up to the root), else v1 (`cpu.cfs_quota_us` / `cpu.cfs_period_us`)."""
    root = Path(root)
    try:
        lines = Path(proc_cgroup).read_text().splitlines()
    except OSError:
        lines = []
    unified = next((ln.split(":", 2)[2] for ln in lines if ln.startswith("0::")), None)
    if unified is not None:
        group = root / unified.lstrip("/")
        for d in (group, *group.parents):
            quota = _read_cpu_max(d / "cpu.max")
            if quota is not None:
                return quota
            if d == root:
                break
    try:
        q = int((root / "cpu" / "cpu.cfs_quota_us").read_text().split()[0])
        p = int((root / "cpu" / "cpu.cfs_period_us").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    return q / p if q > 0 and p > 0 else None


def _read_cpu_max(path: Path) -> float | None:
    try:
        quota, period = path.read_text().split()[:2]
    except (OSError, ValueError):
        return None
    if quota == "max":
        return None
    try:
        q, p = int(quota), int(period)
    except ValueError:
        return None
    return q / p if q > 0 and p > 0 else None


def load_at_start() -> float:
    """The 1-minute load average when this process first asked (0.0 where there is none)."""
    global _LOAD_AT_START
    if _LOAD_AT_START is None:
        try:
            _LOAD_AT_START = float(os.getloadavg()[0])
        except (AttributeError, OSError):
            _LOAD_AT_START = 0.0
    return _LOAD_AT_START


def cpu_times(stat: str | Path = "/proc/stat") -> dict[int, tuple[int, int]]:
    """Per CPU id, (busy, total) clock ticks since boot from `/proc/stat` (busy: everything but
    idle and iowait; steal counts as busy, the core was not ours)."""
    out: dict[int, tuple[int, int]] = {}
    for line in Path(stat).read_text().splitlines():
        name, _, rest = line.partition(" ")
        if not (name.startswith("cpu") and name[3:].isdigit()):
            continue
        ticks = [int(x) for x in rest.split()[:8]]  # user nice system idle iowait irq softirq steal
        if len(ticks) < 5:
            continue
        total = sum(ticks)
        out[int(name[3:])] = (total - ticks[3] - ticks[4], total)
    return out


def busy_cores(sample_s: float = SAMPLE_S, *, stat: str | Path = "/proc/stat", cpus: set[int] | None = None,
               sleep: Callable[[float], None] = time.sleep) -> float | None:
    """How many of `cpus` (default: this process's affinity) other processes kept busy over the
    next `sample_s` seconds, as a sum of busy shares (1.0: one core fully taken), measured from
    `/proc/stat` while this process sleeps; None where it cannot be read."""
    if cpus is None:
        try:
            cpus = set(os.sched_getaffinity(0))
        except (AttributeError, OSError):
            cpus = None
    try:
        before = cpu_times(stat)
        sleep(sample_s)
        after = cpu_times(stat)
    except (OSError, ValueError):
        return None
    busy = _busy_share(before, after, cpus)
    return round(busy, 2) if busy is not None else None


def _busy_share(before: dict[int, tuple[int, int]], after: dict[int, tuple[int, int]], cpus: set[int] | None) -> float | None:
    """The busy shares of `cpus` between two `cpu_times()` readings, summed (None: no tick went by)."""
    busy, seen = 0.0, 0
    for cpu, (b1, t1) in after.items():
        if (cpus is not None and cpu not in cpus) or cpu not in before:
            continue
        b0, t0 = before[cpu]
        if t1 > t0:
            busy += min(1.0, max(0.0, (b1 - b0) / (t1 - t0)))
            seen += 1
    return busy if seen else None


def _own_cpu() -> float:
    t = os.times()
    return t.user + t.system


def start_busy_window() -> None:
    """Open the quarter-second window `busy_at_start` reads, now (a run's command, before it loads
    its suite): the first look at the cores then reads what passed since, less this process's own
    CPU time over it, instead of sleeping `SAMPLE_S` while nothing else happens. Its worker
    processes are not started yet, so nothing of the run but this process can be in it."""
    global _WINDOW
    if _BUSY_AT_START is not False:
        return
    try:
        _WINDOW = (time.monotonic(), cpu_times(), _own_cpu())
    except (OSError, ValueError):
        _WINDOW = None


def _busy_since_window() -> float | None:
    """The busy cores other processes kept over the open window (at least `SAMPLE_S` long: sleep
    what is left of it), this process's own CPU time over it taken out."""
    assert _WINDOW is not None
    t0, before, own0 = _WINDOW
    left = SAMPLE_S - (time.monotonic() - t0)
    if left > 0:
        time.sleep(left)
    try:
        after = cpu_times()
    except (OSError, ValueError):
        return None
    wall, own = time.monotonic() - t0, _own_cpu() - own0
    try:
        cpus = set(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = None
    busy = _busy_share(before, after, cpus)
    if busy is None:
        return None
    return round(max(0.0, busy - own / wall), 2) if wall > 0 else None


def busy_at_start(fresh_within: float | None = None) -> float | None:
    """`busy_cores()` (or the window `start_busy_window` opened) when this process first asked (None where `/proc/stat` cannot be read), or
    measured again when that is older than `fresh_within` seconds (a long-lived process, such as
    the app, starting another run; never while a run of this process works, which would count it)."""
    global _BUSY_AT_START, _BUSY_MEASURED_AT, _WINDOW
    stale = fresh_within is not None and time.monotonic() - _BUSY_MEASURED_AT > fresh_within
    if _BUSY_AT_START is False or stale:
        _BUSY_AT_START = _busy_since_window() if _WINDOW is not None and not stale else busy_cores()
        _BUSY_MEASURED_AT = time.monotonic()
        _WINDOW = None
    return _BUSY_AT_START


@dataclass(frozen=True)
class ThreadPlan:
    """How many torch threads one process of a run uses, and why."""

    threads: int
    """Intra-op threads for torch in each process of the run."""
    source: str
    """What decided it: `SUPPORTBENCH_TORCH_THREADS`, `OMP_NUM_THREADS`, or `cores` (the rule below)."""
    cores: int
    """Cores this process may run on (affinity)."""
    quota: float | None
    """The cgroup's CPU quota in cores, None when unlimited."""
    load: float
    """The 1-minute load average when the run started."""
    busy: int
    """Cores taken as busy: the measured busy cores rounded, else the whole part of the load."""
    busy_measured: float | None
    """Cores other processes kept busy over `SAMPLE_S` seconds of `/proc/stat` at start (None: not readable)."""
    workers: int
    """Processes of the run sharing the cores."""
    wait_policy: str
    """`OMP_WAIT_POLICY` as this process runs with it."""

    def as_manifest(self) -> dict:
        """The plan as plain JSON data (the manifest's `execution.threads`)."""
        d = asdict(self)
        d["load"] = round(self.load, 2)
        d["busy_from"] = "cpu time" if self.busy_measured is not None else "load average"
        return d


def env_threads() -> int | None:
    """`SUPPORTBENCH_TORCH_THREADS` as a count (None when unset); ValueError saying what is wrong
    with it otherwise (a run checks it before any work)."""
    env = os.environ.get("SUPPORTBENCH_TORCH_THREADS", "").strip()
    if not env:
        return None
    try:
        n = int(env)
    except ValueError:
        raise ValueError(f"SUPPORTBENCH_TORCH_THREADS must be a whole number of threads, got {env!r}") from None
    if n < 1:
        raise ValueError(f"SUPPORTBENCH_TORCH_THREADS must be at least 1, got {n}")
    return n


def plan_threads(workers: int = 1, *, load: float | None = None, measured: float | None | bool = False,
                 fresh_within: float | None = None) -> ThreadPlan:
    """The thread plan for one of `workers` processes: see the module doc. `load` and `measured`
    (busy cores, None for not measurable) replace what was read at start (for tests);
    `fresh_within` measures the busy cores again when the last measurement is older (a run
    starting in a long-lived process). Raises ValueError on a bad SUPPORTBENCH_TORCH_THREADS."""
    workers = max(1, int(workers))
    cores = affinity_cores()
    quota = cgroup_quota()
    load = load_at_start() if load is None else float(load)
    measured = busy_at_start(fresh_within) if measured is False else measured
    # a core counts as taken when someone kept it busy at least half of the sample (a spinning
    # neighbour reads 0.9-1.0 of a core, an idle machine 0.0-0.2); the load's whole part else
    busy = max(0, int(math.floor(measured + 0.5)) if measured is not None else int(math.floor(load)))
    usable = min(cores, max(1, int(math.floor(quota))) if quota is not None else cores)
    common = dict(cores=cores, quota=quota, load=load, busy=busy, busy_measured=measured, workers=workers,
                  wait_policy=os.environ.get("OMP_WAIT_POLICY", ""))
    n = env_threads()
    if n is not None:
        return ThreadPlan(threads=n, source="SUPPORTBENCH_TORCH_THREADS", **common)
    omp = os.environ.get("OMP_NUM_THREADS", "").strip()
    if omp.isdigit() and int(omp) >= 1:
        return ThreadPlan(threads=int(omp), source="OMP_NUM_THREADS", **common)
    free = max(1, usable - busy)
    return ThreadPlan(threads=max(1, free // workers), source="cores", **common)



_WORKERS = 1
"""How many processes of one run share this machine's cores (set in each worker by the pool)."""
_THREADS: int | None = None
"""The torch threads the run process decided for this process, when it handed them down."""


def set_worker_share(workers: int, threads: int | None = None) -> None:
    """Declare that this process is one of `workers` processes of a run, each with its share of
    the cores, or with `threads` when the run process already decided them (set on torch at once
    when torch is already loaded, say by a long-lived process such as the app starting another
    run; else the model load sets it, `stores.retrieval.encoder`)."""
    global _WORKERS, _THREADS
    _WORKERS = max(1, int(workers))
    _THREADS = max(1, int(threads)) if threads is not None else None
    torch = sys.modules.get("torch")
    if _THREADS is not None and torch is not None:
        torch.set_num_threads(_THREADS)


def torch_threads(workers: int | None = None) -> int:
    """Intra-op threads for torch in a process of a run with `workers` processes (default:
    this process's share, `set_worker_share`): the run process's decision when it handed one
    down, else `plan_threads` (`$SUPPORTBENCH_TORCH_THREADS`, a whole `$OMP_NUM_THREADS`, else
    the usable cores less the busy ones, divided by the workers, at least 1). Every user of
    torch in a run reads it: the sentence encoder's model and mem0's embedder."""
    if workers is None and _THREADS is not None:
        return _THREADS
    return plan_threads(workers if workers is not None else _WORKERS).threads

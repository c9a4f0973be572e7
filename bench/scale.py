"""Scale benchmarks, side by side in one run: loading, throughput, worker speedup, worker memory, warm embeddings.

    .venv/bin/python bench/scale.py                       # the full set (1,000 customers; several minutes)
    .venv/bin/python bench/scale.py --customers 200 --speedup-customers 200 --embed-customers 50   # quick

What it measures (per-probe latency against history length is bench/strategies.py's job; the
shares of a worker's time, bench/profile_run.py's), each as a ratio of things timed in this run:

- loading: checking and loading the suite in this process alone (`load_suite`, as a
  `--workers 1` run does) against in two workers (`harness.run.intake.load_in_workers`, as a
  `--workers 2` run does, the run process only collecting the results); and a whole
  `--workers 2` run (load + run, fresh processes) with the files loaded by the run process, as
  before, against loaded by the workers;
- throughput: probes/s of each strategy alone and of all non-embedding strategies together with
  `--workers` workers, loading done by the workers as in `supportbench run` (goal: under 120 s
  together on 1,000 customers with 2 workers, said only when the run is that one);
- speedup of `--workers 2` over 1 on `--speedup-customers` customers, each run in a fresh
  interpreter so neither starts with caches an earlier run warmed;
- memory: the peak resident set (VmHWM) of every worker process, read from /proc while the runs
  go (forkserver workers included), and of this process; `RUSAGE_CHILDREN` is not used: it
  reports the largest *waited-for* child, which never includes forkserver workers, and a
  child's figure includes what it inherited at fork;
- embeddings: a cold run, then a warm one in a fresh process that can only find the vectors in
  the on-disk cache, against tfidf (also in a fresh process) on `--embed-customers` customers.

Runs are written into a temporary folder and deleted. The load average is printed at the start
and at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from harness.format.loader import load_suite  # noqa: E402
from harness.generate import write_suite  # noqa: E402
from harness.run.intake import load_in_workers, n_probes  # noqa: E402
from harness.run.runner import execute  # noqa: E402
from harness.run.workers import run_pool  # noqa: E402
from stores.registry import parse_specs  # noqa: E402

NON_EMBEDDING = "history_stuffing,tfidf,session_aware,oracle,empty"
GOAL_CUSTOMERS, GOAL_SECONDS = 1000, 120
"""The throughput goal (docs/scale.md): every non-embedding strategy on the 1,000-customer suite,
`--workers 2`, in under 120 s; checked only on that suite with those strategies."""


def load_average() -> str:
    """The 1-, 5- and 15-minute load averages, as `uptime` prints them."""
    try:
        return ", ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "unknown"


class ProcessMemory:
    """Samples /proc every `every` seconds: the peak resident set (VmHWM) of each descendant of
    this process, classed as a pool worker (a child of a forkserver or a spawned worker), a
    fresh run (a `python fresh_run.py` child) or other. Linux only (no /proc: no figures)."""

    def __init__(self, every: float = 0.2) -> None:
        self.every = every
        self.peak: dict[int, tuple[str, float]] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def __enter__(self) -> "ProcessMemory":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()

    def _loop(self) -> None:
        while not self._stop.is_set():
            self.sample()
            self._stop.wait(self.every)

    def sample(self) -> None:
        parent: dict[int, int] = {}
        cmd: dict[int, str] = {}
        for d in os.listdir("/proc") if os.path.isdir("/proc") else ():
            if not d.isdigit():
                continue
            try:
                with open(f"/proc/{d}/stat") as f:
                    parent[int(d)] = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
        me = os.getpid()
        mine = {me}
        changed = True
        while changed:  # every descendant, however deep (forkserver -> worker)
            changed = False
            for pid, ppid in parent.items():
                if ppid in mine and pid not in mine:
                    mine.add(pid)
                    changed = True
        hwm: dict[int, int] = {}
        for pid in mine - {me}:
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    cmd[pid] = f.read().replace(b"\0", b" ").decode(errors="replace")
                with open(f"/proc/{pid}/status") as f:
                    hwm[pid] = next((int(line.split()[1]) for line in f if line.startswith("VmHWM:")), 0)
            except (OSError, ValueError):
                continue
        for pid in hwm:
            if not cmd[pid].strip():  # a zombie (exited, not yet reaped) shows no command line
                continue
            p = cmd.get(parent.get(pid, 0), "")
            if "multiprocessing.forkserver" in p or "multiprocessing.spawn" in cmd[pid]:
                kind = "worker"
            elif "fresh_run.py" in cmd[pid]:
                kind = "fresh run"
            elif "multiprocessing" in cmd[pid]:
                kind = "pool helper"  # the forkserver, the resource tracker
            else:
                kind = "other"
            old = self.peak.get(pid, (kind, 0.0))[1]
            self.peak[pid] = (kind, max(old, hwm[pid] / 1024))

    def largest(self, kind: str) -> tuple[float, int]:
        """(largest peak in MB, how many processes) of one kind."""
        xs = [mb for k, mb in self.peak.values() if k == kind]
        return (max(xs) if xs else 0.0), len(xs)


def _run(scenarios, strategies: str, out: Path, workers: int, pool=None) -> tuple[float, int]:
    t0 = time.perf_counter()
    r = execute(scenarios, parse_specs(strategies), out, workers=workers, command="bench/scale.py", pool=pool)
    secs = time.perf_counter() - t0
    shutil.rmtree(r.path, ignore_errors=True)
    return secs, r.probes


_FRESH = """
import json, shutil, sys, time
from harness.format.loader import load_suite
from harness.run.intake import load_in_workers
from harness.run.runner import execute
from harness.run.workers import run_pool
from stores.registry import parse_specs
if __name__ == "__main__":
    paths, strategies, out, workers, serial_load = json.loads(sys.argv[1])
    t0 = time.perf_counter()
    if workers > 1 and serial_load:  # the run process checks and loads every file, the workers only run
        r = execute(load_suite(paths), parse_specs(strategies), out, workers=workers, command="bench/scale.py")
    elif workers > 1:
        with run_pool(workers) as pool:
            scenarios = load_in_workers(paths, pool, workers)
            r = execute(scenarios, parse_specs(strategies), out, workers=workers, command="bench/scale.py", pool=pool)
    else:
        r = execute(load_suite(paths), parse_specs(strategies), out, workers=workers, command="bench/scale.py")
    secs = time.perf_counter() - t0
    shutil.rmtree(r.path, ignore_errors=True)
    print(json.dumps([secs, r.probes]))
"""


def _run_fresh(paths: list[str], strategies: str, out: Path, workers: int, serial_load: bool = False) -> tuple[float, int]:
    """Load and run in a new interpreter, as `supportbench run` would (with `serial_load`, as it
    did before the workers loaded their own files), so no run starts with caches another run
    warmed (in memory: the disk cache of embeddings is shared on purpose)."""
    script = out.parent / "fresh_run.py"
    script.write_text(_FRESH)
    arg = json.dumps([paths, strategies, str(out), workers, serial_load])
    done = subprocess.run([sys.executable, str(script), arg], cwd=ROOT, check=True, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    secs, probes = json.loads(done.stdout.strip().splitlines()[-1])
    return secs, probes


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--customers", type=int, default=1000, help="suite size for throughput (default 1000)")
    ap.add_argument("--speedup-customers", type=int, default=400, help="suite size for the workers 2 vs 1 speedup (default 400)")
    ap.add_argument("--embed-customers", type=int, default=150, help="suite size for embedding vs tfidf (default 150)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--profile", default="realistic")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--strategies", default=NON_EMBEDDING, help=f"non-embedding strategies (default {NON_EMBEDDING})")
    ap.add_argument("--skip", default="", help="comma-separated parts to skip: per-strategy, loading, speedup, embedding")
    args = ap.parse_args(argv)
    skip = set(filter(None, args.skip.split(",")))
    work = Path(tempfile.mkdtemp(prefix="supportbench-scale-"))
    os.environ["SUPPORTBENCH_CACHE"] = str(work / "cache")  # a private cache: cold, then warm
    rows: list[tuple[str, str, str]] = []
    print(f"load average at start: {load_average()}", flush=True)
    try:
        with ProcessMemory() as mem:
            t0 = time.perf_counter()
            paths = write_suite(work / "suite", args.customers, args.seed, args.profile)
            gen = time.perf_counter() - t0
            suite = [str(work / "suite")]
            t0 = time.perf_counter()
            scenarios = load_suite(suite)
            serial = time.perf_counter() - t0
            with run_pool(args.workers) as pool:
                t0 = time.perf_counter()
                handles = load_in_workers(suite, pool, args.workers)
                parallel = time.perf_counter() - t0
                probes_in_suite = sum(n_probes(s) for s in handles)
                rows.append(("generate", f"{args.customers} customers -> {len(paths)} files, {probes_in_suite} probes", f"{gen:.1f} s"))
                rows.append(("load + validate", f"{len(handles)} files: this process alone vs {args.workers} workers",
                             f"{serial:.1f} s vs {parallel:.1f} s = x{parallel / serial:.2f}"))
                secs, probes = _run(handles, args.strategies, work / "runs", args.workers, pool)
                goal = (f" (goal < {GOAL_SECONDS} s on {GOAL_CUSTOMERS:,} customers: {'met' if secs < GOAL_SECONDS else 'MISSED'})"
                        if args.customers == GOAL_CUSTOMERS and args.strategies == NON_EMBEDDING and args.workers == 2 else
                        f" (the {GOAL_SECONDS} s goal is set on {GOAL_CUSTOMERS:,} customers, the defaults: not checked here)")
                rows.append((f"all non-embedding, --workers {args.workers}", f"{args.strategies} ({probes} probe answers)",
                             f"{secs:.1f} s, {probes / secs:.0f} probes/s; loading (workers) x{parallel / (parallel + secs):.2f} "
                             f"of load + run{goal}"))
                if "per-strategy" not in skip:
                    for name in args.strategies.split(","):
                        s, p = _run(handles, name, work / "runs", args.workers, pool)
                        rows.append((f"throughput {name}", f"--workers {args.workers}", f"{p / s:.0f} probes/s ({s:.1f} s)"))
            del scenarios

            if "loading" not in skip:
                old, _ = _run_fresh(suite, args.strategies, work / "runs", args.workers, serial_load=True)
                new, _ = _run_fresh(suite, args.strategies, work / "runs", args.workers)
                rows.append((f"load + run, --workers {args.workers}", f"{len(paths)} files, fresh processes: run process loads "
                             "vs workers load", f"{old:.1f} s vs {new:.1f} s = x{new / old:.2f}"))

            if "speedup" not in skip:
                n = max(1, round(len(paths) * min(1.0, args.speedup_customers / args.customers)))
                sub = work / "speedup"
                sub.mkdir()
                for p in paths[:n]:
                    shutil.copy(p, sub / p.name)
                one, _ = _run_fresh([str(sub)], args.strategies, work / "runs", 1)
                two, _ = _run_fresh([str(sub)], args.strategies, work / "runs", 2)
                rows.append(("speedup --workers 2 / 1", f"{n} files, load + run, each in a fresh process",
                             f"{one:.1f} s / {two:.1f} s = x{one / two:.2f} (goal >= 1.6x: {'met' if one / two >= 1.6 else 'MISSED'})"))

            if "embedding" not in skip:
                n = max(1, round(len(paths) * min(1.0, args.embed_customers / args.customers)))
                sub = work / "embed"
                sub.mkdir()
                for p in paths[:n]:
                    shutil.copy(p, sub / p.name)
                cold, _ = _run_fresh([str(sub)], "embedding", work / "runs", 1)
                warm, _ = _run_fresh([str(sub)], "embedding", work / "runs", 1)
                tfidf, _ = _run_fresh([str(sub)], "tfidf", work / "runs", 1)
                rows.append(("embedding, cold cache", f"{n} files, --workers 1, fresh process", f"{cold:.1f} s"))
                rows.append(("embedding warm vs tfidf", f"{n} files, --workers 1, each in a fresh process (disk cache only)",
                             f"{warm:.1f} s vs {tfidf:.1f} s = x{warm / tfidf:.2f} (goal <= 2x: {'met' if warm <= 2 * tfidf else 'MISSED'}); "
                             f"cold / warm x{cold / warm:.1f}"))
        worker_mb, workers_seen = mem.largest("worker")
        fresh_mb, fresh_seen = mem.largest("fresh run")
        rows.append(("peak memory (VmHWM from /proc)", "this process / largest pool worker / largest fresh run",
                     f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB / {worker_mb:.0f} MB "
                     f"(of {workers_seen} workers) / {fresh_mb:.0f} MB (of {fresh_seen})"))
    finally:
        shutil.rmtree(work, ignore_errors=True)

    w = [max(len(r[i]) for r in rows + [("measure", "on", "result")]) for i in range(3)]
    print(f"{'measure':<{w[0]}}  {'on':<{w[1]}}  result")
    print(f"{'-' * w[0]}  {'-' * w[1]}  {'-' * w[2]}")
    for a, b, c in rows:
        print(f"{a:<{w[0]}}  {b:<{w[1]}}  {c}")
    print(f"\nload average at end: {load_average()}; {os.cpu_count()} CPUs; python {sys.version.split()[0]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

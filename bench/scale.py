"""Scale benchmarks, side by side in one run: throughput, worker speedup, peak memory, warm embeddings.

    .venv/bin/python bench/scale.py                       # the full set (1,000 customers; several minutes)
    .venv/bin/python bench/scale.py --customers 200 --speedup-customers 200 --embed-customers 50   # quick

What it measures (per-probe latency against history length is bench/strategies.py's job):

- throughput: probes/s of each strategy alone, and the wall time of all non-embedding
  strategies together, on a generated suite of `--customers` customers with `--workers` workers
  (target: 1,000 customers in under 120 s on 2 cores);
- speedup of `--workers 2` over 1 on `--speedup-customers` customers (target >= 1.6x), each
  run in a fresh interpreter so neither starts with caches an earlier run warmed;
- peak memory (ru_maxrss) of this process and of the worker processes;
- with a warm embedding cache, embedding time against tfidf on `--embed-customers` customers
  (target <= 2x).

Runs are written into a temporary folder and deleted; scenario loading is timed on its own.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from harness.generate import write_suite  # noqa: E402
from harness.format.loader import load_suite  # noqa: E402
from harness.run.runner import execute  # noqa: E402
from stores.registry import parse_specs  # noqa: E402

NON_EMBEDDING = "history_stuffing,tfidf,session_aware,oracle,empty"


def _run(scenarios, strategies: str, out: Path, workers: int) -> tuple[float, int]:
    t0 = time.perf_counter()
    r = execute(scenarios, parse_specs(strategies), out, workers=workers, command="bench/scale.py")
    secs = time.perf_counter() - t0
    shutil.rmtree(r.path, ignore_errors=True)
    return secs, r.probes


_FRESH = """
import json, shutil, sys, time
from harness.format.loader import load_suite
from harness.run.runner import execute
from stores.registry import parse_specs
if __name__ == "__main__":
    paths, strategies, out, workers = json.loads(sys.argv[1])
    scenarios = load_suite(paths)
    t0 = time.perf_counter()
    r = execute(scenarios, parse_specs(strategies), out, workers=workers, command="bench/scale.py")
    secs = time.perf_counter() - t0
    shutil.rmtree(r.path, ignore_errors=True)
    print(json.dumps([secs, r.probes]))
"""


def _run_fresh(scenarios, strategies: str, out: Path, workers: int) -> tuple[float, int]:
    """`_run` in a new interpreter, so no run starts with caches another run warmed
    (a worker process always starts cold; an in-process run after others would not)."""
    import json
    import subprocess

    script = out.parent / "fresh_run.py"
    script.write_text(_FRESH)
    arg = json.dumps([[s.path for s in scenarios], strategies, str(out), workers])
    done = subprocess.run([sys.executable, str(script), arg], cwd=ROOT, check=True, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    secs, probes = json.loads(done.stdout.strip().splitlines()[-1])
    return secs, probes


def _maxrss_mb(who: int) -> float:
    return resource.getrusage(who).ru_maxrss / 1024  # KiB on Linux


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--customers", type=int, default=1000, help="suite size for throughput (default 1000)")
    ap.add_argument("--speedup-customers", type=int, default=400, help="suite size for the workers 2 vs 1 speedup (default 400)")
    ap.add_argument("--embed-customers", type=int, default=150, help="suite size for embedding vs tfidf (default 150)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--profile", default="realistic")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--strategies", default=NON_EMBEDDING, help=f"non-embedding strategies (default {NON_EMBEDDING})")
    ap.add_argument("--skip", default="", help="comma-separated parts to skip: per-strategy, speedup, embedding")
    args = ap.parse_args(argv)
    skip = set(filter(None, args.skip.split(",")))
    work = Path(tempfile.mkdtemp(prefix="supportbench-scale-"))
    os.environ.setdefault("SUPPORTBENCH_CACHE", str(work / "cache"))  # a private cache: cold, then warm
    rows: list[tuple[str, str, str]] = []
    try:
        t0 = time.perf_counter()
        write_suite(work / "suite", args.customers, args.seed, args.profile)
        gen = time.perf_counter() - t0
        t0 = time.perf_counter()
        scenarios = load_suite([str(work / "suite")])
        load = time.perf_counter() - t0
        n_probes = sum(len(s.probes) for s in scenarios)
        rows.append(("generate", f"{args.customers} customers -> {len(scenarios)} files, {n_probes} probes", f"{gen:.1f} s"))
        rows.append(("load + validate", f"{len(scenarios)} files", f"{load:.1f} s"))

        secs, probes = _run(scenarios, args.strategies, work / "runs", args.workers)
        verdict = "target < 120 s: " + ("met" if secs < 120 else "MISSED")
        rows.append((f"all non-embedding, --workers {args.workers}", f"{args.strategies} ({probes} probe answers)",
                     f"{secs:.1f} s, {probes / secs:.0f} probes/s; {verdict}"))
        rows.append(("load + validate + all non-embedding", f"--workers {args.workers}",
                     f"{load + secs:.1f} s; target < 120 s: {'met' if load + secs < 120 else 'MISSED'}"))
        if "per-strategy" not in skip:
            for name in args.strategies.split(","):
                s, p = _run(scenarios, name, work / "runs", args.workers)
                rows.append((f"throughput {name}", f"--workers {args.workers}", f"{p / s:.0f} probes/s ({s:.1f} s)"))

        if "speedup" not in skip:
            sub = scenarios[: max(1, round(len(scenarios) * min(1.0, args.speedup_customers / args.customers)))]
            one, _ = _run_fresh(sub, args.strategies, work / "runs", 1)
            two, _ = _run_fresh(sub, args.strategies, work / "runs", 2)
            rows.append(("speedup --workers 2 / 1", f"{len(sub)} files, each in a fresh process",
                         f"{one:.1f} s / {two:.1f} s = {one / two:.2f}x; target >= 1.6x: {'met' if one / two >= 1.6 else 'MISSED'}"))

        if "embedding" not in skip:
            sub = scenarios[: max(1, round(len(scenarios) * min(1.0, args.embed_customers / args.customers)))]
            cold, _ = _run(sub, "embedding", work / "runs", 1)
            warm, p = _run(sub, "embedding", work / "runs", 1)
            tfidf, _ = _run(sub, "tfidf", work / "runs", 1)
            rows.append(("embedding, cold cache", f"{len(sub)} files, --workers 1", f"{cold:.1f} s"))
            rows.append(("embedding warm vs tfidf", f"{len(sub)} files, --workers 1",
                         f"{warm:.1f} s vs {tfidf:.1f} s = {warm / tfidf:.2f}x; target <= 2x: {'met' if warm <= 2 * tfidf else 'MISSED'}"))

        rows.append(("peak memory (ru_maxrss)", "this process / largest child (worker or fresh run)",
                     f"{_maxrss_mb(resource.RUSAGE_SELF):.0f} MB / {_maxrss_mb(resource.RUSAGE_CHILDREN):.0f} MB"))
    finally:
        shutil.rmtree(work, ignore_errors=True)

    w = [max(len(r[i]) for r in rows + [("measure", "on", "result")]) for i in range(3)]
    print(f"{'measure':<{w[0]}}  {'on':<{w[1]}}  result")
    print(f"{'-' * w[0]}  {'-' * w[1]}  {'-' * w[2]}")
    for a, b, c in rows:
        print(f"{a:<{w[0]}}  {b:<{w[1]}}  {c}")
    print(f"\n{os.cpu_count()} CPUs; python {sys.version.split()[0]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

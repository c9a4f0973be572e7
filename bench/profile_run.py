"""Where one worker's time goes: the idempotency replays' and health's shares of a run.

    .venv/bin/python bench/profile_run.py                    # ~120 generated files, 5 strategies
    .venv/bin/python bench/profile_run.py --customers 60 --repeat 1 --cprofile

One shard, as a worker runs it (`harness.run.runner.run_shard`: replay, idempotency check,
scoring, tables), over a freshly generated suite, in this process. Shares are measured with
wall-clock timers around two things and printed as percentages of the shard's wall time
(median of `--repeat` runs, each in a fresh interpreter so no run starts with another's warm
caches):

- the idempotency replays: `idempotency_signatures` (the replay after `reset()` and the one with
  every event delivered twice);
- health: every call of a strategy's `health()` (the timeline after each event, the reports at
  probes and inside handoff briefs).

With `--cprofile` the same shard also runs under cProfile and the two shares are printed as its
cumulative times, the way the figures that opened issue 18 were taken (cProfile inflates code
that makes many small calls, so its shares differ from the timers').
Goals (issue 18): idempotency replays <= 30 %, health <= 5 %.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

STRATEGIES = "history_stuffing,tfidf,session_aware,oracle,empty"
GOALS = {"idempotency": 0.30, "health": 0.05}


def load_average() -> str:
    """The 1-, 5- and 15-minute load averages, as `uptime` prints them."""
    try:
        return ", ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "unknown"


def measure(suite: str, strategies: str, cprofile: bool) -> dict:
    """One shard over `suite`, timed; the shares of the idempotency replays and of health."""
    from harness.format.loader import load_suite
    from harness.run import runner
    from stores.registry import parse_specs, strategy_class

    scenarios = load_suite([suite])
    specs = parse_specs(strategies)
    acc = {"idempotency": 0.0, "health": 0.0}
    depth = {"health": 0}

    real_idem = runner.idempotency_signatures

    def idem(*a, **kw):
        t = time.perf_counter()
        try:
            return real_idem(*a, **kw)
        finally:
            acc["idempotency"] += time.perf_counter() - t

    def timed_health(fn):
        def health(self, *a, **kw):
            depth["health"] += 1
            t = time.perf_counter()
            try:
                return fn(self, *a, **kw)
            finally:
                depth["health"] -= 1
                if depth["health"] == 0:  # a health() inside another (a subclass calling up) counts once
                    acc["health"] += time.perf_counter() - t
        return health

    runner.idempotency_signatures = idem
    for name in dict.fromkeys(s.name for s in specs):
        cls = strategy_class(name)
        if callable(getattr(cls, "health", None)):
            cls.health = timed_health(cls.health)
    probes = sum(len(s.probes) for s in scenarios)
    t = time.perf_counter()
    runner.run_shard(scenarios, specs)
    wall = time.perf_counter() - t
    out = {"files": len(scenarios), "probes": probes, "wall": wall,
           "idempotency": acc["idempotency"] / wall, "health": acc["health"] / wall}
    if cprofile:
        import cProfile
        import pstats

        runner.idempotency_signatures = real_idem
        prof = cProfile.Profile()
        prof.enable()
        runner.run_shard(scenarios, specs)
        prof.disable()
        stats = pstats.Stats(prof).stats
        total = next(v[3] for k, v in stats.items() if k[2] == "run_shard")
        idem_cum = sum(v[3] for k, v in stats.items() if k[2] == "idempotency_signatures")
        health_cum = sum(v[3] for k, v in stats.items() if k[2] == "health_report" or (k[2] == "health" and "session" in k[0]))
        # health() wraps health_report: count the outer one only
        outer = [v[3] for k, v in stats.items() if k[2] == "health" and "session" in k[0]]
        out["cprofile"] = {"idempotency": idem_cum / total,
                           "health": (max(outer) if outer else health_cum) / total}
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--customers", type=int, default=145, help="customers of the generated suite (145 -> about 120 files)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--profile", default="realistic")
    ap.add_argument("--strategies", default=STRATEGIES)
    ap.add_argument("--repeat", type=int, default=3, help="runs, each in a fresh interpreter (median reported)")
    ap.add_argument("--cprofile", action="store_true", help="also the shares under cProfile (one more run)")
    ap.add_argument("--one", help=argparse.SUPPRESS)  # internal: measure one suite in this process, print JSON
    a = ap.parse_args(argv)
    if a.one:
        print(json.dumps(measure(a.one, a.strategies, a.cprofile)))
        return 0

    from harness.generate import write_suite

    print(f"load average at start: {load_average()}")
    with tempfile.TemporaryDirectory(prefix="supportbench-profile-") as tmp:
        suite = Path(tmp) / "suite"
        write_suite(suite, a.customers, a.seed, a.profile)
        env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1"),
               "SUPPORTBENCH_CACHE": str(Path(tmp) / "cache")}
        runs = []
        for k in range(max(1, a.repeat)):
            cmd = [sys.executable, __file__, "--one", str(suite), "--strategies", a.strategies]
            if a.cprofile and k == 0:
                cmd.append("--cprofile")
            done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
            runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    r0 = runs[0]
    print(f"\none worker's shard: {r0['files']} generated files ({a.customers} customers, seed {a.seed}), "
          f"{r0['probes']} probes, strategies {a.strategies}; {len(runs)} run(s), each in a fresh process")
    print(f"  shard wall time, median: {statistics.median(r['wall'] for r in runs):.1f} s")
    for key, label in (("idempotency", "idempotency replays (reset + twice)"), ("health", "health() calls")):
        shares = [r[key] for r in runs]
        med = statistics.median(shares)
        verdict = "PASS" if med <= GOALS[key] else "FAIL"
        spread = f" (runs: {', '.join(f'{s:.1%}' for s in shares)})" if len(shares) > 1 else ""
        print(f"  {label:<38} {med:6.1%} of the shard{spread}; goal <= {GOALS[key]:.0%}: {verdict}")
    if "cprofile" in r0:
        c = r0["cprofile"]
        print(f"  under cProfile (cumulative): idempotency {c['idempotency']:.1%}, health {c['health']:.1%}")
    print(f"\nload average at end: {load_average()}; {os.cpu_count()} CPUs; python {sys.version.split()[0]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

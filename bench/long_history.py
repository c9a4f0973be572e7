"""One customer's very long history through whole runs: session_aware against tfidf at 3,000 turns,
and a 100,000-event scenario through the five non-embedding strategies.

    .venv/bin/python bench/long_history.py                         # both parts
    .venv/bin/python bench/long_history.py --skip long --turns 1000

1. `compare`: a scenario file of `--turns` turns (default 3,000; sessions of ~25 turns, most
   resolved, a probe every `--probe-every` turns) is loaded once, then each strategy's whole share
   of a run is timed in this process, in turn, `--repeat` times (median): the plain replay with
   the health timeline after every event, the idempotency replays, scoring and tables
   (`harness.run.runner.run_shard` on the one scenario), after one untimed run of each (the
   process's one-time costs would otherwise land on whichever strategy runs first). Goal (issue
   18): session_aware <= 3x tfidf.
2. `long`: a scenario file of `--long-events` events (default 100,000) is validated, then run with
   `--strategies` (default the five non-embedding ones) by `supportbench run` in a fresh process,
   `--workers 1`, with a time limit of `--limit` seconds (default 600, the goal); the validation and
   the run are timed apart, the run's peak memory is printed (its process's largest resident set),
   and the run's own per-strategy probe counts are checked.

The files are written into a temporary folder and deleted; the load average is printed at the
start and at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.strategies import TOPICS, load_average, synth_events  # noqa: E402
from stores.protocol import Turn  # noqa: E402

FIVE = "history_stuffing,tfidf,session_aware,oracle,empty"


def write_scenario(path: Path, n_events: int, probe_every: int, sid: str, turns_only: bool = False) -> tuple[int, int]:
    """A valid scenario file with about `n_events` events of one customer (with `turns_only`:
    exactly `n_events` turns, plus their resolutions and probes); (events, probes)."""
    import random

    turns = n_events
    events = synth_events(turns, subject="bench")
    while not turns_only and len(events) + len(events) // probe_every > n_events and turns > 1:  # resolutions and probes count too
        turns = int(turns * n_events / (len(events) + len(events) // probe_every))
        events = synth_events(turns, subject="bench")
    rng = random.Random(5)
    out = [f"id: {sid}\nversion: 1\ntitle: {len(events)} events of one customer (bench/long_history.py)\n"
           f"start: {events[0].at.isoformat().replace('+00:00', 'Z')}\nsubjects:\n  bench: {{name: Bench Customer}}\nevents:\n"]
    probes = n_turns = 0
    last_customer: Turn | None = None
    for e in events:
        at = e.at.isoformat().replace("+00:00", "Z")
        if isinstance(e, Turn):
            n_turns += 1
            out.append(f"  - turn: {json.dumps(e.text)}\n    subject: bench\n    session: {e.session}\n    at: {at}\n"
                       f"    id: {json.dumps(e.id)}\n    role: {e.role}\n    kind: {e.kind}\n")
            if e.role == "customer":
                last_customer = e
            if n_turns % probe_every == 0 and last_customer is not None:
                probes += 1
                task = f"still {' '.join(rng.sample(TOPICS[rng.choice(list(TOPICS))], 4))}"
                when = (e.at + timedelta(seconds=1)).isoformat().replace("+00:00", "Z")
                out.append(f"  - probe: p{probes}\n    subject: bench\n    session: {e.session}\n    at: {when}\n"
                           f"    task: {json.dumps(task)}\n    budget: 1500\n"
                           f"    expect:\n      include: [{json.dumps(last_customer.id)}]\n")
        else:
            out.append(f"  - resolve: {e.session}\n    subject: bench\n    at: {at}\n    status: {e.status}\n"
                       f"    summary: {json.dumps(e.summary)}\n")
    path.write_text("".join(out), encoding="utf-8")
    return len(events) + probes, probes


def compare(folder: Path, turns: int, probe_every: int, repeat: int) -> None:
    from harness.format.loader import load_scenario
    from harness.run.runner import run_shard
    from stores.registry import parse_specs

    path = folder / "compare.yaml"
    n, probes = write_scenario(path, turns, probe_every, "long-compare", turns_only=True)
    s = load_scenario(path)
    times: dict[str, list[float]] = {"session_aware": [], "tfidf": []}
    for name in times:  # untimed, once each: imports and the process's first-use costs (pyarrow's
        run_shard([s], parse_specs(name))  # pandas, the tokenizer) are not a strategy's cost per run
    for _ in range(max(1, repeat)):
        for name in times:
            t = time.perf_counter()
            run_shard([s], parse_specs(name))
            times[name].append(time.perf_counter() - t)
    sa, tf = statistics.median(times["session_aware"]), statistics.median(times["tfidf"])
    print(f"\n1. one scenario of {n} events ({sum(isinstance(e, Turn) for e in s.events)} turns, {probes} probes), "
          f"each strategy's whole share of a run (replays, health timeline, scoring, tables), median of {max(1, repeat)}")
    print(f"  session_aware {sa:7.2f} s   tfidf {tf:7.2f} s   session_aware / tfidf x{sa / tf:.2f} "
          f"(goal <= 3x): {'PASS' if sa / tf <= 3 else 'FAIL'}")


def long_run(folder: Path, n_events: int, probe_every: int, strategies: str, limit: float) -> None:
    path = folder / "long.yaml"
    t = time.perf_counter()
    n, probes = write_scenario(path, n_events, probe_every, "long-100k")
    written = time.perf_counter() - t
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1")}
    cli = [sys.executable, "-m", "harness.cli"]
    t = time.perf_counter()
    v = subprocess.run(cli + ["validate", str(path)], cwd=ROOT, env=env, capture_output=True, text=True)
    validated = time.perf_counter() - t
    v_peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 2**20
    print(f"\n2. one scenario of {n} events ({probes} probes, {path.stat().st_size / 1e6:.1f} MB of YAML, written in {written:.1f} s)")
    print(f"  validate (fresh process):  {validated:7.1f} s, exit {v.returncode}, peak memory {v_peak:.2f} GiB")
    t = time.perf_counter()
    try:
        r = subprocess.run(cli + ["run", str(path), "-s", strategies, "-q", "--run-id", "long", "--out", str(folder / "runs")],
                           cwd=ROOT, env=env, capture_output=True, text=True, timeout=limit)
    except subprocess.TimeoutExpired:
        print(f"  run {strategies} (fresh process, --workers 1): did NOT finish within {limit:.0f} s")
        return
    ran = time.perf_counter() - t
    # ru_maxrss is in KiB on Linux and is the largest child's so far: the run's, unless validating took more
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 2**20
    ok = r.returncode == 0
    answers = ""
    if ok:
        from harness.analysis.results import Results

        with Results(folder / "runs" / "long") as res:
            counts = dict(res.rows("select strategy, count(*) from probes group by 1"))
        answers = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
    print(f"  run {strategies} (fresh process, --workers 1, load included): {ran:7.1f} s, exit {r.returncode}; "
          f"finished within {limit:.0f} s: {'yes' if ok and ran <= limit else 'NO'}; peak memory {peak:.2f} GiB")
    if answers:
        print(f"  probe answers per strategy: {answers}")
    if not ok:
        print("  " + (r.stderr.strip().splitlines() or ["(no output)"])[-1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--turns", type=int, default=3000, help="turns of the session_aware vs tfidf scenario")
    ap.add_argument("--probe-every", type=int, default=100, help="a probe after every N turns (compare)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--long-events", type=int, default=100_000, help="events of the long scenario")
    ap.add_argument("--long-probe-every", type=int, default=1000, help="a probe after every N turns (long)")
    ap.add_argument("--strategies", default=FIVE, help="strategies of the long run")
    ap.add_argument("--limit", type=float, default=600, help="seconds the long run may take (goal, issue 17: 600)")
    ap.add_argument("--skip", default="", help="comma-separated parts to skip: compare, long")
    a = ap.parse_args(argv)
    skip = set(filter(None, a.skip.split(",")))
    print(f"load average at start: {load_average()}; {os.cpu_count()} CPUs; python {sys.version.split()[0]}")
    with tempfile.TemporaryDirectory(prefix="supportbench-long-") as tmp:
        if "compare" not in skip:
            compare(Path(tmp), a.turns, a.probe_every, a.repeat)
        if "long" not in skip:
            long_run(Path(tmp), a.long_events, a.long_probe_every, a.strategies, a.limit)
    print(f"\nload average at end: {load_average()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

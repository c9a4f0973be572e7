"""What a `supportbench run` of LoCoMo costs against a plain BM25 process over the same YAML.

    python bench/locomo_cost.py LOCOMO_SCENARIOS [--strategies tfidf,session_aware,hybrid] [--repeat 3] [--out docs/results/locomo-cost.md]

LOCOMO_SCENARIOS is a folder written by `supportbench import locomo` (the release stays outside the
project). Each round times, in fresh processes, from start to exit and in turn (so a change in the
machine's load hits every side alike):

- `plain_bm25`: a plain process over the same YAML: load and validate it with the project's loader,
  observe every turn, and at each probe rank the subject's items with `rank_bm25.BM25Okapi` and fill
  the probe's budget with the project's packing (the same items, the same budget, the same
  tokenizer as every strategy; bench/locomo_retrieval.py's `PlainBM25`); it writes nothing;
- each strategy: `supportbench run LOCOMO_SCENARIOS --strategies NAME --policies none` into a
  temporary folder (replay, the idempotency replays, the reply engine, scoring, the Parquet tables).

Every process runs with `OMP_NUM_THREADS` as the caller set it, else 1 (`environment()`). That fixes numpy's
BLAS threads, so they do not spin against each other on a loaded machine differently on each side, and
torch's intra-op threads in any process that loads the encoder (`stores.cpu.plan_threads` takes
`OMP_NUM_THREADS` as torch's count unless `SUPPORTBENCH_TORCH_THREADS` is set); every side gets the same.

It prints the median wall time of each side, the ratios (goals, issue 24: tfidf within 2x of
plain_bm25; session_aware and hybrid within 1.5x of tfidf), the load average before each round, the
run ids and the candidate rows each run wrote (receipts are shortened on long pools,
docs/run-format.md). hybrid's embeddings come from the on-disk cache after the first round; the
first round is a warm-up and is not counted unless `--repeat 1`. The project's packages are compiled
to bytecode first (`compileall`, as any run leaves them), so that a shell which sets
PYTHONDONTWRITEBYTECODE does not make every process of either side compile the project again.
"""

from __future__ import annotations

import argparse
import compileall
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from profile_run import load_average  # noqa: E402

GOALS = {"tfidf": ("plain_bm25", 2.0), "session_aware": ("tfidf", 1.5), "hybrid": ("tfidf", 1.5)}

PLAIN = r"""
import sys
sys.path.insert(0, sys.argv[1]); sys.path.insert(0, sys.argv[1] + "/bench")
from harness.format.loader import load_suite
from harness.format.model import Probe
from harness.replay.probes import request_for
from locomo_retrieval import PlainBM25
for sc in load_suite([sys.argv[2]]):
    s = PlainBM25()
    for ev in sc.events:
        if isinstance(ev, Probe):
            s.context(request_for(ev))
        else:
            s.observe(ev)
"""


def environment() -> dict[str, str]:
    """The environment of every timed process: the caller's, with `OMP_NUM_THREADS` the caller's or 1. Unset,
    numpy's BLAS takes every core and its idle threads spin against the other processes of a loaded machine,
    so a side's time would follow how many small products it makes rather than what it computes. It also sets
    torch's thread count where the encoder is loaded (`stores.cpu.plan_threads`, unless
    `SUPPORTBENCH_TORCH_THREADS` is set)."""
    return {**os.environ, "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS") or "1"}


def time_plain(scenarios: str) -> float:
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", PLAIN, str(ROOT), scenarios], check=True, capture_output=True, cwd=ROOT,
                   env=environment())
    return time.perf_counter() - t0


def time_run(scenarios: str, strategy: str, out: str, run_id: str) -> float:
    cmd = [sys.executable, "-m", "harness.cli", "run", scenarios, "--strategies", strategy, "--policies", "none",
           "--out", out, "--run-id", run_id, "--quiet"]
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True, cwd=ROOT, env=environment())
    return time.perf_counter() - t0


def candidate_rows(run: Path) -> int:
    import duckdb

    return int(duckdb.sql(f"select count(*) from read_parquet('{run / 'candidates'}/*.parquet')").fetchall()[0][0])


def shown(arg: str, args: argparse.Namespace) -> str:
    """A command-line word as the report prints it: the scenarios folder by name, an output path
    inside the project relative to it, one outside as OUT (no machine path in a committed file)."""
    if arg == args.scenarios:
        return "LOCOMO_SCENARIOS"
    if arg == args.out:
        path = Path(arg).resolve()
        return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else "OUT"
    return arg


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("scenarios", help="folder of scenarios written by `supportbench import locomo`")
    ap.add_argument("--strategies", default="tfidf,session_aware,hybrid")
    ap.add_argument("--repeat", type=int, default=3, help="counted rounds (after one warm-up round)")
    ap.add_argument("--out", help="also write the report as Markdown to this file")
    args = ap.parse_args(argv)
    strategies = [s for s in args.strategies.split(",") if s]
    sides = ["plain_bm25", *strategies]
    times: dict[str, list[float]] = {s: [] for s in sides}
    loads: list[str] = []
    rows: dict[str, int] = {}
    ids: list[str] = []
    rounds = args.repeat + (1 if args.repeat > 1 else 0)
    for package in ("harness", "stores", "bench"):  # both sides import from these; see the docstring
        compileall.compile_dir(ROOT / package, quiet=1)
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(rounds):
            loads.append(load_average())
            for side in sides:
                if side == "plain_bm25":
                    t = time_plain(args.scenarios)
                else:
                    run_id = f"locomo-cost-{side}-{r}"
                    t = time_run(args.scenarios, side, tmp, run_id)
                    ids.append(run_id)
                    rows[side] = candidate_rows(Path(tmp) / run_id)
                if r or rounds == 1:
                    times[side].append(t)
                print(f"round {r}{' (warm-up)' if r == 0 and rounds > 1 else ''}: {side} {t:.1f} s", flush=True)
    med = {s: statistics.median(v) for s, v in times.items()}
    lines = ["| side | median wall time (s) | rounds (s) | candidate rows written | ratio | goal |", "| --- | --- | --- | --- | --- | --- |"]
    for s in sides:
        ref, goal = GOALS.get(s, ("", 0.0))
        ratio = f"{med[s] / med[ref]:.2f}x {ref}" if ref in med else "–"
        verdict = (f"<= {goal:g}x {ref}: {'met' if med[s] / med[ref] <= goal else 'not met'}" if ref in med else "–")
        lines.append(f"| {s} | {med[s]:.2f} | {', '.join(f'{t:.1f}' for t in times[s])} | {rows.get(s, '–')} | {ratio} | {verdict} |")
    cmd = "python bench/locomo_cost.py " + shlex.join(shown(a, args) for a in (argv or sys.argv[1:]))
    names = sorted(p.stem for p in Path(args.scenarios).glob("*.yaml"))
    md = ["# The cost of a LoCoMo run against a plain BM25 process", "",
          f"Written by `{cmd}` (LOCOMO_SCENARIOS: the output of `supportbench import locomo` for {', '.join(names)}). "
          f"Wall time of fresh processes, start to exit, sides in turn within each round; median of {len(next(iter(times.values())))} "
          f"counted round(s){' after one warm-up round' if rounds > args.repeat else ''}, the project's bytecode compiled first, "
          f"every process with OMP_NUM_THREADS={environment()['OMP_NUM_THREADS']}. Load average before each round: "
          + "; ".join(loads) + f". Run ids (temporary folder): {', '.join(ids)}.", "",
          "`plain_bm25` loads the same YAML, observes the same turns and fills each probe's budget with the project's "
          "packing over a `rank_bm25` ranking, writing nothing; each strategy is a whole `supportbench run --policies none` "
          "(replay, the idempotency replays, the reply engine, scoring and the Parquet tables).", "", *lines, ""]
    print("\n".join(md))
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text("\n".join(md))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

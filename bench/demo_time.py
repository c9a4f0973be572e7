"""How long `make demo` takes from a fresh clone to the app's first page (issue 31's goal: under
90 s after the install on an idle 2-core machine).

    .venv/bin/python bench/demo_time.py                        # clone this checkout, reuse this venv
    .venv/bin/python bench/demo_time.py --install              # and time a fresh venv's install first
    .venv/bin/python bench/demo_time.py --out docs/results/demo-time.md

Steps, each timed from start to end, in a temporary folder removed afterwards:

1. `clone`: `git clone` of this checkout's committed HEAD (what a newcomer gets: no caches, no
   runs, no trained front ends);
2. `install` (with `--install` only): a fresh venv in the clone and `pip install -e '.[dev,dask]'`,
   as `make demo`'s first step does it; without it the venv running this script is reused and the
   clone's code is put first on the import path. `make` itself is not called on a reused venv:
   its install step would point that venv's editable install at the temporary clone;
3. `run`: `make run`'s command, `supportbench run datasets/canonical --out runs`, in the clone,
   on a cold embedding cache, with no thread variables set (the run decides);
4. `app`: `make app`'s command (`streamlit run app.py` on 127.0.0.1, headless) until the first
   page answers over HTTP (`/_stcore/health`) and, with chromium installed, until a headless
   browser has drawn the Leaderboard's heatmap of the run (the first page a reader sees).

It prints each step, the total after the install (the goal's figure), the load averages and the
cores others kept busy (from /proc/stat over 1 s, as a run measures them) before and after, and
the command. On a shared machine the figures move with the load: run it on an idle one for the
figure the README quotes.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench"), str(ROOT / "tests" / "app"), str(ROOT / "tests")]  # the project first: tests/ has packages of the same names
from profile_run import load_average  # noqa: E402
from stores.cpu import busy_cores  # noqa: E402

GOAL_S = 90.0
THREAD_VARS = ("OMP_NUM_THREADS", "SUPPORTBENCH_TORCH_THREADS", "OMP_WAIT_POLICY", "MKL_NUM_THREADS", "MKL_CBWR")
HEATMAP = "!!document.querySelector('.js-plotly-plot')?._fullLayout?.xaxis?._categories"
TIMEOUT_S = 1800.0


class StepFailed(RuntimeError):
    pass


def step(name: str, cmd: list[str], cwd: Path, env: dict[str, str], log: Path) -> float:
    """Run one step to its end; its seconds (its output goes to `log`)."""
    t0 = time.perf_counter()
    with open(log, "ab") as out:
        proc = subprocess.run(cmd, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT, timeout=TIMEOUT_S)
    if proc.returncode != 0:
        raise StepFailed(f"{name} failed (exit {proc.returncode}); its output:\n{log.read_text()[-3000:]}")
    return time.perf_counter() - t0


def demo_env(clone: Path, reuse: bool) -> dict[str, str]:
    """A newcomer's environment: no thread variables, caches in the clone, the clone's code first."""
    env = {k: v for k, v in os.environ.items() if k not in THREAD_VARS and k != "SUPPORTBENCH_CACHE"}
    if reuse:
        env["PYTHONPATH"] = str(clone)
    else:
        env.pop("PYTHONPATH", None)
    return env


def first_page(python: Path, clone: Path, env: dict[str, str], log: Path) -> tuple[float, float | None]:
    """Seconds from `streamlit run` to the health endpoint answering, and to the Leaderboard's heatmap
    drawn in headless chromium (None without chromium). The server is stopped afterwards."""
    from browser import Chromium, chromium_binary, free_port, stop

    port = free_port()
    cmd = [str(python), "-m", "streamlit", "run", "app.py", "--server.address", "127.0.0.1", "--server.port", str(port),
           "--server.headless", "true", "--browser.gatherUsageStats", "false"]
    t0 = time.perf_counter()
    with open(log, "ab") as out:
        proc = subprocess.Popen(cmd, cwd=clone, env={**env, "SUPPORTBENCH_RUNS": str(clone / "runs")}, stdout=out,
                                stderr=subprocess.STDOUT)
    try:
        base = f"http://127.0.0.1:{port}"
        while True:
            if proc.poll() is not None:
                raise StepFailed(f"the app exited (code {proc.returncode}); its output:\n{log.read_text()[-3000:]}")
            if time.perf_counter() - t0 > TIMEOUT_S:
                raise StepFailed("the app did not answer")
            try:
                with urllib.request.urlopen(f"{base}/_stcore/health", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            time.sleep(0.1)
        health = time.perf_counter() - t0
        binary = chromium_binary()
        if binary is None:
            return health, None
        b = Chromium(binary, 1280, 800)
        try:
            b.call("Page.navigate", url=base + "/")
            while not (b.evaluate(HEATMAP) and not b.running()):
                if time.perf_counter() - t0 > TIMEOUT_S:
                    raise StepFailed("the Leaderboard was not drawn")
                time.sleep(0.05)
            return health, time.perf_counter() - t0
        finally:
            b.close()
    finally:
        stop(proc)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--install", action="store_true", help="time a fresh venv's install in the clone (about 2 GB, needs the registry)")
    ap.add_argument("--out", type=Path, help="also write the report as Markdown here")
    args = ap.parse_args(argv)
    given = argv if argv is not None else sys.argv[1:]
    command = "python bench/demo_time.py " + " ".join(
        "docs/results/demo-time.md" if prev == "--out" else a for prev, a in zip([""] + given, given))
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    before = (load_average(), busy_cores(1.0))
    times: dict[str, float | None] = {}
    with tempfile.TemporaryDirectory(prefix="demo-time-") as tmp:
        work = Path(tmp)
        clone, log = work / "supportbench", work / "demo.log"
        times["clone"] = step("clone", ["git", "clone", "--quiet", "--no-hardlinks", str(ROOT), str(clone)], work,
                              dict(os.environ), log)
        if args.install:
            py = os.environ.get("PYTHON", "python3.11")
            times["install"] = step("install", [py, "-m", "venv", ".venv"], clone, demo_env(clone, False), log)
            python = clone / ".venv" / "bin" / "python"
            times["install"] += step("install", [str(python), "-m", "pip", "install", "--quiet", "-e", ".[dev,dask]"], clone,
                                     demo_env(clone, False), log)
        else:
            python = Path(sys.executable)
        env = demo_env(clone, not args.install)
        times["run"] = step("run", [str(python), "-m", "harness.cli", "run", "datasets/canonical", "--out", "runs"], clone, env, log)
        times["app: health"], times["app: first page"] = first_page(python, clone, env, log)
        run_tail = [ln for ln in log.read_text().splitlines()
                    if ln.startswith(("embeddings:", "running ")) or (" scenarios, " in ln and " probes in " in ln)]
    after = (load_average(), busy_cores(1.0))
    total = times["clone"] + times["run"] + (times["app: first page"] or times["app: health"])
    report = render(times, total, before, after, command, head, run_tail)
    print(report)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(report)
    return 0


def render(times: dict, total: float, before: tuple, after: tuple, command: str, head: str, run_tail: list[str]) -> str:
    lines = ["# `make demo` from a fresh clone to the app's first page", "",
             f"Command: `{command.strip()}` at commit {head}. Machine: {os.cpu_count()} cores. "
             f"Before: load average {before[0]}, cores others kept busy {before[1]}; "
             f"after: load average {after[0]}, busy {after[1]}.", "",
             "| step | seconds |", "|---|---:|"]
    for name, s in times.items():
        lines.append(f"| {name} | {'-' if s is None else f'{s:.1f}'} |")
    lines.append(f"| **clone to first page, after the install** | **{total:.1f}** (goal <= {GOAL_S:.0f} on an idle 2-core machine: "
                 f"{'met' if total <= GOAL_S else 'not met'}) |")
    if run_tail:
        lines += ["", "The run said:", "", "```", *run_tail, "```"]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    try:
        sys.exit(main())
    except StepFailed as e:
        print(f"error: {e}", file=sys.stderr)
        sys.exit(1)

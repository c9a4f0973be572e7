"""Time page renders with AppTest on the runs under a folder (not a test; run by hand).

    SUPPORTBENCH_RUNS=<folder of runs> .venv/bin/python tests/app/measure_render.py [RUN_ID] [--views FILE.json] [--repeat N]

For each view: a cold render (query cache cleared) and a warm rerun, in seconds, as the median
of `--repeat` rounds (default 3), and how many elements the page holds (what a browser has to
draw: a figure the machine's load does not move), with the load average before and after. A view is a page of
the router with URL parameters; by default every page with its defaults, and with `--views` a
JSON list of `[name, url_path, {params}]` (e.g. one long transcript's case), so two versions of
the app can be timed on the same views. Parameters may name `{run}`, replaced by the run id.

`--build` makes the runs first, in a temporary folder removed afterwards, by this recipe (the
README's render figures are about these runs; the other way to get them is to type it):

    supportbench generate --customers 200 --seed 0 --out datasets/generated/c200
    supportbench run datasets/generated/c200 --workers 2 --out runs-c200 --run-id c200-main
    supportbench run datasets/generated/c200 --strategies 'session_aware:repeat_threshold=0.15,history_stuffing,empty' \
        --workers 2 --out runs-c200 --run-id c200-variant --name "threshold 0.15"   # for the compare-runs view
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import streamlit as st
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
PARAMS = {"leaderboard": {"controls": "1"}, "compare": {"mode": "strategies"}}
"""URL parameters per page beyond the run, for the default views (every page of the router)."""


def elements(node) -> int:
    """How many elements a rendered tree holds (what the browser has to draw, whatever the machine's load)."""
    children = getattr(node, "children", None)
    if not children:
        return 1
    return 1 + sum(elements(c) for c in children.values())


def render_once(view: tuple[str, str, dict], run: str, default_page: str) -> tuple[float, float, list[str], int]:
    _name, page, params = view
    at = AppTest.from_file(APP, default_timeout=600)
    at.query_params.update({"run": run, **{k: (v.replace("{run}", run) if isinstance(v, str) else v) for k, v in params.items()}})
    if page != default_page:  # the default page is the root URL
        at.switch_page(f"pages/{page}.py")
    st.cache_data.clear()
    t = time.perf_counter()
    at.run()
    cold = time.perf_counter() - t
    t = time.perf_counter()
    at.run()
    warm = time.perf_counter() - t
    bad = [e.message for e in at.exception] + [e.value for e in at.error if str(e.value).startswith("Something went wrong")]
    return cold, warm, bad, elements(at.main)


RECIPE = [
    ["generate", "--customers", "{customers}", "--seed", "0", "--out", "{tmp}/c200"],
    ["run", "{tmp}/c200", "--workers", "2", "-q", "--out", "{tmp}/runs", "--run-id", "c200-main"],
    ["run", "{tmp}/c200", "--strategies", "session_aware:repeat_threshold=0.15,history_stuffing,empty", "--workers", "2",
     "-q", "--out", "{tmp}/runs", "--run-id", "c200-variant", "--name", "threshold 0.15"],
]
"""The module docstring's recipe, as `--build` runs it."""


def build(tmp: Path, customers: int) -> None:
    """Run `RECIPE` with `supportbench` into `tmp`; `$SUPPORTBENCH_RUNS` then points at its runs."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1")}
    for step in RECIPE:
        args = [a.replace("{tmp}", str(tmp)).replace("{customers}", str(customers)) for a in step]
        t = time.perf_counter()
        subprocess.run([sys.executable, "-m", "harness.cli", *args], cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL)
        print(f"built: supportbench {' '.join(args[:2])} ... ({time.perf_counter() - t:.0f} s)")
    os.environ["SUPPORTBENCH_RUNS"] = str(tmp / "runs")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("run", nargs="?")
    ap.add_argument("--views", help="JSON file: a list of [name, url_path, {params}]")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--build", action="store_true", help="make the runs of the recipe first (module docstring)")
    ap.add_argument("--customers", type=int, default=200, help="with --build: customers of the generated suite")
    args = ap.parse_args()
    if args.build:
        tmp = Path(tempfile.mkdtemp(prefix="supportbench-render-"))
        try:
            build(tmp, args.customers)
            args.run = args.run or "c200-main"
            return _measure(args)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return _measure(args)


def _measure(args) -> int:
    sys.path.insert(0, str(ROOT))
    from pages import _views as views

    default_page = views.VIEWS[0].url_path
    views = ([tuple(v) for v in json.loads(Path(args.views).read_text())] if args.views
             else [(v.url_path, v.url_path, PARAMS.get(v.url_path, {})) for v in views.VIEWS])
    run = args.run or AppTest.from_file(APP, default_timeout=600).run().query_params["run"]
    print(f"runs folder: {os.environ.get('SUPPORTBENCH_RUNS', 'runs')} · run {run} · app {ROOT.name} · "
          f"load average {os.getloadavg()[0]:.2f}")
    for view in views:
        colds, warms, bad = [], [], []
        for _ in range(max(1, args.repeat)):
            cold, warm, problems, n = render_once(view, run, default_page)
            colds.append(cold)
            warms.append(warm)
            bad += problems
        print(f"{view[0]:22s} cold {statistics.median(colds):6.2f}s  warm {statistics.median(warms):6.2f}s  "
              f"elements {n:5d}  {'PROBLEM ' + str(bad[:1]) if bad else 'ok'}")
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

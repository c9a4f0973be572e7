"""How the Distributions and trends page's cost grows with the runs of one suite: its first paint in
a fresh app process, and a repaint, with 1, 5, 10, 20 ... runs of the suite in the runs folder (a
benchmark that prints figures, never a pass/fail).

    .venv/bin/python bench/trends_speed.py [--run RUN_DIR | --generated 40] [--counts 1,5,10,20] [--app DIR ...] [--repeat 3] [--out docs/results/trends_speed.md]

- The runs: copies of one run (`--run`; `--generated N`: a suite of N generated customers, seed
  3, run through `GENERATED_STRATEGIES`; default the app tests' fixture `main` run; both written
  to a temporary folder), each under a new run id with its own start time, its parts and checksums
  untouched (so each is a complete, verified run of the same suite). Runs are never written into
  a runs folder of yours: the copies live in a temporary folder, removed at the end.
- first paint: a fresh Python process (nothing cached: no query, no checksum) runs the app
  through Streamlit's AppTest, opens `/trends` on the newest copy and times the script run.
- repaint: the same session drawn again (what a reader's next click on the page costs when the
  page is whole-page rerun; the trend's summaries are then cached).

With several `--app` folders (checkouts of the app, e.g. `git archive main | tar -x -C DIR`) the
rounds alternate between them, so the machine's load falls on each alike, and the table shows
them side by side. Each measurement runs in its own process with that checkout first on the path.
The load average is printed before and after.
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
from datetime import datetime, timedelta, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench.results import command_line, emit  # noqa: E402
COPY_ID = "20300101-{i:06d}-trend"


def copies(src: Path, n: int, dest: Path) -> str:
    """`n` copies of the run `src` under `dest`, one minute apart; returns the newest one's id."""
    dest.mkdir(parents=True, exist_ok=True)
    t0 = datetime(2030, 1, 1, tzinfo=timezone.utc)
    for i in range(n):
        rid = COPY_ID.format(i=i)
        d = dest / rid
        shutil.copytree(src, d)
        m = json.loads((d / "manifest.json").read_text())
        m["run_id"], m["started"] = rid, (t0 + timedelta(minutes=i)).isoformat()
        (d / "manifest.json").write_text(json.dumps(m, indent=1))
    return COPY_ID.format(i=n - 1)


def measure(app: Path, runs: Path, run: str) -> dict[str, float]:
    """In this process (fresh): the trends page's first paint and a repaint, in seconds."""
    os.environ["SUPPORTBENCH_RUNS"] = str(runs)
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(app / "app.py"), default_timeout=1800)
    at.query_params.update({"run": run})
    at.switch_page("pages/trends.py")
    t0 = time.perf_counter()
    at.run()
    first = time.perf_counter() - t0
    if at.exception:
        raise RuntimeError(f"the trends page raised: {[e.message for e in at.exception]}")
    t0 = time.perf_counter()
    at.run()
    again = time.perf_counter() - t0
    figs = [json.loads(e.proto.spec)["layout"] for e in at.get("plotly_chart")]
    shown = [f["xaxis"]["categoryarray"] for f in figs if "categoryarray" in f.get("xaxis", {})]  # the trend, when drawn
    return {"first": first, "again": again, "points": len(shown[0]) if shown else 0}


def measure_in_process(app: Path, runs: Path, run: str) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(app), "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1")}
    out = subprocess.run([sys.executable, __file__, "--measure", str(app), str(runs), run], env=env, cwd=app,
                         capture_output=True, text=True, timeout=3600)
    if out.returncode != 0:
        raise RuntimeError(f"measuring {app} failed:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


GENERATED_STRATEGIES = "history_stuffing,session_aware,structured,tfidf,oracle,empty"
"""The strategies a `--generated` run holds: no encoder to load, so the run takes seconds."""


def generated_run(tmp: Path, customers: int) -> Path:
    """`supportbench generate --customers N --seed 3` run through `GENERATED_STRATEGIES` (one worker)."""
    cli = [sys.executable, "-m", "harness.cli"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    subprocess.run([*cli, "generate", "--customers", str(customers), "--seed", "3", "--out", str(tmp / "suite")],
                   env=env, check=True, capture_output=True)
    subprocess.run([*cli, "run", str(tmp / "suite"), "-s", GENERATED_STRATEGIES, "--out", str(tmp / "runs"),
                    "--run-id", f"generated-{customers}", "--workers", "1"], env=env, check=True, capture_output=True)
    return tmp / "runs" / f"generated-{customers}"


def fixture_run(tmp: Path) -> Path:
    sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "app"), str(ROOT / "tests")]
    from fixture_runs import build_runs

    return build_runs(tmp)["main"]


def main() -> int:
    if len(sys.argv) == 5 and sys.argv[1] == "--measure":
        print(json.dumps(measure(Path(sys.argv[2]), Path(sys.argv[3]), sys.argv[4])))
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--run", type=Path, help="the run folder to copy (default: the app tests' fixture main run)")
    ap.add_argument("--generated", type=int, metavar="N", help="copy a run of N generated customers instead")
    ap.add_argument("--counts", default="1,5,10,20", help="runs of the suite to measure with (comma-separated)")
    ap.add_argument("--app", type=Path, action="append", help="an app checkout (repeatable; default: this one)")
    ap.add_argument("--repeat", type=int, default=3, help="rounds per app and count")
    ap.add_argument("--out", type=Path, help="also write the figures as Markdown here")
    args = ap.parse_args()
    counts = [int(c) for c in args.counts.split(",")]
    apps = [a.resolve() for a in (args.app or [ROOT])]
    tmp = Path(tempfile.mkdtemp(prefix="sb-trends-speed-"))
    try:
        src = (args.run.resolve() if args.run else generated_run(tmp / "generated", args.generated) if args.generated
               else fixture_run(tmp / "fixture"))
        probes = json.loads((src / "manifest.json").read_text()).get("counts", {})
        folders = {n: (tmp / f"runs-{n}", copies(src, n, tmp / f"runs-{n}")) for n in counts}
        load0 = os.getloadavg()
        got: dict[tuple[Path, int], list[dict]] = {(a, n): [] for a in apps for n in counts}
        for _ in range(args.repeat):
            for n in counts:
                for a in apps:  # alternating: the load falls on each alike
                    got[(a, n)].append(measure_in_process(a, *folders[n]))
        load1 = os.getloadavg()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    name = {a: ("this checkout" if a == ROOT else a.name) for a in apps}
    command = command_line("trends_speed.py", sys.argv[1:])
    what = ("given" if args.run else f"{args.generated} generated customers, seed 3, strategies {GENERATED_STRATEGIES}"
            if args.generated else "the app tests fixture main run")
    source = (f"Run `{src.name}` ({what}; {probes.get('scenarios', '?')} scenarios, {probes.get('probes', '?')} probe "
              f"answers) copied")
    lines = [
        "# Distributions and trends: cost per run of a suite",
        "",
        f"Written by `{command}` (Streamlit's AppTest, a fresh process per measurement, this machine).",
        "",
        f"{source} under the run ids `{COPY_ID.format(i=0)}` … (one per run of the suite); {args.repeat} rounds per "
        f"app and count; load average {load0[0]:.2f} before, {load1[0]:.2f} after. Medians in seconds.",
        "",
        "| runs of the suite | " + " | ".join(f"{name[a]}: first paint | {name[a]}: repaint" for a in apps)
        + " | points on the trend |",
        "| --- | " + " | ".join("--- | ---" for _ in apps) + " | --- |",
    ]
    for n in counts:
        cells = []
        for a in apps:
            rows = got[(a, n)]
            cells += [f"{statistics.median(r['first'] for r in rows):.2f}", f"{statistics.median(r['again'] for r in rows):.2f}"]
        lines.append(f"| {n} | " + " | ".join(cells) + f" | {int(got[(apps[0], n)][0]['points'])} |")
    if len(apps) == 2:
        a, b = apps
        lines += ["", "Ratios " + f"{name[b]} / {name[a]}, first paint: " + ", ".join(
            f"{n} runs {statistics.median(r['first'] for r in got[(b, n)]) / statistics.median(r['first'] for r in got[(a, n)]):.2f}"
            for n in counts) + "."]
    lines += ["", "A trend shows at most the 12 newest runs of the suite; each run's totals are read once per app "
                  "process (kept under its id and content digest), so a repaint reads none again."]
    emit("\n".join(lines) + "\n", args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())

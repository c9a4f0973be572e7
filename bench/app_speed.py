"""How fast the app answers a reader in a real browser: the first Leaderboard paint and a Failures
row click to its case, measured in headless chromium (a benchmark that prints figures, never a
pass/fail).

    .venv/bin/python bench/app_speed.py --runs runs/ --run RUN_ID [--app DIR ...] [--repeat 5] [--out docs/results/app_speed.md]
    .venv/bin/python bench/app_speed.py --fixture --out docs/results/app_speed.md     # the app tests' small runs

- first Leaderboard paint: a fresh `streamlit run` process (nothing cached), a fresh browser,
  the root URL of the run; the time from asking for the page to the heatmap drawn with the
  script run over. One fresh server per round.
- row → case: on the Failures page of the same server, a click on the list's row k (k = 0, 1, ...)
  until the case's transcript is drawn and the script run is over.

With several `--app` folders (checkouts of the app, e.g. `git archive main | tar -x -C DIR`) the
rounds alternate between them, so the machine's load falls on each alike; the printed ratios are
of medians measured side by side. The load average is printed before and after: on a shared
2-core machine the figures move with it.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "app"), str(ROOT / "tests")]  # the project first: tests/ has packages of the same names

from browser import Chromium, chromium_binary, serve  # noqa: E402

from bench.results import command_line, emit  # noqa: E402

HEATMAP = "!!document.querySelector('.js-plotly-plot')?._fullLayout?.xaxis?._categories"
TRANSCRIPT = "document.body.innerText.includes('Transcript up to the probe')"


def until(browser: Chromium, js: str, timeout: float = 600.0) -> float:
    """Seconds until the JavaScript condition holds and no script run is under way (polled every 50 ms)."""
    t0 = time.perf_counter()
    while not (browser.evaluate(js) and not browser.running()):
        if time.perf_counter() - t0 > timeout:
            raise TimeoutError(f"{js} not so after {timeout:.0f} s")
        time.sleep(0.05)
    return time.perf_counter() - t0


def first_paint(app: Path, runs: Path, run: str, binary: str) -> float:
    """A fresh server and browser: seconds from asking for the Leaderboard to the heatmap drawn."""
    with serve(app, runs) as server:
        b = Chromium(binary, 1280, 800)
        try:
            t0 = time.perf_counter()
            b.call("Page.navigate", url=f"{server}/?{urlencode({'run': run})}")
            until(b, HEATMAP)
            return time.perf_counter() - t0
        finally:
            b.close()


def row_clicks(app: Path, runs: Path, run: str, binary: str, clicks: int) -> list[float]:
    """Seconds from a click on the Failures list's row k to its case drawn, k = 0 .. clicks-1."""
    from test_browser import click_row

    out = []
    with serve(app, runs) as server:
        b = Chromium(binary, 1280, 800)
        try:
            b.open(f"{server}/failures?{urlencode({'run': run})}", ["· errors first"], timeout=600)
            for k in range(clicks):
                before = b.url()
                t0 = time.perf_counter()
                click_row(b, "Failures", k)
                while b.url() == before:  # the click reached the server and the case is asked for
                    if time.perf_counter() - t0 > 600:
                        raise TimeoutError("the row click opened nothing")
                    time.sleep(0.05)
                until(b, TRANSCRIPT)
                out.append(time.perf_counter() - t0)
        finally:
            b.close()
    return out


def build_fixture(tmp: Path) -> tuple[Path, str]:
    from fixture_runs import build_runs

    build_runs(tmp)
    return tmp, "20260102-000000-main"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=Path, help="the runs folder")
    ap.add_argument("--run", help="the run id to open")
    ap.add_argument("--fixture", action="store_true", help="write the app tests' fixture runs to a temporary folder and use them")
    ap.add_argument("--app", type=Path, action="append", help="an app checkout to serve (repeatable; default: this one)")
    ap.add_argument("--repeat", type=int, default=3, help="rounds per app")
    ap.add_argument("--clicks", type=int, default=4, help="row clicks per round")
    ap.add_argument("--out", type=Path, help="also write the figures as Markdown here")
    args = ap.parse_args()
    binary = chromium_binary()
    if binary is None:
        print("chromium is not installed", file=sys.stderr)
        return 2
    tmp = None
    if args.fixture:
        tmp = Path(tempfile.mkdtemp(prefix="sb-app-speed-"))
        args.runs, args.run = build_fixture(tmp)
    if not args.runs or not args.run:
        print("give --runs and --run, or --fixture", file=sys.stderr)
        return 2
    args.runs = args.runs.resolve()  # the server runs in the app's folder
    apps = [a.resolve() for a in (args.app or [ROOT])]
    load0 = os.getloadavg()
    paints = {a: [] for a in apps}
    clicks = {a: [] for a in apps}
    for _ in range(args.repeat):
        for a in apps:  # alternating: the load falls on each alike
            paints[a].append(first_paint(a, args.runs, args.run, binary))
            clicks[a] += row_clicks(a, args.runs, args.run, binary, args.clicks)
    load1 = os.getloadavg()
    command = command_line("app_speed.py", sys.argv[1:])
    lines = [
        "# App speed in a browser",
        "",
        f"Written by `{command}` (headless chromium, this machine).",
        "",
        f"Run `{args.run}`{' (the app tests fixture runs)' if args.fixture else ''}; {args.repeat} rounds per app, "
        f"{args.clicks} row clicks per round; load average {load0[0]:.2f} before, {load1[0]:.2f} after.",
        "",
        "| app | first Leaderboard paint, median (s) | row → case, median (s) | row → case, p90 (s) |",
        "| --- | --- | --- | --- |",
    ]
    name = {a: ("this checkout" if a == ROOT else a.name) for a in apps}
    for a in apps:
        c = sorted(clicks[a])
        p90 = c[min(len(c) - 1, int(0.9 * len(c)))]
        lines.append(f"| {name[a]} | {statistics.median(paints[a]):.2f} | {statistics.median(c):.2f} | {p90:.2f} |")
    if len(apps) == 2:
        a, b = apps
        lines += ["", f"Ratios {name[b]} / {name[a]}: first paint "
                      f"{statistics.median(paints[b]) / statistics.median(paints[a]):.2f}, row → case "
                      f"{statistics.median(clicks[b]) / statistics.median(clicks[a]):.2f}."]
    lines += ["", "Goal (issue 28): row → case ≤ 1.5 s and first Leaderboard ≤ 4 s at load ≤ 2; "
                  "these figures say how far a run on a busy machine is from it."]
    emit("\n".join(lines) + "\n", args.out)
    if tmp is not None:
        import shutil

        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

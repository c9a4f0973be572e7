"""Leaderboards on text no one here wrote: LoCoMo (dev and test split) and a LongMemEval-layout file.

    .venv/bin/python bench/external.py --locomo PATH/locomo10.zip --out docs/results/external-data.md
    .venv/bin/python bench/external.py --locomo PATH --lme-questions 4 --strategies tfidf,embedding

LoCoMo is imported with `supportbench import locomo` (550 tokens a question, categories 1-4) and
run twice with one worker: the development split (conversations 26 and 30, the only ones anything
may be tuned on) and the test split (the other eight, reported once). The LongMemEval-layout file
is one this script writes (`harness.importers.longmemeval.write_shaped`: the M file's shape, 500
sessions a question, generated text) in a temporary folder, imported and run the same way, since
LongMemEval's own files are not shipped here. Each command runs as a child process measured on
its own: wall seconds and peak resident memory (`wait4`), with the load average before and after.
The markdown it writes holds the run ids, the commands and the load; nothing in it is typed by
hand. LoCoMo's data never leaves the temporary folder.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

if __package__ in (None, ""):  # `python bench/external.py`
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

STRATEGIES = "history_stuffing,tfidf,embedding,session_aware,hybrid"
DEV = ("locomo-conv-26.yaml", "locomo-conv-30.yaml")
COLUMNS = ("recall", "recall_at_5", "recall_at_10", "recall_at_25", "ndcg_at_10")
TITLES = {"recall": "recall at the budget", "recall_at_5": "recall@5", "recall_at_10": "recall@10",
          "recall_at_25": "recall@25", "ndcg_at_10": "nDCG@10", "session_recall": "session recall"}


@dataclass
class Measured:
    command: list[str]
    seconds: float
    peak_mib: float
    load_before: str
    load_after: str
    stdout: str


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3]) if Path("/proc/loadavg").exists() else "n/a"


def measure(args: list[str]) -> Measured:
    """Run `python -m harness.cli ARGS` as a child; its wall time and its own peak RSS."""
    cmd = [sys.executable, "-m", "harness.cli", *args]
    before = load()
    t0 = time.perf_counter()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        p = subprocess.Popen(cmd, stdout=out, stderr=err, env={**os.environ, "OMP_NUM_THREADS": "1"})
        _, status, usage = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        seconds = time.perf_counter() - t0
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(), err.read().decode()
    if p.returncode != 0:
        raise SystemExit(f"{shlex.join(cmd)} failed ({p.returncode}):\n{stderr[-2000:]}")
    return Measured(cmd, seconds, usage.ru_maxrss / 1024, before, load(), stdout + stderr)


def report(run: Path) -> dict:
    m = measure(["report", str(run), "--format", "json", "--by-tag"])
    return json.loads(m.stdout[m.stdout.index("{"):m.stdout.rindex("}") + 1])


def _f(x) -> str:
    return "–" if x is None else f"{x:.3f}"


def board(obj: dict, columns=COLUMNS) -> list[str]:
    """Strategies best recall@10 first, one column per metric."""
    strategies = obj["strategies"]
    cols = [c for c in columns if any(c in v for v in strategies.values())]
    order = sorted(strategies, key=lambda s: -(strategies[s].get("recall_at_10", {}).get("mean") or 0))
    lines = ["| strategy | " + " | ".join(TITLES.get(c, c) for c in cols) + " | probes |",
             "| --- |" + " ---: |" * (len(cols) + 1)]
    for s in order:
        v = strategies[s]
        n = v.get("recall", {}).get("n")
        lines.append(f"| `{s}` | " + " | ".join(_f(v.get(c, {}).get("mean")) for c in cols) + f" | {n} |")
    return lines


def by_tag(obj: dict, metric: str = "recall_at_10") -> list[str]:
    tags = obj.get("by_tag", {})
    strategies = list(obj["strategies"])
    lines = [f"| {TITLES.get(metric, metric)} by tag | probes | " + " | ".join(f"`{s}`" for s in strategies) + " |",
             "| --- | ---: |" + " ---: |" * len(strategies)]
    for tag, t in tags.items():
        cells = [_f(t["strategies"].get(s, {}).get(metric, {}).get("mean")) for s in strategies]
        lines.append(f"| `{tag}` | {t['probes']} | " + " | ".join(cells) + " |")
    return lines


def costs(run: Path) -> list[str]:
    m = json.loads((run / "manifest.json").read_text())
    return [f"`{s['label']}` {s.get('cost', {}).get('seconds', float('nan')):.1f} s" for s in m["strategies"]]


def run_split(files: list[Path], runs: Path, run_id: str, strategies: str) -> tuple[Path, Measured]:
    m = measure(["run", *map(str, files), "--strategies", strategies, "--workers", "1", "--out", str(runs),
                 "--run-id", run_id, "--quiet"])
    return runs / run_id, m


def section(title: str, what: str, run: Path, m: Measured, obj: dict, columns=COLUMNS) -> list[str]:
    """Call while the run still exists (its manifest gives each strategy's cost)."""
    return [f"### {title}", "", what, "",
            f"Run `{run.name}`: {m.seconds:.1f} s wall, peak memory {m.peak_mib:.0f} MiB, load average "
            f"{m.load_before} before and {m.load_after} after; per strategy (replay and scoring): {', '.join(costs(run))}.",
            "", *board(obj, columns), "", *by_tag(obj), ""]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--locomo", required=True, help="the LoCoMo release: locomo10.json, its folder or its zip (not committed)")
    ap.add_argument("--strategies", default=STRATEGIES)
    ap.add_argument("--lme-questions", type=int, default=4, help="questions in the LongMemEval-layout file (500 sessions each)")
    ap.add_argument("--lme-turns", type=int, default=6, help="turns per session in that file")
    ap.add_argument("--out", default=None, help="markdown to write (default: print it)")
    args = ap.parse_args(argv)

    from harness.importers.longmemeval import write_shaped

    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    with tempfile.TemporaryDirectory(prefix="sb-external-") as d:
        tmp = Path(d)
        runs = tmp / "runs"
        imp = measure(["import", "locomo", args.locomo, "--out", str(tmp / "locomo")])
        summary = next(line for line in imp.stdout.splitlines() if line.startswith("wrote ")).replace(f"{tmp}{os.sep}", "")
        files = sorted((tmp / "locomo").glob("*.yaml"))
        dev = [f for f in files if f.name in DEV]
        test = [f for f in files if f.name not in DEV]
        dev_run, dev_m = run_split(dev, runs, "locomo-dev", args.strategies)
        test_run, test_m = run_split(test, runs, "locomo-test", args.strategies)
        dev_obj, test_obj = report(dev_run), report(test_run)
        dev_part = section("Development split: conversations 26 and 30",
                           "The only conversations anything may be tuned on (nothing was: the strategies run with their "
                           "defaults).", dev_run, dev_m, dev_obj)
        test_part = section("Test split: the other eight conversations, reported once",
                            "Tuned on nothing; these are the figures to quote.", test_run, test_m, test_obj)

        lme_file = write_shaped(tmp / "longmemeval_m_shaped.json", args.lme_questions, sessions=500, turns=args.lme_turns)
        lme_imp = measure(["import", "longmemeval", str(lme_file), "--out", str(tmp / "lme")])
        lme_summary = next(line for line in lme_imp.stdout.splitlines() if line.startswith("wrote ")).replace(f"{tmp}{os.sep}", "")
        lme_run, lme_m = run_split([tmp / "lme"], runs, "longmemeval-shaped", args.strategies)
        lme_part = section("Run", "One worker.", lme_run, lme_m, report(lme_run), COLUMNS + ("session_recall",))
        size_mib = lme_file.stat().st_size / 2**20

    given = list(argv if argv is not None else sys.argv[1:])
    shown = [Path(a).name if i and given[i - 1] == "--locomo" else a for i, a in enumerate(given)]  # no path of this machine
    cmd = "bench/external.py " + " ".join(shlex.quote(a) for a in shown)
    lines = [
        "# Leaderboards on outside data (generated)", "",
        f"Written by `{cmd}` on {started}; every figure below comes from the runs it names. "
        "Read [external-data.md](../external-data.md) for the mappings and what each metric means.", "",
        "## LoCoMo", "",
        f"`supportbench import locomo` ({imp.seconds:.1f} s, peak {imp.peak_mib:.0f} MiB, load {imp.load_before}): {summary}", "",
        *dev_part, *test_part,
        "## A LongMemEval-layout file", "",
        f"A file written by `write_shaped` with the M file's shape: {args.lme_questions} questions, 500 sessions of "
        f"{args.lme_turns} turns each ({size_mib:.1f} MiB), generated text, one planted fact a question, every fifth an "
        "abstention question. It measures the import and the run at that size, not retrieval on LongMemEval's own text.", "",
        f"`supportbench import longmemeval` ({lme_imp.seconds:.1f} s, peak {lme_imp.peak_mib:.0f} MiB, load "
        f"{lme_imp.load_before}): {lme_summary}", "",
        *lme_part,
    ]
    text = "\n".join(lines).rstrip() + "\n"
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(text, encoding="utf-8")
        print(f"wrote {args.out}")
    else:
        print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Extraction and reply figures per suite: what the extractor and the reply engine read, suite by suite.

    python bench/reading.py                       # every development suite
    python bench/reading.py datasets/challenge_holdout4 tests/data/extraction_dev

One `supportbench run SUITE --strategies oracle,structured,tfidf --policies none` per suite (in a
subprocess), then from its scores: extraction precision / recall / F1 of `structured` (pooled counts of
`memory_extraction`, as `bench/frontends.py` pools them) and, for each strategy, the mean of the reply
criteria (`reply_known_fix`, `reply_skips_failures`, `returning_customer`) with their counts. The
oracle's reply figures measure the reply engine's reading of a context that holds every turn: below
1.0, the engine missed a step or an outcome the text states. Prints one markdown table per suite.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the project, when run as `python bench/reading.py`
from bench.suites import DEVELOPMENT  # noqa: E402
SUITES = (*(f"datasets/{f}" for f in DEVELOPMENT.values()), "tests/data/extraction_dev", "tests/data/reply_dev")
STRATEGIES = ("oracle", "structured", "tfidf")
REPLY = ("reply_known_fix", "reply_skips_failures", "returning_customer")


def figures(run_dir: Path) -> dict:
    """Extraction P/R/F1 of `structured` and each strategy's reply criteria, from one run's scores."""
    import duckdb

    con = duckdb.connect()
    scores = f"read_parquet('{run_dir}/scores/*.parquet')"
    tp = fp = fn = 0
    for (meta,) in con.execute(f"select meta from {scores} where strategy = 'structured' and criterion = 'memory_extraction'").fetchall():
        m = json.loads(meta or "{}")
        tp, fp, fn = tp + m.get("tp", 0), fp + m.get("fp", 0), fn + m.get("fn", 0)
    p = tp / (tp + fp) if tp + fp else 0.0
    r = tp / (tp + fn) if tp + fn else 0.0
    out: dict = {"extraction": (round(p, 3), round(r, 3), round(2 * p * r / (p + r), 3) if p + r else 0.0, tp + fn)}
    for s in STRATEGIES:
        for c in REPLY:
            v = con.execute(f"select avg(value), count(*) from {scores} where strategy = ? and criterion = ?", [s, c]).fetchone()
            out[f"{s}:{c}"] = (round(v[0], 3) if v[0] is not None else None, v[1])
    return out


def run_suite(suite: str, out: Path) -> tuple[dict, float]:
    """Run one suite and read its figures; the run's wall time."""
    rid = "reading-" + suite.replace("/", "-")
    cmd = [sys.executable, "-m", "harness.cli", "run", suite, "--strategies", ",".join(STRATEGIES), "--policies", "none",
           "--out", str(out), "--run-id", rid, "--quiet"]
    t = time.perf_counter()
    subprocess.run(cmd, cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)), check=True, stdout=subprocess.DEVNULL)
    return figures(out / rid), time.perf_counter() - t


def render(suite: str, res: dict) -> str:
    p, r, f, n = res["extraction"]
    lines = [f"### {suite}", "", f"extraction (structured): P {p:.3f} / R {r:.3f} / F1 {f:.3f} (gold {n})", "",
             "| strategy | " + " | ".join(REPLY) + " |", "| --- |" + " --- |" * len(REPLY)]
    for s in STRATEGIES:
        cells = []
        for c in REPLY:
            v, k = res[f"{s}:{c}"]
            cells.append("n/a" if v is None else f"{v:.3f} (n={k})")
        lines.append(f"| {s} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("suites", nargs="*", default=list(SUITES), help="suite folders, relative to the project")
    ap.add_argument("--json", type=Path, help="also write the figures as JSON here")
    args = ap.parse_args(argv)
    allres = {}
    with tempfile.TemporaryDirectory(prefix="reading-") as tmp:
        for suite in args.suites:
            res, took = run_suite(suite, Path(tmp))
            allres[suite] = res
            print(f"{suite}: {took:.1f}s", file=sys.stderr)
            print(render(suite, res), flush=True)
    if args.json:
        args.json.write_text(json.dumps(allres, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()

"""bench/locomo_cost.py: the plain BM25 process and a `supportbench run` are timed side by side, and the
report names the sides, their ratio against the goal and the candidate rows each run wrote."""

from __future__ import annotations

import importlib.util
import re
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_the_report_times_the_plain_process_and_the_run_and_judges_the_ratio(tmp_path):
    spec = importlib.util.spec_from_file_location("locomo_cost", ROOT / "bench" / "locomo_cost.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    suite = tmp_path / "suite"
    suite.mkdir()
    shutil.copy(ROOT / "datasets" / "canonical" / "seed-pdf-crash-returning.yaml", suite)
    out = tmp_path / "cost.md"
    assert bench.main([str(suite), "--strategies", "tfidf", "--repeat", "1", "--out", str(out)]) == 0
    md = out.read_text()
    assert "python bench/locomo_cost.py LOCOMO_SCENARIOS --strategies tfidf --repeat 1" in md
    assert "Load average before each round:" in md and "locomo-cost-tfidf-0" in md
    plain = re.search(r"^\| plain_bm25 \| ([\d.]+) \|", md, re.M)
    row = re.search(r"^\| tfidf \| ([\d.]+) \| [\d.]+ \| (\d+) \| ([\d.]+)x plain_bm25 \| <= 2x plain_bm25: (met|not met) \|$", md, re.M)
    assert plain and row, md
    assert float(row.group(3)) == pytest.approx(float(row.group(1)) / float(plain.group(1)), rel=0.02, abs=0.01)
    assert int(row.group(2)) > 0  # the run wrote its receipts
    assert str(tmp_path) not in md  # no machine path in a committed report


def test_every_timed_process_runs_with_one_thread_unless_the_caller_says_otherwise(monkeypatch):
    """Before: no thread count was set, so numpy's BLAS took every core in every timed process."""
    spec = importlib.util.spec_from_file_location("locomo_cost", ROOT / "bench" / "locomo_cost.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    seen = []
    monkeypatch.setattr(bench.subprocess, "run", lambda cmd, **kw: seen.append(kw.get("env")))
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    bench.time_plain("suite")
    bench.time_run("suite", "tfidf", "out", "r")
    monkeypatch.setenv("OMP_NUM_THREADS", "2")
    bench.time_run("suite", "tfidf", "out", "r")
    assert [e and e.get("OMP_NUM_THREADS") for e in seen] == ["1", "1", "2"]

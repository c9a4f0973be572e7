"""bench/frontends.py: the challenge suite is an argument (the lead runs it on a second, unseen set),
a folder that is not there is refused with exit 2 before anything runs, and the page names the suite."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import bench_module

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def bench():
    return bench_module("frontends")


def test_a_missing_challenge_folder_is_refused_with_exit_2(bench, capsys):
    with pytest.raises(SystemExit) as e:
        bench.main(["--challenge", "datasets/no_such_suite"])
    assert e.value.code == 2
    assert "--challenge datasets/no_such_suite: expected a folder of scenarios" in capsys.readouterr().err


def _figures() -> dict:
    safety = {"recall": 1.0, "precision": 1.0, "disclosures": 1, "escalated": 1, "misses": [], "false_alarms": []}
    return {"decision_accuracy": (1.0, 3), "route_accuracy": (1.0, 1), "irreversible": {}, "classes": (1.0, 2),
            "expiry": (1.0, 1), "extraction": (1.0, 1.0, 1.0, 4), "reply_known_fix": (1.0, 1),
            "reply_skips_failures": (1.0, 1), "returning_customer": (1.0, 1), "safety": safety}


def test_the_page_names_the_challenge_suite_it_was_run_on(bench):
    res = {k: _figures() for k in ("canonical:rules", "canonical:learned", "challenge:rules", "challenge:learned")}
    times = {"rules": [1.0], "learned": [1.2]}
    own = bench.render(res, times, 1.0, [], ["a"], ["1 1 1"])
    assert "Challenge = `datasets/challenge` (written here" in own
    other = bench.render(res, times, 1.0, [], ["a"], ["1 1 1"], "datasets/challenge_holdout")
    assert "Challenge = `datasets/challenge_holdout` (never trained on" in other
    assert "1.20x" in other
    dev = bench.render(res, times, 1.0, [], ["a"], ["1 1 1"], "tests/data/extraction_dev", "development text: in sample")
    assert "Challenge = `tests/data/extraction_dev` (development text: in sample)." in dev and "never trained on" not in dev


def test_the_rules_side_runs_the_same_rows_with_every_front_end_the_rules(bench, tmp_path):
    """The learned side is `make check`'s run as it comes; the rules side names the rules variant on
    every row that reads words (structured's front, the expiry stage's classifier)."""
    from stores.registry import DEFAULT_STRATEGIES, load_config

    path = tmp_path / "rules.toml"
    bench.rules_config(path)
    specs = load_config(path)
    ci = load_config(ROOT / "baselines" / "ci-strategies.toml")
    assert len(specs) == len(DEFAULT_STRATEGIES) + len(ci)
    labels = {s.label for s in specs}
    assert {bench.STRUCTURED_ROW["rules"], bench.EXPIRY_ROW["rules"]} <= labels
    for s in specs:
        params = s.params()
        if s.name == "structured":
            assert params.front == "rules", s.label
        if s.label.endswith("[expiry-rules]"):
            assert s.expiry_params().classifier == "rules", s.label
    assert sum(s.label.endswith("[expiry-rules]") for s in specs) == sum(s.label.endswith("[expiry]") for s in ci)


def test_each_frontends_generator_runs_on_a_held_out_suite_that_is_there_and_valid():
    """`make results-heavy` writes one front-ends page per challenge suite (the three held-out suites and
    the extractor's development set); each names a folder of the project that validates, so a renamed or broken suite fails
    here rather than in the lead's one run of the heavy generators."""
    import re

    from bench.results import GENERATORS
    from harness.format.loader import validate_paths

    folders = {g.name: re.search(r"--challenge (\S+)", s.command).group(1)
               for g in GENERATORS if g.name.startswith("frontends") for s in g.steps if "--challenge" in s.command}
    assert folders == {"frontends-holdout": "datasets/challenge_holdout", "frontends-holdout2": "datasets/challenge_holdout2",
                       "frontends-holdout3": "datasets/challenge_holdout3", "frontends-holdout4": "datasets/challenge_holdout4",
                       "frontends-holdout5": "datasets/challenge_holdout5",
                       "frontends-holdout6": "datasets/challenge_holdout6",
                       "frontends-holdout7": "datasets/challenge_holdout7",
                       "frontends-holdout8": "datasets/challenge_holdout8",
                       "frontends-holdout9": "datasets/challenge_holdout9",
                       "frontends-holdout10": "datasets/challenge_holdout10",
                       "frontends-holdout11": "datasets/challenge_holdout11",
                       "frontends-extraction-dev": "tests/data/extraction_dev"}
    for name, folder in folders.items():
        assert (ROOT / folder).is_dir(), name
        assert validate_paths([ROOT / folder]) == [], (name, folder)


def test_every_process_runs_with_one_thread_unless_the_caller_says_otherwise(bench, monkeypatch):
    """Before: the runs took numpy's BLAS default (every core), whose idle threads spin against the other
    processes of a loaded machine; the learned side's many small products paid for it more."""
    seen = []
    monkeypatch.setattr(bench.subprocess, "run", lambda cmd, **kw: seen.append(kw["env"]))
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    bench.run(["python", "-c", "pass"])
    monkeypatch.setenv("OMP_NUM_THREADS", "2")
    bench.run(["python", "-c", "pass"])
    assert [e["OMP_NUM_THREADS"] for e in seen] == ["1", "2"]
    assert all(e["PYTHONPATH"] == str(ROOT) for e in seen)


def test_the_thread_count_the_bench_fixes_is_torch_s_too(bench, monkeypatch):
    """Review: the docs spoke of numpy's BLAS only; the same variable is torch's thread count in each process."""
    from stores import cpu

    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.delenv("SUPPORTBENCH_TORCH_THREADS", raising=False)
    for name, value in bench.environment().items():
        if name in ("OMP_NUM_THREADS",):
            monkeypatch.setenv(name, value)
    plan = cpu.plan_threads(1, load=0.0, measured=None)
    assert (plan.threads, plan.source) == (1, "OMP_NUM_THREADS")


def test_warm_up_pairs_run_first_and_are_not_timed(bench, monkeypatch, tmp_path):
    """Before: the first timed pair was the one that filled the embedding cache (after a training or a bank edit)."""
    ran = []

    def fake_run(cmd):
        ran.append(cmd[cmd.index("--run-id") + 1])
        return {"rules": 10.0, "learned": 13.0}["learned" if "default" in cmd else "rules"] + (100.0 if "warmup" in ran[-1] else 0)

    monkeypatch.setattr(bench, "run", fake_run)
    monkeypatch.setattr(bench, "figures", lambda run_dir, side: _figures())
    monkeypatch.setattr(bench.subprocess, "run", lambda *a, **kw: None)  # the training step
    out = tmp_path / "page.md"
    bench.main(["--repeats", "2", "--out", str(out)])
    assert [r.split("-", 3)[-1] for r in ran] == ["warmup-rules-0", "warmup-learned-0", "canonical-rules-0",
                                                  "canonical-learned-0", "canonical-rules-1", "canonical-learned-1",
                                                  "challenge-rules", "challenge-learned"]
    page = out.read_text()
    assert "| rules | 10.0, 10.0 | 10.0 |" in page and "**1.30x**" in page
    assert "after 1 untimed canonical pair (warm-up)" in page and "OMP_NUM_THREADS=" in page

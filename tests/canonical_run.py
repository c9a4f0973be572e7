"""The one canonical run the tests share (the `canonical_run` fixture of tests/conftest.py builds it
once per session): what it replays and with which seed."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

CANONICAL_SEED = 7
"""The seed of the shared canonical run (its intervals; `tests/app/test_gold.py` checks the app reads it)."""


def canonical_strategies() -> str:
    """What the shared canonical run replays: the baselines and controls, and the test-only
    strategies that break each gate (`broken[breaks=<gate>]`) or ignore the budget (`over_budget`)."""
    from shortcut_strategies import GATES

    return ",".join(["history_stuffing", "tfidf", "session_aware", "oracle", "empty", "over_budget",
                     *(f"broken:breaks={g}" for g in GATES)])


def build(out: Path) -> Path:
    """Run the canonical suite into `out` (run id `canonical`) and return the run's folder."""
    from harness.format.loader import load_suite
    from harness.run.runner import execute
    from plugin_dist import Plugins
    from stores.registry import parse_specs

    mp = pytest.MonkeyPatch()
    plugins = Plugins(out / "plugins", mp)  # registered as an installed package is (tests/plugin_dist.py)
    plugins.strategy("broken", "shortcut_strategies:Broken")
    plugins.strategy("over_budget", "shortcut_strategies:OverBudget")
    try:
        return execute(load_suite([str(ROOT / "datasets" / "canonical")]), parse_specs(canonical_strategies()), out,
                       run_id="canonical", seed=CANONICAL_SEED, command="tests: the shared canonical run").path
    finally:
        mp.undo()

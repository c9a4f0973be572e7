"""The controls' promise, measured on every suite the project has: the canonical suite, a fresh
generated suite of each profile (the held-back half) and the challenge suite. Designs, oracle, empty
and every shortcut control run side by side. The oracle scores 1.0 on every memory criterion it
supports; on the reply engine's criteria its gold context lets the engine do at least what any
other context of turns does (a typed-memory context brings its own extractor's reading) (what the engine cannot read from any context is the engine's, and reported
apart); empty scores 0 wherever something must be recalled; every shortcut control keeps every
gate; no shortcut beats every design on any criterion but those listed in `KNOWN_BEATEN` (measured
losses, named). The 60-customer separation test is in test_controls_separation.py (a file of its
own, so that pytest-xdist's `--dist loadfile` can run it beside these)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.analysis.aggregate import aggregate, quality_criteria, shared_criteria, shortcut_separation, supports
from harness.analysis.results import Results
from harness.criteria import groups
from harness.format.loader import load_suite
from harness.generate import write_suite
from harness.run.runner import execute
from stores.registry import SHORTCUTS, parse_specs, strategy_class

DATASETS = Path(__file__).resolve().parents[2] / "datasets"
SUITES = [("canonical", 0, 0), ("challenge", 0, 0), ("realistic", 20, 21), ("small", 20, 22), ("long-history", 3, 23)]
"""(profile, or a folder of datasets/; customers, seed)."""
EMPTY_ZERO = ("identity_persistence", "preference_surfacing", "session_ranking", "known_fix_first", "recall")
GATES = ("token_budget", "provenance", "idempotency", "isolation", "self_recall")
DESIGNS = ("history_stuffing", "tfidf", "embedding", "session_aware", "hybrid", "structured")
KNOWN_BEATEN: dict[tuple[str, int, int], dict[str, set[str]]] = {("long-history", 3, 23): {"preference_surfacing": {"nth_turn_pin"}}}
"""Per suite of `SUITES`, where a shortcut beats every design, measured, not excused. structured's
preference lexicon was written from the development half's sentences (on the 60-customer suite of seed 11
it surfaced 0.16 of the held-back preferences, below a pin on each session's 2nd and 3rd customer turns);
with the learned preference reading (stores/structured/learned.py) no shortcut beats it on the 60-customer
suite nor on the 20-customer ones, but on the 3-customer long-history suite nth_turn_pin still does."""


def typed(strategy: str) -> bool:
    """A strategy whose context is typed memories (the `memories` capability), not turns."""
    return "memories" in strategy_class(strategy.split("[")[0]).capabilities


def _scenarios(tmp_path, profile: str, customers: int, seed: int):
    if (DATASETS / profile).is_dir():
        return load_suite([str(DATASETS / profile)])
    write_suite(tmp_path / "suite", customers, seed=seed, profile=profile)
    return load_suite([str(tmp_path / "suite")])


@pytest.mark.slow
@pytest.mark.parametrize("profile,customers,seed", SUITES)
def test_every_control_keeps_its_promise(tmp_path, profile, customers, seed):
    run = execute(_scenarios(tmp_path, profile, customers, seed),
                  parse_specs(",".join((*DESIGNS, "oracle", "empty", *SHORTCUTS))), tmp_path / "runs", run_id="controls")
    with Results(run.path) as res:
        df = aggregate(res, include_controls=True)
        seps = shortcut_separation(res, list(DESIGNS), list(SHORTCUTS), shared_criteria(df, list(DESIGNS)),
                                   quality_criteria(df))
        bad_gates = res.rows(f"""SELECT strategy, criterion, scenario, explanation FROM scores
                                 WHERE criterion IN ({', '.join(f"'{g}'" for g in GATES)}) AND status <> 'ok'
                                 AND strategy IN ({', '.join(f"'{s}'" for s in ('oracle', *SHORTCUTS))}) LIMIT 5""")
    engine = df.grp.map(lambda g: groups.of(g).key == "reply_engine")
    oracle = df[(df.strategy == "oracle") & supports(df) & (df.n > 0)]
    memory = oracle[~engine.loc[oracle.index]]
    assert len(memory) >= (4 if profile == "challenge" else 8), oracle.criterion.tolist()
    assert (memory["mean"] == 1.0).all(), memory[memory["mean"] < 1][["criterion", "mean"]].to_dict("records")
    if profile in ("canonical", "challenge"):  # the suites with reply gold
        assert {"returning_customer", "reply_known_fix", "reply_skips_failures"} <= set(oracle.criterion)
    if profile == "canonical":  # written with the engine: its gold context passes the engine's criteria there
        assert (oracle["mean"] == 1.0).all(), oracle[oracle["mean"] < 1][["criterion", "mean"]].to_dict("records")
    for crit in oracle[engine.loc[oracle.index]].criterion:  # the gold context loses nothing any context of turns gives the engine
        # (a strategy with typed memories, `structured`, hands the engine what its own extractor read, with
        # its learned reader of the customer's words; a context of turns, the oracle's too, is read by the engine)
        best = df[(df.criterion == crit) & (df.strategy != "oracle") & (df.n > 0) & ~df.strategy.map(typed)]["mean"].max()
        assert oracle.set_index("criterion").loc[crit, "mean"] >= best - 1e-12, (crit, best)
    if profile != "challenge":  # the challenge suite has no retrieval gold
        empty = df[(df.strategy == "empty") & df.criterion.isin(EMPTY_ZERO) & (df.n > 0)]
        assert len(empty) == len(EMPTY_ZERO) and (empty["mean"] == 0.0).all()
    assert not bad_gates, bad_gates
    assert set(SHORTCUTS) <= set(df.strategy)
    # no shortcut beats every design on any criterion (a separated lead the other way), but for the measured ones
    known = KNOWN_BEATEN.get((profile, customers, seed), {})
    beaten = [(s.criterion, s.beaten_by, s.against) for s in seps if not set(s.beaten_by) <= known.get(s.criterion, set())]
    assert not beaten, beaten

"""Budget use per strategy (`harness.analysis.budget`): how much of the budget a context used, why
it stopped filling, and the flag for a strategy that leaves the budget empty while gold is missing."""

from __future__ import annotations

from helpers import probe, scenario, turn

from harness.analysis.budget import budget_use
from harness.analysis.results import Results
from harness.cli import main
from harness.run.runner import execute
from stores.registry import parse_specs


def test_a_capped_strategy_stops_on_its_cap_and_is_flagged_while_the_uncapped_one_is_not(tmp_path, capsys):
    # the probe names both timeout turns as gold; tfidf capped at one item keeps only the best match
    story = scenario([
        turn("m-1", "Our Snowflake connector keeps timing out on the nightly load.", 0, session="mar"),
        turn("m-2", "Raise connect_timeout from 30s to 120s in the connector settings.", 5, session="mar", role="agent"),
        turn("o-1", "URGENT: the Snowflake connector is timing out again, production is down.", 60 * 24 * 180, session="sep"),
        probe("p1", "still timing out", 60 * 24 * 180 + 2, session="sep", include=("o-1", "m-1")),
    ], id="capped")
    run = execute([story], parse_specs("tfidf,tfidf[one]:top_k=1"), tmp_path, run_id="r")
    with Results(run.path) as res:
        use = budget_use(res).set_index("strategy")
        probes = res.df("SELECT strategy, tokens, budget, stop FROM probes").set_index("strategy")
    assert probes.loc["tfidf[one]", "stop"] == "cap" and probes.loc["tfidf", "stop"] == "exhausted"
    one, plain = use.loc["tfidf[one]"], use.loc["tfidf"]
    assert one["cap"] == 1 and plain["cap"] == 0 and plain["exhausted"] == 1
    # the share is the probe's own tokens over its budget, as the probes table holds them
    assert abs(one["used"] - probes.loc["tfidf[one]", "tokens"] / probes.loc["tfidf[one]", "budget"]) < 1e-12
    assert one["gold_missing"] == 1 and one["empty_missing"] == 1 and bool(one["flagged"])
    assert plain["gold_missing"] == 0 and not bool(plain["flagged"])
    assert main(["report", str(run.path), "--format", "md"]) == 0
    md = capsys.readouterr().out
    assert "## Budget use" in md and "| stopped: item cap | 0 | 1 |" in md.replace("1 ⚠", "1")
    assert "tfidf[one]: used" in md and "left more than half of the budget empty on 1 of the 1 probes" in md

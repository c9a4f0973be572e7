"""Re-scoring a run from its tables gives back exactly the scores of the live run."""

from __future__ import annotations

import json

import pandas as pd
import pyarrow.parquet as pq
import pytest
from helpers import forget, outage_story, probe, scenario, turn

from harness.analysis.rescore import rescore, scenarios_from
from harness.analysis.results import Results
from harness.run.runner import execute
from stores.retrieval.history_stuffing import HistoryStuffing
from stores.protocol import HealthFactor, HealthReport
from stores.registry import parse_specs


class SteadyHealth(HistoryStuffing):
    """History stuffing with a health report that always says watch."""

    name = "steady_health"
    capabilities = frozenset({"health"})

    def health(self, subject, now):
        return HealthReport(subject, now, 100.0, (HealthFactor("unresolved_issues", -45.0, "three open sessions"),), 55.0, "watch")


class FlakyHealth(SteadyHealth):
    """Each computation differs from the last: fails the determinism part."""

    name = "flaky_health"

    def health(self, subject, now):
        self.calls = getattr(self, "calls", 0) + 1
        drift = self.calls / 1000
        return HealthReport(subject, now, 100.0, (HealthFactor("unresolved_issues", -45.0 - drift, "varies"),), 55.0 - drift, "watch")


class BrokenHealth(SteadyHealth):
    name = "broken_health"

    def health(self, subject, now):
        raise KeyError(subject)


@pytest.fixture
def fakes(plugins):
    plugins.install({"strategy": {cls.name: f"{__name__}:{cls.__name__}" for cls in (SteadyHealth, FlakyHealth, BrokenHealth)}})


def suite():
    other = scenario([
        turn("a-1", "My address is 12 Elm Street, please update the invoice.", 0),
        turn("b-1", "Hi, Lee here with an SSO question.", 1, subject="c2", session="z"),
        forget("c1", 2),
        turn("a-2", "Hello again, new account.", 3, session="s2"),
        probe("p-after", "who is this", 4, session="s2", on="a-3", include=("a-2",), exclude=("a-1",), health="watch"),
        turn("a-3", "Can you see my old invoices?", 5, session="s2"),
    ], id="forgetful")
    return [outage_story(), other]


def scores(path):
    df = pq.read_table(path / "scores").to_pandas()
    return df.sort_values(["strategy", "scenario", "probe_id", "criterion"]).reset_index(drop=True)


def test_rescore_gives_the_same_scores_table_as_the_live_run(tmp_path, fakes):
    specs = parse_specs("oracle,empty,history_stuffing,steady_health,flaky_health,broken_health")
    live = execute(suite(), specs, tmp_path, run_id="live")
    again = rescore(live.path, tmp_path, run_id="again")
    a, b = scores(live.path), scores(again)
    assert len(a) and a.astype(str).equals(b.astype(str))
    status = {(r.strategy, r.criterion): r.status for r in a.itertuples() if r.criterion == "health"}
    assert status == {("oracle", "health"): "unsupported", ("empty", "health"): "unsupported",
                      ("history_stuffing", "health"): "unsupported", ("steady_health", "health"): "ok",
                      ("flaky_health", "health"): "fail", ("broken_health", "health"): "error"}
    flaky = a[(a.strategy == "flaky_health") & (a.criterion == "health")].explanation.iloc[0]
    assert flaky.startswith("a second computation")  # the only fault: needs the stored second report
    manifest = json.loads((again / "manifest.json").read_text())
    assert manifest["rescored_from"]["run_id"] == "live" and manifest["run_id"] == "again"
    assert "self_recall" in manifest["rescored_from"]["plain_bundle_only"]


def test_rescore_rebuilds_the_scenarios_with_their_gold(tmp_path):
    live = execute(suite(), parse_specs("empty"), tmp_path, run_id="live")
    with Results(live.path) as res:
        rebuilt = {s.id: s for s in scenarios_from(res, "live")}
    for s in suite():
        r = rebuilt[s.id]
        assert [type(e).__name__ for e in r.events] == [type(e).__name__ for e in s.events]
        assert r.probes[0].expect == s.probes[0].expect and r.probes[0].on == s.probes[0].on
        assert r.turns == s.turns


def test_rescore_applies_changed_criteria_without_replaying(tmp_path, monkeypatch):
    live = execute(suite(), parse_specs("history_stuffing"), tmp_path, run_id="live")
    from harness.criteria import registry

    c = registry()["recall"]
    monkeypatch.setitem(registry(), "recall", type(c)(**{**c.__dict__, "fn": lambda o: None}))
    again = scores(rescore(live.path, tmp_path, run_id="again"))
    assert "recall" in set(scores(live.path).criterion) and "recall" not in set(again.criterion)


def test_rescore_rebuilds_turn_gold_signals_faults_and_the_new_probe_keys(tmp_path):
    from harness.format.loader import load_scenario

    s = load_scenario("tests/data/scenarios/extensions.yaml")
    live = execute([s], parse_specs("empty"), tmp_path, run_id="live")
    with Results(live.path) as res:
        (r,) = scenarios_from(res, "live")
    assert r.events == s.events  # signals and faults included, probes with every new key
    assert r.turn_gold == s.turn_gold and r.turn_signals == s.turn_signals
    assert r.probes[0].expect.memories == s.probes[0].expect.memories and r.probes[0].expect.returning is True
    assert set(r.subjects) == set(s.subjects)


def test_rescore_reads_back_the_reply_and_the_typed_memories_each_probe_stored(tmp_path):
    from test_reply_criteria import seed_scenario

    from stores.reply.model import SupportReply

    live = execute([seed_scenario()], parse_specs("structured,history_stuffing"), tmp_path, run_id="live")
    probes = pq.read_table(live.path / "probes").to_pandas().set_index("strategy")
    reply = SupportReply.from_dict(json.loads(probes.loc["structured", "reply"]))
    assert reply.known_fixes == ("Update application",) and reply.is_returning_customer
    assert [m["text"] for m in json.loads(probes.loc["structured", "memories"])][:1] == ["Uses Acme PDF Suite"]
    assert pd.isna(probes.loc["history_stuffing", "memories"])  # no typed memories: no snapshot
    assert probes.loc["history_stuffing", "reply"]
    again = rescore(live.path, tmp_path, run_id="again")
    a, b = scores(live.path), scores(again)
    reply_rows = a[a.criterion.isin(["memory_extraction", "returning_customer", "reply_known_fix", "reply_skips_failures"])]
    assert len(reply_rows) == 8 and a.astype(str).equals(b.astype(str))

def test_rescore_rejudges_the_decision_policies_from_the_decisions_table(tmp_path):
    from harness.format.loader import load_scenario
    from stores.decisions.registry import parse_policies

    decided = [load_scenario(f"datasets/canonical/{n}.yaml")
               for n in ("decision-yes-three-meanings", "decision-locker-down-mid-chat", "decision-routing")]
    live = execute(decided, parse_specs("history_stuffing"), tmp_path, run_id="live",
                   policies=parse_policies("session_state,per_message:transfer_on_hostile=false"))
    again = rescore(live.path, tmp_path, run_id="again")
    a, b = scores(live.path), scores(again)
    assert len(a[a.grp == "decisions"]) and a.astype(str).equals(b.astype(str))
    with Results(again) as res:
        n = res.rows("SELECT count(*) FROM scores WHERE criterion = 'irreversible_errors' AND NOT passed")[0][0]
    assert n > 0  # per_message's false transfers are judged again, not dropped

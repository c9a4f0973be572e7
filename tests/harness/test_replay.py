from harness.replay import replay
from harness.runner import execute
from harness.results import Results
from helpers import outage_story, probe, scenario, turn
from stores.history_stuffing import HistoryStuffing
from stores.registry import parse_specs


def test_a_probe_runs_before_its_on_turn_is_observed():
    s = scenario([
        turn("a", "My export to S3 fails with AccessDenied.", 0),
        probe("p", "It failed again this morning.", 5, on="b"),
        turn("b", "It failed again this morning.", 5),
    ])
    out = replay(s, HistoryStuffing()).outcomes[0]
    ids = [c.item_id for c in out.bundle.candidates]
    assert ids == ["a"]


def test_strategies_never_receive_gold_labels():
    received = []

    class Spy(HistoryStuffing):
        def observe(self, event):
            received.append(event)
            super().observe(event)

    replay(outage_story(), Spy())
    assert all(type(e).__name__ in {"Turn", "Resolution", "Forget"} for e in received)
    assert not hasattr(Spy, "peek_gold")


def test_a_strategy_error_becomes_error_rows_and_the_run_goes_on(tmp_path, monkeypatch):
    from stores import registry

    class Broken(HistoryStuffing):
        def context(self, request):
            raise ValueError("index corrupted")

    monkeypatch.setitem(registry.REGISTRY, "broken", f"{__name__}:Broken")
    globals()["Broken"] = Broken
    r = execute([outage_story()], parse_specs("broken,history_stuffing"), tmp_path)
    with Results(r.path) as res:
        statuses = dict(res.rows("select strategy, list(distinct status) from scores where probe_id <> '' group by 1"))
        err = res.rows("select error from probes where strategy = 'broken'")[0][0]
    assert statuses["broken"] == ["error"]
    assert "error" not in statuses["history_stuffing"]
    assert "ValueError: index corrupted" in err


def test_two_runs_with_the_same_inputs_rank_identically(tmp_path):
    specs = parse_specs("history_stuffing,oracle,empty")
    a = execute([outage_story("x"), outage_story("y")], specs, tmp_path / "a")
    b = execute([outage_story("x"), outage_story("y")], specs, tmp_path / "b")
    q = "select strategy, scenario, probe_id, rank, item_id, score, components, included, reason from candidates order by all"
    s = "select strategy, scenario, probe_id, criterion, value, status, explanation from scores order by all"
    with Results(a.path) as ra, Results(b.path) as rb:
        assert ra.rows(q) == rb.rows(q)
        assert ra.rows(s) == rb.rows(s)
        assert ra.rows("select context from probes order by all") == rb.rows("select context from probes order by all")

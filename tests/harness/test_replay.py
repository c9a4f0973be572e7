from dataclasses import fields

from harness.replay.probes import attach_replays, idempotency_signatures, replay
from harness.run.runner import execute
from harness.analysis.results import Results
from helpers import outage_story, probe, scenario, turn
from stores.retrieval.history_stuffing import HistoryStuffing
from stores.protocol import ContextRequest
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


class Spy(HistoryStuffing):
    """Records everything the harness hands it, including through the gold side door."""

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.events, self.requests, self.gold = [], [], []

    def observe(self, event):
        self.events.append(event)
        super().observe(event)

    def context(self, request):
        self.requests.append(request)
        return super().context(request)

    def peek_gold(self, gold):
        self.gold.append(gold)


def test_strategies_never_receive_gold_labels():
    spy = Spy()
    assert "gold" not in spy.capabilities
    replay(outage_story(), spy)
    assert spy.gold == []  # the side door exists on the class but is never opened for it
    assert spy.events and all(type(e).__name__ in {"Turn", "Resolution", "Forget"} for e in spy.events)
    assert spy.requests and all(type(r) is ContextRequest for r in spy.requests)
    assert [f.name for f in fields(ContextRequest)] == ["subject", "session", "task", "budget_tokens", "now"]


def test_the_gold_side_door_opens_only_with_the_gold_capability():
    class GoldSpy(Spy):
        capabilities = frozenset({"gold"})

    spy = GoldSpy()
    replay(outage_story(), spy)
    assert len(spy.gold) == len(spy.requests) == 1 and tuple(spy.gold[0]["include"]) == ("o-1",)


def test_a_strategy_error_becomes_error_rows_and_the_run_goes_on(tmp_path, monkeypatch, plugins):
    from stores import registry

    class Broken(HistoryStuffing):
        def context(self, request):
            raise ValueError("index corrupted")

    plugins.strategy("broken", f"{__name__}:Broken")
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


def on_story():
    return scenario([
        turn("a", "My export to S3 fails with AccessDenied.", 0),
        probe("p", "It failed again this morning.", 5, on="b"),
        turn("b", "It failed again this morning.", 5),
    ], id="on-story")


class KeepsMemoryOnReset(HistoryStuffing):
    """The bug self_recall must catch: `reset()` leaves what the first pass observed."""

    def reset(self):
        pass


class RaisesOnRedelivery(HistoryStuffing):
    """Refuses an event it has already observed (a KeyError, as a strict store would raise)."""

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.observed = set()

    def observe(self, event):
        key = (type(event).__name__, getattr(event, "id", event.subject))
        if key in self.observed:
            raise KeyError(f"already observed {key[1]}")
        self.observed.add(key)
        super().observe(event)

    def reset(self):
        self.observed.clear()
        super().reset()


def scores_of(path, strategy):
    with Results(path) as res:
        return {c: (st, e) for c, st, e in res.rows("select criterion, status, explanation from scores where strategy = ?", [strategy])}


def test_each_outcome_carries_the_candidates_of_its_probe_in_the_check_replays():
    s, strategy = on_story(), KeepsMemoryOnReset()
    first = replay(s, strategy)
    attach_replays(first.outcomes, idempotency_signatures(s, KeepsMemoryOnReset, first, strategy))
    got = first.outcomes[0].replays
    assert set(got) == {"reset", "twice"}
    assert "b" in got["reset"] and "a" in got["reset"]  # reset() kept b from the first pass
    assert got["twice"] == ("a",)


def test_self_recall_and_idempotency_fail_a_strategy_whose_reset_keeps_memory(tmp_path, monkeypatch, plugins):
    from stores import registry

    plugins.strategy("keeps_memory", f"{__name__}:KeepsMemoryOnReset")
    r = execute([on_story()], parse_specs("keeps_memory,history_stuffing"), tmp_path)
    bad, good = scores_of(r.path, "keeps_memory"), scores_of(r.path, "history_stuffing")
    assert bad["self_recall"][0] == "fail" and "b, came back among the candidates in the replay after reset()" in bad["self_recall"][1]
    assert bad["idempotency"][0] == "fail" and "after reset" in bad["idempotency"][1]
    assert good["self_recall"][0] == "ok" and good["idempotency"][0] == "ok"


def test_a_strategy_raising_in_the_check_replays_gets_error_not_fail(tmp_path, monkeypatch, plugins):
    from stores import registry

    plugins.strategy("strict", f"{__name__}:RaisesOnRedelivery")
    r = execute([on_story()], parse_specs("strict"), tmp_path)
    status, why = scores_of(r.path, "strict")["idempotency"]
    assert status == "error" and "KeyError" in why and "already observed a" in why and "differed" not in why
    assert scores_of(r.path, "strict")["self_recall"][0] == "ok"


def test_a_strategy_that_cannot_be_built_owes_error_rows_even_for_its_capabilities(tmp_path, monkeypatch, plugins):
    from stores.session.session_aware import SessionAware

    class Unbuildable(SessionAware):
        def __init__(self, params=None):
            raise OSError("model file missing")

    globals()["Unbuildable"] = Unbuildable
    from stores import registry

    plugins.strategy("unbuildable", f"{__name__}:Unbuildable")
    monkeypatch.setattr(Unbuildable, "Params", SessionAware.Params)
    from dataclasses import replace

    from harness.format.model import Probe

    s = outage_story()
    s = replace(s, events=tuple(replace(e, expect=replace(e.expect, health="watch")) if isinstance(e, Probe) else e
                                for e in s.events))
    r = execute([s], parse_specs("unbuildable"), tmp_path)
    with Results(r.path) as res:
        statuses = dict(res.rows("select criterion, any_value(status) from scores group by 1"))
    assert statuses["health"] == "error"
    assert set(statuses.values()) == {"error"}


EXTENSIONS = "tests/data/scenarios/extensions.yaml"


def test_strategies_observe_signals_and_never_faults():
    from harness.format.loader import load_scenario

    s = load_scenario(EXTENSIONS)
    spy, faults = Spy(), []
    replay(s, spy, on_fault=faults.append)
    assert {type(e).__name__ for e in spy.events} == {"Turn", "Resolution", "Signal"}
    assert [e.name for e in spy.events if type(e).__name__ == "Signal"] == ["rma_closed", "callback_done"]
    assert [f.name for f in faults] == ["locker_down", "locker_up"]  # in order, to the decision side only


def test_a_doubled_replay_delivers_each_signal_twice_and_no_fault():
    from harness.format.loader import load_scenario

    spy = Spy()
    replay(load_scenario(EXTENSIONS), spy, deliver_twice=True)
    names = [e.name for e in spy.events if type(e).__name__ == "Signal"]
    assert names == ["rma_closed", "rma_closed", "callback_done", "callback_done"]
    assert not [e for e in spy.events if type(e).__name__ == "Fault"]


def test_a_signal_does_not_bring_a_forgotten_subject_back():
    from harness.format.model import Fault
    from harness.replay.probes import forgotten_at_probes
    from helpers import at, forget
    from stores.protocol import Signal

    s = scenario([
        turn("a", "hello", 0),
        forget("c1", 1),
        Signal("c1", "s1", "rma_closed", None, at(2)),
        Fault("locker_down", at(3)),
        probe("p", "anything left?", 4),
        turn("b", "hello again", 5),
        probe("q", "and now?", 6),
    ])
    assert forgotten_at_probes(s) == {4: frozenset({"c1"}), 6: frozenset()}


def test_the_events_table_carries_turn_gold_signals_and_faults(tmp_path):
    from harness.format.loader import load_scenario

    r = execute([load_scenario(EXTENSIONS)], parse_specs("history_stuffing"), tmp_path)
    with Results(r.path) as res:
        rows = {k: dict(zip(("kind", "labels", "plan", "route", "signals", "signal", "ref", "fault"), v)) for k, *v in res.rows(
            "select item_id, kind, labels, plan, route, signals, signal, ref, fault from events")}
        probes = res.rows("select count(*) from probes")[0][0]
    assert rows["t1-crash"] == {"kind": "turn", "labels": ["episodic"], "plan": "clarify", "route": "knowledge",
                                "signals": '{"complexity": false, "sensitive": "none"}', "signal": None, "ref": None, "fault": None}
    assert rows["t1#2"]["labels"] == [] and rows["t1#2"]["plan"] is None and rows["t1#2"]["signals"] == '{"asked_question": true}'
    assert rows["signal:rma_closed"] == {"kind": "signal", "labels": None, "plan": None, "route": None, "signals": None,
                                         "signal": "rma_closed", "ref": "RMA 5531", "fault": None}
    assert rows["fault:locker_up"]["kind"] == "fault" and rows["fault:locker_up"]["fault"] == "locker_up"
    assert probes == 1


class RemembersEveryDelivery(HistoryStuffing):
    """Not idempotent: a turn delivered twice is remembered twice (the second copy under a new id)."""

    def observe(self, event):
        from dataclasses import replace

        from stores.protocol import Turn

        if isinstance(event, Turn) and self.memory.history(event.subject).position(event.id) is not None:
            event = replace(event, id=event.id + "'")
        super().observe(event)


def test_idempotency_fails_a_strategy_that_remembers_a_redelivered_turn_twice(tmp_path, monkeypatch, plugins):
    from stores import registry

    plugins.strategy("doubles", f"{__name__}:RemembersEveryDelivery")
    r = execute([on_story()], parse_specs("doubles"), tmp_path)
    status, why = scores_of(r.path, "doubles")["idempotency"]
    assert status == "fail" and "p (with every event delivered twice)" in why and "after reset" not in why

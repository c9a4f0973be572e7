import numpy as np

from helpers import at, resolve, turn
from stores.memory import MemoryStore
from stores.packing import header_for, pack
from stores.protocol import DROP_BUDGET, ContextRequest
from stores.tokens import count_tokens


def _history(*events):
    m = MemoryStore()
    for e in events:
        m.observe(e)
    return m.history("c1")


def _req(budget):
    return ContextRequest("c1", "s1", "task", budget, at(100))


def test_a_big_item_that_does_not_fit_is_skipped_and_smaller_ones_below_still_fill():
    h = _history(turn("big", "word " * 200, 0), turn("small", "short but useful note here", 1))
    budget = count_tokens(header_for(_req(0))) + h.line_tokens[1] + 5
    b = pack(h, _req(budget), {"s": np.array([2.0, 1.0])})
    by_id = {c.item_id: c for c in b.candidates}
    assert not by_id["big"].included and by_id["big"].reason == DROP_BUDGET
    assert by_id["small"].included
    assert b.tokens == count_tokens(b.text) <= budget


def test_the_budget_counts_the_header_and_nothing_fits_under_it():
    h = _history(turn("a", "anything at all", 0))
    b = pack(h, _req(3), {"s": np.array([1.0])})
    assert b.text == "" and b.tokens == 0
    assert [c.reason for c in b.candidates] == [DROP_BUDGET]


def test_components_sum_to_the_score_and_ties_keep_pool_order():
    h = _history(turn("a", "first", 0), turn("b", "second", 1), turn("c", "third", 2))
    b = pack(h, _req(500), {"x": np.array([1.0, 2.0, 1.0]), "y": 0.5})
    assert [c.item_id for c in b.candidates] == ["b", "a", "c"]
    # by hand: each candidate keeps its own components (reordered with it) and the scalar is broadcast
    assert [(c.score, c.components) for c in b.candidates] == [
        (2.5, {"x": 2.0, "y": 0.5}),
        (1.5, {"x": 1.0, "y": 0.5}),
        (1.5, {"x": 1.0, "y": 0.5}),
    ]
    for c in b.candidates:
        assert abs(sum(c.components.values()) - c.score) < 1e-9


def test_a_later_resolution_replaces_the_record_and_duplicate_turns_are_ignored():
    m = MemoryStore()
    t = turn("a", "help", 0)
    assert m.observe(t) and not m.observe(t)
    m.observe(resolve("s1", "fixed", 5))
    m.observe(resolve("s1", "reopened: not fixed", 9, status="open"))
    h = m.history("c1")
    assert h.ids == ["a", "s1#resolution"]
    assert h.texts[1] == "reopened: not fixed" and not h.is_resolved("s1")


def test_chronological_rendering_orders_by_time_not_rank():
    h = _history(turn("old", "old message", 0), turn("new", "new message", 5))
    b = pack(h, _req(500), {"s": np.array([1.0, 2.0])}, render="chronological")
    assert b.text.index("old message") < b.text.index("new message")


def test_a_bundle_keeps_the_lines_it_was_packed_with_after_the_history_changes():
    m = MemoryStore()
    m.observe(turn("a", "export fails", 0))
    m.observe(resolve("s1", "cleared the cache", 5))
    h = m.history("c1")
    b = pack(h, _req(500), {"s": np.array([1.0, 2.0])})
    m.observe(resolve("s1", "reopened: the cache was not it", 9, status="open"))  # replaced in place, later
    m.observe(turn("b", "still failing", 10))
    assert len(b.candidates) == 2
    assert [c.text for c in b.candidates][0].endswith("resolution, resolved: cleared the cache")
    assert b.candidates.item_ids == ["s1#resolution", "a"]
    assert h.lines[1].endswith("resolution, open: reopened: the cache was not it")


def test_the_count_of_a_packed_text_is_its_true_count_with_or_without_adding_lines(monkeypatch):
    import random

    import stores.packing as packing
    from store_events import random_history

    rng = random.Random(5)
    for trial in range(30):
        m = MemoryStore()
        for e in random_history(rng, rng.randint(1, 60), subject="c1"):
            m.observe(e)
        h = m.history("c1")
        scores = np.array([rng.random() for _ in range(len(h))])
        budget = rng.randint(5, 400)
        eligible = np.array([rng.random() < 0.8 for _ in range(len(h))], dtype=bool)
        fast = pack(h, _req(budget), {"s": scores}, eligible=eligible, render=rng.choice(("rank", "chronological")))
        assert fast.tokens == count_tokens(fast.text) <= budget
        monkeypatch.setattr(packing, "lines_add_up", lambda: False)
        whole = pack(h, _req(budget), {"s": scores}, render="rank")
        monkeypatch.undo()
        again = pack(h, _req(budget), {"s": scores}, render="rank")
        assert (whole.text, whole.tokens, whole.candidates.reasons) == (again.text, again.tokens, again.candidates.reasons)


def test_a_packed_table_knows_its_items_are_their_own_sources_until_a_strategy_replaces_them():
    h = _history(turn("a", "first", 0), turn("b", "second", 1), turn("c", "third", 2))
    t = pack(h, _req(500), {"s": np.array([1.0, 3.0, 2.0])}).candidates
    assert t.own_sources()
    assert t.source_ids == [("b",), ("c",), ("a",)]  # built lazily: still each item's own
    assert t.own_sources() and t.provenance_ids() == ("b", "c", "a")
    t.source_ids = [("b", "x"), ("c",), ("a",)]  # as structured gives each memory the turns it came from
    assert not t.own_sources()
    assert t.provenance_ids() == ("b", "x", "c", "a")


def test_a_packed_tables_rows_read_by_position_are_the_whole_columns_rows():
    h = _history(turn("a", "first", 0), turn("b", "second", 1), turn("c", "third", 2), turn("d", "word " * 300, 3))
    fresh = lambda: pack(h, _req(60), {"s": np.array([1.0, 3.0, 2.0, 4.0])}).candidates  # noqa: E731
    names = ("item_ids", "texts", "sessions", "subjects", "source_ids", "reasons")
    whole = fresh()
    for at_ in ([], [2], [0, 3], [3, 1, 0]):
        lazy = fresh()  # nothing read yet: only those rows are built
        assert all(lazy.column_at(k, at_) == [getattr(whole, k)[i] for i in at_] for k in names), at_
        assert "texts" not in lazy._cols
    given = fresh()
    given.source_ids = [("x",), ("y",), ("z",), ("w",)]  # a strategy's own column is the one read
    assert given.column_at("source_ids", [1, 3]) == [("y",), ("w",)]


def test_provenance_ids_and_drop_reasons_read_from_codes_are_what_the_built_columns_give():
    h = _history(turn("a", "first", 0), turn("b", "second", 1), turn("c", "third", 2), turn("d", "word " * 300, 3))
    fresh = lambda **k: pack(h, _req(60), {"s": np.array([1.0, 3.0, 2.0, 4.0])[k.get("pool", slice(None))]}, **k).candidates  # noqa: E731
    for kwargs in ({}, {"pool": np.array([2, 0, 2, 1])}, {"pool": np.array([], dtype=np.int64)}):  # a pool may repeat a position
        t = fresh(**kwargs)
        assert t.provenance_ids() == tuple(dict.fromkeys(t.item_ids)), kwargs
        assert fresh(**kwargs).reason_set() == set(t.reasons), kwargs
    renamed = fresh()
    renamed.item_ids = ["x", "x", "y", "z"]  # a strategy's own ids: deduplicated as given
    assert renamed.provenance_ids() == ("x", "y", "z")

"""A shard's candidates and health reports are streamed to their Parquet parts as they are
produced: the run is the same as one built in memory, whatever the batch size."""

import pyarrow as pa
import pyarrow.parquet as pq

from harness.analysis.results import Results
from harness.run import tables
from harness.run.runner import execute, run_shard
from helpers import outage_story
from stores.registry import parse_specs


def test_streamed_candidates_are_the_candidates_built_in_memory(monkeypatch):
    specs = parse_specs("history_stuffing,tfidf,session_aware")
    whole = run_shard([outage_story()], specs)["candidates"]
    monkeypatch.setattr(tables, "CANDIDATE_BATCH", 3)
    got: list[pa.Table] = []
    rest = run_shard([outage_story()], specs, sinks={"candidates": got.append})
    assert len(got) >= 3 and all(t.num_rows for t in got)  # handed over in several batches, as they came
    assert rest["candidates"].num_rows == 0
    assert pa.concat_tables(got).equals(whole)


def test_a_run_whose_candidates_were_streamed_in_small_batches_reads_the_same(tmp_path, monkeypatch):
    specs = parse_specs("history_stuffing,session_aware,hybrid")  # two health timelines
    one = execute([outage_story()], specs, tmp_path, run_id="one", policies=())
    monkeypatch.setattr(tables, "CANDIDATE_BATCH", 2)
    monkeypatch.setattr(tables, "HEALTH_BATCH", 2)
    many = execute([outage_story()], specs, tmp_path, run_id="many", policies=())
    for table in ("candidates", "health"):
        part = many.path / table / "part-000000.parquet"
        assert pq.ParquetFile(part).num_row_groups > 1  # one row group per batch, in one part per shard
        assert sorted(p.name for p in (many.path / table).iterdir()) == ["part-000000.parquet"]
    for q in ("SELECT * EXCLUDE (run) FROM candidates ORDER BY strategy, probe_id, rank",
              "SELECT * EXCLUDE (run) FROM health ORDER BY strategy, event_index, probe_id"):
        with Results(one.path) as a, Results(many.path) as b:
            assert a.df(q).equals(b.df(q)) and len(a.df(q))


def test_only_the_tables_that_grow_with_a_history_can_be_streamed():
    import pytest

    with pytest.raises(ValueError, match="cannot be streamed: \\['scores'\\]"):
        tables.TableBuffer({"scores": print})


def test_a_part_that_cannot_be_written_stops_the_run_and_leaves_nothing(tmp_path, monkeypatch):
    import pytest

    from harness.run import runstore

    def full(self, data):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(runstore.PartStream, "write", full)
    monkeypatch.setattr(tables, "HEALTH_BATCH", 1)  # the first timeline point is handed over during the replay
    with pytest.raises(OSError, match="No space left"):
        execute([outage_story()], parse_specs("session_aware"), tmp_path, run_id="full", policies=())
    assert list(tmp_path.iterdir()) == []  # no run, no temporary folder


def test_a_shard_tunes_the_cycle_collector_only_while_it_runs_and_restores_it_even_when_it_raises():
    import gc

    import pytest

    from harness.run import runner

    before = gc.get_threshold()
    seen = []
    with runner.shard_collector():
        seen.append((gc.get_threshold(), gc.get_freeze_count() > 0))
        with runner.shard_collector():  # a second shard in the same process (a thread): nothing changes twice
            seen.append((gc.get_threshold(), gc.get_freeze_count() > 0))
        seen.append((gc.get_threshold(), gc.get_freeze_count() > 0))
    assert seen == [(runner.SHARD_GC_THRESHOLD, True)] * 3
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0
    with pytest.raises(RuntimeError):
        with runner.shard_collector():
            raise RuntimeError("a strategy blew up")
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0

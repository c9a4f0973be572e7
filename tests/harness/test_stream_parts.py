"""A shard's candidates are streamed to their Parquet part as they are produced: the run is the
same as one built in memory, whatever the batch size."""

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
    rest = run_shard([outage_story()], specs, candidates_to=got.append)
    assert len(got) >= 3 and all(t.num_rows for t in got)  # handed over in several batches, as they came
    assert rest["candidates"].num_rows == 0
    assert pa.concat_tables(got).equals(whole)


def test_a_run_whose_candidates_were_streamed_in_small_batches_reads_the_same(tmp_path, monkeypatch):
    specs = parse_specs("history_stuffing,session_aware")
    one = execute([outage_story()], specs, tmp_path, run_id="one", policies=())
    monkeypatch.setattr(tables, "CANDIDATE_BATCH", 2)
    many = execute([outage_story()], specs, tmp_path, run_id="many", policies=())
    part = many.path / "candidates" / "part-000000.parquet"
    assert pq.ParquetFile(part).num_row_groups > 1  # one row group per batch, in one part per shard
    assert sorted(p.name for p in (many.path / "candidates").iterdir()) == ["part-000000.parquet"]
    q = "SELECT * EXCLUDE (run) FROM candidates ORDER BY strategy, probe_id, rank"
    with Results(one.path) as a, Results(many.path) as b:
        assert a.df(q).equals(b.df(q)) and len(a.df(q))

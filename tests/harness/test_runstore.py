import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from harness.analysis.results import Results, list_runs, resolve_run
from harness.run.runner import execute
from harness.run.runstore import RunWriter
from helpers import HANG, eventually, outage_story
from stores.registry import parse_specs

ROOT = Path(__file__).resolve().parents[2]


def test_a_run_is_visible_only_after_commit(tmp_path):
    w = RunWriter(tmp_path, "r1")
    assert list_runs(tmp_path) == []
    assert not (tmp_path / "r1").exists()
    w.commit({"run_id": "r1", "started": "x"})
    assert [r.run_id for r in list_runs(tmp_path)] == ["r1"]


def test_a_failed_run_leaves_nothing_behind(tmp_path, monkeypatch):
    import harness.run.runner as runner

    def boom(*a, **k):
        raise RuntimeError("disk full")

    monkeypatch.setattr(runner, "run_shard", boom)
    with pytest.raises(RuntimeError):
        execute([outage_story()], parse_specs("empty"), tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_every_table_is_queryable_with_duckdb(tmp_path):
    r = execute([outage_story()], parse_specs("history_stuffing,empty"), tmp_path)
    with Results(r.path) as res:
        for table in ("events", "probes", "candidates", "scores", "health"):
            res.df(f"select count(*) from {table}")
        assert res.rows("select count(distinct strategy) from probes")[0][0] == 2
    assert r.path.name in {x.run_id for x in list_runs(tmp_path)}


def test_manifest_describes_the_run(tmp_path):
    r = execute([outage_story()], parse_specs("history_stuffing:include_resolutions=false"), tmp_path, seed=7)
    m = list_runs(tmp_path)[0].manifest
    assert m["seed"] == 7
    assert m["strategies"][0]["label"] == "history_stuffing[include_resolutions=False]"
    assert m["strategies"][0]["params"] == {"include_resolutions": False}
    assert len(m["strategies"][0]["params_hash"]) == 16
    assert m["datasets"][0]["files"][0]["sha256"] == "0" * 64
    assert {"python", "libraries", "git_commit", "started", "finished"} <= set(m)


@pytest.mark.slow  # starts a run in a subprocess
def test_killing_a_run_midway_leaves_no_partial_run(tmp_path):
    script = textwrap.dedent(
        f"""
        import sys, time
        sys.path.insert(0, {str(ROOT / 'tests')!r})
        from helpers import outage_story
        from harness.run.runner import execute
        from stores import registry
        from stores.retrieval.history_stuffing import HistoryStuffing

        class Slow(HistoryStuffing):
            def context(self, request):
                time.sleep(0.2)
                return super().context(request)

        scenarios = [outage_story(f"s{{i}}") for i in range(200)]
        slow = registry.StrategySpec("slow", target="__main__:Slow")  # an explicit target, as `class =` in a config
        execute(scenarios, [slow], {str(tmp_path)!r}, shard_size=1)
        """
    )
    proc = subprocess.Popen([sys.executable, "-c", script], cwd=ROOT)
    try:
        def wrote_a_part() -> bool:
            assert proc.poll() is None, "the run ended before it could be killed midway"  # 200 shards of 0.2 s sleeps each
            return bool(list(tmp_path.glob(".tmp-*/scores/*.parquet")))

        eventually(wrote_a_part, "the run writing its first part", poll=0.05)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(HANG)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert list_runs(tmp_path) == []
    visible = [p for p in tmp_path.iterdir() if not p.name.startswith(".")]
    assert visible == []
    hidden = next(tmp_path.glob(".tmp-*"))
    with pytest.raises(FileNotFoundError, match="not a complete run"):
        resolve_run(hidden)


def test_the_manifest_carries_the_run_format_version_and_a_newer_one_is_refused_on_read(tmp_path):
    import json

    from harness.run.manifest import FORMAT_VERSION
    from harness.run.runstore import UnusableRun, read_manifest

    path = execute([outage_story()], parse_specs("empty"), tmp_path, run_id="r").path
    data = read_manifest(path)
    assert data["format_version"] == FORMAT_VERSION
    older = {k: v for k, v in data.items() if k != "format_version"}  # runs from before the field: version 1
    (path / "manifest.json").write_text(json.dumps(older))
    assert "format_version" not in read_manifest(path)
    (path / "manifest.json").write_text(json.dumps({**data, "format_version": FORMAT_VERSION + 1}))
    with pytest.raises(UnusableRun, match=rf"manifest.json: format_version: written in run format {FORMAT_VERSION + 1}, "
                                          rf"newer than this supportbench reads \(up to {FORMAT_VERSION}\)"):
        read_manifest(path)
    (path / "manifest.json").write_text(json.dumps({**data, "format_version": "1"}))
    with pytest.raises(UnusableRun, match="format_version: input should be a valid integer"):
        read_manifest(path)
    assert "format_version" in list_runs(tmp_path, include_damaged=True)[0].problem  # named under the app's run picker


def test_the_run_format_doc_lists_every_column_the_tables_have():
    from harness.run.tables import columns_markdown

    doc = (Path(__file__).resolve().parents[2] / "docs" / "run-format.md").read_text()
    shown = doc.split("<!-- columns: harness.run.tables.columns_markdown() -->\n", 1)[1].split("\n<!-- /columns -->", 1)[0]
    assert shown == columns_markdown(), "docs/run-format.md's columns differ from SCHEMAS: paste columns_markdown()"

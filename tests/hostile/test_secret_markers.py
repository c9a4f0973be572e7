"""A secret stays secret however it is spelled, and a hostile service cannot hold a run.

Marker credentials are planted in every configurable URL and key, in the spellings that used to
get through (a trailing slash, a key with a stray `\\r`, userinfo in a chat endpoint, a token in a
query string, a Redis password in `redis_url`), then a run goes against local servers that drip
bytes and redirect, and every output the commands write or print is searched for them: the
manifest, every Parquet part (decoded, not its compressed bytes), report.md, JUnit, the baseline,
`check`'s output and `--summary` markdown, a compare file, stdout and stderr.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from fault_server import FaultServer
from helpers import eventually

from harness.cli import main as cli
from harness.replay import probes as replay

MARKERS = {
    "hindsight_password": "HsPw-MARK-0a91",
    "hindsight_key": "HsKey-MARK-33c2",
    "statewave_token": "SwTok-MARK-71be",
    "chat_password": "ChatPw-MARK-5d0e",
    "chat_key": "ChatKey-MARK-c4a8",
    "redis_password": "RedisPw-MARK-9f17",
    "spec_password": "SpecPw-MARK-2b6d",
}
SCENARIOS = ["datasets/canonical/carol-timeout-again.yaml", "datasets/canonical/decision-meaningless.yaml"]


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def text_of(path: Path) -> str:
    """What a reader of the file sees: a Parquet part decoded row by row, anything else as text."""
    if path.suffix == ".parquet":
        return json.dumps(pq.read_table(path).to_pylist(), default=str)
    return path.read_bytes().decode("utf-8", errors="replace")


def leaks(text: str) -> list[str]:
    return [name for name, m in MARKERS.items() if m in text]


@pytest.mark.slow
def test_markers_in_every_spelling_reach_no_output_and_hostile_servers_cannot_hold_the_run(tmp_path, monkeypatch, capsys):
    chat_answer = {"choices": [{"message": {"content": "Hello again, here is the fix that worked."}}]}
    with FaultServer("drip", interval=0.2) as drip, FaultServer("redirect") as moved, \
            FaultServer("json", body=chat_answer) as chat, FaultServer("flood", size=50_000_000) as flood:
        monkeypatch.setenv("HINDSIGHT_URL", drip.url.replace("http://", f"http://ops:{MARKERS['hindsight_password']}@") + "/")
        monkeypatch.setenv("HINDSIGHT_API_KEY", MARKERS["hindsight_key"] + "\r")
        monkeypatch.setenv("STATEWAVE_URL", f"{moved.url}/?token={MARKERS['statewave_token']}")
        monkeypatch.setenv("SUPPORTBENCH_REPLY_URL", chat.url.replace("http://", f"http://bot:{MARKERS['chat_password']}@") + "/v1/")
        monkeypatch.setenv("SUPPORTBENCH_REPLY_KEY", f"  {MARKERS['chat_key']}\n")
        monkeypatch.setattr(replay, "_ENGINE", [])  # the reply engine is made once per process: make it here
        redis_url = f"redis://:{MARKERS['redis_password']}@127.0.0.1:{closed_port()}/0"
        runs, out = tmp_path / "runs", tmp_path / "out"
        out.mkdir()
        code = cli(["run", *SCENARIOS, "--out", str(runs), "--run-id", "markers", "-q",
                    "--strategies", "session_aware,hindsight:timeout_s=1,statewave:timeout_s=1,"
                    f"hindsight[big]:url={flood.url.replace('http://', 'http://ops:' + MARKERS['spec_password'] + '@')},"
                    "max_response_bytes=1000000",
                    "--policies", f"session_state:locker=redis,redis_url={redis_url}",
                    "--name", "markers run", "--junit", str(out / "run.xml")])
        assert code == 0
        assert chat.hits > 0  # the chat endpoint answered the probes
        # the hostile servers held no call: the run hung up on every answer they started (neither ever
        # ends one by itself), and read no further than its cap of the flood
        eventually(lambda: drip.hung_up == drip.hits > 0 and flood.hung_up == flood.hits > 0,
                   "the dripping and flooding servers seeing every call hang up", poll=0.1)
        assert flood.sent < flood.hits * 20_000_000, f"{flood.sent:,} bytes read of {flood.hits} floods"
        # a clean run with the same Redis policy is what a baseline is approved from
        assert cli(["run", SCENARIOS[1], "--out", str(runs), "--run-id", "clean", "-q", "--strategies", "session_aware",
                    "--policies", f"session_state:locker=redis,redis_url={redis_url}"]) == 0
    run = runs / "markers"
    assert cli(["report", str(run), "--format", "md"]) == 0
    assert cli(["report", str(run), "--format", "json"]) == 0
    assert cli(["baseline", str(runs / "clean"), "--out", str(out / "baseline.json")]) == 0
    cli(["check", str(run), "--baseline", str(out / "baseline.json"), "--summary", str(out / "summary.md"),
         "--junit", str(out / "check.xml"), "--format", "md"])
    cli(["compare", str(run), str(run), "--out", str(out / "compare.md")])
    monkeypatch.setenv("SUPPORTBENCH_RUNS", str(runs))
    cli(["ls", "runs"])
    printed = capsys.readouterr()

    found = {str(p.relative_to(tmp_path)): leaks(text_of(p)) for p in tmp_path.rglob("*") if p.is_file()}
    assert {k: v for k, v in found.items() if v} == {}
    assert leaks(printed.out) == [] and leaks(printed.err) == []
    parts = [p for p in run.rglob("*.parquet")]
    assert len(parts) >= 6 and (run / "manifest.json").is_file() and (out / "summary.md").is_file()

    # the services' faults are error rows saying why, and the run did not wait on the dripping server
    import duckdb

    con = duckdb.connect()
    errors = dict(con.execute(
        f"SELECT strategy, first(error) FROM read_parquet('{run}/probes/*.parquet') WHERE error <> '' GROUP BY 1").fetchall())
    assert "whole-call deadline" in errors["hindsight[timeout_s=1]"]
    assert "redirects are not followed" in errors["statewave[timeout_s=1]"]
    assert "larger than the 1,000,000-byte cap" in errors["hindsight[big]"]
    replies = [json.loads(r[0]) for r in con.execute(f"SELECT reply FROM read_parquet('{run}/probes/*.parquet') "
                                                     "WHERE reply IS NOT NULL").fetchall()]
    notes = {r.get("engine_note", "") for r in replies}
    assert any(n.startswith("worded by chat:default at http://<secret>@127.0.0.1") for n in notes), notes

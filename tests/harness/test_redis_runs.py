"""Runs against a real Redis: each attempt's locker state is its own and gone when it ends."""

from __future__ import annotations

import pytest
import redis

from harness.analysis.results import Results
from harness.format.loader import load_suite
from harness.run.runner import execute
from stores.decisions.registry import parse_policies
from stores.registry import parse_specs

SCENARIOS = ["datasets/canonical/decision-human-twice-then-next-day.yaml", "datasets/canonical/decision-same-promo-terms.yaml"]


def plans(path) -> list[tuple]:
    with Results(path) as res:
        return res.rows("SELECT scenario, event_index, plan, rule FROM decisions ORDER BY scenario, event_index")


@pytest.mark.slow
def test_a_rerun_under_the_same_run_id_shares_no_locker_state_and_leaves_no_key(redis_server, tmp_path):
    policies = parse_policies(f"session_state:locker=redis,redis_url={redis_server.url}")
    scenarios = load_suite(SCENARIOS)
    client = redis.Redis.from_url(redis_server.url)
    first = execute(scenarios, parse_specs("empty"), tmp_path / "a", run_id="ci-run", policies=policies)
    assert client.dbsize() == 0  # cleared at the end (keys used to live a day under the run id's namespace)
    second = execute(scenarios, parse_specs("empty"), tmp_path / "b", run_id="ci-run", policies=policies)
    assert client.dbsize() == 0
    memory = execute(scenarios, parse_specs("empty"), tmp_path / "c", run_id="ci-run", policies=parse_policies("session_state"))
    assert plans(first.path) == plans(second.path) == plans(memory.path)


def closed_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_cli(out, url: str, run_id: str, *extra: str) -> int:
    from harness.cli import main as cli

    return cli(["run", *SCENARIOS, "-s", "empty", "-q", "--out", str(out), "--run-id", run_id,
                "--policies", f"session_state:locker=redis,redis_url={url}", *extra])


@pytest.mark.slow
@pytest.mark.parametrize("fault", ["wrong port", "refused auth", "stopped answering"])
def test_a_redis_fault_is_recorded_warned_and_told_apart_from_a_regression(fault, redis_server, tmp_path, capsys,
                                                                          monkeypatch):
    import json
    import os
    import signal

    from harness.cli import main as cli

    runs = tmp_path / "runs"
    assert run_cli(runs, redis_server.url, "clean") == 0
    assert cli(["baseline", str(runs / "clean"), "--out", str(tmp_path / "base.json")]) == 0
    capsys.readouterr()
    url = redis_server.url
    if fault == "wrong port":
        url = f"redis://127.0.0.1:{closed_port()}/0"
    elif fault == "refused auth":
        redis.Redis.from_url(url).config_set("requirepass", "s3cret-Pass-77")
    else:
        os.kill(redis_server.proc.pid, signal.SIGSTOP)
    tried = []  # the commands that reached a Redis client (the run is in this process: one worker)
    real = redis.Redis.execute_command
    monkeypatch.setattr(redis.Redis, "execute_command", lambda self, *a, **k: (tried.append(a[0]), real(self, *a, **k))[1])
    try:
        code = run_cli(runs, url, "down")
    finally:
        if fault == "stopped answering":
            os.kill(redis_server.proc.pid, signal.SIGCONT)
    err = capsys.readouterr().err
    assert code == 0 and "WARNING: policy session_state[" in err and "the session locker was unreachable" in err
    manifest = json.loads((runs / "down" / "manifest.json").read_text())
    (policy,) = manifest["policies"]
    assert policy["outage"]["events"] > 0 and policy["outage"]["scenarios"] == 2
    with Results(runs / "down") as res:
        (n,) = res.rows("SELECT count(*) FROM decisions WHERE outage IS NOT NULL")[0]
    assert n == policy["outage"]["events"]
    # Counted, not timed: a hung server used to cost its timeouts on every locker call of every turn;
    # the breaker lets one command a turn through to the network (plus each scenario's clearing of
    # its locker) and refuses the turn's other calls at once.
    assert 0 < len(tried) <= n + policy["outage"]["scenarios"], tried
    code = cli(["check", str(runs / "down"), "--baseline", str(tmp_path / "base.json")])
    err = capsys.readouterr().err
    assert code == 2 and "OUTAGE: policy session_state[" in err and "UNUSABLE (exit 2)" in err


@pytest.mark.slow
def test_a_redis_password_in_the_url_reaches_no_output(redis_server, tmp_path, capsys):
    from harness.cli import main as cli

    password = "RedisPw-Only-In-Url-41"
    redis.Redis.from_url(redis_server.url).config_set("requirepass", password)
    url = redis_server.url.replace("redis://", f"redis://:{password}@")
    runs = tmp_path / "runs"
    assert run_cli(runs, url, "with-password", "--junit", str(tmp_path / "run.xml")) == 0
    assert cli(["baseline", str(runs / "with-password"), "--out", str(tmp_path / "base.json")]) == 0
    assert cli(["check", str(runs / "with-password"), "--baseline", str(tmp_path / "base.json"),
                "--junit", str(tmp_path / "check.xml"), "--summary", str(tmp_path / "summary.md")]) == 0
    printed = capsys.readouterr()
    import pyarrow.parquet as pq

    for p in tmp_path.rglob("*"):
        if p.is_file():
            text = str(pq.read_table(p).to_pylist()) if p.suffix == ".parquet" else p.read_text(errors="replace")
            assert password not in text, p
    assert password not in printed.out + printed.err
    with Results(runs / "with-password") as res:
        assert res.rows("SELECT count(*) FROM decisions WHERE outage IS NOT NULL")[0][0] == 0  # it did connect


def test_a_scripted_locker_fault_is_not_an_outage(tmp_path, capsys):
    import json

    from harness.cli import main as cli

    runs = tmp_path / "runs"
    assert cli(["run", "datasets/canonical/decision-locker-down-mid-chat.yaml", "-s", "empty", "-q", "--out", str(runs),
                "--run-id", "scripted"]) == 0
    assert "WARNING: policy" not in capsys.readouterr().err
    assert not any("outage" in p for p in json.loads((runs / "scripted" / "manifest.json").read_text())["policies"])
    with Results(runs / "scripted") as res:
        assert res.rows("SELECT count(*) FROM decisions WHERE outage IS NOT NULL")[0][0] == 0
        assert res.rows("SELECT count(*) FROM decisions WHERE locker_down AND kind = 'turn'")[0][0] > 0

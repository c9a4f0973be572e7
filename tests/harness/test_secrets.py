"""A secret param reaches its strategy and no file a run or a baseline writes."""

from __future__ import annotations

import json

import pytest
from helpers import outage_story

from harness.analysis.results import Results
from harness.ci.baseline import build_baseline, load_baseline
from harness.cli import main as cli
from harness.run.runner import execute
from stores.registry import parse_spec

KEY_FROM_ENV = "sk-live-ENV-7f3a9c"
KEY_GIVEN = "sk-live-SPEC-41d2e8"


@pytest.fixture
def needs_key(monkeypatch, tmp_path, plugins):
    plugins.strategy("needs_key", "fake_strategies:NeedsKey")
    monkeypatch.setenv("SUPPORTBENCH_FAKE_KEY", KEY_FROM_ENV)
    monkeypatch.setenv("SUPPORTBENCH_CACHE", str(tmp_path / "cache"))


def files_holding(folder, *needles):
    """Every file under `folder` whose bytes contain one of `needles`."""
    return [p for p in folder.rglob("*") if p.is_file() and any(n.encode() in p.read_bytes() for n in needles)]


def test_a_secret_reaches_the_strategy_and_no_file_of_the_run_or_its_baseline(needs_key, tmp_path):
    specs = [parse_spec("needs_key"), parse_spec(f"needs_key[given]:api_key={KEY_GIVEN}")]
    command = f"supportbench run x --strategies needs_key,needs_key[given]:api_key={KEY_GIVEN}"
    r = execute([outage_story()], specs, tmp_path / "runs", command=command)
    with Results(r.path) as res:
        statuses = set(res.df("SELECT status FROM scores")["status"])
        base = build_baseline(res)
    assert statuses <= {"ok", "fail"}  # the strategy refuses to run without its key: it got it both ways
    out = base.write(tmp_path / "baseline.json")
    assert cli(["report", str(r.path), "--format", "md"]) == 0  # leaves report.md in the run folder
    assert files_holding(r.path, KEY_FROM_ENV, KEY_GIVEN) == []
    assert files_holding(out.parent, KEY_FROM_ENV, KEY_GIVEN) == []
    manifest = json.loads((r.path / "manifest.json").read_text())
    entry = {s["label"]: s for s in manifest["strategies"]}
    assert entry["needs_key"]["params"]["api_key"] == "<secret>" and entry["needs_key"]["secrets"] == ["api_key"]
    assert entry["needs_key[given]"]["overrides"] == {"api_key": "<secret>"}
    assert "api_key=<secret>" in manifest["command"]
    assert "api_key" not in load_baseline(out).strategies["needs_key"].params


def test_an_error_message_that_quotes_the_secret_is_written_redacted(needs_key, tmp_path):
    r = execute([outage_story()], [parse_spec("needs_key:echo_key=true")], tmp_path / "runs", command="test")
    with Results(r.path) as res:
        errors = res.df("SELECT error FROM probes")["error"]
        why = res.df("SELECT explanation FROM scores WHERE status = 'error'")["explanation"]
    assert len(why) and all("Bearer <secret>" in e for e in errors) and all("Bearer <secret>" in w for w in why)
    assert files_holding(r.path, KEY_FROM_ENV) == []


def test_the_check_accepts_a_baseline_approved_with_another_key(needs_key, tmp_path, monkeypatch):
    from harness.ci.check import check_run

    first = execute([outage_story()], [parse_spec("needs_key")], tmp_path / "a", command="test")
    with Results(first.path) as res:
        base = build_baseline(res)
    monkeypatch.setenv("SUPPORTBENCH_FAKE_KEY", "sk-rotated-0000")
    second = execute([outage_story()], [parse_spec("needs_key")], tmp_path / "b", command="test")
    with Results(second.path) as res:
        assert check_run(res, base).exit_code == 0


def test_ls_strategies_shows_a_secret_as_secret_with_its_variable(needs_key, capsys):
    assert cli(["ls", "strategies"]) == 0
    out = capsys.readouterr().out
    assert "api_key=<secret> (from" in out and "$SUPPORTBENCH_FAKE_KEY" in out.replace("\n", "").replace(" ", "")
    assert KEY_FROM_ENV not in out


def test_a_close_warning_that_quotes_the_secret_is_logged_redacted(needs_key, tmp_path, caplog):
    # the warning is logged (on stderr outside pytest, here captured): the logger's filter scrubs it
    # wherever it is emitted, a worker process included
    code = cli(["run", "datasets/canonical/carol-timeout-again.yaml", "-s", "needs_key:echo_key=true", "-p", "none", "-q",
                "--out", str(tmp_path / "runs")])
    assert code == 0
    assert "close() raised ConnectionError: could not close the session opened with key <secret>" in caplog.text
    assert KEY_FROM_ENV not in caplog.text


SCRUB_CASES = [
    "plain text, nothing to hide", "recall@10 = 0.5; missing “the fix”", "see https://bob:hunter22@example.com/x",
    "GET /v1?page=2&api_key=abc123XYZ", "x?\u212aey=kelvin-sign-key", "x;\u017fig=long-s-sig", "ftp://user@host",
    "a=b&c=d", "token=notaparam", "https://h/?Token=Mixed", "the-registered-secret-value inside", "", "日本 ?KEY=v",
]


@pytest.mark.parametrize("value", SCRUB_CASES)
def test_the_scrubbers_byte_checks_skip_only_what_the_kernels_would_leave(value):
    """A column whose bytes cannot hold a match skips the compute kernels (harness.run.runstore):
    whatever it holds, the result is the kernels' own."""
    import pyarrow as pa

    from harness.run import runstore
    from stores.redaction import register

    register("the-registered-secret-value")
    literals = sorted(runstore.registered(), key=lambda v: (-len(v), v))
    pattern = "|".join(runstore.re.escape(v) for v in literals)
    needles = tuple(v.encode() for v in literals)
    for arr in (pa.array([value, "other"]), pa.array([value, "other"]).slice(0, 1), pa.array([[value], None])):
        checked = runstore._scrub_array(arr, pattern, needles)
        assert checked.equals(runstore._scrub_array(arr, pattern, None))

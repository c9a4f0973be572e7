"""`supportbench conformance URL`: the reference server passes; each broken one fails the checks it breaks."""

from __future__ import annotations

import socket

import pytest
from http_reference import FAULTS, ReferenceService

from harness.ci.conformance import Conformance
from harness.cli import main

BROKEN = {
    "shared_namespaces": {"isolation_namespaces"},
    "applies_replays": {"replay", "sequence_gap"},
    "gaps_accepted": {"sequence_gap"},
    "reset_keeps": {"reset"},
    "plain_errors": {"sequence_gap", "batch_limit", "errors", "close"},
    "score_off": {"context", "ordering", "isolation_customers", "isolation_namespaces", "replay", "reset"},
    "no_batch_limit": {"batch_limit"},
    "wrong_version": {"info"},
    "wall_clock": {"health"},
}
"""Each fault of the reference server and exactly the checks it must fail."""


@pytest.fixture
def serve():
    started: list[ReferenceService] = []

    def start(spec: str = "session_aware", **kw) -> str:
        service = ReferenceService(spec, **kw)
        started.append(service)
        return service.serve()

    yield start
    for s in started:
        s.stop()


def test_the_reference_server_passes_every_check(serve, capsys):
    url = serve()
    assert main(["conformance", url]) == 0
    out = capsys.readouterr().out
    assert "PASS (exit 0): all 15 checks passed" in out
    for name in ("isolation_namespaces", "replay", "sequence_gap", "reset", "batch_limit", "errors", "health", "handoff"):
        assert f"PASS  {name}:" in out


def test_a_service_without_health_and_handoff_is_not_asked_for_them(serve):
    results = Conformance(serve("history_stuffing")).run()
    assert all(r.passed for r in results) and {r.name for r in results}.isdisjoint({"health", "handoff"})


def test_every_fault_is_covered():
    assert set(BROKEN) == set(FAULTS)


@pytest.mark.parametrize("fault", sorted(BROKEN))
def test_a_broken_server_fails_the_checks_it_breaks_by_name(serve, fault):
    results = Conformance(serve(faults=(fault,))).run()
    assert {r.name for r in results if not r.passed} == BROKEN[fault]


def test_the_command_names_what_failed_and_why_with_exit_1(serve, capsys):
    url = serve(faults=("shared_namespaces",))
    assert main(["conformance", url]) == 1
    out = capsys.readouterr().out
    assert "FAIL  isolation_namespaces: namespace sbconf-scenario-b-" in out and "shows a turn observed in namespace" in out
    assert "FAIL (exit 1): 1 of 15 checks failed: isolation_namespaces" in out


def test_a_key_comes_from_the_environment(serve, capsys, monkeypatch):
    url = serve("history_stuffing", api_key="k-9")
    assert main(["conformance", url]) == 2  # no key: GET /v1/info is refused
    assert "401" in capsys.readouterr().err
    monkeypatch.setenv("TEAM_KEY", "k-9")
    assert main(["conformance", url, "--key-env", "TEAM_KEY"]) == 0


def test_nothing_to_check_is_exit_2(capsys):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    assert main(["conformance", f"http://127.0.0.1:{port}", "--timeout", "2"]) == 2
    err = capsys.readouterr().err
    assert "GET /v1/info: no usable answer" in err and "UNUSABLE (exit 2)" in err
    assert main(["conformance", "ftp://example"]) == 2

"""A remote strategy whose service does not answer: error rows, the run goes on, `check` fails."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from harness.cli import main

SCENARIO = "datasets/canonical/outage-vs-closed-fix.yaml"


def _scores(run: Path):
    return pq.read_table(run / "scores.parquet").to_pylist() if (run / "scores.parquet").exists() else [
        r for part in sorted(run.glob("scores*/*.parquet")) for r in pq.read_table(part).to_pylist()]


@pytest.mark.parametrize("name,variable", [("statewave", "STATEWAVE_URL"), ("hindsight", "HINDSIGHT_URL")])
def test_a_refused_connection_gives_error_rows_and_a_failing_check(name, variable, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(variable, "http://127.0.0.1:9")  # the discard port: nothing listens, the connection is refused
    out = tmp_path / "runs"
    assert main(["run", SCENARIO, "-s", f"{name},history_stuffing", "--out", str(out), "-q"]) == 0
    (run,) = [p for p in out.iterdir() if p.is_dir() and not p.name.startswith(".")]
    rows = _scores(run)
    mine = [r for r in rows if r["strategy"] == name]
    others = [r for r in rows if r["strategy"] == "history_stuffing"]
    from harness.criteria import registry
    from stores.registry import strategy_class

    caps = strategy_class(name).capabilities
    lacks = {k for k, c in registry().items() if c.requires and c.requires not in caps}
    # every case is an error, except those of a criterion needing a capability it does not claim
    assert mine and all(r["status"] == "error" or (r["status"] == "unsupported" and r["criterion"] in lacks) for r in mine)
    assert any(r["status"] == "error" for r in mine)
    # the address is a secret param: the run writes it as <secret>, and names the variable to check
    assert any("no answer from <secret>" in (r["explanation"] or "") and variable in r["explanation"] for r in mine)
    assert not any("127.0.0.1:9" in (r["explanation"] or "") for r in rows)
    assert others and not any(r["status"] == "error" for r in others)  # the run went on
    text = (run / "manifest.json").read_text()
    assert "127.0.0.1:9" not in text  # the address is a secret param: never in the manifest
    manifest = json.loads(text)
    entry = {s["label"]: s for s in manifest["strategies"]}
    assert entry[name]["params"]["url"] == "<secret>" and "url" in entry[name]["secrets"]
    # the cost of each strategy: its wall time and the round trips it tried (one health check per instance)
    assert entry[name]["cost"]["round_trips"] == 2 and entry[name]["cost"]["scenarios"] == 1
    assert entry["history_stuffing"]["cost"]["round_trips"] == 0 and entry["history_stuffing"]["cost"]["seconds"] > 0
    # the approved baseline comes from a clean run (a baseline refuses a run with errors)
    good = tmp_path / "good"
    assert main(["run", SCENARIO, "-s", "history_stuffing", "--out", str(good), "-q"]) == 0
    (good_run,) = [p for p in good.iterdir() if p.is_dir() and not p.name.startswith(".")]
    baseline = tmp_path / "baseline.json"
    assert main(["baseline", str(good_run), "--out", str(baseline)]) == 0
    capsys.readouterr()
    assert main(["check", str(run), "--baseline", str(baseline)]) == 1
    said = capsys.readouterr().out
    assert "regression" in said.lower() and name in said

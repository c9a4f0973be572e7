"""docs/extending.md's examples, run as written: each package installed with pip, each used by the CLI.

A block whose info string is `<language> <path>` is a file of an example; the packages are
installed with `pip install --no-deps --no-build-isolation --no-index --target DIR` (offline, as a
team would install theirs), and `DIR` goes on `PYTHONPATH`, so the command line and every worker
process it starts find them through their entry points, exactly as an installed package.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness.analysis.results import Results

pytestmark = pytest.mark.slow  # pip installs three packages; the CLI starts processes and workers

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "extending.md"
BLOCK = re.compile(r"^```(\w+) ([\w./-]+)\n(.*?)^```$", re.S | re.M)
SCENARIOS = ["datasets/canonical/outage-vs-closed-fix.yaml", "datasets/canonical/forget-request.yaml"]


def example_files() -> dict[str, str]:
    """Path -> text of every example file in the doc."""
    return {path: text for _, path, text in BLOCK.findall(DOC.read_text())}


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """The doc's Python packages, pip-installed into one folder; (folder, environment for the CLI)."""
    src = tmp_path_factory.mktemp("examples")
    for path, text in example_files().items():
        (src / path).parent.mkdir(parents=True, exist_ok=True)
        (src / path).write_text(text)
    site = tmp_path_factory.mktemp("site")
    packages = sorted(str(p.parent) for p in src.glob("*/pyproject.toml"))
    assert len(packages) == 3, packages
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation", "--no-index",
                    "--target", str(site), *packages], check=True, capture_output=True, timeout=300)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)]), "OMP_NUM_THREADS": "1", "COLUMNS": "200"}
    return src, site, env


def cli(env, *args, timeout=600):
    return subprocess.run([sys.executable, "-m", "harness.cli", *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=timeout)


def test_the_strategy_of_another_package_is_about_thirty_lines():
    code = [line for line in example_files()["acme-memory/acme_memory/strategy.py"].splitlines() if line.strip()]
    assert len(code) <= 35


def test_the_installed_strategy_policy_and_criterion_are_listed_with_their_package(installed):
    _, _, env = installed
    out = cli(env, "ls", "strategies")
    assert out.returncode == 0, out.stderr
    assert "acme: plugin acme-memory 0.1.0 (acme_memory.strategy:Acme)" in out.stdout and "problem:" not in out.stdout
    out = cli(env, "ls", "policies")
    assert "acme_careful: plugin acme-policy 0.1.0 (acme_policy:Careful)" in out.stdout
    out = cli(env, "ls", "criteria")
    assert "acme_lean_context: plugin acme-criteria 0.1.0 (acme_criteria)" in out.stdout


def test_the_installed_strategy_policy_and_criterion_run_in_parallel_workers(installed, tmp_path):
    _, _, env = installed
    out = cli(env, "run", *SCENARIOS, "datasets/canonical/decision-yes-three-meanings.yaml",
              "--strategies", "acme,acme:recency=0.1,history_stuffing", "--policies", "per_message,acme_careful",
              "--workers", "2", "--out", str(tmp_path), "--run-id", "ext", "--quiet")
    assert out.returncode == 0, out.stderr[-3000:]
    manifest = json.loads((tmp_path / "ext" / "manifest.json").read_text())
    sources = {s["label"]: s["source"] for s in manifest["strategies"] + manifest["policies"]}
    assert sources["acme"] == {"origin": "plugin", "target": "acme_memory.strategy:Acme", "package": "acme-memory", "version": "0.1.0"}
    assert sources["acme_careful"]["package"] == "acme-policy" and manifest["execution"]["workers"] == 2
    with Results(tmp_path / "ext") as res:
        assert res.rows("SELECT count(*) FROM scores WHERE status = 'error'")[0][0] == 0
        recall = dict(res.rows("SELECT strategy, avg(value) FROM scores WHERE criterion = 'recall' GROUP BY 1"))
        assert set(recall) == {"acme", "acme[recency=0.1]", "history_stuffing"}
        lean = res.rows("SELECT count(*), min(explanation) FROM scores WHERE criterion = 'acme_lean_context'")[0]
        assert lean[0] > 0 and "tokens" in lean[1] and "the bar is half" in lean[1]
        transfers = dict(res.rows("SELECT policy, count(*) FILTER (WHERE plan = 'transfer') FROM decisions GROUP BY 1"))
    assert transfers["acme_careful"] < transfers["per_message"]  # a bare "yes" no longer transfers


def _node() -> str:
    node = shutil.which("node") or shutil.which("nodejs")
    if node is None:
        if os.environ.get("CI"):
            pytest.fail("node is not installed; CI requires the HTTP-route example to run (.ci/run installs nodejs)")
        pytest.skip("node is not installed: the HTTP-route example of docs/extending.md is JavaScript")
    return node


def test_the_javascript_service_passes_conformance_and_runs_as_the_http_strategy(installed, tmp_path):
    src, _, env = installed
    server = subprocess.Popen([_node(), str(src / "acme-service" / "server.js"), "0"], stdout=subprocess.PIPE, text=True)
    try:
        url = server.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:"), url
        out = cli(env, "conformance", url)
        assert out.returncode == 0, out.stdout + out.stderr
        assert "PASS (exit 0): all 13 checks passed" in out.stdout  # what the doc shows
        out = cli({**env, "SUPPORTBENCH_HTTP_URL": url}, "run", *SCENARIOS, "--strategies", "http,history_stuffing",
                  "--policies", "none", "--workers", "2", "--out", str(tmp_path), "--run-id", "js", "--quiet")
        assert out.returncode == 0, out.stderr[-3000:]
        with Results(tmp_path / "js") as res:
            assert res.rows("SELECT count(*) FROM scores WHERE status = 'error'")[0][0] == 0
            assert res.rows("SELECT count(*) FROM candidates WHERE strategy = 'http'")[0][0] > 0
        assert url.rsplit(":", 1)[1] not in (tmp_path / "js" / "manifest.json").read_text()
    finally:
        server.terminate()
        server.wait(10)

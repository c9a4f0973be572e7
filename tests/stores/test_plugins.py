"""One registry mechanism (`stores.plugins`): built-in table, installed entry points, explicit targets."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from helpers import outage_story

from harness.analysis.results import Results
from harness.cli import main as cli
from harness.run.runner import execute
from stores.decisions.registry import PolicySpecError, load_policy_config, parse_policies
from stores.registry import STRATEGIES, SpecError, load_config, parse_spec, parse_specs

ROOT = Path(__file__).resolve().parents[2]

TOP_TURN = textwrap.dedent('''
    """A strategy of another package: the customer's newest turns first."""
    from dataclasses import dataclass
    from typing import ClassVar

    import numpy as np

    from stores.memory import MemoryStore
    from stores.packing import pack


    @dataclass(frozen=True)
    class NewestParams:
        """Parameters of `newest`."""

        weight: float = 1.0
        """Points per position from the oldest item."""


    class Newest:
        name: ClassVar[str] = "newest"
        Params = NewestParams
        capabilities: ClassVar[frozenset[str]] = frozenset()

        def __init__(self, params=None):
            self.params = params or NewestParams()
            self.memory = MemoryStore()

        def observe(self, event):
            self.memory.observe(event)

        def reset(self):
            self.memory.reset()

        def context(self, request):
            history = self.memory.history(request.subject)
            return pack(history, request, {"newness": self.params.weight * np.arange(len(history), dtype=float)})
''')

CRITERION = textwrap.dedent('''
    from harness.criteria import criterion, ok_or_fail


    @criterion("acme_nonempty", title="a non-empty context", group="extra")
    def acme_nonempty(outcome):
        """The context holds at least one item."""
        n = len(outcome.bundle.included)
        return ok_or_fail("acme_nonempty", 1.0 if n else 0.0, n > 0, f"{n} item(s) included")
''')


def install_newest(plugins, package="acme-memory", version="1.2.0"):
    plugins.install({"strategy": {"newest": "acme_newest:Newest"}}, package=package, version=version,
                    modules={"acme_newest.py": TOP_TURN})


def test_an_installed_strategy_resolves_with_its_package_and_version(plugins):
    install_newest(plugins)
    entry = STRATEGIES.entries()["newest"]
    assert (entry.origin, entry.target, entry.package, entry.version) == ("plugin", "acme_newest:Newest", "acme-memory", "1.2.0")
    assert entry.where() == "plugin acme-memory 1.2.0"
    spec = parse_spec("newest:weight=2")
    assert spec.label == "newest[weight=2]" and spec.build().params.weight == 2.0


@pytest.mark.slow  # worker processes
def test_an_installed_strategy_runs_in_worker_processes_with_the_same_results(plugins, tmp_path):
    """The fork server keeps the path it started with; the run's path reaches its workers."""
    install_newest(plugins)
    scenarios = [outage_story(f"s{i}") for i in range(4)]
    specs = parse_specs("newest,history_stuffing")
    one = execute(scenarios, specs, tmp_path / "one", run_id="one", workers=1)
    two = execute(scenarios, specs, tmp_path / "two", run_id="two", workers=2, shard_size=1)
    query = "SELECT strategy, scenario, probe_id, criterion, status, value FROM scores ORDER BY ALL"
    with Results(one.path) as a, Results(two.path) as b:
        rows = a.rows(query)
        assert rows == b.rows(query)
        assert not [r for r in rows if r[0] == "newest" and r[4] == "error"]
        assert {r[0] for r in rows} == {"newest", "history_stuffing"}
    manifest = json.loads((two.path / "manifest.json").read_text())
    source = {s["label"]: s["source"] for s in manifest["strategies"]}
    assert source["newest"] == {"origin": "plugin", "target": "acme_newest:Newest", "package": "acme-memory", "version": "1.2.0"}
    assert source["history_stuffing"]["origin"] == "built-in"
    assert source["history_stuffing"]["target"] == "stores.retrieval.history_stuffing:HistoryStuffing"


def test_ls_says_where_each_strategy_came_from_and_a_broken_plugin_is_one_line(plugins, capsys):
    install_newest(plugins)
    plugins.install({"strategy": {"crashing": "acme_crash:Crash"}}, package="acme-broken", version="0.3.0",
                    modules={"acme_crash.py": "raise ImportError('needs acme-sdk, which is not installed')\n"})
    plugins.install({"strategy": {"tfidf": "acme_newest:Newest", "odd": "not a target"}}, package="acme-clash")
    assert cli(["ls", "strategies"]) == 0
    out = capsys.readouterr().out
    flat = " ".join(out.split())
    assert "newest: plugin acme-memory 1.2.0 (acme_newest:Newest)" in flat
    assert "history_stuffing" in out and "tfidf" in out  # the others are still listed
    problems = [line for line in out.splitlines() if line.startswith("problem:")]
    assert len(problems) == 3, out
    assert any("'crashing'" in p and "acme-broken 0.3.0" in p and "needs acme-sdk" in p for p in problems)
    assert any("'tfidf'" in p and "acme-clash" in p and "built in" in p for p in problems)
    assert any("'odd'" in p and "not module:Attr" in p for p in problems)
    with pytest.raises(SpecError, match="cannot load strategy 'crashing' .*acme-broken 0.3.0.*needs acme-sdk"):
        parse_spec("crashing")
    assert parse_spec("tfidf").entry().origin == "built-in"


def test_two_packages_claiming_one_name_are_both_refused(plugins):
    install_newest(plugins, package="acme-one")
    install_newest(plugins, package="acme-two")
    assert "newest" not in STRATEGIES.entries()
    assert any("claimed by packages" in p and "acme-one" in p and "acme-two" in p for p in STRATEGIES.problems())
    with pytest.raises(SpecError, match="claimed by packages"):
        parse_spec("newest")


def test_an_explicit_target_names_a_class_in_a_spec_and_in_a_config(plugins, tmp_path):
    plugins.install({}, modules={"acme_direct.py": TOP_TURN})  # importable, not registered
    spec = parse_spec("acme_direct.Newest:weight=3")
    assert spec.label == "acme_direct.Newest[weight=3]" and spec.entry().origin == "target"
    assert spec.entry().target == "acme_direct:Newest"
    config = tmp_path / "s.toml"
    config.write_text('[[strategy]]\nname = "mine"\nclass = "acme_direct:Newest"\nparams = {weight = 0.5}\n')
    (mine,) = load_config(config)
    assert (mine.label, mine.target, mine.build().params.weight) == ("mine[weight=0.5]", "acme_direct:Newest", 0.5)
    assert mine.params_hash() != parse_spec("acme_direct.Newest:weight=0.5").params_hash()  # the class is part of it
    config.write_text('[[strategy]]\nname = "mine"\nclass = "acme_direct:Nothing"\n')
    with pytest.raises(SpecError, match=r"strategy\[0\]: cannot load strategy 'acme_direct:Nothing'.*AttributeError"):
        load_config(config)
    config.write_text('[[strategy]]\nname = "mine"\nclass = 3\n')
    with pytest.raises(SpecError, match="class 3: expected"):
        load_config(config)


def test_an_installed_policy_and_a_policy_target(plugins, tmp_path):
    plugins.install({"policy": {"acme_policy": "stores.decisions.per_message:PerMessage"}}, package="acme-policy", version="2.0")
    (spec,) = parse_policies("acme_policy")
    assert spec.entry().where() == "plugin acme-policy 2.0"
    (target,) = parse_policies("stores.decisions.per_message.PerMessage")
    assert target.entry().origin == "target"
    config = tmp_path / "p.toml"
    config.write_text('[[policy]]\nname = "mine"\nclass = "stores.decisions.session_state:SessionState"\n')
    (mine,) = load_policy_config(config)
    assert mine.label == "mine" and type(mine.build(namespace="x")).__name__ == "SessionState"
    with pytest.raises(PolicySpecError, match="unknown policy 'acme_polcy'; did you mean 'acme_policy'"):
        parse_policies("acme_polcy")


@pytest.mark.slow  # worker processes
def test_an_installed_criterion_scores_in_worker_processes_and_a_broken_one_is_one_line(plugins, tmp_path, capsys):
    plugins.install({"criterion": {"acme": "acme_criteria"}}, package="acme-criteria", version="0.9",
                    modules={"acme_criteria.py": CRITERION})
    plugins.install({"criterion": {"acme_broken": "acme_broken_criteria"}}, package="acme-broken-criteria",
                    modules={"acme_broken_criteria.py": "raise RuntimeError('half written')\n"})
    from harness.criteria import problems, registry, source

    assert "acme_nonempty" in registry() and source("acme_nonempty").where() == "plugin acme-criteria 0.9"
    assert any("acme-broken-criteria" in p and "half written" in p for p in problems())
    assert "recall" in registry()  # the built-in ones are all still there
    run = execute([outage_story(f"s{i}") for i in range(2)], parse_specs("history_stuffing"), tmp_path, run_id="c",
                  workers=2, shard_size=1)
    with Results(run.path) as res:
        assert res.rows("SELECT count(*) FROM scores WHERE criterion = 'acme_nonempty' AND status = 'ok'")[0][0] >= 2
    described = {c["key"]: c for c in json.loads((run.path / "manifest.json").read_text())["criteria"]}
    assert described["acme_nonempty"]["source"]["package"] == "acme-criteria"
    capsys.readouterr()
    assert cli(["ls", "criteria"]) == 0
    out = capsys.readouterr().out
    assert "acme-criteria" in out.replace("\n", "") and any(line.startswith("problem:") and "acme-broken-criteria" in line
                                                             for line in out.splitlines())
    assert cli(["run", "datasets/canonical/forget-request.yaml", "--strategies", "empty", "--policies", "none",
                "--out", str(tmp_path / "cli"), "--quiet"]) == 0
    err = capsys.readouterr().err
    assert "warning: cannot load criterion 'acme_broken' (plugin acme-broken-criteria" in err and "left out of this run" in err


@pytest.mark.slow  # a command-line run with two worker processes
def test_the_command_line_and_its_workers_find_a_plugin_through_pythonpath(plugins, tmp_path):
    install_newest(plugins)
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    proc = subprocess.run([sys.executable, "-m", "harness.cli", "run", "datasets/canonical/outage-vs-closed-fix.yaml",
                           "datasets/canonical/forget-request.yaml", "--strategies", "newest", "--policies", "none",
                           "--workers", "2", "--out", str(tmp_path), "--run-id", "cli", "--quiet"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    manifest = json.loads((tmp_path / "cli" / "manifest.json").read_text())
    assert manifest["strategies"][0]["source"]["package"] == "acme-memory"
    with Results(tmp_path / "cli") as res:
        assert res.rows("SELECT count(*) FROM scores WHERE status = 'error'")[0][0] == 0


def test_no_test_patches_a_registry_table():
    """Tests register strategies and policies as installed packages (the `plugins` fixture) or name
    a class target; a patched table would be invisible to worker processes."""
    import re

    patched = re.compile(r"(setitem\((registry\.)?(REGISTRY|POLICIES)\b|\b(REGISTRY|POLICIES)\[[^\]]+\]\s*=)")
    offenders = [f"{p.relative_to(ROOT)}:{i}" for p in (ROOT / "tests").rglob("*.py")
                 for i, line in enumerate(p.read_text().splitlines(), 1) if patched.search(line) and p.name != "test_plugins.py"]
    assert not offenders, offenders


def test_an_installed_criterion_leaves_the_registry_with_its_package(plugins):
    """Its module stays imported, but a process whose path no longer holds the package (as its
    workers, which take the run's path) must not score it."""
    import sys

    from harness.criteria import registry

    root = plugins.install({"criterion": {"acme_gone": "acme_gone_criteria"}}, package="acme-gone",
                           modules={"acme_gone_criteria.py": CRITERION.replace("acme_nonempty", "acme_gone_nonempty")})
    assert "acme_gone_nonempty" in registry()
    sys.path.remove(str(root))
    try:
        assert "acme_gone_nonempty" not in registry() and "recall" in registry()
    finally:
        sys.path.insert(0, str(root))
    assert "acme_gone_nonempty" in registry()

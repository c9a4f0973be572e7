import json

import pytest

from harness.cli import main


@pytest.fixture
def damaged_run(tmp_path):
    run = tmp_path / "r1"
    run.mkdir()
    (run / "manifest.json").write_text("{not json")
    return run


@pytest.mark.parametrize("command", ["report", "compare", "rescore"])
def test_a_damaged_manifest_is_exit_2_naming_the_file(command, damaged_run, capsys):
    args = [command, str(damaged_run)] + ([str(damaged_run)] if command == "compare" else [])
    assert main(args) == 2
    assert "manifest.json" in capsys.readouterr().err


def test_validate_is_exit_1_with_every_problem_listed(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text("id: x\nversion: 1\ntitle: t\nstart: 2026-01-01T00:00:00Z\nsubjects: {c: {}}\nevents:\n"
                   "  - turn: hi\n    subject: c\n    session: s\n    colour: red\n"
                   "  - turn: later\n    at: 2025-01-01T00:00:00Z\n")
    assert main(["validate", str(bad)]) == 1
    out = capsys.readouterr().out
    assert "bad.yaml:10" in out and "colour" in out
    assert "backwards" in out or "earlier" in out


def test_validate_passes_the_canonical_suite():
    assert main(["validate", "datasets/canonical"]) == 0


def test_an_unknown_strategy_is_exit_2_with_a_suggestion(capsys):
    with pytest.raises(SystemExit) as e:
        main(["run", "datasets/canonical/health-bands.yaml", "--strategies", "sesion_aware"])
    assert e.value.code == 2
    assert "did you mean 'session_aware'" in capsys.readouterr().err


def test_run_name_is_kept_in_the_manifest_and_listed(tmp_path, capsys, monkeypatch):
    out = tmp_path / "runs"
    assert main(["run", "datasets/canonical/health-bands.yaml", "--strategies", "empty", "--out", str(out),
                 "--run-id", "named", "--name", "threshold 0.15", "--quiet"]) == 0
    assert json.loads((out / "named" / "manifest.json").read_text())["name"] == "threshold 0.15"
    capsys.readouterr()
    monkeypatch.setenv("SUPPORTBENCH_RUNS", str(out))
    from harness.cli import common

    monkeypatch.setattr(common.out, "width", 200)  # the console is made at import: a worker without a terminal has 80
    assert main(["ls", "runs"]) == 0
    assert "threshold 0.15" in capsys.readouterr().out


def test_strategies_default_names_the_default_set_and_a_config_adds_to_it(tmp_path):
    from types import SimpleNamespace

    from harness.cli.run import specs_from
    from stores.registry import DEFAULT_STRATEGIES

    config = tmp_path / "more.toml"
    config.write_text('[[strategy]]\nname = "tfidf"\nexpiry = true\n')
    both = specs_from(SimpleNamespace(strategies="default", config=str(config)))
    assert [s.label for s in both] == [*DEFAULT_STRATEGIES, "tfidf[expiry]"]
    alone = specs_from(SimpleNamespace(strategies=None, config=str(config)))
    assert [s.label for s in alone] == ["tfidf[expiry]"]
    # an override whose value is the word default is not the set
    assert [s.label for s in specs_from(SimpleNamespace(strategies="session_aware:expiry=on", config=None))] == ["session_aware[expiry]"]


def test_default_given_twice_with_a_member_is_exit_2(capsys):
    from types import SimpleNamespace

    from harness.cli.run import specs_from

    with pytest.raises(SystemExit) as e:
        specs_from(SimpleNamespace(strategies="tfidf,default", config=None))
    assert e.value.code == 2 and "tfidf given twice" in capsys.readouterr().err

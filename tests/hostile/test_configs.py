"""Strategy configs: ranges declared on the params dataclasses, one-line errors for every TOML
shape, and no network for a model that is not here."""

from __future__ import annotations


import pytest
from hostile_cli import CORPUS, sb

from harness.cli import main
from stores.registry import SpecError, load_config, parse_spec

SCENARIO = "datasets/canonical/health-bands.yaml"

OUT_OF_RANGE = [
    ("tfidf:top_k=-5", "parameter 'top_k'=-5: Input should be greater than or equal to 1"),
    ("tfidf:top_k=0", "parameter 'top_k'=0: Input should be greater than or equal to 1"),
    ("tfidf:ngram_min=3,ngram_max=1", "parameter 'ngram_max'=1: must be at least ngram_min (3)"),
    ("tfidf:ngram_min=3", "parameter 'ngram_max'=1: must be at least ngram_min (3)"),
    ("tfidf:min_score=1.5", "parameter 'min_score'=1.5: Input should be less than or equal to 1"),
    ("tfidf:render=sideways", "parameter 'render'='sideways': Input should be 'rank' or 'chronological'"),
    ("session_aware:handoff_budget=-1", "parameter 'handoff_budget'=-1: Input should be greater than or equal to 1"),
    ("session_aware:health.sla_resolution_hours=-48", "'session_aware.health' parameter 'sla_resolution_hours'=-48: "
                                                      "Input should be greater than 0"),
    ("session_aware:health.watch_min=80", "parameter 'watch_min'=80.0: must be at most healthy_min (70.0)"),
    ("session_aware:health.high_rate_min_ended=0", "'high_rate_min_ended'=0: Input should be greater than or equal to 1"),
    ("session_aware:repeat_threshold=2", "'repeat_threshold'=2: Input should be less than or equal to 1"),
    ("session_aware:half_life_days=0", "'half_life_days'=0: Input should be greater than 0"),
    ("hybrid:semantic_weight=-1", "'semantic_weight'=-1: Input should be greater than or equal to 0"),
    ("embedding:top_k=0", "'top_k'=0: Input should be greater than or equal to 1"),
]


@pytest.mark.parametrize("spec,message", OUT_OF_RANGE, ids=[s for s, _ in OUT_OF_RANGE])
def test_an_out_of_range_parameter_is_refused_before_the_run(spec, message, capsys):
    with pytest.raises(SystemExit) as e:
        main(["run", SCENARIO, "-s", spec])
    assert e.value.code == 2
    assert message in capsys.readouterr().err


@pytest.mark.slow  # starts a subprocess
def test_an_out_of_range_parameter_is_exit_2_with_one_line_from_the_shell(tmp_path):
    p = sb("run", SCENARIO, "-s", "tfidf:top_k=-5", "--out", tmp_path)
    assert p.returncode == 2 and p.stderr.strip().count("\n") == 0 and "Traceback" not in p.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("spec", ["session_aware:health.sla_resolution_hours=48", "tfidf:ngram_min=2,ngram_max=3",
                                  "session_aware:repeat_issue=0,repeat_issue_with_summary=0", "tfidf:min_score=0.2",
                                  "embedding:min_score=-0.5", "session_aware:health.watch_min=70"])
def test_values_in_range_still_run(spec):
    parse_spec(spec).params()


def test_every_default_lies_in_its_declared_range():
    from dataclasses import fields, is_dataclass

    from stores.registry import REGISTRY, StrategySpec, strategy_class

    def overrides(params, prefix=""):
        for f in fields(params):
            value = getattr(params, f.name)
            yield from overrides(value, f"{prefix}{f.name}.") if is_dataclass(value) else [(f"{prefix}{f.name}", value)]

    for name in REGISTRY:
        defaults = strategy_class(name).Params()
        given = tuple(sorted(overrides(defaults)))
        assert StrategySpec(name, given).params() == defaults  # each default, given explicitly, passes its range


TOML = {
    "shape-list-of-ints.toml": "strategy[0]: expected a table with keys name, class, variant, params, expiry; got 1",
    "shape-name-number.toml": "strategy[0]: a strategy name is a string, got 5",
    "shape-params-string.toml": "strategy[0]: params: expected a table of parameter = value, got 'x'",
    "shape-variant.toml": "strategy[0]: variant 'a]b': expected a name of letters, digits",
    "binary.toml": "not a TOML file (not UTF-8 text",
    "range-top-k.toml": "strategy[0]: strategy 'tfidf' parameter 'top_k'=-5: Input should be greater than or equal to 1",
    "range-ngrams.toml": "strategy[0]: strategy 'tfidf' parameter 'ngram_max'=1: must be at least ngram_min (3)",
    "range-nested-health.toml": "strategy[0]: strategy 'session_aware.health' parameter 'sla_resolution_hours'=-48",
}


@pytest.mark.parametrize("name", sorted(TOML))
def test_every_bad_config_file_is_one_line_naming_the_file(name, capsys):
    with pytest.raises(SystemExit) as e:
        main(["run", SCENARIO, "--config", str(CORPUS / name)])
    assert e.value.code == 2
    err = capsys.readouterr().err.strip()
    assert err == f"error: {CORPUS / name}: {TOML[name]}" or err.startswith(f"error: {CORPUS / name}: {TOML[name]}"), err
    assert "\n" not in err


def test_a_folder_given_as_config_is_one_line(tmp_path):
    with pytest.raises(SpecError, match=f"^{tmp_path}: is a folder; expected a TOML file"):
        load_config(tmp_path)


def test_nested_params_tables_reach_nested_parameters(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text('[[strategy]]\nname = "session_aware"\nvariant = "sla48"\nparams = {health = {sla_resolution_hours = 48}}\n')
    (spec,) = load_config(path)
    assert spec.label == "session_aware[sla48]" and spec.params().health.sla_resolution_hours == 48.0


@pytest.mark.slow  # starts a subprocess
def test_an_unknown_embedding_model_fails_fast_naming_where_models_are_looked_for(tmp_path):
    # a hang bound only: five retries to the model hub took 355 s, then exited 0
    p = sb("run", SCENARIO, "-s", "embedding:model=sentence-transformers/all-mpnet-base-v2", "--out", tmp_path)
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert "embedding model 'sentence-transformers/all-mpnet-base-v2' not found" in p.stderr
    assert "packaged 'all-MiniLM-L6-v2'" in p.stderr and "local sentence-transformers model folder" in p.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow  # starts a subprocess
def test_the_model_hub_is_offline_in_the_process_whatever_the_environment():
    code = ("import os, stores.retrieval.encoder as e; print(os.environ['HF_HUB_OFFLINE'], os.environ['TRANSFORMERS_OFFLINE']);"
            "import huggingface_hub.constants as c; print(c.HF_HUB_OFFLINE)")
    import subprocess
    import sys

    from hostile_cli import ROOT, cli_env

    p = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=cli_env(HF_HUB_OFFLINE="0", TRANSFORMERS_OFFLINE="0"),
                       capture_output=True, text=True)
    assert p.stdout.split() == ["1", "1", "True"], p.stderr


def test_loading_a_model_that_is_not_here_raises_at_once_without_the_network(monkeypatch):
    """At once: not after retries to the model hub, which would open a socket (refused here)."""
    import socket

    from stores.retrieval.encoder import ModelUnavailable, load_model

    def no_network(*args, **kwargs):
        raise AssertionError(f"the model loader opened a connection: {args[:1]}")

    monkeypatch.setattr(socket, "create_connection", no_network)
    monkeypatch.setattr(socket.socket, "connect", no_network)
    with pytest.raises(ModelUnavailable, match="embedding model 'no-such-model' not found"):
        load_model("no-such-model")

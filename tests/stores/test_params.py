"""Secret params: read from the environment, shown redacted, never hashed."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from stores.params import SECRET, hashed_params, public_params, redact, secret, secret_fields, secret_problems
from stores.registry import SpecError, parse_spec


@pytest.fixture
def needs_key(monkeypatch, plugins):
    plugins.strategy("needs_key", "fake_strategies:NeedsKey")
    monkeypatch.delenv("SUPPORTBENCH_FAKE_KEY", raising=False)


def test_a_secret_is_read_from_its_environment_variable_when_the_spec_does_not_give_it(needs_key, monkeypatch):
    assert parse_spec("needs_key").params().api_key == ""
    monkeypatch.setenv("SUPPORTBENCH_FAKE_KEY", "sk-from-env")
    assert parse_spec("needs_key").params().api_key == "sk-from-env"
    assert parse_spec("needs_key:api_key=sk-given").params().api_key == "sk-given"  # a spec's value wins


def test_a_secret_is_redacted_in_the_label_the_public_params_and_the_repr(needs_key, monkeypatch):
    monkeypatch.setenv("SUPPORTBENCH_FAKE_KEY", "sk-from-env")
    spec = parse_spec("needs_key:api_key=sk-given,region=us")
    assert spec.label == f"needs_key[api_key={SECRET},region=us]"
    assert spec.public_overrides() == {"api_key": SECRET, "region": "us"}
    assert public_params(spec.params()) == {"include_resolutions": True, "api_key": SECRET, "region": "us", "echo_key": False}
    assert "sk-given" not in repr(spec.params())
    assert spec.secret_values() == ["sk-given"] and spec.secret_paths() == ["api_key"]


def test_an_unset_secret_is_shown_empty(needs_key):
    assert public_params(parse_spec("needs_key").params())["api_key"] == ""


def test_the_params_hash_leaves_secrets_out(needs_key, monkeypatch):
    a = parse_spec("needs_key").params_hash()
    monkeypatch.setenv("SUPPORTBENCH_FAKE_KEY", "sk-rotated")
    assert parse_spec("needs_key").params_hash() == a == parse_spec("needs_key:api_key=other").params_hash()
    assert parse_spec("needs_key:region=us").params_hash() != a
    assert "api_key" not in hashed_params(parse_spec("needs_key").params())


def test_secrets_in_nested_params_are_found_by_their_dotted_key():
    @dataclass(frozen=True)
    class Inner:
        token: str = secret(env="INNER_TOKEN")

    @dataclass(frozen=True)
    class Outer:
        inner: Inner = Inner()
        plain: int = 1

    assert secret_fields(Outer()) == {"inner.token": "INNER_TOKEN"}
    assert public_params(Outer(Inner("t"))) == {"inner": {"token": SECRET}, "plain": 1}


def test_only_optional_strings_can_be_secret():
    @dataclass(frozen=True)
    class Bad:
        port: int = secret(env="PORT")  # type: ignore[assignment]

    assert secret_problems(Bad) == ["Bad.port is secret but typed <class 'int'>, not str"]
    with pytest.raises(ValueError, match="upper-case environment variable"):
        secret(env="lower")


def test_redact_replaces_every_secret_value_longest_first():
    assert redact("run --strategies x:api_key=abc123,y:k=abc", ["abc", "abc123"]) == \
        f"run --strategies x:api_key={SECRET},y:k={SECRET}"


def test_a_strategy_class_with_a_non_string_secret_is_refused(monkeypatch, plugins):
    import fake_strategies

    @dataclass(frozen=True)
    class BadParams:
        port: int = secret(env="PORT")  # type: ignore[assignment]

    class BadSecret(fake_strategies.NeedsKey):
        Params = BadParams

    monkeypatch.setattr(fake_strategies, "BadSecret", BadSecret, raising=False)
    plugins.strategy("bad_secret", "fake_strategies:BadSecret")
    with pytest.raises(SpecError, match="port is secret but typed"):
        parse_spec("bad_secret")

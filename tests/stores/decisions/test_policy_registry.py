"""Policies are built from specs through their own lazy registry, like strategies."""

from __future__ import annotations

import pytest

from stores.decisions.policy import DecisionPolicy
from stores.decisions.registry import (
    DEFAULT_POLICIES, POLICIES, PolicySpecError, describe, load_policy_config, parse_policies, parse_policy,
)


def test_every_registered_policy_builds_and_keeps_the_contract():
    for name in POLICIES:
        p = parse_policy(name).build()
        assert isinstance(p, DecisionPolicy) and p.name == name
        p.close()
    assert set(DEFAULT_POLICIES) == set(POLICIES)


def test_a_spec_overrides_params_and_labels_the_variant():
    s = parse_policy("session_state:hostile_streak=3,offer_ttl_minutes=30")
    assert s.label == "session_state[hostile_streak=3,offer_ttl_minutes=30]"
    assert (s.params().hostile_streak, s.params().offer_ttl_minutes) == (3, 30.0)
    assert parse_policy("session_state[strict]:hostile_streak=1").label == "session_state[strict]"


def test_dotted_keys_reach_the_producer_params():
    assert parse_policy("per_message:producers.short_max_words=2").params().producers.short_max_words == 2


def test_a_list_binds_key_values_to_the_policy_before_them():
    specs = parse_policies("per_message,session_state:hostile_streak=3,empty_retrieval_streak=2,session_state")
    assert [s.label for s in specs] == ["per_message", "session_state[empty_retrieval_streak=2,hostile_streak=3]", "session_state"]
    assert parse_policies("none") == []


def test_bad_specs_fail_with_a_reason():
    with pytest.raises(PolicySpecError, match="did you mean 'session_state'"):
        parse_policy("session_stat")
    with pytest.raises(PolicySpecError, match="did you mean 'hostile_streak'"):
        parse_policy("session_state:hostile_streek=3")
    with pytest.raises(PolicySpecError, match="hostile_streak.*greater than or equal to 1"):
        parse_policy("session_state:hostile_streak=0")
    with pytest.raises(PolicySpecError, match="hostile_streak"):
        parse_policy("session_state:hostile_streak=many")
    with pytest.raises(PolicySpecError, match="locker"):
        parse_policy("session_state:locker=etcd")
    with pytest.raises(PolicySpecError, match="takes sub-parameters"):
        parse_policy("session_state:producers=3")
    with pytest.raises(PolicySpecError, match="duplicate policy labels"):
        parse_policies("per_message,per_message")


def test_params_hash_changes_with_the_params_only():
    assert parse_policy("session_state").params_hash() == parse_policy("session_state").params_hash()
    assert parse_policy("session_state").params_hash() != parse_policy("session_state:hostile_streak=3").params_hash()
    assert parse_policy("session_state").params_hash() == parse_policy("session_state:hostile_streak=2").params_hash()


def test_a_toml_config_names_variants(tmp_path):
    cfg = tmp_path / "policies.toml"
    cfg.write_text('[[policy]]\nname = "session_state"\nvariant = "patient"\nparams = {hostile_streak = 4}\n'
                   '[[policy]]\nname = "per_message"\nparams = {producers = {short_max_words = 2}}\n')
    specs = load_policy_config(cfg)
    assert [s.label for s in specs] == ["session_state[patient]", "per_message[producers.short_max_words=2]"]
    assert specs[0].params().hostile_streak == 4
    cfg.write_text('[[policy]]\nname = "session_state"\ncolour = "red"\n')
    with pytest.raises(PolicySpecError, match=r"policy\[0\]: expected keys"):
        load_policy_config(cfg)
    with pytest.raises(PolicySpecError, match="no such policy config"):
        load_policy_config(tmp_path / "missing.toml")


def test_describe_lists_every_parameter_with_its_default_and_doc():
    rows = {name: (default, doc) for name, default, doc in describe("session_state")}
    assert rows["hostile_streak"][0] == 2 and "hostile" in rows["hostile_streak"][1]
    assert rows["producers.short_max_words"][0] == 4
    assert all(doc for _, doc in rows.values())


def test_a_policy_variant_name_follows_the_strategy_rule(tmp_path):
    # the label becomes `name[variant]` in every table and page: no brackets, commas or spaces
    assert parse_policy("session_state[calm-2]:hostile_streak=3").label == "session_state[calm-2]"
    with pytest.raises(PolicySpecError, match="variant 'calm two'"):
        parse_policy("session_state[calm two]")
    config = tmp_path / "p.toml"
    config.write_text('[[policy]]\nname = "session_state"\nvariant = "a]b"\n')
    with pytest.raises(PolicySpecError, match=r"policy\[0\]: variant 'a\]b'"):
        load_policy_config(config)


def test_a_policy_config_that_is_a_folder_or_not_text_is_one_line_naming_the_file(tmp_path):
    # the same reader as strategy configs (stores.spec_text.read_toml)
    with pytest.raises(PolicySpecError, match="is a folder; expected a TOML file of \\[\\[policy\\]\\] tables"):
        load_policy_config(tmp_path)
    binary = tmp_path / "p.toml"
    binary.write_bytes(b"\xff\xfe\x00policy")
    with pytest.raises(PolicySpecError, match="not a TOML file \\(not UTF-8 text"):
        load_policy_config(binary)


def test_the_documented_redis_spec_parses_with_the_url_whole():
    # the URL's colons used to split the list into a second, broken spec (exit 2)
    specs = parse_policies("per_message,session_state:locker=redis,redis_url=redis://127.0.0.1:6390/0,hostile_streak=3")
    assert [s.name for s in specs] == ["per_message", "session_state"]
    params = specs[1].params()
    assert params.locker == "redis" and params.redis_url == "redis://127.0.0.1:6390/0" and params.hostile_streak == 3


def test_a_redis_password_never_reaches_the_label_or_the_hash():
    a = parse_policy("session_state:locker=redis,redis_url=redis://:pw-Label-MARK@127.0.0.1:6390/0")
    b = parse_policy("session_state:locker=redis,redis_url=redis://:rotated-0000@127.0.0.1:6390/0")
    assert "pw-Label-MARK" not in a.label and "redis://<secret>@127.0.0.1:6390/0" in a.label
    assert a.params().redis_url.startswith("redis://:pw-Label-MARK@")  # the locker still gets it
    assert a.params_hash() == b.params_hash() and a.label == b.label

import pytest

from stores.registry import SpecError, load_config, parse_spec, parse_specs


def test_unknown_strategy_suggests_the_closest_name():
    with pytest.raises(SpecError, match="did you mean 'history_stuffing'"):
        parse_spec("history_stufing")


def test_overrides_are_coerced_and_named_in_the_label():
    spec = parse_spec("history_stuffing:include_resolutions=false")
    assert spec.params().include_resolutions is False
    assert spec.label == "history_stuffing[include_resolutions=False]"


def test_unknown_parameter_is_refused_before_the_run():
    with pytest.raises(SpecError, match="no parameter 'include_resolution'.*did you mean"):
        parse_spec("history_stuffing:include_resolution=false")


def test_overrides_bind_to_the_strategy_before_them():
    specs = parse_specs("empty,history_stuffing:include_resolutions=false")
    assert [s.name for s in specs] == ["empty", "history_stuffing"]


def test_a_config_names_variants(tmp_path):
    cfg = tmp_path / "s.toml"
    cfg.write_text('[[strategy]]\nname = "history_stuffing"\nvariant = "no_resolutions"\nparams = {include_resolutions = false}\n')
    (spec,) = load_config(cfg)
    assert spec.label == "history_stuffing[no_resolutions]"
    assert spec.params().include_resolutions is False


def test_a_bad_config_names_the_file_and_entry(tmp_path):
    cfg = tmp_path / "s.toml"
    cfg.write_text('[[strategy]]\nname = "history_stuffing"\nparams = {nope = 1}\n')
    with pytest.raises(SpecError, match=r"s.toml: strategy\[0\].*no parameter 'nope'"):
        load_config(cfg)


def test_params_hash_changes_with_params_only():
    a, b = parse_spec("history_stuffing"), parse_spec("history_stuffing:include_resolutions=true")
    c = parse_spec("history_stuffing:include_resolutions=false")
    assert a.params_hash() == b.params_hash() != c.params_hash()


def test_non_finite_numbers_are_refused():
    with pytest.raises(SpecError, match="finite"):
        parse_spec("session_aware:recency_max=nan")


def test_a_dotted_key_overrides_a_nested_parameter():
    p = parse_spec("session_aware:health.sla_resolution_hours=48").params()
    assert p.health.sla_resolution_hours == 48.0 and p.health.unresolved_cap == -45.0


def test_a_misspelt_nested_parameter_is_named_with_a_suggestion():
    with pytest.raises(SpecError, match="no parameter 'sla_hours'; did you mean 'sla_resolution_hours'"):
        parse_spec("session_aware:health.sla_hours=1")

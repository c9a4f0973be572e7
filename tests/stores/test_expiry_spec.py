"""Any strategy spec takes the expiry stage: its own row, its rules as dotted keys, in the CLI and TOML."""

import pytest

from stores.expiry import ExpiryStage
from stores.registry import SpecError, load_config, parse_spec, parse_specs


def test_expiry_on_is_its_own_row_for_any_strategy():
    specs = parse_specs("history_stuffing:expiry=on,session_aware:expiry=on,history_stuffing")
    assert [s.label for s in specs] == ["history_stuffing[expiry]", "session_aware[expiry]", "history_stuffing"]
    assert isinstance(specs[0].build(), ExpiryStage) and not isinstance(specs[2].build(), ExpiryStage)


def test_stage_rules_are_dotted_keys_and_named_in_the_label():
    spec = parse_spec("session_aware:expiry=on,expiry.sentiment_days=3,recency=half_life")
    assert spec.label == "session_aware[expiry,recency=half_life,expiry.sentiment_days=3]"
    assert spec.expiry_params().sentiment_days == 3.0 and spec.params().recency == "half_life"


def test_expiry_off_is_the_plain_strategy():
    spec = parse_spec("tfidf:expiry=off")
    assert spec.label == "tfidf" and spec.expiry_params() is None


def test_stage_rules_without_the_stage_are_refused():
    with pytest.raises(SpecError, match="add expiry=on"):
        parse_spec("tfidf:expiry.sentiment_days=3")


def test_a_misspelt_or_out_of_range_rule_is_refused_before_the_run():
    with pytest.raises(SpecError, match="no parameter 'sentiment_dayz'; did you mean 'sentiment_days'"):
        parse_spec("tfidf:expiry=on,expiry.sentiment_dayz=3")
    with pytest.raises(SpecError, match="parameter 'sentiment_days'=0: Input should be greater than 0"):
        parse_spec("tfidf:expiry=on,expiry.sentiment_days=0")
    with pytest.raises(SpecError, match="expected on or off"):
        parse_spec("tfidf:expiry=maybe")


def test_the_stage_and_its_rules_change_the_params_hash():
    a, b = parse_spec("tfidf"), parse_spec("tfidf:expiry=on")
    c = parse_spec("tfidf:expiry=on,expiry.sentiment_days=3")
    assert len({a.params_hash(), b.params_hash(), c.params_hash()}) == 3
    assert b.params_hash() == parse_spec("tfidf:expiry=on,expiry.sentiment_days=7").params_hash()


def test_the_stage_adds_the_expiry_capability():
    assert parse_spec("session_aware:expiry=on").capabilities() == {"health", "handoff", "expiry"}
    assert parse_spec("session_aware").capabilities() == {"health", "handoff"}


def test_a_config_switches_the_stage_on_beside_name_or_in_params(tmp_path):
    cfg = tmp_path / "s.toml"
    cfg.write_text(
        '[[strategy]]\nname = "history_stuffing"\nexpiry = true\n'
        '[[strategy]]\nname = "session_aware"\nexpiry = {sentiment_days = 3}\n'
        '[[strategy]]\nname = "tfidf"\nparams = {top_k = 5, expiry = "on", "expiry.system_owned" = "drop"}\n'
    )
    hs, sa, tf = load_config(cfg)
    assert hs.label == "history_stuffing[expiry]"
    assert sa.label == "session_aware[expiry,expiry.sentiment_days=3]" and sa.expiry_params().sentiment_days == 3.0
    assert tf.label == "tfidf[expiry,top_k=5,expiry.system_owned=drop]" and tf.params().top_k == 5


def test_a_bad_stage_rule_in_a_config_names_the_file_and_entry(tmp_path):
    cfg = tmp_path / "s.toml"
    cfg.write_text('[[strategy]]\nname = "tfidf"\nexpiry = {nope = 1}\n')
    with pytest.raises(SpecError, match=r"s.toml: strategy\[0\].*no parameter 'nope'"):
        load_config(cfg)


def test_ls_strategies_lists_the_stage_and_its_rules(capsys, monkeypatch):
    from harness.cli import main
    from harness.cli.common import out

    monkeypatch.setattr(out, "width", 400)  # whatever the terminal, no cell is cut
    assert main(["ls", "strategies"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "(any):expiry=on" in text and "expiry.sentiment_days=7.0" in text

"""Reading the expiry stage from run rows: removed items with their rule, the confusion table."""

import json

import pandas as pd

from harness.analysis.expiry import accuracy, classified_turns, confusion, removed_items, rule_of


def test_the_rule_family_is_read_from_the_reason():
    assert rule_of("expired: sentiment older than 7 days, said 2026-03-04") == "expired"
    assert rule_of("superseded by pref-email on 2026-06-02 (contact channel: email)") == "superseded"
    assert rule_of("not stored: system-owned fact (plan tier); pointer kept") == "not stored"
    assert rule_of("budget") == rule_of("") == rule_of(None) == ""


def test_removed_items_are_the_candidates_with_an_expiry_reason_in_receipt_order():
    cands = pd.DataFrame({
        "item_id": ["a", "b", "c", "d"], "session": ["s"] * 4, "text": ["ta", "tb", "tc", "td"],
        "reason": ["", "budget", "not stored: sentiment (never stored)", "expired: unclassified older than 7 days, said x"],
    })
    out = removed_items(cands)
    assert list(out["item_id"]) == ["c", "d"] and list(out["rule"]) == ["not stored", "expired"]
    assert removed_items(pd.DataFrame()).empty


def test_the_confusion_table_counts_each_turn_under_the_label_it_matched():
    metas = [json.dumps({"turns": [
        {"id": "t1", "labels": ["profile"], "assigned": "profile", "rule": "r"},
        {"id": "t2", "labels": ["profile"], "assigned": "system_owned", "rule": "r"},
        {"id": "t3", "labels": ["profile", "system_owned"], "assigned": "system_owned", "rule": "r"},
    ]}), None, {"turns": [{"id": "t4", "labels": ["sentiment"], "assigned": "sentiment", "rule": "r"}]}]
    turns = classified_turns(metas)
    assert accuracy(turns) == (3, 4)
    table = confusion(turns)
    assert table.loc["profile", "profile"] == 1 and table.loc["profile", "system_owned"] == 1
    assert table.loc["system_owned", "system_owned"] == 1 and table.loc["sentiment", "sentiment"] == 1
    assert int(table.to_numpy().sum()) == 4 and "unclassified" in table.columns and "episodic" in table.index

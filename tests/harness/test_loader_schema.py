"""The committed JSON Schema: generated from the loader's models, and usable by editors."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import jsonschema
import pytest

from harness.format.loader import SCHEMA_PATH, json_schema, load_scenario, validate_paths, yaml_data

SAMPLE = textwrap.dedent(
    """\
    # yaml-language-server: $schema=../schema/scenario.schema.json
    id: outage-vs-march-fix
    version: 1
    title: A live outage must outrank the fix from a closed March ticket
    description: Sample covering every key of the format.
    tags: [session-ranking, repeat-issue]
    start: 2026-03-02T09:00:00Z
    subjects:
      cust_4f1a: {name: Dana Ruiz}
      cust_77b0: {name: Lee Park}
    events:
      - turn: "Our Snowflake connector keeps timing out on the nightly load."
        subject: cust_4f1a
        session: intercom_8821
        id: snow-1
        label: [episodic]
      - turn: "Raised connect_timeout from 30s to 120s."
        role: agent
        kind: action
        at: +5m
      - resolve: intercom_8821
        status: resolved
        summary: "Fixed by raising connect_timeout from 30s to 120s."
        at: +1d2h
      - turn: "My password reset link expired."
        subject: cust_77b0
        session: pw-1
        at: 2026-04-01T10:00:00+02:00
      - probe: p-still-timeout
        subject: cust_4f1a
        session: zd-991
        on: zd-991#1
        budget: 300
        handoff: true
        expect:
          include: [snow-1, {text: connect_timeout}]
          exclude: [pw-1#1]
          identity: []
          above: [[intercom_8821#resolution, intercom_8821#2]]
          fix_before: [[intercom_8821#2, snow-1]]
          repeat_of: intercom_8821
          evidence: [intercom_8821#resolution]
          health: watch
      - turn: "still seeing the timeout"
      - forget: cust_77b0
    """
)


def validator() -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(json.loads(SCHEMA_PATH.read_text(encoding="utf-8")))


def test_committed_schema_equals_the_one_generated_from_the_models():
    # regenerate with: python -m harness.format.loader
    assert json.loads(SCHEMA_PATH.read_text(encoding="utf-8")) == json_schema()


def test_generated_schema_is_a_valid_draft_2020_12_schema():
    jsonschema.Draft202012Validator.check_schema(json_schema())


def test_a_good_sample_validates_against_the_schema_and_loads(tmp_path):
    assert list(validator().iter_errors(yaml_data(SAMPLE))) == []
    path = tmp_path / "sample.yaml"
    path.write_text(SAMPLE)
    assert len(load_scenario(path).events) == 7


@pytest.mark.parametrize(
    "old, new",
    [
        ("    role: agent", "    rol: agent"),
        ("status: resolved", "status: done"),
        ("health: watch", "health: amber"),
        ("at: +5m", "at: +5x"),
        ("start: 2026-03-02T09:00:00Z", "start: 2026-03-02T09:00:00"),
        ("- forget: cust_77b0", "- forget: cust_77b0\n    turn: both"),
    ],
)
def test_the_schema_refuses_what_the_loader_refuses(old, new):
    assert old in SAMPLE
    assert list(validator().iter_errors(yaml_data(SAMPLE.replace(old, new, 1))))


EXTENSIONS = Path("tests/data/scenarios/extensions.yaml")


def test_the_extensions_sample_validates_against_the_schema():
    assert list(validator().iter_errors(yaml_data(EXTENSIONS.read_text(encoding="utf-8")))) == []


@pytest.mark.parametrize(
    "old, new",
    [
        ("plan: transfer", "plan: handover"),
        ("route: knowledge", "route: games"),
        ("signals: {short_affirmative: true}", "signals: {short_affirmative: true, shout: true}"),
        ("signals: {short_affirmative: true}", "signals: {short_affirmative: maybe}"),
        ("- fault: locker_up", "- fault: locker_sideways"),
        ("type: PROFILE", "type: HOBBY"),
        ("outcome: failed", "outcome: meh"),
        ("returning: true", "returning: sometimes"),
        ("signal: rma_closed", "signal: rma closed"),
    ],
)
def test_the_schema_refuses_what_the_loader_refuses_in_the_extensions(old, new, tmp_path):
    text = EXTENSIONS.read_text(encoding="utf-8")
    assert old in text
    bad = text.replace(old, new, 1)
    assert list(validator().iter_errors(yaml_data(bad)))
    (tmp_path / "bad.yaml").write_text(bad, encoding="utf-8")
    assert validate_paths([tmp_path / "bad.yaml"])

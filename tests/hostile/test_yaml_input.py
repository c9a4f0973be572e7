"""Hostile scenario files: refused with file:line, in bounded time and memory, the rest still checked."""

from __future__ import annotations

import shutil

import pytest
from hostile_cli import CORPUS, sb

from harness.format.loader import load_scenario, validate_paths
from harness.format.yamldoc import ALIAS_BUDGET, MAX_DEPTH, read_yaml

VALID = """\
id: fine
version: 1
title: a valid scenario next to the hostile ones
start: 2026-03-02T09:00:00Z
subjects: {c1: {name: Dana}}
events:
  - turn: "The export times out."
    subject: c1
    session: s1
"""

WRONG_KEY = VALID.replace("id: fine", "id: wrong-key").replace("    session: s1", "    sesion: s1")


def corpus_folder(tmp_path):
    folder = tmp_path / "suite"
    shutil.copytree(CORPUS, folder, ignore=shutil.ignore_patterns("*.toml"))
    (folder / "fine.yaml").write_text(VALID)
    (folder / "wrong-key.yaml").write_text(WRONG_KEY)
    return folder


def by_file(issues):
    return {i.file.rsplit("/", 1)[-1]: i for i in issues}


def test_the_alias_bomb_is_refused_at_the_alias_that_crosses_the_budget():
    issues = validate_paths([CORPUS / "alias-bomb.yaml"])
    assert len(issues) == 1
    assert issues[0].line == 11 and "alias *l3" in issues[0].message and f"{ALIAS_BUDGET:,}" in issues[0].message


@pytest.mark.slow  # starts supportbench in a subprocess
def test_validating_the_alias_bomb_takes_bounded_time_and_memory():
    # bounded by count, not by the clock: the error names the alias budget the expansion stopped at
    # (the nodes built before it are at most ALIAS_BUDGET), under a memory cap an expanded bomb would break
    p = sb("validate", CORPUS / "alias-bomb.yaml", memory_mb=1500)
    assert p.returncode == 1, p.stderr
    assert "alias-bomb.yaml:11: YAML error: alias *l3" in p.stdout and "Traceback" not in p.stderr
    assert f"{ALIAS_BUDGET:,}" in p.stdout


def test_a_nul_byte_is_a_file_line_error():
    (issue,) = validate_paths([CORPUS / "nul-byte.yaml"])
    assert issue.line == 7 and "control character #x0000" in issue.message


def test_nesting_a_thousand_levels_deep_is_a_file_line_error():
    for name in ("deep-flow.yaml", "deep-block.yaml"):
        (issue,) = validate_paths([CORPUS / name])
        assert issue.line and f"nested deeper than {MAX_DEPTH} levels" in issue.message, issue


def test_nesting_deep_enough_to_crash_libyaml_is_refused_not_composed():
    # 100,000 levels: libyaml's recursive composer dies with SIGSEGV on this (measured)
    text = "id: x\nevents: " + "[" * 100_000 + "]" * 100_000 + "\n"
    try:
        read_yaml(text)
    except ValueError as e:
        assert e.line == 2 and "nested deeper" in e.message
    else:
        raise AssertionError("accepted")


def test_deep_nesting_next_to_an_alias_is_refused_not_a_recursion_error():
    # one bracket a line: few brackets and short lines, so libyaml composes it (safely, at this depth)
    text = "id: x\nanchor: &a [1]\nalias: *a\nevents:\n" + "  [\n" * 3_000 + "  ]\n" * 3_000
    try:
        read_yaml(text)
    except ValueError as e:
        assert e.line == 36 and "nested deeper" in e.message  # the 33rd level: the root, then 32 brackets
    else:
        raise AssertionError("accepted")


def test_a_recursive_alias_is_refused_with_its_line():
    (issue,) = validate_paths([CORPUS / "recursive-alias.yaml"])
    assert issue.line == 10 and "recursive aliases are not allowed" in issue.message


@pytest.mark.slow  # starts supportbench in a subprocess
def test_every_file_of_a_folder_is_still_checked_next_to_hostile_ones(tmp_path):
    folder = corpus_folder(tmp_path)
    p = sb("validate", folder, memory_mb=1500)
    assert p.returncode == 1 and "Traceback" not in p.stderr + p.stdout
    found = {line.split(":", 1)[0].rsplit("/", 1)[-1] for line in p.stdout.splitlines()}
    assert found == {"alias-bomb.yaml", "nul-byte.yaml", "deep-flow.yaml", "deep-block.yaml", "recursive-alias.yaml",
                     "wrong-key.yaml"}, p.stdout
    assert "unknown key 'sesion'" in p.stdout


def test_honest_aliases_still_load(tmp_path):
    text = VALID + """\
  - probe: p1
    task: export
    expect: &gold {include: [s1#1]}
  - probe: p2
    task: export again
    expect: *gold
"""
    path = tmp_path / "anchors.yaml"
    path.write_text(text)
    s = load_scenario(path)
    assert [p.expect.include for p in s.probes] == [("s1#1",), ("s1#1",)]


def test_an_escaped_lone_surrogate_or_control_character_is_a_file_line_error(tmp_path):
    # "\uD800" used to validate, then `run` exited 2 after the work, naming no file (it cannot be
    # written as UTF-8); an escaped escape sequence reached terminals as a real one
    for escape, code in (("\\uD800", "#xd800"), ("\\x1b[2J", "#x001b"), ("\\u0007", "#x0007")):
        path = tmp_path / "escaped.yaml"
        path.write_text(VALID.replace('"The export times out."', f'"The export {escape} times out."'))
        (issue,) = validate_paths([path])
        assert issue.line == 7 and f"escaped character {code} is not allowed" in issue.message, issue
    path.write_text(VALID.replace('"The export times out."', '"Tab\\tand newline\\n and \\u00e9 are fine"'))
    assert validate_paths([path]) == []

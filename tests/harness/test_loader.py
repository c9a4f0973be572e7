"""The scenario loader: defaults it fills in, and every problem it refuses, with its line."""

from __future__ import annotations

import hashlib
import textwrap
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from harness.format.loader import ScenarioError, ValidationIssue, load_scenario, load_suite, validate_paths
from harness.format.model import Probe, TextNeedle
from stores.protocol import Forget, Resolution, Turn

START = datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc)

HEADER = """\
id: demo
version: 1
title: Demo
start: 2026-03-02T09:00:00Z
subjects:
  cust_a: {name: Dana}
  cust_b: {name: Lee}
events:
"""


def write(tmp_path: Path, events: str, header: str = HEADER, name: str = "demo.yaml") -> Path:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(header + textwrap.indent(textwrap.dedent(events), "  "), encoding="utf-8")
    return path


def load(tmp_path: Path, events: str, header: str = HEADER):
    return load_scenario(write(tmp_path, events, header))


def problems(tmp_path: Path, events: str, header: str = HEADER) -> list[ValidationIssue]:
    return validate_paths([write(tmp_path, events, header)])


def only(issues: list[ValidationIssue]) -> ValidationIssue:
    assert len(issues) == 1, "\n".join(map(str, issues))
    return issues[0]


def line_of(path: Path, needle: str) -> int:
    return next(n for n, line in enumerate(path.read_text().splitlines(), 1) if needle in line)


TWO_TURNS = """\
- turn: "hello"
  subject: cust_a
  session: s1
- turn: "hi, how can I help?"
  role: agent
"""


# -- defaults --------------------------------------------------------------------------------


def test_turn_ids_default_to_session_and_position(tmp_path):
    s = load(tmp_path, TWO_TURNS)
    assert [t.id for t in s.turns] == ["s1#1", "s1#2"]


def test_explicit_id_turns_count_in_position_but_are_known_only_by_their_id(tmp_path):
    s = load(tmp_path, TWO_TURNS + '- turn: "x"\n  id: my-id\n- turn: "y"\n')
    assert [t.id for t in s.turns] == ["s1#1", "s1#2", "my-id", "s1#4"]


def test_an_explicit_id_turn_has_no_default_id(tmp_path):
    events = TWO_TURNS + '- turn: "x"\n  id: my-id\n- probe: p\n  task: t\n  expect: {include: [s1#3]}\n'
    assert only(problems(tmp_path, events)).message.startswith("unknown id 's1#3'")


def test_first_event_defaults_to_start_and_later_ones_to_one_minute_after_the_previous(tmp_path):
    s = load(tmp_path, TWO_TURNS)
    assert [t.at for t in s.turns] == [START, START + timedelta(minutes=1)]


def test_relative_times_step_from_the_previous_event_and_combine_units(tmp_path):
    s = load(tmp_path, TWO_TURNS + '- turn: "a"\n  at: +1d2h\n- turn: "b"\n  at: +1w30s\n')
    assert s.turns[2].at == START + timedelta(minutes=1, days=1, hours=2)
    assert s.turns[3].at == s.turns[2].at + timedelta(weeks=1, seconds=30)


def test_absolute_times_with_an_offset_are_stored_as_utc(tmp_path):
    s = load(tmp_path, TWO_TURNS + '- turn: "a"\n  at: 2026-03-05T12:00:00+02:00\n')
    assert s.turns[2].at == datetime(2026, 3, 5, 10, 0, tzinfo=timezone.utc)
    assert s.turns[2].at.tzinfo == timezone.utc


def test_subject_and_session_are_inherited_from_the_previous_event(tmp_path):
    s = load(tmp_path, TWO_TURNS + '- turn: "b1"\n  subject: cust_b\n  session: s2\n- turn: "b2"\n')
    assert [(t.subject, t.session) for t in s.turns] == [
        ("cust_a", "s1"), ("cust_a", "s1"), ("cust_b", "s2"), ("cust_b", "s2")
    ]


def test_turn_role_and_kind_default_to_customer_message(tmp_path):
    turn = load(tmp_path, TWO_TURNS).turns[0]
    assert (turn.role, turn.kind, turn.text) == ("customer", "message", "hello")


def test_resolve_names_the_session_and_takes_its_subject(tmp_path):
    s = load(
        tmp_path,
        TWO_TURNS + '- turn: "b1"\n  subject: cust_b\n  session: s2\n- resolve: s1\n  status: resolved\n  summary: fixed\n',
    )
    resolution = s.events[-1]
    assert resolution == Resolution("cust_a", "s1", "resolved", "fixed", START + timedelta(minutes=3))
    assert resolution.id == "s1#resolution"


def test_probe_task_defaults_to_the_text_of_its_on_turn(tmp_path):
    s = load(tmp_path, TWO_TURNS + '- probe: p1\n  on: s1#3\n- turn: "still broken"\n')
    assert s.probes[0].task == "still broken"
    assert s.probes[0].on == "s1#3"


def test_probe_defaults(tmp_path):
    path = write(tmp_path, TWO_TURNS + "- probe: p1\n  task: help\n")
    probe = load_scenario(path).probes[0]
    assert probe == Probe(
        id="p1", subject="cust_a", session="s1", task="help", budget=4000,
        at=START + timedelta(minutes=2), handoff=False, line=line_of(path, "probe: p1"),
    )


def test_probe_line_is_the_line_of_its_event(tmp_path):
    path = write(tmp_path, TWO_TURNS + "- turn: x\n- probe: p1\n  task: help\n")
    assert load_scenario(path).probes[0].line == line_of(path, "probe: p1")


def test_evidence_defaults_to_the_resolution_of_repeat_of(tmp_path):
    s = load(
        tmp_path,
        TWO_TURNS
        + "- resolve: s1\n  status: resolved\n"
        + "- probe: p1\n  session: s2\n  task: again\n  handoff: true\n  expect: {repeat_of: s1}\n",
    )
    assert s.probes[0].expect.evidence == ("s1#resolution",)
    assert s.probes[0].handoff is True


def test_text_needles_are_allowed_in_include_and_exclude(tmp_path):
    s = load(tmp_path, TWO_TURNS + '- probe: p1\n  task: t\n  expect: {include: [s1#1, {text: timeout}], exclude: [{text: old}]}\n')
    assert s.probes[0].expect.include == ("s1#1", TextNeedle("timeout"))
    assert s.probes[0].expect.exclude == (TextNeedle("old"),)


def test_above_and_fix_before_become_pairs(tmp_path):
    s = load(tmp_path, TWO_TURNS + "- probe: p1\n  task: t\n  expect: {above: [[s1#2, s1#1]], fix_before: [[s1#1, s1#2]]}\n")
    assert s.probes[0].expect.above == (("s1#2", "s1#1"),)
    assert s.probes[0].expect.fix_before == (("s1#1", "s1#2"),)


def test_forget_names_a_subject(tmp_path):
    s = load(tmp_path, TWO_TURNS + "- forget: cust_a\n")
    assert s.events[-1] == Forget("cust_a", START + timedelta(minutes=2))


def test_scenario_keeps_path_as_given_content_hash_and_suite_folder(tmp_path, monkeypatch):
    path = write(tmp_path, TWO_TURNS, name="canonical/demo.yaml")
    monkeypatch.chdir(tmp_path)
    s = load_scenario("canonical/demo.yaml")
    assert (s.path, s.suite) == ("canonical/demo.yaml", "canonical")
    assert s.content_hash == hashlib.sha256(path.read_bytes()).hexdigest()


def test_top_level_fields_and_optional_description(tmp_path):
    header = HEADER.replace("title: Demo\n", "title: Demo\ndescription: longer words\ntags: [a, b]\n")
    s = load(tmp_path, TWO_TURNS, header)
    assert (s.id, s.version, s.title, s.tags, s.start) == ("demo", 1, "Demo", ("a", "b"), START)
    assert list(s.subjects) == ["cust_a", "cust_b"] and s.subjects["cust_a"].name == "Dana"


def test_yaml_1_1_booleans_stay_text(tmp_path):
    assert load(tmp_path, TWO_TURNS + "- turn: yes\n").turns[-1].text == "yes"


def test_an_on_key_is_a_string_key_not_a_yaml_boolean(tmp_path):
    s = load(tmp_path, TWO_TURNS + "- probe: p1\n  on: s1#3\n- turn: more\n")
    assert s.probes[0].on == "s1#3"


# -- structural errors ---------------------------------------------------------------------


def test_unknown_key_suggests_the_close_one(tmp_path):
    path = write(tmp_path, TWO_TURNS + "- turn: x\n  rol: agent\n")
    issue = only(validate_paths([path]))
    assert issue.line == line_of(path, "rol: agent")
    assert issue.path == "events[2].turn.rol"
    assert "unknown key 'rol'; did you mean 'role'?" in issue.message


def test_unknown_top_level_key(tmp_path):
    issue = only(problems(tmp_path, TWO_TURNS, "colour: red\n" + HEADER))
    assert (issue.line, issue.path) == (1, "colour")
    assert "unknown key 'colour'" in issue.message


@pytest.mark.parametrize(
    "event, key, value",
    [
        ("- turn: x\n  role: bot\n", "role", "bot"),
        ("- turn: x\n  kind: note\n", "kind", "note"),
        ("- turn: x\n  label: [profil]\n", "label", "profil"),
        ("- resolve: s1\n  status: done\n", "status", "done"),
        ("- probe: p\n  task: t\n  expect: {health: amber}\n", "health", "amber"),
    ],
)
def test_unknown_enum_values_are_refused_with_the_allowed_ones(tmp_path, event, key, value):
    issue = only(problems(tmp_path, TWO_TURNS + event))
    assert f"unknown {key} '{value}' (expected " in issue.message


def test_unknown_value_close_to_an_allowed_one_gets_a_suggestion(tmp_path):
    issue = only(problems(tmp_path, TWO_TURNS + "- turn: x\n  role: agnt\n"))
    assert issue.message.endswith("did you mean 'agent'?")


def test_missing_required_key(tmp_path):
    path = write(tmp_path, TWO_TURNS + "- resolve: s1\n")
    issue = only(validate_paths([path]))
    assert (issue.line, issue.path, issue.message) == (
        line_of(path, "resolve: s1"), "events[2]", "missing required key 'status'"
    )


def test_missing_top_level_key(tmp_path):
    issue = only(problems(tmp_path, TWO_TURNS, HEADER.replace("title: Demo\n", "")))
    assert issue.message == "missing required key 'title'"


def test_event_with_two_kinds_is_refused(tmp_path):
    issue = only(problems(tmp_path, TWO_TURNS + "- turn: x\n  probe: p\n"))
    assert issue.path == "events[2]"
    assert "exactly one of turn, resolve, probe, forget, signal, fault; this one has turn and probe" in issue.message


def test_event_without_a_kind_is_refused(tmp_path):
    issue = only(problems(tmp_path, TWO_TURNS + "- trun: x\n"))
    assert "needs one of turn, resolve, probe, forget" in issue.message
    assert "did you mean 'turn'?" in issue.message


def test_wrong_type_is_refused(tmp_path):
    issue = only(problems(tmp_path, TWO_TURNS + "- probe: p\n  task: t\n  budget: lots\n"))
    assert issue.path == "events[2].probe.budget"


def test_budget_must_be_positive(tmp_path):
    issue = only(problems(tmp_path, TWO_TURNS + "- probe: p\n  task: t\n  budget: 0\n"))
    assert issue.path == "events[2].probe.budget"


def test_pairs_need_exactly_two_ids(tmp_path):
    issue = only(problems(tmp_path, TWO_TURNS + "- probe: p\n  task: t\n  expect: {above: [[s1#1]]}\n"))
    assert issue.path == "events[2].probe.expect.above[0]"
    assert "expected a pair" in issue.message


def test_text_needles_are_refused_outside_the_keys_that_take_them(tmp_path):
    issue = only(problems(tmp_path, TWO_TURNS + "- probe: p\n  task: t\n  expect: {identity: [{text: x}]}\n"))
    assert "only in include, exclude, known_fixes, known_failures; here give an id" in issue.message


def test_scenario_id_must_be_a_slug(tmp_path):
    issue = only(problems(tmp_path, TWO_TURNS, HEADER.replace("id: demo", "id: my demo")))
    assert (issue.line, issue.path) == (1, "id")


def test_a_key_given_twice_in_one_mapping_is_refused(tmp_path):
    path = write(tmp_path, TWO_TURNS + "- turn: x\n  role: agent\n  role: customer\n")
    issue = only(validate_paths([path]))
    assert issue.line == line_of(path, "role: customer")
    assert "key given twice" in issue.message


def test_yaml_syntax_error_is_an_issue_with_its_line(tmp_path):
    path = write(tmp_path, TWO_TURNS + '- turn: "unterminated\n- turn: x\n')
    issue = only(validate_paths([path]))
    assert issue.line is not None and issue.line >= line_of(path, "unterminated")
    assert issue.message.startswith("YAML syntax error")


def test_a_file_that_is_not_a_mapping_is_refused(tmp_path):
    path = tmp_path / "list.yaml"
    path.write_text("- a\n- b\n")
    assert "is a list, not a mapping" in only(validate_paths([path])).message


# -- times ---------------------------------------------------------------------------------


def test_time_going_backwards_is_refused(tmp_path):
    path = write(tmp_path, TWO_TURNS + "- turn: x\n  at: 2026-03-01T00:00:00Z\n")
    issue = only(validate_paths([path]))
    assert (issue.line, issue.path) == (line_of(path, "at: 2026-03-01"), "events[2].turn.at")
    assert "time goes backwards" in issue.message


def test_first_event_before_start_is_refused(tmp_path):
    events = '- turn: x\n  subject: cust_a\n  session: s1\n  at: 2026-03-01T00:00:00Z\n'
    assert "earlier than start" in only(problems(tmp_path, events)).message


@pytest.mark.parametrize("bad", ["+5x", "5m", "+2h1d", "-5m", "+", "soon"])
def test_bad_relative_time_syntax_is_refused(tmp_path, bad):
    issue = only(problems(tmp_path, TWO_TURNS + f'- turn: x\n  at: "{bad}"\n'))
    assert issue.path == "events[2].turn.at"
    assert "not a" in issue.message and "time" in issue.message


def test_absolute_time_without_timezone_is_refused(tmp_path):
    issue = only(problems(tmp_path, TWO_TURNS + "- turn: x\n  at: 2026-03-05T12:00:00\n"))
    assert "has no timezone" in issue.message


def test_start_without_timezone_is_refused(tmp_path):
    issue = only(problems(tmp_path, TWO_TURNS, HEADER.replace("09:00:00Z", "09:00:00")))
    assert issue.path == "start" and "has no timezone" in issue.message


# -- subjects, sessions, ids ---------------------------------------------------------------


def test_first_event_must_name_subject_and_session(tmp_path):
    issue = only(problems(tmp_path, '- turn: x\n  subject: cust_a\n- turn: y\n'))
    assert (issue.line, issue.path) == (9, "events[0]")
    assert "first event must name both subject and session (missing: session)" in issue.message


def test_subject_must_be_one_of_the_subjects(tmp_path):
    path = write(tmp_path, TWO_TURNS + "- turn: x\n  subject: cust_c\n  session: s9\n")
    issue = only(validate_paths([path]))
    assert (issue.line, issue.path) == (line_of(path, "subject: cust_c"), "events[2].turn.subject")
    assert "unknown subject 'cust_c' (subjects in this scenario: cust_a, cust_b)" in issue.message


def test_probe_naming_an_unknown_subject_is_refused(tmp_path):
    issue = only(problems(tmp_path, TWO_TURNS + "- probe: p\n  subject: cust_z\n  session: s9\n  task: t\n"))
    assert issue.path == "events[2].probe.subject"


def test_forget_of_an_unknown_subject_is_refused(tmp_path):
    issue = only(problems(tmp_path, TWO_TURNS + "- forget: cust_aa\n"))
    assert issue.path == "events[2].forget" and "did you mean 'cust_a'?" in issue.message


def test_a_session_belongs_to_one_subject(tmp_path):
    issue = only(problems(tmp_path, TWO_TURNS + "- turn: x\n  subject: cust_b\n"))
    assert "session 's1' belongs to subject 'cust_a'" in issue.message


def test_duplicate_explicit_ids_are_refused(tmp_path):
    path = write(tmp_path, TWO_TURNS + "- turn: x\n  id: dup\n- turn: y\n  id: dup\n")
    issue = only(validate_paths([path]))
    assert issue.path == "events[3].turn.id"
    assert issue.message == f"duplicate id 'dup': already used at line {line_of(path, 'turn: x')}"


def test_a_default_id_colliding_with_an_explicit_one_is_refused(tmp_path):
    issue = only(problems(tmp_path, TWO_TURNS + "- turn: x\n  id: s1#4\n- turn: y\n"))
    assert "duplicate id 's1#4' (the default id of turn 4 of session 's1')" in issue.message


def test_duplicate_probe_ids_are_refused(tmp_path):
    issue = only(problems(tmp_path, TWO_TURNS + "- probe: p\n  task: t\n- probe: p\n  task: u\n"))
    assert issue.path == "events[3].probe" and "duplicate probe id 'p'" in issue.message


def test_resolving_an_unknown_session_is_refused(tmp_path):
    issue = only(problems(tmp_path, TWO_TURNS + "- resolve: s2\n  status: resolved\n"))
    assert issue.path == "events[2].resolve"
    assert "resolving unknown session 's2'" in issue.message


# -- probes and gold labels ----------------------------------------------------------------


def test_unknown_gold_id_lists_known_ids_and_suggests_the_close_one(tmp_path):
    path = write(tmp_path, "- turn: a\n  subject: cust_a\n  session: s1\n  id: snow-1\n- turn: b\n  id: snow-2\n"
                 "- probe: p\n  task: t\n  expect:\n    above: [[snw-1, snow-2]]\n")
    issue = only(validate_paths([path]))
    assert str(issue) == (
        f"{path}:{line_of(path, 'above:')} events[2].probe.expect.above[0]: unknown id 'snw-1' "
        "(known ids in this scenario: snow-1, snow-2); did you mean 'snow-1'?"
    )


def test_known_id_list_is_truncated(tmp_path):
    turns = "".join(f"- turn: t{n}\n" for n in range(10))
    issue = only(problems(tmp_path, TWO_TURNS + turns + "- probe: p\n  task: t\n  expect: {include: [zzz]}\n"))
    assert "(known ids in this scenario: s1#1, s1#2, s1#3, s1#4, s1#5, s1#6, s1#7, s1#8, …)" in issue.message


def test_gold_id_that_has_not_happened_yet_is_refused(tmp_path):
    path = write(tmp_path, TWO_TURNS + "- probe: p\n  task: t\n  expect: {include: [s1#3]}\n- turn: later\n")
    issue = only(validate_paths([path]))
    assert issue.path == "events[2].probe.expect.include[0]"
    assert issue.message == f"'s1#3' has not happened yet at this probe: it comes at line {line_of(path, 'turn: later')}"


def test_a_resolution_counts_from_its_resolve_event_on(tmp_path):
    events = TWO_TURNS + "- probe: p\n  task: t\n  expect: {include: [s1#resolution]}\n- resolve: s1\n  status: resolved\n"
    assert "has not happened yet" in only(problems(tmp_path, events)).message
    assert load(tmp_path, TWO_TURNS + "- resolve: s1\n  status: resolved\n- probe: p\n  task: t\n  expect: {include: [s1#resolution]}\n")


def test_gold_id_of_another_subject_is_refused(tmp_path):
    events = TWO_TURNS + "- turn: b\n  subject: cust_b\n  session: s2\n- probe: p\n  subject: cust_a\n  session: s1\n  task: t\n  expect: {include: [s2#1]}\n"
    issue = only(problems(tmp_path, events))
    assert "'s2#1' belongs to subject 'cust_b', not to the probe's subject 'cust_a'" in issue.message


def test_gold_id_of_another_subject_is_allowed_in_exclude(tmp_path):
    events = TWO_TURNS + "- turn: b\n  subject: cust_b\n  session: s2\n- probe: p\n  subject: cust_a\n  session: s1\n  task: t\n  expect: {exclude: [s2#1]}\n"
    assert load(tmp_path, events).probes[0].expect.exclude == ("s2#1",)


def test_exclude_ids_must_still_exist_and_have_happened(tmp_path):
    events = TWO_TURNS + "- probe: p\n  task: t\n  expect: {exclude: [s2#1, nope]}\n- turn: b\n  subject: cust_b\n  session: s2\n"
    messages = [i.message for i in problems(tmp_path, events)]
    assert "has not happened yet" in messages[0] and messages[1].startswith("unknown id 'nope'")


def test_on_must_be_the_next_turn_of_the_probe_session(tmp_path):
    path = write(tmp_path, TWO_TURNS + "- probe: p\n  on: s1#4\n- turn: next\n- turn: after\n")
    issue = only(validate_paths([path]))
    assert (issue.line, issue.path) == (line_of(path, "on: s1#4"), "events[2].probe.on")
    assert "the next turn is 's1#3'" in issue.message


def test_on_with_no_later_turn_in_the_session_is_refused(tmp_path):
    issue = only(problems(tmp_path, TWO_TURNS + "- probe: p\n  on: s1#3\n"))
    assert "has no turn after this probe" in issue.message


def test_the_on_turn_itself_is_not_history_yet(tmp_path):
    issue = only(problems(tmp_path, TWO_TURNS + "- probe: p\n  on: s1#3\n  expect: {include: [s1#3]}\n- turn: next\n"))
    assert "has not happened yet" in issue.message


def test_probes_waiting_for_the_same_turn_must_all_name_it(tmp_path):
    path = write(tmp_path, TWO_TURNS + "- probe: p\n  on: s1#3\n- probe: q\n  on: s1#4\n- turn: a\n- turn: b\n")
    issue = only(validate_paths([path]))
    assert issue.path == "events[3].probe.on"
    assert issue.message == (
        f"on: 's1#4' is not the next turn of session 's1': the next turn is 's1#3' (line {line_of(path, 'turn: a')})"
    )


def test_probe_needs_a_task_or_on(tmp_path):
    assert "needs a task" in only(problems(tmp_path, TWO_TURNS + "- probe: p\n")).message


def test_repeat_of_must_be_a_session_resolved_before_the_probe(tmp_path):
    events = TWO_TURNS + "- probe: p\n  session: s2\n  task: t\n  expect: {repeat_of: s1}\n- resolve: s1\n  status: resolved\n"
    assert "not resolved at this probe" in only(problems(tmp_path, events)).message


def test_not_repeat_of_must_name_a_known_session(tmp_path):
    issue = only(problems(tmp_path, TWO_TURNS + "- probe: p\n  session: s2\n  task: t\n  expect: {not_repeat_of: [s7]}\n"))
    assert issue.path == "events[2].probe.expect.not_repeat_of[0]" and "unknown session 's7'" in issue.message


# -- everything at once --------------------------------------------------------------------


def test_every_problem_in_a_file_is_reported_at_once_with_its_line(tmp_path):
    path = write(
        tmp_path,
        TWO_TURNS
        + "- turn: x\n  rol: agent\n"                                 # unknown key
        + "- turn: y\n  at: 2026-01-01T00:00:00Z\n"                   # backwards
        + "- turn: z\n  at: +5q\n"                                    # bad relative time
        + "- resolve: s1\n  status: done\n"                           # unknown status
        + "- probe: p\n  task: t\n  expect: {include: [s1#9]}\n",     # unknown id
    )
    got = [(i.line, i.path) for i in validate_paths([path])]
    assert got == [
        (line_of(path, "rol: agent"), "events[2].turn.rol"),
        (line_of(path, "at: 2026-01-01"), "events[3].turn.at"),
        (line_of(path, "at: +5q"), "events[4].turn.at"),
        (line_of(path, "status: done"), "events[5].resolve.status"),
        (line_of(path, "include: [s1#9]"), "events[6].probe.expect.include[0]"),
    ]


def test_load_scenario_raises_a_value_error_carrying_every_issue(tmp_path):
    path = write(tmp_path, TWO_TURNS + "- turn: x\n  rol: agent\n- turn: y\n  at: 2026-01-01T00:00:00Z\n")
    with pytest.raises(ScenarioError) as caught:
        load_scenario(path)
    assert isinstance(caught.value, ValueError)
    assert len(caught.value.issues) == 2
    assert str(caught.value.issues[0]) in str(caught.value)


def test_issue_text_is_file_line_path_message():
    issue = ValidationIssue("datasets/canonical/outage.yaml", 41, "events[7].probe.expect.above[0]", "unknown id 'snow-9'")
    assert str(issue) == "datasets/canonical/outage.yaml:41 events[7].probe.expect.above[0]: unknown id 'snow-9'"


# -- suites --------------------------------------------------------------------------------


def test_load_suite_reads_folders_recursively_sorted_by_name(tmp_path):
    write(tmp_path, TWO_TURNS, HEADER.replace("id: demo", "id: b"), name="suite/b.yaml")
    write(tmp_path, TWO_TURNS, HEADER.replace("id: demo", "id: a"), name="suite/a.yml")
    write(tmp_path, TWO_TURNS, HEADER.replace("id: demo", "id: c"), name="suite/sub/c.yaml")
    (tmp_path / "suite" / "notes.txt").write_text("not a scenario")
    scenarios = load_suite([tmp_path / "suite"])
    assert [s.id for s in scenarios] == ["a", "b", "c"]
    assert scenarios[0].path == str(tmp_path / "suite" / "a.yml")


def test_scenario_ids_must_be_unique_across_the_loaded_set(tmp_path):
    write(tmp_path, TWO_TURNS, name="one/x.yaml")
    write(tmp_path, TWO_TURNS, name="two/y.yaml")
    issue = only(validate_paths([tmp_path / "one", tmp_path / "two"]))
    assert (issue.file, issue.line, issue.path) == (str(tmp_path / "two" / "y.yaml"), 1, "id")
    assert "duplicate scenario id 'demo'" in issue.message


def test_a_bad_file_stops_the_whole_suite_and_every_file_is_reported(tmp_path):
    write(tmp_path, TWO_TURNS, HEADER.replace("id: demo", "id: a"), name="s/a.yaml")
    write(tmp_path, TWO_TURNS + "- turn: x\n  rol: agent\n", HEADER.replace("id: demo", "id: b"), name="s/b.yaml")
    write(tmp_path, TWO_TURNS + "- turn: x\n  kind: note\n", HEADER.replace("id: demo", "id: c"), name="s/c.yaml")
    with pytest.raises(ScenarioError) as caught:
        load_suite([tmp_path / "s"])
    assert [Path(i.file).name for i in caught.value.issues] == ["b.yaml", "c.yaml"]


def test_validate_paths_reports_missing_paths_and_empty_folders_without_raising(tmp_path):
    (tmp_path / "empty").mkdir()
    (tmp_path / "binary.yaml").write_bytes(b"\xff\xfe\x00")
    issues = validate_paths([tmp_path / "nope.yaml", tmp_path / "empty", tmp_path / "binary.yaml"])
    assert [i.message.split(" ")[0] for i in issues] == ["no", "no", "not"]


def test_a_file_named_twice_is_loaded_once(tmp_path):
    path = write(tmp_path, TWO_TURNS, name="s/a.yaml")
    assert len(load_suite([path, tmp_path / "s"])) == 1


# -- feasible gold -----------------------------------------------------------------------------

LONG_TURNS = """\
- turn: "Our nightly export to the warehouse times out after thirty seconds on every run since Monday."
  subject: cust_a
  session: s1
  id: t1
- turn: "Raised the export connect timeout from 30 to 120 seconds and re-ran the nightly export."
  role: agent
  kind: action
  id: t2
"""


def test_a_probe_whose_gold_cannot_fit_its_budget_is_refused_with_the_tokens_it_needs(tmp_path):
    path = write(tmp_path, LONG_TURNS + "- probe: p\n  task: still failing\n  budget: 40\n  expect: {include: [t1, t2]}\n")
    issue = only(validate_paths([path]))
    assert issue.file == str(path) and issue.line == line_of(path, "budget: 40") and issue.path == "events[2].probe.budget"
    need = int(issue.message.split(" needs ")[1].split()[0])
    assert need > 40 and f"over its budget of 40 by {need - 40}" in issue.message and "t1, t2" in issue.message
    # the same gold at exactly that many tokens is valid, one fewer is not
    assert validate_paths([write(tmp_path, LONG_TURNS + f"- probe: p\n  task: x\n  budget: {need}\n  expect: {{include: [t1, t2]}}\n")]) == []
    assert validate_paths([write(tmp_path, LONG_TURNS + f"- probe: p\n  task: x\n  budget: {need - 1}\n  expect: {{include: [t1, t2]}}\n")])


def test_a_probe_without_anything_to_include_may_have_a_budget_below_the_header(tmp_path):
    assert validate_paths([write(tmp_path, LONG_TURNS + "- probe: p\n  task: x\n  budget: 5\n  expect: {exclude: [t1]}\n")]) == []


def test_gold_that_wants_an_item_in_and_out_of_the_context_is_refused(tmp_path):
    issue = only(problems(tmp_path, LONG_TURNS + "- probe: p\n  task: x\n  expect: {include: [t1], exclude: [t1]}\n"))
    assert "wants t1 both in the context and out of it" in issue.message
    issue = only(problems(tmp_path, LONG_TURNS + "- probe: p\n  task: x\n  expect: {include: [t2], exclude: [{text: connect timeout}]}\n"))
    assert 'wants text "connect timeout" both in the context and out of it' in issue.message


def test_a_canonical_probe_with_its_budget_cut_to_90_is_refused(tmp_path):
    src = Path("datasets/canonical/billing-gateway-repeat-summary.yaml").read_text()
    assert "budget: 550" in src
    path = tmp_path / "cut.yaml"
    path.write_text(src.replace("budget: 550", "budget: 90"))
    issue = only(validate_paths([path]))
    assert "p-apr-repeat" in issue.message and "over its budget of 90" in issue.message
    assert issue.line == line_of(path, "budget: 90")

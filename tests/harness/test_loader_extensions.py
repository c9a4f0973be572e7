"""The format's extensions: signal and fault events, a turn's signals, plan and route, and the
probe keys for structured memory, the reply and expiry; what they load into, and every problem
the loader refuses, with its line."""

from __future__ import annotations

import textwrap
from pathlib import Path

from harness.format.loader import ValidationIssue, load_scenario, validate_paths
from harness.format.model import ExpectMemory, Fault, TextNeedle, TurnGold, TurnSignals
from stores.protocol import Signal, Turn

EXTENSIONS = Path("tests/data/scenarios/extensions.yaml")

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

HISTORY = """\
- turn: "The app crashes on open."
  subject: cust_a
  session: s1
  id: crash
- turn: "Restart it, please."
  role: agent
  kind: action
  id: restart
- resolve: s1
  status: resolved
  summary: "Fixed by updating."
- turn: "SSO question."
  subject: cust_b
  session: z1
  id: sso
"""


def write(tmp_path: Path, events: str) -> Path:
    path = tmp_path / "demo.yaml"
    path.write_text(HEADER + textwrap.indent(textwrap.dedent(events), "  "), encoding="utf-8")
    return path


def problems(tmp_path: Path, events: str) -> list[ValidationIssue]:
    return validate_paths([write(tmp_path, events)])


def only(issues: list[ValidationIssue]) -> ValidationIssue:
    assert len(issues) == 1, "\n".join(map(str, issues))
    return issues[0]


def line_of(path: Path, needle: str) -> int:
    return next(n for n, line in enumerate(path.read_text().splitlines(), 1) if needle in line)


def probe(expect: str, subject: str = "cust_a") -> str:
    return HISTORY + f"- probe: p\n  subject: {subject}\n  session: s2\n  task: t\n  expect: {expect}\n"


# -- what a valid file loads into ------------------------------------------------------------


def test_the_extensions_sample_is_valid():
    assert validate_paths([EXTENSIONS]) == []


def test_signal_events_load_as_signals_with_inherited_subject_and_session():
    s = load_scenario(EXTENSIONS)
    signals = [e for e in s.events if isinstance(e, Signal)]
    assert [(x.subject, x.session, x.name, x.ref) for x in signals] == [
        ("c1", "t2", "rma_closed", "RMA 5531"), ("c1", "t2", "callback_done", None)]


def test_fault_events_load_as_faults_and_need_no_subject():
    s = load_scenario(EXTENSIONS)
    faults = [e for e in s.events if isinstance(e, Fault)]
    assert [(f.name, f.subject) for f in faults] == [("locker_down", None), ("locker_up", "c1")]


def test_turn_gold_is_kept_beside_the_turns_never_on_them():
    s = load_scenario(EXTENSIONS)
    assert s.gold_of("t1-crash") == TurnGold(label=("episodic",), plan="clarify", route="knowledge")
    assert s.gold_of("t1#6").plan == "transfer" and s.gold_of("rma-wait-1").label == ("episodic", "sentiment")
    assert s.gold_of("t1#2") == TurnGold()  # an agent turn without gold
    assert all(type(t) is Turn for t in s.turns)
    assert {f for t in s.turns for f in t.__slots__} == {"id", "subject", "session", "role", "kind", "text", "at"}


def test_turn_signals_keep_only_what_the_file_scripts():
    s = load_scenario(EXTENSIONS)
    assert s.signals_of("t1-crash").scripted() == {"complexity": False, "sensitive": "none"}
    assert s.signals_of("t1#2") == TurnSignals(asked_question=True)
    assert s.signals_of("t1-update").offer_live is True
    assert s.signals_of("t1-restart") == TurnSignals() and "t1-restart" not in s.turn_signals


def test_the_probe_keys_of_the_extensions_load_into_the_runtime_expect():
    e = load_scenario(EXTENSIONS).probes[0].expect
    assert e.returning is True
    assert e.memories[0] == ExpectMemory(type="INCIDENT", text="crash", status="resolved", source="t1-crash")
    assert [(m.type, m.outcome) for m in e.memories] == [
        ("INCIDENT", None), ("ATTEMPT", "failed"), ("ATTEMPT", "worked"), ("PROFILE", None)]
    assert e.known_fixes == ("t1-update",) and e.known_failures == ("t1-restart", TextNeedle("cache"))
    assert e.expired == ("rma-wait-1",)
    assert hash(e) == hash(load_scenario(EXTENSIONS).probes[0].expect)


def test_an_empty_memories_list_is_gold_not_absence(tmp_path):
    e = load_scenario(write(tmp_path, probe("{memories: []}"))).probes[0].expect
    assert e.memories == () and e.is_set("memories")
    assert load_scenario(write(tmp_path, probe("{}"))).probes[0].expect.memories is None


def test_returning_false_is_gold_too(tmp_path):
    e = load_scenario(write(tmp_path, probe("{returning: false}"))).probes[0].expect
    assert e.returning is False and e.to_data() == {"returning": False}


# -- structure: unknown names, with what was expected ------------------------------------------


def test_an_unknown_plan_is_refused_with_the_plans_and_a_suggestion(tmp_path):
    path = write(tmp_path, HISTORY + '- turn: "please"\n  plan: trasnfer\n')
    issue = only(validate_paths([path]))
    assert issue.line == line_of(path, "plan: trasnfer") and issue.path == "events[4].turn.plan"
    assert issue.message == ("unknown plan 'trasnfer' (expected continue | clarify | offer_live | transfer | escalate | csat)"
                             "; did you mean 'transfer'?")


def test_an_unknown_route_is_refused_with_the_routes(tmp_path):
    issue = only(problems(tmp_path, HISTORY + '- turn: "recommend a game"\n  route: games\n'))
    assert issue.message.startswith("unknown route 'games' (expected knowledge | recommendation | retention)")


def test_an_unknown_signal_is_refused_with_the_signals_and_a_suggestion(tmp_path):
    path = write(tmp_path, HISTORY + '- turn: "you are useless"\n  signals: {hostle: true}\n')
    issue = only(validate_paths([path]))
    assert issue.line == line_of(path, "hostle") and issue.path == "events[4].turn.signals.hostle"
    assert issue.message.startswith("unknown signal 'hostle'; did you mean 'hostile'? (allowed here: sensitive, human_request,")


def test_a_signal_value_must_have_its_type(tmp_path):
    assert "valid boolean" in only(problems(tmp_path, HISTORY + '- turn: "x"\n  signals: {hostile: "yes"}\n')).message
    issue = only(problems(tmp_path, HISTORY + '- turn: "x"\n  signals: {sensitive: self_harm}\n'))
    assert issue.message.startswith("unknown sensitive 'self_harm' (expected none | harm | crisis)")


def test_an_unknown_memory_type_is_refused_with_the_types_and_a_suggestion(tmp_path):
    path = write(tmp_path, probe("\n    memories:\n      - {type: ATEMPT, text: restart}"))
    issue = only(validate_paths([path]))
    assert issue.path == "events[4].probe.expect.memories[0].type" and issue.line == line_of(path, "ATEMPT")
    assert issue.message == "unknown type 'ATEMPT' (expected ATTEMPT | INCIDENT | PROFILE); did you mean 'ATTEMPT'?"


def test_a_memory_status_is_an_incident_status_not_a_session_status(tmp_path):
    issue = only(problems(tmp_path, probe("{memories: [{type: INCIDENT, text: crash, status: unresolved}]}")))
    assert issue.message.startswith("unknown status 'unresolved' (expected open | resolved)")


def test_a_memory_needs_its_text_and_knows_its_keys(tmp_path):
    assert only(problems(tmp_path, probe("{memories: [{type: PROFILE}]}"))).message == "missing required key 'text'"
    issue = only(problems(tmp_path, probe("{memories: [{type: PROFILE, text: pdf, sorce: crash}]}")))
    assert issue.message.startswith("unknown key 'sorce'; did you mean 'source'? (allowed here: type, text, outcome, status, source)")


def test_an_unknown_fault_is_refused_with_the_faults_and_a_suggestion(tmp_path):
    path = write(tmp_path, HISTORY + "- fault: locker_dwn\n")
    issue = only(validate_paths([path]))
    assert issue.line == line_of(path, "locker_dwn") and issue.path == "events[4].fault"
    assert issue.message == "unknown fault 'locker_dwn' (expected locker_down | locker_up); did you mean 'locker_down'?"


def test_a_signal_name_is_a_slug_and_its_ref_is_text(tmp_path):
    assert "is not a slug" in only(problems(tmp_path, HISTORY + '- signal: "rma closed"\n')).message
    issue = only(problems(tmp_path, HISTORY + '- signal: rma_closed\n  ref: ""\n'))
    assert issue.path == "events[4].signal.ref"


def test_an_unknown_key_on_a_signal_event_lists_its_keys(tmp_path):
    issue = only(problems(tmp_path, HISTORY + "- signal: rma_closed\n  reference: RMA 1\n"))
    assert issue.message.startswith("unknown key 'reference'") and "allowed here: at, subject, session, signal, ref" in issue.message


def test_returning_must_be_a_boolean(tmp_path):
    issue = only(problems(tmp_path, probe("{returning: yes}")))
    assert issue.path == "events[4].probe.expect.returning" and "valid boolean" in issue.message


# -- meaning: roles, types, ids ----------------------------------------------------------------


def test_plan_and_route_are_only_for_customer_turns(tmp_path):
    path = write(tmp_path, HISTORY + '- turn: "Let me transfer you."\n  role: agent\n  plan: transfer\n  route: knowledge\n')
    issues = validate_paths([path])
    assert [(i.path, i.message) for i in issues] == [
        ("events[4].turn.plan", "plan is only for customer turns; this turn's role is agent"),
        ("events[4].turn.route", "route is only for customer turns; this turn's role is agent"),
    ]
    assert issues[0].line == line_of(path, "plan: transfer")


def test_offer_live_and_asked_question_are_only_for_agent_turns(tmp_path):
    issues = problems(tmp_path, HISTORY + '- turn: "ok"\n  signals: {offer_live: true, asked_question: false}\n')
    assert [(i.path, i.message) for i in issues] == [
        ("events[4].turn.signals.offer_live", "offer_live is only for agent turns; this turn's role is customer"),
        ("events[4].turn.signals.asked_question", "asked_question is only for agent turns; this turn's role is customer"),
    ]


def test_a_memory_outcome_is_only_for_attempts_and_a_status_only_for_incidents(tmp_path):
    issues = problems(tmp_path, probe(
        "{memories: [{type: INCIDENT, text: crash, outcome: failed}, {type: ATTEMPT, text: restart, status: open}]}"))
    assert [(i.path, i.message) for i in issues] == [
        ("events[4].probe.expect.memories[0].outcome", "outcome is only for ATTEMPT memories; this one is INCIDENT"),
        ("events[4].probe.expect.memories[1].status", "status is only for INCIDENT memories; this one is ATTEMPT"),
    ]


def test_a_memory_source_is_a_turn_of_the_subject_that_already_happened(tmp_path):
    unknown = only(problems(tmp_path, probe("{memories: [{type: ATTEMPT, text: restart, source: restrat}]}")))
    assert unknown.path == "events[4].probe.expect.memories[0].source"
    assert unknown.message.startswith("unknown id 'restrat'") and "did you mean 'restart'?" in unknown.message
    other = only(problems(tmp_path, probe("{memories: [{type: PROFILE, text: sso, source: sso}]}")))
    assert other.message.startswith("'sso' belongs to subject 'cust_b', not to the probe's subject 'cust_a'")
    resolution = only(problems(tmp_path, probe("{memories: [{type: INCIDENT, text: crash, source: s1#resolution}]}")))
    assert resolution.message == "'s1#resolution' is a resolution record; a memory's source is a turn id"
    later = only(problems(tmp_path, probe("{memories: [{type: PROFILE, text: x, source: late}]}") + '- turn: "x"\n  id: late\n'))
    assert later.message.startswith("'late' has not happened yet at this probe")


def test_known_fixes_and_failures_name_the_subjects_items_or_text(tmp_path):
    assert problems(tmp_path, probe("{known_fixes: [s1#resolution, {text: update}], known_failures: [restart]}")) == []
    issues = problems(tmp_path, probe("{known_fixes: [nope], known_failures: [sso]}"))
    assert [(i.path, i.message.split(" (")[0]) for i in issues] == [
        ("events[4].probe.expect.known_fixes[0]", "unknown id 'nope'"),
        ("events[4].probe.expect.known_failures[0]", "'sso' belongs to subject 'cust_b', not to the probe's subject 'cust_a'"),
    ]


def test_expired_ids_must_exist_before_the_probe(tmp_path):
    issue = only(problems(tmp_path, probe("{expired: [late]}") + '- turn: "x"\n  id: late\n'))
    assert issue.path == "events[4].probe.expect.expired[0]" and issue.message.startswith("'late' has not happened yet")


def test_a_signal_event_names_a_known_subject_in_its_own_sessions(tmp_path):
    issue = only(problems(tmp_path, HISTORY + "- signal: rma_closed\n  subject: cust_c\n  session: s9\n"))
    assert issue.path == "events[4].signal.subject" and issue.message.startswith("unknown subject 'cust_c'")
    clash = only(problems(tmp_path, HISTORY + "- signal: rma_closed\n  subject: cust_b\n  session: s1\n"))
    assert clash.message.startswith("session 's1' belongs to subject 'cust_a'")


def test_a_signal_as_first_event_must_name_subject_and_session(tmp_path):
    issue = only(problems(tmp_path, "- signal: rma_closed\n  subject: cust_a\n- turn: hi\n"))
    assert issue.message == "the first event must name both subject and session (missing: session)"


def test_a_fault_naming_a_subject_must_name_a_known_one(tmp_path):
    issue = only(problems(tmp_path, HISTORY + "- fault: locker_down\n  subject: nobody\n"))
    assert issue.path == "events[4].fault.subject" and issue.message.startswith("unknown subject 'nobody'")


def test_every_problem_of_the_extensions_is_reported_at_once(tmp_path):
    events = HISTORY + ('- turn: "x"\n  role: agent\n  plan: transfer\n'
                        "- fault: locker_dwn\n"
                        '- turn: "y"\n  signals: {hostle: true}\n') + probe("{expired: [nope]}").removeprefix(HISTORY)
    assert len(problems(tmp_path, events)) == 4

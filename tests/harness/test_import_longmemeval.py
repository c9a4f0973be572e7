"""`supportbench import longmemeval` on small files in LongMemEval's layout: the mapping, the
session-level gold and its criterion, abstention questions, bad input, and an M-shaped file
imported one question at a time in bounded memory."""

import json
import tracemalloc

import pytest

from harness.cli import main
from harness.format.loader import load_suite
from harness.importers import Summary, write_suite
from harness.importers.longmemeval import import_longmemeval, write_shaped

QUESTIONS = [
    {"question_id": "q1", "question_type": "single-session-user", "question": "What is my cat called?", "answer": "Miso",
     "question_date": "2023/06/01 (Thu) 10:00",
     # the file lists the later session first: sessions are ordered by date
     "haystack_session_ids": ["s_b", "s_a"], "haystack_dates": ["2023/05/21 (Sun) 09:00", "2023/05/20 (Sat) 02:21"],
     "haystack_sessions": [
         [{"role": "user", "content": "I adopted a cat, her name is Miso.", "has_answer": True},
          {"role": "assistant", "content": "Lovely name!"}],
         [{"role": "user", "content": "Recommend a pasta recipe."}, {"role": "assistant", "content": "Try cacio e pepe."}]],
     "answer_session_ids": ["s_b"]},
    {"question_id": "q2_abs", "question_type": "knowledge-update", "question": "What is my dog called?",
     "answer": "You never mentioned a dog.", "question_date": "2023/06/01 (Thu) 10:00",
     "haystack_session_ids": ["s_c"], "haystack_dates": ["2023/05/21 (Sun) 09:00"],
     "haystack_sessions": [[{"role": "user", "content": "My cat Miso sleeps all day.", "has_answer": True},
                            {"role": "assistant", "content": "Cats do."}]],
     "answer_session_ids": ["s_c"]},
    {"question_id": "q3", "question_type": "multi-session", "question": "Anything?", "answer": "?",
     "question_date": "2023/06/01 (Thu) 10:00",
     "haystack_session_ids": ["s_d"], "haystack_dates": ["2023/05/21 (Sun) 09:00"],
     "haystack_sessions": [[{"role": "user", "content": "Hello."}]], "answer_session_ids": []},
]


def write(tmp_path, data, name="longmemeval_s.json"):
    p = tmp_path / name
    p.write_text(json.dumps(data, indent=1), encoding="utf-8")
    return p


def test_the_mapping_and_the_session_gold(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["import", "longmemeval", str(write(tmp_path, QUESTIONS)), "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert "wrote 3 scenario(s) (7 turns, 3 probes)" in err
    assert "1 questions without evidence (imported unlabelled, in no score)" in err and "q3 ([2])" in err
    assert main(["validate", str(out)]) == 0
    by = {s.id: s for s in load_suite([str(out)])}
    q1 = by["lme-q1"]
    assert [t.id for t in q1.turns] == ["s_a#1", "s_a#2", "s_b#1", "s_b#2"]  # ordered by date, default ids
    assert [t.role for t in q1.turns] == ["customer", "agent", "customer", "agent"]
    (p,) = q1.probes
    assert p.expect.include == ("s_b#1",) and p.expect.evidence_sessions == ("s_b",)
    assert p.tags == ("single-session-user",) and p.task == "What is my cat called?" and p.session == "question"
    assert p.at.isoformat() == "2023-06-01T10:00:00+00:00" and not p.unlabelled
    (abs_probe,) = by["lme-q2_abs"].probes
    assert abs_probe.tags == ("knowledge-update", "abstention") and abs_probe.expect.include == ("s_c#1",)
    (unl,) = by["lme-q3"].probes
    assert unl.unlabelled and unl.expect.to_data() == {}


def test_session_recall_and_no_score_for_an_unlabelled_probe(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["import", "longmemeval", str(write(tmp_path, QUESTIONS)), "--out", str(out)]) == 0
    runs = tmp_path / "runs"
    assert main(["run", str(out), "--strategies", "oracle,empty", "--out", str(runs), "--run-id", "r", "--quiet"]) == 0
    capsys.readouterr()
    assert main(["report", str(runs / "r"), "--all", "--format", "json"]) == 0
    cells = json.loads(capsys.readouterr().out)["strategies"]
    assert cells["oracle"]["session_recall"]["mean"] == 1.0 and cells["oracle"]["recall"]["mean"] == 1.0
    assert cells["empty"]["session_recall"]["mean"] == 0.0
    assert cells["oracle"]["session_recall"]["n"] == 2  # q3 is unlabelled: in no score
    from harness.analysis.results import Results

    with Results(runs / "r") as res:
        assert res.rows("SELECT count(*) FROM scores WHERE probe_id = 'q3'") == [(0,)]  # in no score, not even a gate
        assert res.rows("SELECT count(*) FROM probes WHERE probe_id = 'q3'") == [(2,)]  # but it ran, for both
        assert res.rows("SELECT unlabelled FROM events WHERE item_id = 'q3'") == [(True,)]


@pytest.mark.parametrize("data, where, expected", [
    ('[{"question_id": "q1",\n  "question": }]', "line 2", "not valid JSON"),
    ('{"question_id": "q1"}', ":1:", "expected a JSON list of questions"),
    (json.dumps([{**QUESTIONS[0], "haystack_dates": ["2023/05/21 (Sun) 09:00"]}]), "[0]", "must be the same length"),
    (json.dumps([{k: v for k, v in QUESTIONS[0].items() if k != "haystack_sessions"}]), "[0]", "no 'haystack_sessions'"),
    (json.dumps([{**QUESTIONS[0], "haystack_dates": ["yesterday", "2023/05/20 (Sat) 02:21"]}]), "[0].haystack_dates[0]",
     "is not a date like"),
    (json.dumps([{**QUESTIONS[0], "haystack_sessions": [[{"role": "bot", "content": "x"}], []]}]),
     "[0].haystack_sessions[0][0].role", "expected 'user' or 'assistant'"),
    (json.dumps([{**QUESTIONS[0], "answer_session_ids": ["nope"]}]), "[0].answer_session_ids", "not among the haystack"),
    (json.dumps([QUESTIONS[0], QUESTIONS[0]]), "[1].question_id", "given twice"),
])
def test_bad_input_is_one_error_with_file_and_place_and_nothing_written(tmp_path, capsys, data, where, expected):
    src = tmp_path / "lme.json"
    src.write_text(data, encoding="utf-8")
    out = tmp_path / "out"
    assert main(["import", "longmemeval", str(src), "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "lme.json" in err and where in err and expected in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lme.json"]  # no output, no temporary folder


def _peak_import(src, out) -> int:
    tracemalloc.start()
    try:
        write_suite(import_longmemeval(src, 550, Summary()), out)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_an_m_shaped_file_is_read_one_question_at_a_time(tmp_path):
    """Peak memory does not grow with the number of questions: three times the questions, about
    the same peak (each question's scenario is written and checked before the next is read)."""
    small = write_shaped(tmp_path / "small.json", 2, sessions=60, turns=6, seed=1)
    large = write_shaped(tmp_path / "large.json", 6, sessions=60, turns=6, seed=1)
    assert large.stat().st_size > 2.5 * small.stat().st_size
    p_small = _peak_import(small, tmp_path / "o-small")
    p_large = _peak_import(large, tmp_path / "o-large")
    assert len(list((tmp_path / "o-large").iterdir())) == 6
    assert p_large < 1.5 * p_small, (p_small, p_large)
    (sc,) = load_suite([str(tmp_path / "o-small" / "lme-q0000.yaml")])
    assert len(sc.turns) == 360 and sc.probes[0].expect.evidence_sessions


def test_an_unlabelled_probe_may_carry_no_gold(tmp_path, capsys):
    bad = tmp_path / "u.yaml"
    bad.write_text("id: u\nversion: 1\ntitle: t\nstart: 2026-01-01T00:00:00Z\nsubjects: {c: {}}\nevents:\n"
                   "  - turn: hi\n    subject: c\n    session: s\n"
                   "  - probe: p\n    task: x\n    unlabelled: true\n    expect: {include: [s#1]}\n")
    assert main(["validate", str(bad)]) == 1
    assert "u.yaml:12 events[1].probe.unlabelled: an unlabelled probe has no gold" in capsys.readouterr().out
    bad.write_text(bad.read_text().replace("    expect: {include: [s#1]}\n", ""))
    assert main(["validate", str(bad)]) == 0


def test_evidence_sessions_name_sessions_of_the_subject_begun_before_the_probe(tmp_path, capsys):
    f = tmp_path / "e.yaml"
    f.write_text("id: e\nversion: 1\ntitle: t\nstart: 2026-01-01T00:00:00Z\nsubjects: {c: {}, d: {}}\nevents:\n"
                 "  - turn: hi\n    subject: c\n    session: s1\n"
                 "  - turn: other\n    subject: d\n    session: z1\n"
                 "  - probe: p\n    subject: c\n    session: q\n    task: x\n"
                 "    expect: {evidence_sessions: [s1, s2, z1, nope]}\n"
                 "  - turn: later\n    session: s2\n")
    assert main(["validate", str(f)]) == 1
    out = capsys.readouterr().out
    assert "evidence_sessions[1]: session 's2' has no turn before this probe" in out
    assert "evidence_sessions[2]: session 'z1' belongs to subject 'd'" in out
    assert "evidence_sessions[3]: unknown session 'nope'" in out
    assert "evidence_sessions[0]" not in out  # s1 is the subject's, begun before the probe, unresolved: fine

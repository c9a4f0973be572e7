"""`supportbench import longmemeval`: LongMemEval's files as scenarios, one per question.

LongMemEval (xiaowu0162/LongMemEval) gives each question its own history, a haystack of
user-assistant sessions: a JSON list of objects with `question_id`, `question_type`,
`question`, `answer`, `question_date`, `haystack_session_ids`, `haystack_dates`,
`haystack_sessions` (lists of `{role, content, has_answer?}` turns) and `answer_session_ids`.
Question ids ending in `_abs` are abstention questions.

The mapping (docs/external-data.md): one scenario per question, one subject (`user`), the user's
turns as the customer's and the assistant's as the agent's; sessions keep their ids and start at
their `haystack_dates` (sessions are ordered by date; ties keep the file's order); turn ids are
the format's default `<session>#<n>`. The question is a probe after the last session, in a
session of its own, with the turns marked `has_answer` as `include` gold (turn recall, and the rank
metrics) and `answer_session_ids` as `evidence_sessions` gold (session recall). `question_type` is the
probe's tag; an abstention question also carries the tag `abstention`. Abstention questions are
kept: their question asks about something the history never says, and their evidence is what a
reader needs in front of it to say so (the nearby fact the question twists), so they are scored
on whether that evidence is in the context, and can be read apart under their tag.

The M file holds about 500 sessions per question (2.7 GB): it is read one question at a time
(`ijson`), and each scenario is written and checked before the next is read.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Iterator

import ijson

from harness.importers import InputError, ScenarioBuilder, Summary

DEFAULT_BUDGET = 550
"""Tokens of context per question (the same default as the LoCoMo import)."""

SUBJECT = "user"

_DATE = re.compile(r"\s*(\d{4})/(\d{1,2})/(\d{1,2})\s*(?:\([A-Za-z]{3}\))?\s*(\d{1,2}):(\d{2})\s*")


def parse_date(text: Any, name: str, where: str) -> datetime:
    """LongMemEval's `2023/05/20 (Sat) 02:21` as a UTC time."""
    m = _DATE.fullmatch(text) if isinstance(text, str) else None
    if m is None:
        raise InputError(name, where, f"{text!r} is not a date like '2023/05/20 (Sat) 02:21'")
    y, mo, d, h, mi = (int(x) for x in m.groups())
    try:
        return datetime(y, mo, d, h, mi, tzinfo=timezone.utc)
    except ValueError as e:
        raise InputError(name, where, f"{text!r}: {e}") from None


def _iso(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def _kind(v: Any) -> str:
    return {dict: "a mapping", list: "a list", str: "a string"}.get(type(v), type(v).__name__)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-") or "q"


def questions(path: Path) -> Iterator[tuple[int, Any]]:
    """(index, object) of each question of the file, read one at a time."""
    name = str(path)
    if not path.is_file():
        raise InputError(name, "", "no such file" if not path.exists() else "not a file: give the LongMemEval .json file")
    with path.open("rb") as f:
        head = f.read(1024).lstrip()
        if head.startswith(b"\xef\xbb\xbf"):
            head = head[3:].lstrip()
        if not head.startswith(b"["):
            raise InputError(name, "1", "not a LongMemEval file: expected a JSON list of questions")
        f.seek(0)
        try:
            for i, q in enumerate(ijson.items(f, "item", use_float=True)):
                yield i, q
        except ijson.JSONError as e:
            raise InputError(name, _position(path), f"not valid JSON ({_message(e)})") from None


def _message(e: Exception) -> str:
    return str(e).splitlines()[0] if str(e) else type(e).__name__


def _position(path: Path) -> str:
    """`line N` of the file's first JSON error. The fast parser (yajl) does not say where it
    stopped, so the file is read again, streaming, by ijson's pure-Python parser, which reports
    the byte offset; only a file already found broken pays for it."""
    offset = None
    with path.open("rb") as f:
        try:
            for _ in ijson.get_backend("python").parse(f):
                pass
        except ijson.JSONError as e:
            m = re.search(r"at (\d+)", str(e))
            offset = int(m.group(1)) if m else None
        except Exception:
            offset = None
    if offset is None:
        return ""
    line = 1
    with path.open("r", encoding="utf-8", errors="replace", newline="") as f:  # the offset counts characters
        read = 0
        while read < offset:
            chunk = f.read(min(1 << 20, offset - read))
            if not chunk:
                break
            line += chunk.count("\n")
            read += len(chunk)
    return f"line {line}"


def convert(q: Any, index: int, name: str, budget: int, summary: Summary) -> tuple[str, str]:
    """(file name, YAML text) of one question's scenario."""
    where = f"[{index}]"
    if not isinstance(q, dict):
        raise InputError(name, where, f"a question is a mapping (question_id, question, haystack_sessions, …), not {_kind(q)}")
    for key in ("question_id", "question", "haystack_session_ids", "haystack_dates", "haystack_sessions"):
        if key not in q:
            raise InputError(name, where, f"question has no '{key}'")
    qid = q["question_id"]
    if not isinstance(qid, (str, int)) or not str(qid).strip():
        raise InputError(name, f"{where}.question_id", "expected a non-empty id")
    qid = str(qid)
    question = q["question"]
    if not isinstance(question, str) or not question.strip():
        raise InputError(name, f"{where}.question", "expected the question's text")
    ids, dates, sessions = q["haystack_session_ids"], q["haystack_dates"], q["haystack_sessions"]
    for key, v in (("haystack_session_ids", ids), ("haystack_dates", dates), ("haystack_sessions", sessions)):
        if not isinstance(v, list):
            raise InputError(name, f"{where}.{key}", f"expected a list, found {_kind(v)}")
    if not (len(ids) == len(dates) == len(sessions)):
        raise InputError(name, where, f"haystack_session_ids ({len(ids)}), haystack_dates ({len(dates)}) and "
                         f"haystack_sessions ({len(sessions)}) must be the same length")
    qtype = q.get("question_type") or "unknown"
    if not isinstance(qtype, str):
        raise InputError(name, f"{where}.question_type", f"expected a string, found {_kind(qtype)}")
    abstention = qid.endswith("_abs")
    answers = q.get("answer_session_ids") or []
    if not isinstance(answers, list):
        raise InputError(name, f"{where}.answer_session_ids", f"expected a list, found {_kind(answers)}")

    order = sorted(range(len(ids)), key=lambda j: parse_date(dates[j], name, f"{where}.haystack_dates[{j}]"))
    sid = f"lme-{_slug(qid)}"
    b = ScenarioBuilder(
        sid=sid, title=f"LongMemEval {qid} ({qtype}{', abstention' if abstention else ''}): {len(ids)} sessions",
        description=(f"Imported from {Path(name).name} by supportbench import longmemeval. The user speaks as the "
                     "customer, the assistant as the agent; the question is the probe after the last session."),
        tags=["longmemeval", "imported"],
        start=_iso(parse_date(dates[order[0]], name, f"{where}.haystack_dates[{order[0]}]")) if ids else "2000-01-01T00:00:00Z",
        subjects={SUBJECT: "user"},
        header=f"LongMemEval question {qid}, imported by supportbench import longmemeval (docs/external-data.md).",
    )
    clock: datetime | None = None
    seen: set[str] = set()
    evidence: list[str] = []
    for j in order:
        session = ids[j]
        w = f"{where}.haystack_session_ids[{j}]"
        if not isinstance(session, (str, int)) or not str(session).strip():
            raise InputError(name, w, "expected a non-empty session id")
        session = str(session)
        if session in seen:
            raise InputError(name, w, f"session id '{session}' given twice")
        if session == "question":
            raise InputError(name, w, "'question' is the session the import gives the question itself")
        seen.add(session)
        turns = sessions[j]
        if not isinstance(turns, list):
            raise InputError(name, f"{where}.haystack_sessions[{j}]", f"expected a list of turns, found {_kind(turns)}")
        start = parse_date(dates[j], name, f"{where}.haystack_dates[{j}]")
        if clock is not None and start <= clock:
            start = clock + timedelta(minutes=1)  # sessions of the same minute: one after the other
        n = 0
        for k, t in enumerate(turns):
            tw = f"{where}.haystack_sessions[{j}][{k}]"
            if not isinstance(t, dict):
                raise InputError(name, tw, f"a turn is a mapping with role and content, not {_kind(t)}")
            role, content = t.get("role"), t.get("content")
            if role not in ("user", "assistant"):
                raise InputError(name, f"{tw}.role", f"expected 'user' or 'assistant', found {role!r}")
            if not isinstance(content, str):
                raise InputError(name, f"{tw}.content", f"expected the turn's text, found {_kind(content)}")
            n += 1
            at = start if n == 1 else clock + timedelta(minutes=1)
            explicit: dict[str, Any] = {}
            if n == 1:
                explicit = {"at": _iso(at), "session": session} if b.turns else {"at": _iso(at), "subject": SUBJECT, "session": session}
            turn_id = f"{session}#{n}"
            b.turn(content, subject=SUBJECT, session=session, at=at, role="customer" if role == "user" else "agent",
                   turn_id=turn_id, explicit=explicit, write_id=False)
            if t.get("has_answer") is True:
                evidence.append(turn_id)
            clock = at
    missing = [s for s in answers if str(s) not in seen]
    if missing:
        raise InputError(name, f"{where}.answer_session_ids", f"{', '.join(map(str, missing))} not among the haystack's sessions")
    answer_sessions = list(dict.fromkeys(str(s) for s in answers))
    if b.turns == 0:
        raise InputError(name, where, "the haystack has no turns")
    asked = parse_date(q.get("question_date"), name, f"{where}.question_date") if q.get("question_date") else clock + timedelta(days=1)
    if asked <= clock:
        summary.notes.append(f"{qid}: question_date {q.get('question_date')} is not after the last session; asked one minute after it")
        asked = clock + timedelta(minutes=1)
    expect: dict[str, Any] = {}
    if evidence:
        expect["include"] = evidence
    # a session the history holds with no turn cannot be drawn on: it is reported, not asked for
    empty = [s for s in answer_sessions if f"{s}#1" not in b.histories[SUBJECT].pos]
    if empty:
        summary.notes.append(f"{qid}: answer session(s) {', '.join(empty)} have no turns; left out of its session gold")
    answer_sessions = [s for s in answer_sessions if s not in empty]
    if answer_sessions:
        expect["evidence_sessions"] = answer_sessions
    tags = [_slug(qtype)] + (["abstention"] if abstention else [])
    answer = q.get("answer")
    written, _ = b.probe(_slug(qid), subject=SUBJECT, session="question", at=asked, task=question.strip(), budget=budget,
                         tags=tags, expect=expect, explicit={"at": _iso(asked), "session": "question"},
                         comment=f"answer: {answer}" if answer is not None else None, unlabelled=not expect)
    if written > budget:
        summary.raise_budget(f"{qid}: budget {written}, the tokens its evidence needs")
    if not expect:
        summary.leave_out("questions without evidence (imported unlabelled, in no score)", f"{qid} ({where}): no has_answer turn and no answer session")
    summary.scenarios += 1
    summary.turns += b.turns
    summary.probes += b.probes
    return f"{sid}.yaml", b.text()


def import_longmemeval(path: str | Path, budget: int = DEFAULT_BUDGET, summary: Summary | None = None) -> Iterator[tuple[str, str]]:
    """Each question of the file as a scenario file (name, YAML text), one at a time."""
    summary = summary if summary is not None else Summary()
    path = Path(path)
    names: set[str] = set()
    for i, q in questions(path):
        fname, text = convert(q, i, str(path), budget, summary)
        if fname in names:
            raise InputError(str(path), f"[{i}].question_id", f"question id given twice ({fname})")
        names.add(fname)
        yield fname, text


# -- a file of the M file's shape, for measuring ---------------------------------------------

_WORDS = ("order", "refund", "printer", "router", "invoice", "weekend", "garden", "recipe", "flight", "hotel",
          "battery", "laptop", "coffee", "meeting", "budget", "course", "running", "guitar", "museum", "train",
          "password", "account", "delivery", "jacket", "camera", "yoga", "dentist", "insurance", "lease", "puppy")
_PETS = ("cat", "dog", "parrot", "rabbit", "hamster", "tortoise")
_NAMES = ("Miso", "Pepper", "Luna", "Biscuit", "Nori", "Olive", "Mango", "Pixel", "Juniper", "Tofu")


def write_shaped(path: str | Path, questions: int, sessions: int = 500, turns: int = 10, seed: int = 0) -> Path:
    """Write a file with LongMemEval's layout and the M file's shape (`sessions` sessions of
    `turns` turns per question) with generated text, one question at a time (so a file of any
    size is written in bounded memory). Each question plants one fact in one session (the
    `has_answer` turn and the answer session) and asks for it; every fifth is an abstention
    question. The same arguments write the same bytes."""
    import json
    import random

    rng = random.Random(seed)
    path = Path(path)
    with path.open("w", encoding="utf-8") as f:
        f.write("[")
        for qi in range(questions):
            pet, name = rng.choice(_PETS), rng.choice(_NAMES)
            planted = rng.randrange(sessions)
            ids, dates, hay = [], [], []
            for si in range(sessions):
                day = datetime(2023, 1, 1, tzinfo=timezone.utc) + timedelta(hours=7 * si + rng.randrange(6))
                sess = []
                for ti in range(turns):
                    words = " ".join(rng.choice(_WORDS) for _ in range(rng.randrange(8, 24)))
                    sess.append({"role": "user" if ti % 2 == 0 else "assistant", "content": f"About the {words}."})
                if si == planted:
                    sess[0] = {"role": "user", "content": f"By the way, my {pet} is called {name}.", "has_answer": True}
                ids.append(f"q{qi}_s{si}")
                dates.append(day.strftime("%Y/%m/%d (%a) %H:%M"))
                hay.append(sess)
            abstain = qi % 5 == 4
            asked = pet if not abstain else next(p for p in _PETS if p != pet)
            q = {"question_id": f"q{qi:04d}" + ("_abs" if abstain else ""),
                 "question_type": "single-session-user", "question": f"What is my {asked} called?",
                 "answer": name if not abstain else f"You did not mention a {asked}.",
                 "question_date": (day + timedelta(days=1)).strftime("%Y/%m/%d (%a) %H:%M"),
                 "haystack_session_ids": ids, "haystack_dates": dates, "haystack_sessions": hay,
                 "answer_session_ids": [ids[planted]]}
            f.write(("," if qi else "") + "\n" + json.dumps(q))
        f.write("\n]\n")
    return path

"""`supportbench import locomo`: the LoCoMo release as scenarios, one per conversation.

LoCoMo (snap-research/locomo) ships ten long two-person conversations with questions whose
`evidence` names the dialog turns that answer them. Both of its layouts are read:

- `locomo10.json`: a list of samples, each `{"sample_id", "conversation": {...}, "qa": [...]}`;
- the folder (or its zip) of per-conversation files `locomo10_v2/<id>.json`, with the
  conversation's keys at top level beside `qa` (and `events_session_N`, which is not needed).

The mapping (docs/external-data.md): one subject per conversation, `speaker_a` as the customer
and `speaker_b` as the agent, each turn's text prefixed with its speaker's name so both names stay
visible; a shared image appears as its caption (`blip_caption`); each session starts at its
`session_N_date_time`, parsed, and the date as written is kept as a comment above it; turn ids
are the dialog ids (`D1:3`). Every question becomes a probe after the last session, in a session
of its own (`questions`), with its evidence as `include` gold and its category as a probe tag.
Category 5 (adversarial: the question has no answer in the conversation) is left out unless
asked for; a question whose evidence names a turn that does not exist is left out and reported
with its index, never dropped silently.
"""

from __future__ import annotations

import json
import re
import zipfile
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Iterator

from harness.importers import InputError, ScenarioBuilder, Summary

DEFAULT_BUDGET = 550
"""Tokens of context per question: the budget the measured LoCoMo leaderboards use."""

DEFAULT_CATEGORIES = (1, 2, 3, 4)
"""Category 5 (adversarial) has no answer in the conversation: left out unless asked for."""

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
"""The names the field uses for LoCoMo's question categories (the release numbers them only)."""

MAX_JSON_BYTES = 256 * 1024 * 1024
"""Largest JSON document read whole (the whole release is under 3 MB): a bigger one is refused."""

_SESSION = re.compile(r"session_(\d+)")
_DIA = re.compile(r"D(\d+):0*(\d+)")


def category_tag(category: int) -> str:
    """The probe tag of a LoCoMo category, e.g. `cat2-temporal`."""
    return f"cat{category}-{CATEGORIES.get(category, 'other')}"


@dataclass
class Conversation:
    """One sample as read: where it came from, its id (`conv-26`), its conversation and questions."""

    source: str
    sample_id: str
    conversation: dict[str, Any]
    qa: list[Any]


# -- reading the layouts ---------------------------------------------------------------------


def _load_json(name: str, raw: bytes) -> Any:
    if len(raw) > MAX_JSON_BYTES:
        raise InputError(name, "", f"{len(raw):,} bytes is larger than any LoCoMo file ({MAX_JSON_BYTES:,} bytes at most)")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise InputError(name, "", f"not UTF-8 text ({e.reason} at byte {e.start})") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise InputError(name, f"{e.lineno}:{e.colno}", f"not valid JSON ({e.msg})") from None
    except RecursionError:
        raise InputError(name, "", "JSON nested too deeply to be a LoCoMo file") from None


def _documents(path: Path) -> Iterator[tuple[str, bytes, str]]:
    """(name for messages, bytes, stem) of each JSON document under PATH."""
    if path.is_dir():
        files = sorted((f for f in path.rglob("*.json") if f.is_file()
                        and not any(p.startswith(".") for p in f.relative_to(path).parts)), key=_numeric)
        if not files:
            raise InputError(str(path), "", "no .json files in this folder: expected LoCoMo's locomo10.json or "
                             "its locomo10_v2/<id>.json files")
        for f in files:
            yield str(f), f.read_bytes(), f.stem
    elif path.suffix.lower() == ".zip":
        try:
            zf = zipfile.ZipFile(path)
        except zipfile.BadZipFile as e:
            raise InputError(str(path), "", f"not a zip archive ({e})") from None
        with zf:
            members = sorted((m for m in zf.infolist() if m.filename.endswith(".json") and not m.is_dir()
                              and not m.filename.startswith("__MACOSX/")), key=lambda m: _numeric(Path(m.filename)))
            if not members:
                raise InputError(str(path), "", "no .json files in this zip: expected LoCoMo's locomo10_v2/<id>.json files")
            for m in members:
                name = f"{path}:{m.filename}"
                if m.file_size > MAX_JSON_BYTES:
                    raise InputError(name, "", f"{m.file_size:,} bytes unpacked is larger than any LoCoMo file")
                yield name, zf.read(m), Path(m.filename).stem
    elif path.is_file():
        yield str(path), path.read_bytes(), path.stem
    else:
        raise InputError(str(path), "", "no such file or folder")


def _numeric(p: Path) -> tuple:
    return (str(p.parent), int(p.stem) if p.stem.isdigit() else float("inf"), p.name)


def read_conversations(path: str | Path) -> Iterator[Conversation]:
    """Every conversation under PATH, in either layout."""
    for name, raw, stem in _documents(Path(path)):
        data = _load_json(name, raw)
        if isinstance(data, list):
            for i, sample in enumerate(data):
                where = f"[{i}]"
                if not isinstance(sample, dict):
                    raise InputError(name, where, f"a sample is a mapping with sample_id, conversation and qa, not {_kind(sample)}")
                for key in ("conversation", "qa"):
                    if key not in sample:
                        raise InputError(name, where, f"sample has no '{key}' (expected sample_id, conversation, qa)")
                sid = str(sample.get("sample_id") or f"conv-{i}")
                yield Conversation(f"{name}{where}", sid, _mapping(sample["conversation"], name, f"{where}.conversation"),
                                   _list(sample["qa"], name, f"{where}.qa"))
        elif isinstance(data, dict) and "conversation" in data:
            yield Conversation(name, str(data.get("sample_id") or f"conv-{stem}"),
                               _mapping(data["conversation"], name, "conversation"), _list(data.get("qa", []), name, "qa"))
        elif isinstance(data, dict) and "speaker_a" in data:
            yield Conversation(name, f"conv-{stem}", data, _list(data.get("qa", []), name, "qa"))
        else:
            raise InputError(name, "", "not a LoCoMo file: expected a list of samples (locomo10.json) or one "
                             "conversation with speaker_a, speaker_b, session_N and qa (locomo10_v2/<id>.json)")


def _kind(v: Any) -> str:
    return {dict: "a mapping", list: "a list", str: "a string"}.get(type(v), type(v).__name__)


def _mapping(v: Any, name: str, where: str) -> dict:
    if not isinstance(v, dict):
        raise InputError(name, where, f"expected a mapping, found {_kind(v)}")
    return v


def _list(v: Any, name: str, where: str) -> list:
    if not isinstance(v, list):
        raise InputError(name, where, f"expected a list, found {_kind(v)}")
    return v


def _str(v: Any, name: str, where: str) -> str:
    if not isinstance(v, str):
        raise InputError(name, where, f"expected a string, found {_kind(v)}")
    return v


def parse_date(text: str, name: str, where: str) -> datetime:
    """LoCoMo's session time as written, "1:56 pm on 8 May, 2023", as a UTC time."""
    cleaned = " ".join(text.replace(",", ", ").split())
    for fmt in ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y", "%I:%M %p on %B %d, %Y"):
        try:
            return datetime.strptime(cleaned, fmt).replace(tzinfo=timezone.utc)
        except ValueError:
            continue
    raise InputError(name, where, f"'{text}' is not a session time like '1:56 pm on 8 May, 2023'")


def _iso(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def evidence_ids(raw: Any) -> list[str]:
    """A question's evidence as dialog ids. The release sometimes writes several ids in one string
    (`"D8:6; D9:17"`, `"D9:1 D4:4"`) and a number with a leading zero (`D30:05`); both are read as
    meant. Anything else is kept as written (and reported if no turn has that id)."""
    out: list[str] = []
    for item in raw if isinstance(raw, list) else [raw]:
        for part in re.split(r"[;,\s]+", str(item).strip()):
            if not part:
                continue
            m = _DIA.fullmatch(part)
            out.append(f"D{int(m.group(1))}:{int(m.group(2))}" if m else part)
    return list(dict.fromkeys(out))


# -- one conversation as a scenario ----------------------------------------------------------


def convert(conv: Conversation, budget: int, categories: tuple[int, ...], summary: Summary) -> tuple[str, str]:
    """(file name, YAML text) of one conversation's scenario."""
    name, c = conv.source, conv.conversation
    speaker_a = _str(c.get("speaker_a"), name, "speaker_a")
    speaker_b = _str(c.get("speaker_b"), name, "speaker_b")
    sessions = sorted((int(m.group(1)), k) for k in c if (m := _SESSION.fullmatch(k)))
    if not sessions:
        raise InputError(name, "", "no session_N lists: expected the conversation's sessions as session_1, session_2, …")
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", conv.sample_id).strip("-") or "conv"
    subject = slug
    first_date = parse_date(_str(c.get(f"{sessions[0][1]}_date_time"), name, f"{sessions[0][1]}_date_time"),
                            name, f"{sessions[0][1]}_date_time")
    b = ScenarioBuilder(
        sid=f"locomo-{slug}",
        title=f"LoCoMo {conv.sample_id}: {speaker_a} and {speaker_b}, {len(sessions)} sessions",
        description=(f"Imported from the LoCoMo release ({Path(conv.source).name}) by supportbench import locomo. {speaker_a} "
                     f"speaks as the customer, {speaker_b} as the agent; each question is a probe after the last "
                     "session whose gold is the question's evidence."),
        tags=["locomo", "imported"], start=_iso(first_date), subjects={subject: speaker_a},
        header=(f"LoCoMo {conv.sample_id}, imported by supportbench import locomo (docs/external-data.md).\n"
                "LoCoMo's licence is non-commercial: do not commit this file to a public project."),
    )
    known: set[str] = set()
    clock = first_date - timedelta(minutes=1)
    for n, key in sessions:
        turns = _list(c[key], name, key)
        if not turns:
            continue
        written = _str(c.get(f"{key}_date_time"), name, f"{key}_date_time")
        start = parse_date(written, name, f"{key}_date_time")
        if start <= clock:  # never run the clock backwards: a session dated before the last turn
            summary.notes.append(f"{conv.sample_id} {key}: dated {written}, before the previous session's last "
                                 f"turn; started one minute after it")
            start = clock + timedelta(minutes=1)
        b.comment(f"{key}: {written}")
        for i, t in enumerate(turns):
            where = f"{key}[{i}]"
            t = _mapping(t, name, where)
            speaker = _str(t.get("speaker"), name, f"{where}.speaker")
            dia = _str(t.get("dia_id"), name, f"{where}.dia_id").strip()
            if not dia:
                raise InputError(name, f"{where}.dia_id", "empty dialog id")
            if dia in known:
                raise InputError(name, f"{where}.dia_id", f"dialog id '{dia}' given twice")
            text = t.get("text", "")
            text = _str(text, name, f"{where}.text").strip()
            caption = t.get("blip_caption")
            if isinstance(caption, str) and caption.strip():
                text = f"{text} [shares {caption.strip()}]".strip()
            if speaker not in (speaker_a, speaker_b):
                raise InputError(name, f"{where}.speaker", f"'{speaker}' is neither speaker_a ({speaker_a}) nor speaker_b ({speaker_b})")
            explicit: dict[str, Any] = {}
            at = clock + timedelta(minutes=1)
            if i == 0:
                at = start
                explicit = {"at": _iso(start), "session": key} if known else {"at": _iso(start), "subject": subject, "session": key}
            b.turn(f"{speaker}: {text}", subject=subject, session=key, at=at,
                   role="customer" if speaker == speaker_a else "agent", turn_id=dia, explicit=explicit)
            known.add(dia)
            clock = at
    if not known:
        raise InputError(name, "", "every session is empty: nothing to import")

    at = clock + timedelta(days=1)
    first = True
    for i, q in enumerate(conv.qa):
        where = f"qa[{i}]"
        q = _mapping(q, name, where)
        category = q.get("category")
        if not isinstance(category, int):
            raise InputError(name, f"{where}.category", f"expected a category number 1-5, found {category!r}")
        if category not in categories:
            summary.leave_out(f"category {category} ({CATEGORIES.get(category, 'other')}) not asked for")
            continue
        question = _str(q.get("question"), name, f"{where}.question").strip()
        evidence = evidence_ids(q.get("evidence", []))
        missing = [e for e in evidence if e not in known]
        if not evidence or missing:
            why = "no evidence" if not evidence else f"evidence {', '.join(missing)} names no turn"
            summary.leave_out("without evidence" if not evidence else "with evidence that names no turn",
                              f"{conv.sample_id} {where} ({name}): {why}")
            continue
        explicit = {"at": _iso(at), "session": "questions"} if first else {}
        first = False
        answer = q.get("answer", q.get("adversarial_answer"))
        written, need = b.probe(f"qa-{i}", subject=subject, session="questions", at=at, task=question, budget=budget,
                                tags=[category_tag(category)], expect={"include": evidence}, explicit=explicit,
                                comment=f"answer: {answer}" if answer is not None else None)
        if written > budget:
            summary.raise_budget(f"{conv.sample_id} {where}: budget {written}, the tokens its evidence needs")
        at += timedelta(minutes=1)
    summary.scenarios += 1
    summary.turns += b.turns
    summary.probes += b.probes
    return f"locomo-{slug}.yaml", b.text()


def import_locomo(path: str | Path, budget: int = DEFAULT_BUDGET,
                  categories: tuple[int, ...] = DEFAULT_CATEGORIES) -> tuple[dict[str, str], Summary]:
    """Every conversation under PATH as scenario files (name -> YAML text), and what was done."""
    summary = Summary()
    files: dict[str, str] = {}
    for conv in read_conversations(path):
        fname, text = convert(conv, budget, categories, summary)
        if fname in files:
            raise InputError(conv.source, "", f"conversation {conv.sample_id} given twice")
        files[fname] = text
    return files, summary

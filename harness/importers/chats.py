"""`supportbench import chats`: a support desk's export as scenarios, one per customer.

The export is CSV or JSONL, one message per row: the conversation (or ticket) it belongs to, the
customer, when, who wrote it, and the text. A map (TOML) names those columns and says which role
values are the customer's and which the agent's; maps for common exports ship in `maps/`
(`plain`, `zendesk`, `intercom`), and without `--map` the one whose columns the file has is used
when exactly one fits.

Every conversation becomes a session of its customer, the customer's conversations in time
order, and every customer a scenario. Where memory matters, at a returning customer's first
message in a later conversation, the import places a probe on that message: unlabelled (the
export says nothing about what should be remembered), so it runs and is shown and is in no score
until a reviewer labels it in the app (docs/external-data.md). Every bad row is reported with
its row number (CSV: the line the row starts on; JSONL: its line) and nothing is written.
"""

from __future__ import annotations

import csv
import html
import json
import re
import tomllib
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Iterator

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from harness.importers import InputError, ScenarioBuilder, Summary

MAPS = Path(__file__).with_name("maps")
"""The shipped maps."""

MAX_ERRORS_SHOWN = 20
"""Bad rows listed one per line before the rest are counted."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Columns(_Strict):
    conversation: str
    """The conversation (or ticket) id."""
    customer: str
    """The customer id."""
    time: str
    """When the message was written."""
    role: str
    """Who wrote it (a role value, or with `customer_when_role_is_customer` an author id)."""
    text: str
    """The message."""
    id: str | None = None
    """A message id (optional): becomes the turn id."""


class Roles(_Strict):
    customer: list[str] = []
    """Role values of the customer's messages (compared ignoring case)."""
    agent: list[str] = []
    """Role values of the agent's."""
    customer_when_role_is_customer: bool = False
    """The role column holds the author's id: the customer wrote it when it equals the customer id."""


class TimeFormat(_Strict):
    format: str = "iso"
    """`iso` (ISO 8601; a time without a zone is UTC), `unix` (seconds), or a strptime pattern."""


class TextFormat(_Strict):
    html: bool = False
    """The text is HTML: tags are dropped and entities decoded."""


class ChatMap(_Strict):
    """A map of an export's columns and role values."""

    name: str = ""
    description: str = ""
    columns: Columns
    roles: Roles = Field(default_factory=Roles)
    time: TimeFormat = Field(default_factory=TimeFormat)
    text: TextFormat = Field(default_factory=TextFormat)

    def required(self) -> list[str]:
        c = self.columns
        return [c.conversation, c.customer, c.time, c.role, c.text] + ([c.id] if c.id else [])


def load_map(path: str | Path) -> ChatMap:
    """A map file, validated: one error naming the file and the key."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise InputError(str(path), "", f"cannot read the map ({e.strerror or e})") from None
    except tomllib.TOMLDecodeError as e:
        m = re.search(r"line (\d+)", str(e))
        raise InputError(str(path), f"line {m.group(1)}" if m else "", f"not valid TOML ({e})") from None
    try:
        m = ChatMap.model_validate(data)
    except ValidationError as e:
        err = e.errors(include_url=False)[0]
        where = ".".join(str(x) for x in err["loc"])
        raise InputError(str(path), where, f"{err['msg']} (a map has [columns] conversation, customer, time, role, "
                         "text, and [roles] customer and agent values)") from None
    if not m.roles.customer_when_role_is_customer and not (m.roles.customer and m.roles.agent):
        raise InputError(str(path), "roles", "give the role values of both sides (customer = [...], agent = [...]), "
                         "or customer_when_role_is_customer = true")
    return m


def shipped_maps() -> dict[str, ChatMap]:
    return {p.stem: load_map(p) for p in sorted(MAPS.glob("*.toml"))}


# -- reading rows ----------------------------------------------------------------------------


@dataclass
class Row:
    where: str
    """`row 12` (CSV: the line the row starts on) or `line 12` (JSONL)."""
    values: dict[str, Any]


def _kind(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".ndjson"):
        return "jsonl"
    if suffix in (".csv", ".tsv"):
        return "csv"
    with path.open("rb") as f:
        head = f.read(256).lstrip()
    return "jsonl" if head.startswith(b"{") else "csv"


def read_rows(path: Path) -> tuple[list[str], Iterator[Row]]:
    """The columns the file has, and its rows."""
    name = str(path)
    if not path.is_file():
        raise InputError(name, "", "no such file" if not path.exists() else "not a file: give the CSV or JSONL export")
    if _kind(path) == "jsonl":
        columns: list[str] = []
        with path.open(encoding="utf-8-sig") as f:
            for line in f:
                if line.strip():
                    try:
                        first = json.loads(line)
                    except json.JSONDecodeError:
                        first = None
                    columns = list(_flat(first)) if isinstance(first, dict) else []
                    break
        return columns, _jsonl_rows(path)
    with path.open(encoding="utf-8-sig", newline="") as f:
        sample = f.read(64 * 1024)
    try:
        dialect = csv.Sniffer().sniff(sample, delimiters=",;\t|") if sample else csv.excel
    except csv.Error:
        dialect = csv.excel
    with path.open(encoding="utf-8-sig", newline="") as f:
        header = next(csv.reader(f, dialect), [])
    return [h.strip() for h in header], _csv_rows(path, dialect)


def _flat(obj: dict, prefix: str = "") -> dict[str, Any]:
    """Nested JSON objects as dotted columns (`author.type`)."""
    out: dict[str, Any] = {}
    for k, v in obj.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict):
            out.update(_flat(v, key + "."))
        else:
            out[key] = v
    return out


def _jsonl_rows(path: Path) -> Iterator[Row]:
    with path.open(encoding="utf-8-sig") as f:
        for n, line in enumerate(f, start=1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as e:
                yield Row(f"line {n}", {"__error__": f"not valid JSON ({e.msg} at column {e.colno})"})
                continue
            if not isinstance(obj, dict):
                yield Row(f"line {n}", {"__error__": "a row is a JSON object with the export's fields"})
                continue
            yield Row(f"line {n}", _flat(obj))


def _csv_rows(path: Path, dialect) -> Iterator[Row]:
    with path.open(encoding="utf-8-sig", newline="") as f:
        reader = csv.reader(f, dialect)
        header = [h.strip() for h in next(reader, [])]
        start = reader.line_num + 1
        for values in reader:
            if not any(v.strip() for v in values):
                start = reader.line_num + 1
                continue
            if len(values) != len(header):
                yield Row(f"row {start}", {"__error__": f"{len(values)} fields where the header has {len(header)}"})
            else:
                yield Row(f"row {start}", dict(zip(header, values)))
            start = reader.line_num + 1


def choose_map(path: Path, columns: list[str], given: str | None) -> ChatMap:
    """The map named by --map (a shipped map's name or a TOML file), else the one shipped map
    whose columns the file has."""
    if given:
        shipped = shipped_maps()
        m = shipped[given] if given in shipped else load_map(given)
        missing = [c for c in m.required() if c not in columns]
        if missing:
            raise InputError(str(path), "row 1" if _kind(path) == "csv" else "line 1",
                             f"no column {', '.join(repr(c) for c in missing)} that the map {m.name or given} needs "
                             f"(the file has: {', '.join(columns) or 'none'})")
        return m
    fits = {k: m for k, m in shipped_maps().items() if all(c in columns for c in m.required())}
    if len(fits) == 1:
        return next(iter(fits.values()))
    if not fits:
        needs = "; ".join(f"{k}: {', '.join(m.required())}" for k, m in shipped_maps().items())
        raise InputError(str(path), "row 1" if _kind(path) == "csv" else "line 1",
                         f"no shipped map fits the columns {', '.join(columns) or '(none)'}; give --map FILE "
                         f"(docs/external-data.md) or use one of the layouts ({needs})")
    raise InputError(str(path), "", f"several maps fit ({', '.join(fits)}): say which with --map")


# -- rows to messages ------------------------------------------------------------------------


@dataclass
class Message:
    where: str
    conversation: str
    customer: str
    at: datetime
    role: str
    text: str
    msg_id: str | None
    order: int


_TAG = re.compile(r"<[^>]*>")
_BREAK = re.compile(r"<\s*(br|/p|/div|/li)\s*/?\s*>", re.I)


def _text(raw: Any, as_html: bool) -> str:
    text = "" if raw is None else str(raw)
    if as_html:
        text = html.unescape(_TAG.sub("", _BREAK.sub("\n", text)))
    return " ".join(text.split())


def _time(raw: Any, fmt: str) -> datetime:
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        raise ValueError("no time")
    if fmt == "unix":
        return datetime.fromtimestamp(float(raw), tz=timezone.utc)
    text = str(raw).strip()
    if fmt == "iso":
        t = datetime.fromisoformat(text.replace("Z", "+00:00"))
    else:
        t = datetime.strptime(text, fmt)
    return t if t.tzinfo else t.replace(tzinfo=timezone.utc)


def messages(rows: Iterator[Row], m: ChatMap, summary: Summary) -> tuple[list[Message], list[str]]:
    """The rows as messages, and the bad rows (`row 12: ...`)."""
    c, r = m.columns, m.roles
    cust_values = {v.lower() for v in r.customer}
    agent_values = {v.lower() for v in r.agent}
    out: list[Message] = []
    bad: list[str] = []
    for i, row in enumerate(rows):
        v = row.values
        if "__error__" in v:
            bad.append(f"{row.where}: {v['__error__']}")
            continue
        problems = []
        conv, cust = _cell(v.get(c.conversation)), _cell(v.get(c.customer))
        if not conv:
            problems.append(f"empty {c.conversation}")
        if not cust:
            problems.append(f"empty {c.customer}")
        try:
            at = _time(v.get(c.time), m.time.format)
        except (ValueError, TypeError, OverflowError, OSError):
            want = {"iso": "an ISO 8601 time such as 2024-03-01T09:30:00Z", "unix": "Unix seconds"}.get(m.time.format, f"a time as {m.time.format}")
            problems.append(f"{c.time} {v.get(c.time)!r} is not {want}")
            at = None
        raw_role = _cell(v.get(c.role))
        if r.customer_when_role_is_customer:
            role = "customer" if raw_role == cust else "agent"
        elif raw_role.lower() in cust_values:
            role = "customer"
        elif raw_role.lower() in agent_values:
            role = "agent"
        else:
            role = ""
            problems.append(f"{c.role} {raw_role!r} is neither a customer role ({', '.join(r.customer)}) "
                            f"nor an agent role ({', '.join(r.agent)})")
        if problems:
            bad.append(f"{row.where}: " + "; ".join(problems))
            continue
        text = _text(v.get(c.text), m.text.html)
        if not text:
            summary.leave_out("rows without text")
            continue
        out.append(Message(row.where, conv, cust, at, role, text, _cell(v.get(c.id)) if c.id else None, i))
    return out, bad


def _cell(v: Any) -> str:
    return "" if v is None else str(v).strip()


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-.") or "x"


def _iso(t: datetime) -> str:
    return t.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S") + (
        f".{t.microsecond:06d}".rstrip("0") if t.microsecond else "") + "Z"


def convert(customer: str, msgs: list[Message], source: str, budget: int | None, summary: Summary) -> tuple[str, str]:
    """(file name, YAML text) of one customer's scenario."""
    subject = _slug(customer)
    by_conv: dict[str, list[Message]] = defaultdict(list)
    for msg in msgs:
        by_conv[msg.conversation].append(msg)
    convs = sorted(by_conv, key=lambda k: (min(x.at for x in by_conv[k]), min(x.order for x in by_conv[k])))
    session_of = {k: _slug(f"{k}") for k in convs}
    if len(set(session_of.values())) < len(session_of):  # two ids with one slug: number them
        session_of = {k: f"{_slug(k)}-{i}" for i, k in enumerate(convs, start=1)}
    first_customer = {}
    for k in convs[1:]:
        cm = [x for x in sorted(by_conv[k], key=lambda x: (x.at, x.order)) if x.role == "customer"]
        if cm:
            first_customer[id(cm[0])] = k
    rank = {k: i for i, k in enumerate(convs)}
    ordered = sorted(msgs, key=lambda x: (x.at, rank[x.conversation], x.order))
    b = ScenarioBuilder(
        sid=f"chats-{subject}", title=f"Customer {customer}: {len(convs)} conversation(s) from {Path(source).name}",
        description=(f"Imported from {Path(source).name} by supportbench import chats. Each conversation is a session; "
                     "the probes at this customer's first message of each later conversation are unlabelled until "
                     "someone labels them (docs/external-data.md)."),
        tags=["chats", "imported"], start=_iso(ordered[0].at), subjects={subject: customer},
        header=f"Customer {customer}, imported by supportbench import chats (docs/external-data.md).",
    )
    counts: dict[str, int] = defaultdict(int)
    last_session, last_at = None, None
    ids: set[str] = set()
    for msg in ordered:
        session = session_of[msg.conversation]
        counts[session] += 1
        turn_id = msg.msg_id or f"{session}#{counts[session]}"
        if turn_id in ids or turn_id.endswith("#resolution"):
            turn_id = f"{session}#{counts[session]}"
        ids.add(turn_id)
        at = msg.at if last_at is None or msg.at >= last_at else last_at
        explicit: dict[str, Any] = {"at": _iso(at)}
        if last_session is None:
            explicit["subject"] = subject
        if session != last_session:
            explicit["session"] = session
        if id(msg) in first_customer:
            b.comment(f"{msg.where}: {customer} comes back (conversation {msg.conversation})")
            b.probe(f"back-{session}", subject=subject, session=session, at=at, task=msg.text,
                    budget=budget or 4000, tags=["returning"], expect={}, explicit={**explicit, "on": turn_id},
                    unlabelled=True)
            explicit = {"at": _iso(at)}
        b.turn(msg.text, subject=subject, session=session, at=at, role=msg.role, turn_id=turn_id, explicit=explicit,
               write_id=turn_id != f"{session}#{counts[session]}")
        last_session, last_at = session, at
    summary.scenarios += 1
    summary.turns += b.turns
    summary.probes += b.probes
    return f"chats-{subject}.yaml", b.text()


def import_chats(path: str | Path, map_name: str | None = None, budget: int | None = None,
                 summary: Summary | None = None) -> tuple[Iterator[tuple[str, str]], Summary, ChatMap]:
    """Each customer of the export as a scenario file (name, YAML text); every bad row first
    (an `InputError` listing them), so nothing is written from a bad file."""
    summary = summary if summary is not None else Summary()
    path = Path(path)
    columns, rows = read_rows(path)
    m = choose_map(path, columns, map_name)
    msgs, bad = messages(rows, m, summary)
    if bad:
        shown = bad[:MAX_ERRORS_SHOWN]
        more = f"\n  … and {len(bad) - len(shown)} more bad row(s)" if len(bad) > len(shown) else ""
        raise InputError(str(path), shown[0].split(":")[0], shown[0].split(": ", 1)[1]
                         + "".join(f"\n  {path}:{x}" for x in shown[1:]) + more
                         + (f"\n{len(bad)} bad row(s); nothing was written" if len(bad) > 1 else ""))
    if not msgs:
        raise InputError(str(path), "", "no messages with text in this file")
    by_customer: dict[str, list[Message]] = defaultdict(list)
    for msg in msgs:
        by_customer[msg.customer].append(msg)
    slugs = {_slug(k) for k in by_customer}
    if len(slugs) < len(by_customer):
        raise InputError(str(path), "", "two customer ids differ only in characters a file name cannot hold; "
                         "rename one in the export")

    def files() -> Iterator[tuple[str, str]]:
        for customer in sorted(by_customer):
            yield convert(customer, by_customer[customer], str(path), budget, summary)

    return files(), summary, m

"""Importers: text no one here wrote, turned into scenario files in the public format.

Each importer reads one outside layout (`locomo`: the LoCoMo release; `longmemeval`: the
LongMemEval files; `chats`: a support-desk export) and yields scenario documents as plain data
with comments; `write_suite` writes them the way every generated suite is written: to a hidden
temporary folder, validated by `supportbench validate`'s own checks, and renamed into place only
when every file is valid, so a failed import leaves nothing behind. Bad input raises
`InputError`, one sentence naming the file, the line (or row, or place in the document) and what
was expected. The mappings are documented in docs/external-data.md.
"""

from __future__ import annotations

import io
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq

from harness.format.feasible import RenderedHistory, oracle_cost
from stores.memory import render_line
from stores.protocol import ContextRequest


class InputError(ValueError):
    """Input an importer cannot use: `file`, where in it (`line 12`, `row 7`, a document path)
    and what was expected. The command prints it on one line and exits 2."""

    def __init__(self, file: str, where: str, message: str):
        self.file, self.where, self.message = file, where, message
        super().__init__(f"{file}:{where}: {message}" if where else f"{file}: {message}")


@dataclass
class Summary:
    """What an import did, for the one-paragraph report the command prints."""

    scenarios: int = 0
    turns: int = 0
    probes: int = 0
    left_out: dict[str, int] = field(default_factory=dict)
    """Reason -> how many questions (or rows) were left out for it."""
    notes: list[str] = field(default_factory=list)
    """Each question or row left out, or changed, with where it was."""

    raised: int = 0
    """Probes whose budget was raised to what their gold needs (the oracle's context)."""

    def raise_budget(self, note: str) -> None:
        self.raised += 1
        self.notes.append(note)

    def leave_out(self, reason: str, note: str | None = None) -> None:
        self.left_out[reason] = self.left_out.get(reason, 0) + 1
        if note:
            self.notes.append(note)


def yaml_writer() -> YAML:
    """The one YAML emitter of imported and labelled files (round-trip mode keeps comments)."""
    y = YAML()
    y.width = 4096  # one line per turn: long text is not folded
    y.indent(mapping=2, sequence=4, offset=2)
    y.preserve_quotes = True
    return y


def dump(doc: Any) -> str:
    """A document as YAML text."""
    buf = io.StringIO()
    yaml_writer().dump(doc, buf)
    return buf.getvalue()


def flow(items: Iterable[Any]) -> CommentedSeq:
    """A list written on one line (`[a, b]`)."""
    seq = CommentedSeq(items)
    seq.fa.set_flow_style()
    return seq


class ScenarioBuilder:
    """One scenario document being built event by event, with the oracle's cost of each probe
    kept as validation will count it (so an importer can size a budget that the gold fits)."""

    def __init__(self, sid: str, title: str, description: str, tags: list[str], start: str,
                 subjects: dict[str, str], header: str):
        self.doc = CommentedMap()
        self.doc["id"] = sid
        self.doc["version"] = 1
        self.doc["title"] = title
        if description:
            self.doc["description"] = description
        self.doc["tags"] = flow(tags)
        self.doc["start"] = start
        self.doc["subjects"] = CommentedMap((k, CommentedMap(name=v)) for k, v in subjects.items())
        self.events = CommentedSeq()
        self.doc["events"] = self.events
        self.doc.yaml_set_start_comment(header)
        self.histories: dict[str, RenderedHistory] = {}
        self.turns = 0
        self.probes = 0

    def comment(self, text: str) -> None:
        """A comment line above the next event."""
        self._pending = getattr(self, "_pending", []) + [text]

    def _add(self, ev: CommentedMap) -> None:
        self.events.append(ev)
        pending = getattr(self, "_pending", [])
        if pending:
            self.events.yaml_set_comment_before_after_key(len(self.events) - 1, before="\n".join(pending), indent=2)
            self._pending = []

    def turn(self, text: str, *, subject: str, session: str, at, role: str, turn_id: str,
             explicit: dict[str, Any] | None = None) -> None:
        """A turn; `explicit` holds the keys written (`at`, `subject`, `session` only when they
        change, so the file reads like a hand-written one)."""
        ev = CommentedMap(turn=text)
        for k, v in (explicit or {}).items():
            ev[k] = v
        if role != "customer":
            ev["role"] = role
        ev["id"] = turn_id
        self._add(ev)
        self.histories.setdefault(subject, RenderedHistory()).put(turn_id, render_line(role, "message", session, at, text))
        self.turns += 1

    def probe(self, probe_id: str, *, subject: str, session: str, at, task: str, budget: int,
              tags: list[str], expect: dict[str, Any], explicit: dict[str, Any] | None = None,
              comment: str | None = None) -> tuple[int, int]:
        """A probe; its budget is raised to what the oracle needs for the gold when it needs more.
        Returns (budget written, tokens the gold needs)."""
        h = self.histories.get(subject) or RenderedHistory()
        need, _, _ = oracle_cost(expect, h, ContextRequest(subject, session, task, budget, at))
        ev = CommentedMap(probe=probe_id)
        for k, v in (explicit or {}).items():
            ev[k] = v
        ev["task"] = task
        ev["budget"] = max(budget, need)
        if tags:
            ev["tags"] = flow(tags)
        if expect:
            ev["expect"] = CommentedMap((k, flow(v) if isinstance(v, list) else v) for k, v in expect.items())
        if comment:
            ev.yaml_add_eol_comment(comment, "probe")
        self._add(ev)
        self.probes += 1
        return ev["budget"], need

    def text(self) -> str:
        return dump(self.doc)


def write_suite(files: dict[str, str], out: Path, force: bool = False) -> None:
    """Write scenario files into `out` atomically: a hidden temporary folder beside it, checked by
    `supportbench validate`'s checks, renamed into place only when every file is valid. An
    existing non-empty `out` is refused unless `force` (it may hold gold labelled by hand)."""
    from harness.format.loader import validate_paths

    out = Path(out)
    if out.exists() and not out.is_dir():
        raise InputError(str(out), "", "--out names a file; give a folder to write the scenarios into")
    if out.exists() and any(out.iterdir()) and not force:
        raise InputError(str(out), "", "--out is not empty (it may hold gold labelled by hand); choose a new "
                         "folder, or pass --force to replace it")
    tmp = out.with_name(f".{out.name}.import-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    try:
        for name in sorted(files):
            (tmp / name).write_text(files[name], encoding="utf-8")
        issues = validate_paths([str(tmp)])
        if issues:  # an importer bug: the command reports it as one
            raise RuntimeError(f"the importer wrote an invalid file ({len(issues)} problem(s)); first: {issues[0]}")
        if out.exists():
            old = out.with_name(f".{out.name}.old-{os.getpid()}")
            out.rename(old)
            tmp.rename(out)
            shutil.rmtree(old, ignore_errors=True)
        else:
            tmp.rename(out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

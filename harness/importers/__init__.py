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

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

import yaml

from harness.format.feasible import RenderedHistory, oracle_cost
from stores.memory import render_line
from stores.protocol import ContextRequest



class Flow(list):
    """A list written on one line, `[a, b]` (tags, gold ids)."""


class _Dumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):  # type: ignore[misc]
    """libyaml's emitter: block mappings and lists, `Flow` lists on one line."""


_Dumper.add_representer(Flow, lambda d, v: d.represent_sequence("tag:yaml.org,2002:seq", v, flow_style=True))


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


def yaml_text(data: Any) -> str:
    """Plain data as YAML (libyaml's emitter: one line per scalar, keys in the order given,
    `Flow` lists in flow style `[a, b]`)."""
    return yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=1 << 30, default_flow_style=False)


def _indent(text: str, by: str = "  ") -> str:
    return "".join(by + line if line.strip() else line for line in text.splitlines(keepends=True))


def _comment(text: str, by: str = "") -> str:
    return "".join(f"{by}# {line}\n" if line else f"{by}#\n" for line in text.splitlines())


class ScenarioBuilder:
    """One scenario document being built event by event, written as it goes (events are dumped
    in runs between comments, so a long history is text, not a tree, once written), with the
    oracle's cost of each probe kept as validation will count it (so an importer can size a
    budget that the gold fits)."""

    def __init__(self, sid: str, title: str, description: str, tags: list[str], start: str,
                 subjects: dict[str, str], header: str):
        head: dict[str, Any] = {"id": sid, "version": 1, "title": title}
        if description:
            head["description"] = description
        head.update({"tags": Flow(tags), "start": start, "subjects": {k: {"name": v} for k, v in subjects.items()}})
        self.parts: list[str] = [_comment(header), yaml_text(head), "events:\n"]
        self._chunk: list[dict[str, Any]] = []
        self.histories: dict[str, RenderedHistory] = {}
        self.turns = 0
        self.probes = 0

    def _flush(self) -> None:
        if self._chunk:
            self.parts.append(_indent(yaml_text(self._chunk)))
            self._chunk = []

    def comment(self, text: str) -> None:
        """A comment line above the next event."""
        self._flush()
        self.parts.append(_comment(text, "  "))

    def turn(self, text: str, *, subject: str, session: str, at, role: str, turn_id: str,
             explicit: dict[str, Any] | None = None, write_id: bool = True) -> None:
        """A turn; `explicit` holds the keys written (`at`, `subject`, `session` only when they
        change, so the file reads like a hand-written one); `write_id=False` when `turn_id` is
        the format's default (`<session>#<n>`)."""
        ev: dict[str, Any] = {"turn": text, **(explicit or {})}
        if role != "customer":
            ev["role"] = role
        if write_id:
            ev["id"] = turn_id
        self._chunk.append(ev)
        self.histories.setdefault(subject, RenderedHistory()).put(turn_id, render_line(role, "message", session, at, text), session)
        self.turns += 1

    def probe(self, probe_id: str, *, subject: str, session: str, at, task: str, budget: int,
              tags: list[str], expect: dict[str, Any], explicit: dict[str, Any] | None = None,
              comment: str | None = None, unlabelled: bool = False) -> tuple[int, int]:
        """A probe (`comment`, e.g. the benchmark's answer, on a line above it); its budget is raised
        to what the oracle needs for the gold when it needs more. Returns (budget written, tokens
        the gold needs)."""
        h = self.histories.get(subject) or RenderedHistory()
        need, _, _ = oracle_cost(expect, h, ContextRequest(subject, session, task, budget, at))
        ev: dict[str, Any] = {"probe": probe_id, **(explicit or {}), "task": task, "budget": max(budget, need)}
        if tags:
            ev["tags"] = Flow(tags)
        if unlabelled:
            ev["unlabelled"] = True
        if expect:
            ev["expect"] = {k: Flow(v) if isinstance(v, (list, tuple)) else v for k, v in expect.items()}
        if comment:
            self.comment(" ".join(comment.split()))
        self._chunk.append(ev)
        self.probes += 1
        return ev["budget"], need

    def text(self) -> str:
        self._flush()
        return "".join(self.parts)


def write_suite(files: Iterable[tuple[str, str]], out: Path, force: bool = False) -> int:
    """Write scenario files (name, YAML text), as they come, into `out` atomically: a hidden
    temporary folder beside it, each file checked by `supportbench validate`'s checks as it is
    written (so a suite of any size is never held in memory), renamed into place only when every
    file is valid. An existing non-empty `out` is refused unless `force` (it may hold gold
    labelled by hand). Returns how many files were written."""
    from harness.format.loader import check_file

    out = Path(out)
    if out.exists() and not out.is_dir():
        raise InputError(str(out), "", "--out names a file; give a folder to write the scenarios into")
    if out.exists() and any(out.iterdir()) and not force:
        raise InputError(str(out), "", "--out is not empty (it may hold gold labelled by hand); choose a new "
                         "folder, or pass --force to replace it")
    tmp = out.with_name(f".{out.name}.import-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    n = 0
    try:
        for name, text in files:
            path = tmp / name
            path.write_text(text, encoding="utf-8")
            _, issues = check_file(str(path))
            if issues:  # an importer bug: the command reports it as one
                raise RuntimeError(f"the importer wrote an invalid file ({len(issues)} problem(s)); first: {issues[0]}")
            n += 1
        if not n:
            raise InputError(str(out), "", "nothing to import: the input holds no conversation")
        if out.exists():
            old = out.with_name(f".{out.name}.old-{os.getpid()}")
            out.rename(old)
            tmp.rename(out)
            shutil.rmtree(old, ignore_errors=True)
        else:
            tmp.rename(out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return n

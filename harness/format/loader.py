"""Load and validate scenario files (format: docs/scenario-format.md; schema: `json_schema()`).

Validation happens in two layers and reports every problem of every file at once, each with
file, line and document path, before anything runs:

1. structure: the pydantic models of `harness.format.schema` (unknown keys, types, enums);
2. meaning: `harness.format.checks` (times, subjects, sessions, ids, gold labels);
3. feasibility: `harness.format.feasible` (every probe's gold fits its budget as the oracle
   renders it, and wants nothing both in and out of the context).

Public API: `load_scenario`, `load_suite`, `validate_paths`, `json_schema`, `write_json_schema`,
`ValidationIssue`, `ScenarioError`; and the three steps of `load_suite` for callers that check
files elsewhere (a run's worker processes, `harness.run.intake`): `expand_paths`, `check_file`,
`merge_checked`.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Sequence

from pydantic import ValidationError

from harness.format.issues import ScenarioError, ValidationIssue, did_you_mean, format_path
from harness.format.model import Expect, Fault, Probe, Scenario, Subject, TurnGold, TurnSignals
from harness.format.checks import ResolvedEvent, SemanticChecker
from harness.format.feasible import cost_problem, probe_costs
from harness.format.schema import (
    EVENT_KINDS,
    NEEDLE_KEYS,
    PAIR_KEYS,
    FaultEvent,
    ProbeEvent,
    ResolveEvent,
    ScenarioModel,
    SignalEvent,
    TurnEvent,
    choices_at,
    event_kind,
    json_schema,
    keys_at,
)
from harness.format.timeparse import parse_absolute
from harness.format.yamldoc import YamlDoc, YamlSyntaxError, read_yaml
from stores.protocol import Forget, Resolution, Signal, Turn

__all__ = [
    "load_scenario",
    "load_suite",
    "validate_paths",
    "expand_paths",
    "check_file",
    "merge_checked",
    "json_schema",
    "write_json_schema",
    "yaml_data",
    "ValidationIssue",
    "ScenarioError",
    "SCHEMA_PATH",
]

SCHEMA_PATH = Path(__file__).resolve().parents[2] / "datasets" / "schema" / "scenario.schema.json"
"""Where the committed JSON Schema lives."""

SCENARIO_SUFFIXES = (".yaml", ".yml")


def load_scenario(path: str | Path) -> Scenario:
    """Load one scenario file; `ScenarioError` listing every problem when it is invalid."""
    scenario, issues = _check_file(str(path))
    if issues or scenario is None:
        raise ScenarioError(issues)
    return scenario


def load_suite(paths: Sequence[str | Path] | str | Path) -> list[Scenario]:
    """Load files and folders (each folder's *.yaml/*.yml, recursively, sorted by path).

    Scenario ids must be unique across everything loaded. Raises `ScenarioError` listing every
    problem of every file; nothing is returned partially.
    """
    scenarios, issues = _check_paths(paths)
    if issues:
        raise ScenarioError(issues)
    return scenarios


def validate_paths(paths: Sequence[str | Path] | str | Path) -> list[ValidationIssue]:
    """Every problem in the given files and folders (empty when all is well); never raises on bad content."""
    return _check_paths(paths)[1]


def write_json_schema(path: str | Path = SCHEMA_PATH) -> Path:
    """Write the generated JSON Schema (to the committed location by default)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(json_schema(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def yaml_data(text: str) -> Any:
    """The plain data of a scenario document as the loader reads it (YAML 1.2 booleans,
    timestamps as strings), e.g. to check it against the JSON Schema."""
    return read_yaml(text).data


# -- files and folders ---------------------------------------------------------------------


def _check_paths(paths: Sequence[str | Path] | str | Path) -> tuple[list[Scenario], list[ValidationIssue]]:
    if isinstance(paths, (str, Path)):
        paths = [paths]
    files, issues = expand_paths(paths)
    return merge_checked(files, [check_file(f) for f in files], issues)


def expand_paths(paths: Iterable[str | Path]) -> tuple[list[str], list[ValidationIssue]]:
    """The scenario files named by files and folders, in load order (each folder's *.yaml/*.yml,
    recursively, sorted by path, hidden ones left out; a file named twice counted once), and
    the problems with the paths themselves (no such file, a folder without scenarios)."""
    return _expand(paths)


def check_file(file: str) -> tuple[Scenario | None, list[ValidationIssue]]:
    """Validate and load one file: the scenario, or None and every problem of the file.
    Independent of every other file, so files can be checked in any process and order."""
    return _check_file(file)


def merge_checked(
    files: Sequence[str], checked: Sequence[tuple[Any, list[ValidationIssue]]], issues: list[ValidationIssue]
) -> tuple[list, list[ValidationIssue]]:
    """Join per-file results (`check_file`'s, in the order of `files`) into a suite: the checks
    across files (scenario ids unique) added to `issues`; the scenarios only when there is no
    problem at all. A result's scenario may be a stand-in with the scenario's `id` and `path`
    (a handle to a scenario loaded in another process)."""
    scenarios: list = []
    first_by_id: dict[str, Any] = {}
    for file, (scenario, file_issues) in zip(files, checked):
        issues.extend(file_issues)
        if scenario is None:
            continue
        earlier = first_by_id.get(scenario.id)
        if earlier is not None:
            issues.append(
                ValidationIssue(
                    file, _id_line(file), "id", f"duplicate scenario id '{scenario.id}': also the id of {earlier.path}"
                )
            )
            continue
        first_by_id[scenario.id] = scenario
        scenarios.append(scenario)
    return (scenarios if not issues else []), issues


def _id_line(file: str) -> int | None:
    try:
        return read_yaml(Path(file).read_text(encoding="utf-8-sig")).line_of(("id",))
    except (OSError, ValueError):
        return None


def _expand(paths: Iterable[str | Path]) -> tuple[list[str], list[ValidationIssue]]:
    files: list[str] = []
    issues: list[ValidationIssue] = []
    seen: set[Path] = set()
    for given in paths:
        path = Path(given)
        if path.is_dir():
            found = sorted(
                (
                    f
                    for f in path.rglob("*")
                    if f.suffix in SCENARIO_SUFFIXES
                    and f.is_file()
                    and not any(part.startswith(".") for part in f.relative_to(path).parts)
                ),
                key=lambda f: f.relative_to(path).as_posix(),
            )
            if not found:
                issues.append(ValidationIssue(str(given), None, "", "no scenario files (*.yaml, *.yml) in this folder"))
        elif path.is_file():
            found = [path]
        else:
            issues.append(ValidationIssue(str(given), None, "", "no such file or folder"))
            continue
        for f in found:
            if f.resolve() not in seen:
                seen.add(f.resolve())
                files.append(str(f))
    return files, issues


# -- one file --------------------------------------------------------------------------------


@dataclass
class _FileReport:
    """Collects issues of one file, placing each on its line."""

    file: str
    doc: YamlDoc
    kinds: list[str | None]

    def __post_init__(self) -> None:
        self.issues: list[ValidationIssue] = []

    def __call__(self, path: tuple, message: str) -> None:
        self.issues.append(ValidationIssue(self.file, self.doc.line_of(path), format_path(path, self.kinds), message))


def _check_file(file: str) -> tuple[Scenario | None, list[ValidationIssue]]:
    try:
        raw = Path(file).read_bytes()
    except OSError as exc:
        return None, [ValidationIssue(file, None, "", f"cannot read: {exc.strerror or exc}")]
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        return None, [ValidationIssue(file, None, "", f"not UTF-8 text ({exc.reason} at byte {exc.start})")]
    try:
        doc = read_yaml(text)
    except YamlSyntaxError as exc:
        return None, [ValidationIssue(file, exc.line, "", exc.message)]
    if not isinstance(doc.data, dict):
        what = "empty" if doc.data is None else f"a {type(doc.data).__name__}, not a mapping"
        return None, [ValidationIssue(file, doc.line_of(()) or 1, "", f"a scenario file is a mapping of keys (id, title, events, …); this one is {what}")]

    events = doc.data.get("events")
    report = _FileReport(file, doc, [event_kind(e) for e in events] if isinstance(events, list) else [])
    for dup in doc.duplicate_keys:
        report.issues.append(
            ValidationIssue(file, dup.line, format_path(dup.path, report.kinds), f"key given twice (first at line {dup.first_line})")
        )
    model: ScenarioModel | None = None
    try:
        model = ScenarioModel.model_validate(doc.data)
    except ValidationError as exc:
        for error in exc.errors(include_url=False):
            _structural_issue(error, doc.data, report)
    resolved = SemanticChecker(doc.data, doc.line_of, report).run()

    issues = sorted(report.issues, key=lambda i: (i.line or 0))
    if issues or model is None:
        return None, issues
    scenario = _build(model, resolved, file, raw)
    _feasible(scenario, events, report)
    if report.issues:
        return None, sorted(report.issues, key=lambda i: (i.line or 0))
    return scenario, []


def _feasible(scenario: Scenario, events: list, report: _FileReport) -> None:
    """Refuse gold no strategy could meet: more than the probe's budget as the oracle renders
    it, or an item wanted both in and out (`harness.format.feasible`)."""
    for cost in probe_costs(scenario):
        problem = cost_problem(cost)
        if problem is not None:
            where = "budget" if isinstance(events[cost.index], dict) and "budget" in events[cost.index] else "probe"
            report(("events", cost.index, where), problem)


# -- structural errors: pydantic loc -> document path + line -------------------------------


def _real_path(loc: tuple) -> tuple:
    """Drop the union tags pydantic puts in locations (event kind, gold item kind)."""
    parts = list(loc)
    out: list[Any] = []
    i = 0
    while i < len(parts):
        part = parts[i]
        out.append(part)
        tagged = (len(out) == 2 and out[0] == "events" and isinstance(part, int)) or (
            isinstance(part, int) and len(out) >= 2 and out[-2] in NEEDLE_KEYS
        )
        if tagged and i + 1 < len(parts):
            i += 1  # skip the tag
        i += 1
    return tuple(p for p in out if p != "[key]")


def _value_at(data: Any, path: tuple) -> Any:
    for part in path:
        if isinstance(data, dict) and part in data:
            data = data[part]
        elif isinstance(data, list) and isinstance(part, int) and part < len(data):
            data = data[part]
        else:
            return None
    return data


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _structural_issue(error: dict, data: dict, report: _FileReport) -> None:
    kind, loc, value = error["type"], tuple(error["loc"]), error.get("input")
    path = _real_path(loc)
    message = error["msg"]
    kinds = ", ".join(EVENT_KINDS)
    if kind == "extra_forbidden":
        key, parent = path[-1], path[:-1]
        allowed, noun = keys_at(parent, data)
        message = f"unknown {noun} '{key}'" + did_you_mean(key, allowed) + (f" (allowed here: {', '.join(allowed)})" if allowed else "")
    elif kind == "missing":
        key, path = path[-1], path[:-1]
        message = f"missing required key '{key}'"
    elif kind == "event_kind":
        present = [k for k in EVENT_KINDS if isinstance(value, dict) and k in value]
        if not isinstance(value, dict):
            message = f"an event is a mapping with one of {kinds}; got {_short(value)}"
        elif present:
            message = f"an event has exactly one of {kinds}; this one has {' and '.join(present)}"
        else:
            keys = ", ".join(str(k) for k in value) or "none"
            message = f"an event needs one of {kinds} (its keys: {keys})" + did_you_mean(
                next((k for k in value if isinstance(k, str)), None), EVENT_KINDS
            )
    elif kind == "literal_error":
        field = next((p for p in reversed(path) if isinstance(p, str)), "")
        choices = choices_at(path, data)
        expected = " | ".join(choices) if choices else error.get("ctx", {}).get("expected", "")
        message = f"unknown {field} {_short(value)} (expected {expected})" + did_you_mean(value, choices)
    elif kind == "value_error":
        message = str(error.get("ctx", {}).get("error", message)).removeprefix("Value error, ")
    elif kind in ("too_short", "too_long") and len(path) >= 2 and path[-2] in PAIR_KEYS:
        message = f"expected a pair [first, second], got {len(value) if isinstance(value, list) else '?'} item(s)"
    elif kind == "string_type" and isinstance(value, dict) and "text" in value:
        message = f"text needles ({{text: ...}}) are allowed only in {', '.join(NEEDLE_KEYS)}; here give an id"
    else:
        message = f"{message[:1].lower()}{message[1:]}, got {_short(value)}"
    report(path, message)


# -- building the Scenario -------------------------------------------------------------------


def _build(model: ScenarioModel, resolved: list[ResolvedEvent], file: str, raw: bytes) -> Scenario:
    events: list[Any] = []
    turn_gold: dict[str, Any] = {}
    turn_signals: dict[str, Any] = {}
    for ev, here in zip(model.events, resolved):
        assert here.at is not None  # guaranteed when there are no issues
        if isinstance(ev, TurnEvent):
            events.append(Turn(here.id, here.subject, here.session, ev.role, ev.kind, ev.turn, here.at))
            gold = TurnGold.from_file(ev)
            if gold != TurnGold():
                turn_gold[here.id] = gold
            if ev.signals is not None and ev.signals.model_dump(exclude_none=True):
                turn_signals[here.id] = TurnSignals.from_data(ev.signals.model_dump(exclude_none=True))
        elif isinstance(ev, ResolveEvent):
            events.append(Resolution(here.subject, ev.resolve, ev.status, ev.summary, here.at))
        elif isinstance(ev, ProbeEvent):
            events.append(
                Probe(
                    id=ev.probe,
                    subject=here.subject,
                    session=here.session,
                    task=here.task or "",
                    budget=ev.budget,
                    at=here.at,
                    expect=Expect.from_file(ev.expect),
                    on=ev.on,
                    handoff=ev.handoff,
                    line=here.line or 0,
                    tags=tuple(ev.tags),
                )
            )
        elif isinstance(ev, SignalEvent):
            events.append(Signal(here.subject, here.session, ev.signal, ev.ref, here.at))
        elif isinstance(ev, FaultEvent):
            events.append(Fault(ev.fault, here.at, here.subject, here.session))
        else:
            events.append(Forget(here.subject, here.at))
    return Scenario(
        id=model.id,
        version=model.version,
        title=model.title,
        tags=tuple(model.tags),
        start=parse_absolute(model.start),
        subjects={sid: Subject(sid, s.name) for sid, s in model.subjects.items()},
        events=tuple(events),
        path=file,
        content_hash=hashlib.sha256(raw).hexdigest(),
        suite=Path(file).resolve().parent.name,
        turn_gold=turn_gold,
        turn_signals=turn_signals,
    )


if __name__ == "__main__":  # python -m harness.format.loader: regenerate the committed schema
    print(f"wrote {write_json_schema()}")

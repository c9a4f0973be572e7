"""The semantic layer of scenario validation: meaning across events.

Works on the raw document (so a structurally broken event elsewhere does not hide these
problems) and resolves what the format leaves implicit: times, subjects, sessions, turn ids,
a probe's task. Structural problems (types, unknown keys) are the pydantic layer's job and
are not reported again here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Callable, get_args

from harness.format.gold import declared
from harness.format.issues import did_you_mean, listing
from harness.format.schema import ExpectModel, MemoryType, OnlyOn, TurnEvent, TurnSignalsModel, event_kind
from harness.format.timeparse import DEFAULT_STEP, parse_absolute, parse_when

Report = Callable[[tuple, str], None]
"""report(document path, message)."""


def _only_on(model: type) -> dict[str, str]:
    """Key -> the role a turn must have to carry it (`OnlyOn` in the key's declaration)."""
    return {k: m.role for k, info in model.model_fields.items() for m in info.metadata if isinstance(m, OnlyOn)}


_TURN_ROLES = _only_on(TurnEvent)
_SIGNAL_ROLES = _only_on(TurnSignalsModel)
_MEMORY_RULES = {"outcome": "ATTEMPT", "status": "INCIDENT"}
"""A gold memory's field -> the only memory type that may have it."""


@dataclass
class ResolvedEvent:
    """What the format leaves implicit, worked out for one event."""

    kind: str | None
    at: datetime | None
    subject: str | None
    session: str | None
    line: int | None
    id: str | None = None
    """A turn's id (explicit or default)."""
    task: str | None = None
    """A probe's task (explicit, or the `on` turn's text)."""


@dataclass
class _Item:
    """A retrievable item: a turn or a session's resolution."""

    id: str
    subject: str | None
    index: int
    line: int | None
    text: str | None = None
    turn: bool = True
    """A turn (else a session's resolution record)."""


@dataclass
class _Session:
    subject: str | None
    line: int | None
    turns: int = 0
    first_turn: int | None = None
    """Event index of its first turn."""
    statuses: list[tuple[int, Any, int | None]] = field(default_factory=list)
    """(event index, status, line) of each resolve of the session."""


def _text(mapping: dict, key: str) -> str | None:
    value = mapping.get(key)
    return value if isinstance(value, str) and value else None


class SemanticChecker:
    """One pass over the events, then the checks that need the whole history."""

    def __init__(self, data: dict, line_of: Callable[[tuple], int | None], report: Report):
        self.data = data
        self.line_of = line_of
        self.report = report
        raw_subjects = data.get("subjects")
        self.subjects = [k for k in raw_subjects if isinstance(k, str)] if isinstance(raw_subjects, dict) else []
        self.subjects_known = isinstance(raw_subjects, dict)
        try:
            self.start: datetime | None = parse_absolute(data["start"]) if isinstance(data.get("start"), str) else None
        except ValueError:
            self.start = None
        raw_events = data.get("events")
        self.events: list[Any] = raw_events if isinstance(raw_events, list) else []
        self.resolved: list[ResolvedEvent] = []
        self.items: dict[str, _Item] = {}
        self.sessions: dict[str, _Session] = {}
        self.probe_ids: dict[str, int | None] = {}
        self.pending_on: dict[str, list[int]] = {}
        """Probes with `on:` waiting for the next turn of their session."""
        self.on_turns: list[tuple[int, ResolvedEvent]] = []
        """(probe index, the next turn of its session), checked once every id is known."""
        self.first_event_incomplete = False

    # -- the pass ------------------------------------------------------------------------

    def run(self) -> list[ResolvedEvent]:
        """Check every event; return what was worked out for each (None fields when unknown)."""
        previous = ResolvedEvent(kind=None, at=None, subject=None, session=None, line=None)
        floor = self.start  # the latest known time: an unknown time does not hide a later step back
        for i, raw in enumerate(self.events):
            ev = raw if isinstance(raw, dict) else {}
            kind = event_kind(raw)
            here = ResolvedEvent(
                kind=kind,
                at=self._time(i, ev, previous.at, floor),
                subject=previous.subject,
                session=previous.session,
                line=self.line_of(("events", i)),
            )
            if kind in ("turn", "probe", "signal"):
                self._subject_and_session(i, ev, here)
            elif kind == "resolve":
                self._resolve(i, ev, here)
            elif kind == "forget":
                self._forget(i, ev, here)
            elif kind == "fault":
                self._fault(i, ev, here)
            if kind == "turn":
                self._turn(i, ev, here)
                self._roles(i, ev)
            elif kind == "probe":
                self._probe(i, ev, here)
            self.resolved.append(here)
            previous = here
            floor = here.at or floor
        for probe_index, turn in self.on_turns:
            self._check_on(probe_index, turn)
        for session, waiting in self.pending_on.items():
            for i in waiting:
                on = self.events[i]["on"]
                self.report(
                    ("events", i, "on"),
                    f"on: '{on}' must be the next turn of session '{session}', but the session has no turn after this probe",
                )
        for i, here in enumerate(self.resolved):
            if here.kind == "probe":
                self._gold(i, self.events[i], here)
        return self.resolved

    def _time(self, i: int, ev: dict, previous: datetime | None, floor: datetime | None) -> datetime | None:
        base = self.start if i == 0 else previous
        raw = ev.get("at")
        if raw is None:
            return base if i == 0 else (base + DEFAULT_STEP if base else None)
        if not isinstance(raw, str):
            return None
        try:
            when = parse_when(raw)
        except ValueError:
            return None  # reported by the structural layer
        if isinstance(when, timedelta):
            return base + when if base else None
        if floor is not None and when < floor:
            what = "start" if i == 0 else "the previous event" if base is not None else "an earlier event"
            self.report(
                ("events", i, "at"),
                f"time goes backwards: {_iso(when)} is earlier than {what} ({_iso(floor)})",
            )
        return when

    def _subject_and_session(self, i: int, ev: dict, here: ResolvedEvent) -> None:
        subject, session = _text(ev, "subject"), _text(ev, "session")
        if subject:
            self._check_subject(("events", i, "subject"), subject)
            here.subject = subject
        if session:
            here.session = session
        missing = [k for k, v in (("subject", here.subject), ("session", here.session)) if v is None]
        if i == 0 and (subject is None or session is None):
            absent = [k for k, v in (("subject", subject), ("session", session)) if v is None]
            if not self._has_structural_value(ev):
                self.report(("events", 0), f"the first event must name both subject and session (missing: {', '.join(absent)})")
            self.first_event_incomplete = True
            return
        if missing and not self.first_event_incomplete:
            self.report(("events", i), f"no {' and no '.join(missing)}: no earlier event set one, so name it here")
            return
        if here.session is None:
            return
        known = self.sessions.get(here.session)
        if known is None:
            self.sessions[here.session] = _Session(here.subject, here.line)
        elif here.subject is not None and known.subject is not None and known.subject != here.subject:
            key = "subject" if subject else ("session" if session else None)
            self.report(
                ("events", i) + ((key,) if key else ()),
                f"session '{here.session}' belongs to subject '{known.subject}' (line {known.line}), "
                f"not '{here.subject}': give this event its own session",
            )

    @staticmethod
    def _has_structural_value(ev: dict) -> bool:
        # subject/session present but not strings: the structural layer already said so
        return any(k in ev and not isinstance(ev[k], str) for k in ("subject", "session"))

    def _check_subject(self, path: tuple, subject: str) -> bool:
        if not self.subjects_known or subject in self.subjects:
            return True
        self.report(
            path,
            f"unknown subject '{subject}' (subjects in this scenario: {listing(self.subjects)})"
            + did_you_mean(subject, self.subjects),
        )
        return False

    def _turn(self, i: int, ev: dict, here: ResolvedEvent) -> None:
        if here.session is None:
            return
        session = self.sessions.setdefault(here.session, _Session(here.subject, here.line))
        session.turns += 1
        if session.first_turn is None:
            session.first_turn = i
        explicit = _text(ev, "id")
        here.id = explicit or f"{here.session}#{session.turns}"
        if explicit and explicit.endswith("#resolution"):
            self.report(("events", i, "id"), f"'{explicit}': ids ending in '#resolution' are kept for resolutions")
        self._register(i, here.id, here, ("events", i, "id") if explicit else ("events", i),
                       text=ev.get("turn") if isinstance(ev.get("turn"), str) else None,
                       default_of=None if explicit else session.turns)
        for probe_index in self.pending_on.pop(here.session, []):
            self.on_turns.append((probe_index, here))

    def _roles(self, i: int, ev: dict) -> None:
        """Keys only a turn of one role may carry: decision gold on customer turns, what the
        scripted agent did on agent turns."""
        role = ev.get("role", "customer")
        if not isinstance(role, str):
            return
        signals = ev.get("signals")
        given = [((key,), need) for key, need in _TURN_ROLES.items() if ev.get(key) is not None]
        if isinstance(signals, dict):
            given += [(("signals", key), need) for key, need in _SIGNAL_ROLES.items() if signals.get(key) is not None]
        for path, need in given:
            if role != need:
                self.report(("events", i) + path,
                            f"{path[-1]} is only for {need} turns; this turn's role is {role}")

    def _check_on(self, probe_index: int, turn: ResolvedEvent) -> None:
        on = self.events[probe_index]["on"]
        if on == turn.id:
            probe = self.resolved[probe_index]
            probe.task = probe.task or self.items[on].text
            return
        known = "" if on in self.items else " ('" + on + "' is not an id in this scenario" + did_you_mean(on, self.items) + ")"
        self.report(
            ("events", probe_index, "on"),
            f"on: '{on}' is not the next turn of session '{turn.session}': "
            f"the next turn is '{turn.id}' (line {turn.line}){known}",
        )

    def _register(self, i: int, item_id: str, here: ResolvedEvent, path: tuple, text: str | None = None,
                  default_of: int | None = None) -> None:
        earlier = self.items.get(item_id)
        if earlier is not None:
            how = f" (the default id of turn {default_of} of session '{here.session}')" if default_of else ""
            self.report(path, f"duplicate id '{item_id}'{how}: already used at line {earlier.line}")
            return
        self.items[item_id] = _Item(item_id, here.subject, i, here.line, text)

    def _resolve(self, i: int, ev: dict, here: ResolvedEvent) -> None:
        session_id = _text(ev, "resolve")
        if session_id is None:
            return
        explicit_session, explicit_subject = _text(ev, "session"), _text(ev, "subject")
        if explicit_session and explicit_session != session_id:
            self.report(
                ("events", i, "session"),
                f"session '{explicit_session}' disagrees with resolve: '{session_id}' (the resolve's value is its session)",
            )
        here.session = session_id
        session = self.sessions.get(session_id)
        if session is None:
            self.report(
                ("events", i, "resolve"),
                f"resolving unknown session '{session_id}' (sessions so far: {listing(self.sessions)})"
                + did_you_mean(session_id, self.sessions),
            )
            here.subject = explicit_subject or here.subject
            return
        here.subject = session.subject
        if explicit_subject and explicit_subject != session.subject:
            self.report(
                ("events", i, "subject"),
                f"subject '{explicit_subject}' disagrees with session '{session_id}', which belongs to '{session.subject}'",
            )
        session.statuses.append((i, ev.get("status"), here.line))
        if f"{session_id}#resolution" not in self.items:  # a later resolve replaces the record, same id
            self.items[f"{session_id}#resolution"] = _Item(f"{session_id}#resolution", session.subject, i, here.line,
                                                           turn=False)

    def _forget(self, i: int, ev: dict, here: ResolvedEvent) -> None:
        subject = _text(ev, "forget")
        if subject is None:
            return
        self._check_subject(("events", i, "forget"), subject)
        explicit_subject = _text(ev, "subject")
        if explicit_subject and explicit_subject != subject:
            self.report(("events", i, "subject"), f"subject '{explicit_subject}' disagrees with forget: '{subject}'")
        here.subject = subject
        if _text(ev, "session"):
            here.session = _text(ev, "session")

    def _fault(self, i: int, ev: dict, here: ResolvedEvent) -> None:
        # a fault concerns the whole system: it may name a subject or session, but needs neither
        subject, session = _text(ev, "subject"), _text(ev, "session")
        if subject and self._check_subject(("events", i, "subject"), subject):
            here.subject = subject
        if session:
            here.session = session

    def _probe(self, i: int, ev: dict, here: ResolvedEvent) -> None:
        probe_id = _text(ev, "probe")
        if probe_id is not None:
            if probe_id in self.probe_ids:
                self.report(("events", i, "probe"), f"duplicate probe id '{probe_id}': already used at line {self.probe_ids[probe_id]}")
            else:
                self.probe_ids[probe_id] = here.line
        here.task = ev.get("task") if isinstance(ev.get("task"), str) else None
        if ev.get("unlabelled") is True and isinstance(ev.get("expect"), dict) and ev["expect"]:
            self.report(("events", i, "unlabelled"), "an unlabelled probe has no gold: remove `unlabelled` now that "
                        "`expect` gives it some, or remove `expect`")
        on = _text(ev, "on")
        if on is not None and here.session is not None:
            self.pending_on.setdefault(here.session, []).append(i)
        elif on is None and ev.get("task") is None and "on" not in ev:
            self.report(("events", i), "a probe needs a task, or on: naming the next turn (whose text becomes the task)")

    # -- gold labels, checked once the whole history is known -----------------------------

    def _gold(self, i: int, ev: dict, here: ResolvedEvent) -> None:
        """Every reference of the probe's gold, by the kind its key declares, then the rules
        between keys."""
        expect = ev.get("expect")
        if not isinstance(expect, dict):
            return
        base = ("events", i, "expect")
        for key, g in declared(ExpectModel):
            value = expect.get(key)
            path = base + (key,)
            if g.ref in ("ids", "needles") and isinstance(value, list):
                for j, ref in enumerate(value):
                    if isinstance(ref, str):
                        self._check_ref(i, here, path + (j,), ref, other_subjects_ok=g.any_subject)
            elif g.ref == "pairs" and isinstance(value, list):
                for j, pair in enumerate(value):
                    for ref in pair if isinstance(pair, list) else ():
                        if isinstance(ref, str):
                            self._check_ref(i, here, path + (j,), ref, other_subjects_ok=False)
            elif g.ref == "session" and isinstance(value, str):
                self._check_resolved_session(i, here, path, value)
            elif g.ref == "sessions" and isinstance(value, list):
                for j, session in enumerate(value):
                    if isinstance(session, str):
                        self._check_resolved_session(i, here, path + (j,), session)
            elif g.ref == "history" and isinstance(value, list):
                for j, session in enumerate(value):
                    if isinstance(session, str):
                        self._check_history_session(i, here, path + (j,), session)
            elif g.ref == "records" and isinstance(value, list):
                for j, record in enumerate(value):
                    if isinstance(record, dict):
                        self._memory(i, here, path + (j,), record)
        self._repeat_rules(base, expect)

    def _repeat_rules(self, base: tuple, expect: dict) -> None:
        repeat_of = expect.get("repeat_of")
        if not isinstance(repeat_of, str) and expect.get("evidence"):
            self.report(base + ("evidence",), "evidence without repeat_of: evidence says what proves a repeat was recalled")
        not_repeat = expect.get("not_repeat_of")
        for j, session in enumerate(not_repeat if isinstance(not_repeat, list) else ()):
            if isinstance(session, str) and session == repeat_of:
                self.report(base + ("not_repeat_of", j), f"'{session}' is also repeat_of")

    def _memory(self, i: int, here: ResolvedEvent, path: tuple, record: dict) -> None:
        """A gold memory: outcome only on an ATTEMPT, status only on an INCIDENT, and its
        source a turn of the probe's subject that happened before the probe."""
        kind = record.get("type")
        for key, only in _MEMORY_RULES.items():
            if record.get(key) is not None and kind in get_args(MemoryType) and kind != only:
                self.report(path + (key,), f"{key} is only for {only} memories; this one is {kind}")
        source = record.get("source")
        if isinstance(source, str):
            item = self.items.get(source)
            if item is not None and not item.turn:
                self.report(path + ("source",), f"'{source}' is a resolution record; a memory's source is a turn id")
                return
            self._check_ref(i, here, path + ("source",), source, other_subjects_ok=False)

    def _check_ref(self, i: int, here: ResolvedEvent, path: tuple, ref: str, other_subjects_ok: bool) -> None:
        item = self.items.get(ref)
        if item is None:
            session = ref.removesuffix("#resolution")
            if ref.endswith("#resolution") and session in self.sessions:
                self.report(path, f"unknown id '{ref}': session '{session}' is never resolved in this scenario")
                return
            self.report(
                path,
                f"unknown id '{ref}' (known ids in this scenario: {listing(self.items)})" + did_you_mean(ref, self.items),
            )
        elif item.index >= i:
            attached = " (it is the turn this probe is on:)" if self.events[i].get("on") == ref else ""
            self.report(path, f"'{ref}' has not happened yet at this probe: it comes at line {item.line}{attached}")
        elif not other_subjects_ok and item.subject != here.subject:
            self.report(
                path,
                f"'{ref}' belongs to subject '{item.subject}', not to the probe's subject '{here.subject}' "
                "(only exclude may name another subject's items)",
            )

    def _check_history_session(self, i: int, here: ResolvedEvent, path: tuple, name: str) -> None:
        """A session of the probe's subject with a turn before the probe (resolved or not)."""
        session = self.sessions.get(name)
        if session is None:
            self.report(path, f"unknown session '{name}' (sessions in this scenario: {listing(self.sessions)})"
                        + did_you_mean(name, self.sessions))
        elif session.subject != here.subject:
            self.report(path, f"session '{name}' belongs to subject '{session.subject}', not to the probe's subject '{here.subject}'")
        elif session.first_turn is None or session.first_turn > i:
            self.report(path, f"session '{name}' has no turn before this probe")

    def _check_resolved_session(self, i: int, here: ResolvedEvent, path: tuple, name: str) -> None:
        session = self.sessions.get(name)
        if session is None:
            self.report(
                path,
                f"unknown session '{name}' (sessions in this scenario: {listing(self.sessions)})"
                + did_you_mean(name, self.sessions),
            )
            return
        if session.subject != here.subject:
            self.report(path, f"session '{name}' belongs to subject '{session.subject}', not to the probe's subject '{here.subject}'")
            return
        if name == here.session:
            self.report(path, f"'{name}' is the probe's own session")
            return
        before = [(index, status, line) for index, status, line in session.statuses if index < i]
        if not before:
            later = session.statuses[0][2] if session.statuses else None
            when = f"its first resolve is at line {later}" if later else "it is never resolved"
            self.report(path, f"session '{name}' is not resolved at this probe ({when})")
        elif before[-1][1] == "open":
            self.report(path, f"session '{name}' was reopened (status open at line {before[-1][2]}) before this probe")


def _iso(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")

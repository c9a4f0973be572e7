"""The structural layer of the scenario format: pydantic models of the YAML as written.

They refuse unknown keys, wrong types and unknown roles, kinds, statuses, bands, labels,
plans, routes, signals and memory types, and the JSON Schema in
`datasets/schema/scenario.schema.json` is generated from them (`json_schema()`). Meaning
across events (ids, times, subjects, sessions) is checked by `harness.format.checks` on top
of them. The format is described in docs/scenario-format.md.

These models are also the one declaration of the gold vocabulary: every gold key (the fields
of `ExpectModel`, and a turn's `label`, `plan` and `route`) carries a `harness.format.gold.Gold`
saying what it refers to, its polarity and its display name; the runtime types, the run
tables' JSON and the app's gold marks are derived from it.
"""

from __future__ import annotations

import re
import types
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar, Literal, Union, get_args, get_origin

from pydantic import (AfterValidator, BaseModel, ConfigDict, Discriminator, Field, StrictBool, Tag, WithJsonSchema,
                      create_model)

from harness.format.gold import Gold, keys_of
from harness.format.timeparse import ABSOLUTE_PATTERN, WHEN_PATTERN, parse_absolute, parse_when
from stores.decisions.signals import TURN_SIGNALS, SignalKey
from stores.decisions.vocabulary import Plan, Route
from stores.protocol import Role, Status, TurnKind

Band = Literal["healthy", "watch", "at_risk"]
"""Health bands, best first."""

Label = Literal["profile", "preference", "episodic", "sentiment", "system_owned"]
"""The memory classes a turn can be labelled with (gold, never shown to strategies)."""

# The decision words (what the system should do on a customer turn, which agent owns the answer,
# how sensitive a message is, an explicit intent) are the policies' own: `stores.decisions.vocabulary`.

FaultKind = Literal["locker_down", "locker_up"]
"""Infrastructure faults a scenario can inject for decision policies."""

MemoryType = Literal["ATTEMPT", "INCIDENT", "PROFILE"]
"""Types of a structured memory: a step tried, an incident, a fact about the customer."""

Outcome = Literal["worked", "failed", "in_progress"]
"""How an ATTEMPT went."""

IncidentStatus = Literal["open", "resolved"]
"""Where an INCIDENT stands."""

EVENT_KINDS = ("turn", "resolve", "probe", "forget", "signal", "fault")
"""The keys that say what an event is; an event has exactly one of them."""

SLUG_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]*$"

DEFAULT_BUDGET = 4000
"""Tokens a probe allows when it does not say."""


def _check_when(value: str) -> str:
    parse_when(value)
    return value


def _check_absolute(value: str) -> str:
    parse_absolute(value)
    return value


def _check_slug(value: str) -> str:
    if not re.match(SLUG_PATTERN, value):
        raise ValueError(f"'{value}' is not a slug: use letters, digits, '.', '_' and '-', starting with a letter or digit")
    return value


Id = Annotated[str, Field(min_length=1)]
When = Annotated[str, AfterValidator(_check_when), WithJsonSchema({"type": "string", "pattern": WHEN_PATTERN})]
Start = Annotated[
    str,
    AfterValidator(_check_absolute),
    WithJsonSchema({"type": "string", "format": "date-time", "pattern": ABSOLUTE_PATTERN}),
]
Slug = Annotated[str, AfterValidator(_check_slug), WithJsonSchema({"type": "string", "pattern": SLUG_PATTERN})]
Pair = Annotated[list[Id], Field(min_length=2, max_length=2)]
Text = Annotated[str, Field(min_length=1)]


@dataclass(frozen=True)
class OnlyOn:
    """A turn key that only a turn of this role may carry (checked by `harness.format.checks`)."""

    role: Role
    """The role the turn must have."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    noun: ClassVar[str] = "key"
    """What an unknown key of this mapping is called in messages."""


class TextNeedleModel(_Strict):
    """A gold item given as text: a case-insensitive substring of the context text."""

    text: str = Field(min_length=1)
    """The text to look for."""


def _gold_tag(value: Any) -> str:
    return "text" if isinstance(value, dict) else "id"


GoldItem = Annotated[
    Union[Annotated[Id, Tag("id")], Annotated[TextNeedleModel, Tag("text")]],
    Discriminator(_gold_tag),
]
"""A turn id, `<session>#resolution`, or `{text: ...}`."""


class MemoryModel(_Strict):
    """A typed memory a structured store should hold (matched on type, outcome or status, text and source)."""

    type: MemoryType
    """ATTEMPT (a step tried), INCIDENT (an issue) or PROFILE (a fact about the customer)."""
    text: Text
    """A case-insensitive needle of the memory's text."""
    outcome: Outcome | None = None
    """How the attempt went (ATTEMPT only)."""
    status: IncidentStatus | None = None
    """Where the incident stands (INCIDENT only)."""
    source: Id | None = None
    """A turn id that must be among the memory's source ids."""


def _repeat_evidence(values: dict[str, Any]) -> tuple[str, ...]:
    """Without evidence, the repeated session's resolution is what proves the repeat was recalled."""
    repeat_of = values.get("repeat_of")
    return (f"{repeat_of}#resolution",) if repeat_of else ()


class ExpectModel(_Strict):
    """What a good context contains at the probe (all optional)."""

    include: Annotated[list[GoldItem], Gold("needles", "in", "must include")] = []
    """Must be in the context (recall)."""
    exclude: Annotated[list[GoldItem], Gold("needles", "out", "must exclude", any_subject=True)] = []
    """Must not be in the context (stale, superseded, another customer's); may name other subjects' items."""
    identity: Annotated[list[Id], Gold("ids", "in", "identity")] = []
    """Profile facts from earlier sessions that must surface."""
    preferences: Annotated[list[Id], Gold("ids", "in", "preference")] = []
    """Stated preferences that must surface."""
    superseded: Annotated[list[Id], Gold("ids", "out", "superseded")] = []
    """Older preferences the newer ones replaced: must not be included."""
    above: Annotated[list[Pair], Gold("pairs", "order", "above")] = []
    """Pairs [a, b]: a must outrank b."""
    repeat_of: Annotated[Id | None, Gold("session", "other", "repeat of")] = None
    """The resolved session this one repeats."""
    evidence: Annotated[list[Id] | None, Gold("ids", "in", "repeat evidence", default=_repeat_evidence)] = None
    """What proves the repeat was recalled (default: `<repeat_of>#resolution`)."""
    not_repeat_of: Annotated[list[Id], Gold("sessions", "out", "not a repeat")] = []
    """Resolved sessions that are NOT the same issue (negative controls)."""
    fix_before: Annotated[list[Pair], Gold("pairs", "order", "known fix first")] = []
    """Pairs [fix, failure]: the known fix must outrank the failed attempt."""
    health: Annotated[Band | None, Gold("band", "other", "health band")] = None
    """Expected health band of the subject now."""
    returning: Annotated[StrictBool | None, Gold("bool", "other", "returning customer")] = None
    """Whether the customer has relevant prior history."""
    memories: Annotated[list[MemoryModel] | None, Gold("records", "other", "typed memories")] = None
    """The complete set of typed memories a structured store should hold for the subject now."""
    known_fixes: Annotated[list[GoldItem], Gold("needles", "other", "known fix")] = []
    """What worked before: the reply must lead with these."""
    known_failures: Annotated[list[GoldItem], Gold("needles", "other", "known failure")] = []
    """What failed before: the reply must list them as already tried and never propose them."""
    expired: Annotated[list[Id], Gold("ids", "out", "expired")] = []
    """Must be out of the context and carry an expiry reason in the receipt."""
    evidence_sessions: Annotated[list[Id], Gold("history", "other", "evidence sessions")] = []
    """Session-level gold: sessions of the subject the context must draw on, at least one item of
    each (session recall; LongMemEval's answer sessions)."""


def _signal_type(key: SignalKey) -> Any:
    kind = Literal[key.values] if key.values else StrictBool  # type: ignore[valid-type]
    return Annotated[kind | None, OnlyOn("agent")] if key.role == "agent" else kind | None


TurnSignalsModel: type[_Strict] = create_model(
    "TurnSignalsModel",
    __base__=_Strict,
    __doc__="""What the producers (classifiers) report for a turn, as scripted: an input for decision
policies (a key given here overrides the rule-based producer for that key only), never gold.""",
    **{k.name: (_signal_type(k), Field(default=None, description=k.doc)) for k in TURN_SIGNALS},
)
"""A turn's `signals:`, one optional field per key of `stores.decisions.signals.TURN_SIGNALS`
(the one declaration of the keys, their values and the role of the turns that carry them)."""
TurnSignalsModel.noun = "signal"


class _EventBase(_Strict):
    at: When | None = None
    """Absolute ISO 8601 time with a timezone, or a step after the previous event (`+45s`, `+1d2h`); default +1m."""
    subject: Id | None = None
    """The customer; defaults to the previous event's."""
    session: Id | None = None
    """The support session; defaults to the previous event's."""


class TurnEvent(_EventBase):
    """One message of a session."""

    turn: str
    """What was said."""
    role: Role = "customer"
    """Who spoke."""
    kind: TurnKind = "message"
    """`action` for a step the agent tried."""
    id: Id | None = None
    """Default `<session>#<n>`, n = 1-based position among the session's turns."""
    label: Annotated[list[Label], Gold("classes", "other", "memory class", column="labels")] = []
    """Gold memory classes of the turn, never shown to strategies."""
    plan: Annotated[Plan | None, Gold("choice", "other", "plan"), OnlyOn("customer")] = None
    """Gold: the plan the system should make on this customer turn."""
    route: Annotated[Route | None, Gold("choice", "other", "route"), OnlyOn("customer")] = None
    """Gold: which agent owns the answer to this customer turn."""
    signals: TurnSignalsModel | None = None
    """Input for decision policies: what the producers report for this turn."""


class ResolveEvent(_EventBase):
    """A session's resolution record (a later one replaces it); its id is `<session>#resolution`."""

    resolve: Id
    """The session being resolved."""
    status: Status
    """`resolved`, `open` (reopened) or `unresolved` (closed without a fix)."""
    summary: str = ""
    """What was done."""


class ProbeEvent(_EventBase):
    """A moment when every strategy is asked for context, with the gold labels for it."""

    probe: Id
    """The probe's id, unique in the scenario."""
    task: str | None = None
    """What the agent is about to answer; defaults to the text of the `on` turn."""
    on: Id | None = None
    """The next turn of this session, which the probe runs before."""
    budget: int = Field(default=DEFAULT_BUDGET, gt=0)
    """Token budget of the context."""
    expect: ExpectModel = Field(default_factory=ExpectModel)
    """The gold labels."""
    handoff: bool = False
    """Also ask strategies with the handoff capability for a handoff brief."""
    tags: list[Slug] = []
    """Words that group probes in reports (a benchmark's question category, say): every table
    can be broken down by them."""
    unlabelled: StrictBool = False
    """No gold yet (an imported conversation's probe waiting for a reviewer): it runs and is
    shown, and is in no score; it may carry no `expect`."""


class ForgetEvent(_EventBase):
    """A deletion request: nothing of this subject may appear afterwards."""

    forget: Id
    """The subject to forget."""


class SignalEvent(_EventBase):
    """A system event the agent's systems emit (shipment delivered, RMA closed, callback done);
    strategies observe it like a turn."""

    signal: Slug
    """Its name, e.g. `rma_closed`."""
    ref: Text | None = None
    """What it closes: memories whose text contains it (case-insensitive)."""


class FaultEvent(_EventBase):
    """An infrastructure fault for decision policies (never shown to memory strategies)."""

    fault: FaultKind
    """`locker_down` makes the session-state store unavailable until `locker_up`."""


EVENT_MODELS: dict[str, type[_EventBase]] = {
    "turn": TurnEvent, "resolve": ResolveEvent, "probe": ProbeEvent,
    "forget": ForgetEvent, "signal": SignalEvent, "fault": FaultEvent,
}
"""The model of each kind of event."""


def event_kind(value: Any) -> str | None:
    """The event's kind (one of `EVENT_KINDS`) when it has exactly one of those keys."""
    if not isinstance(value, dict):
        return None
    present = [k for k in EVENT_KINDS if k in value]
    return present[0] if len(present) == 1 else None


Event = Annotated[
    Union[tuple(Annotated[model, Tag(kind)] for kind, model in EVENT_MODELS.items())],  # type: ignore[valid-type]
    Discriminator(
        event_kind,
        custom_error_type="event_kind",
        custom_error_message=f"an event needs exactly one of {', '.join(EVENT_KINDS)}",
    ),
]


class SubjectModel(_Strict):
    """A customer."""

    name: str = ""
    """Display name."""


class ScenarioModel(_Strict):
    """A scripted support history with probes (scenario format version 1)."""

    model_config = ConfigDict(title="supportbench scenario")

    id: Slug
    """Unique slug within a suite."""
    version: int = Field(gt=0)
    """Bump when the meaning of the scenario changes."""
    title: str
    """One line saying what the scenario tests."""
    description: str = ""
    """Longer prose for readers."""
    tags: list[str] = []
    """Free-form tags, e.g. the criteria it exercises."""
    start: Start
    """Clock origin (ISO 8601 with a timezone)."""
    subjects: dict[Id, SubjectModel] = Field(min_length=1)
    """Customers by id; ids are stable across sessions."""
    events: list[Event] = Field(min_length=1)
    """Turns, resolutions, probes, deletion requests, system signals and faults, in time order."""


KEYS_BY_KIND: dict[str, tuple[str, ...]] = {kind: tuple(model.model_fields) for kind, model in EVENT_MODELS.items()}
"""The keys each kind of event allows."""

LABEL_KEYS: tuple[str, ...] = ("include", "repeat_of", "health")
"""The gold keys a reviewer sets from the transcript in the app (`harness.format.label`): the items
that must be in the context, the resolved session this one repeats, the health band."""

NEEDLE_KEYS = keys_of(ExpectModel, "needles")
"""The `expect` keys whose items may be text needles."""

PAIR_KEYS = keys_of(ExpectModel, "pairs")
"""The `expect` keys whose items are pairs."""


# -- what is allowed where (for messages) ------------------------------------------------------


def _strip(annotation: Any) -> Any:
    """The type inside `Annotated[...]`."""
    while hasattr(annotation, "__metadata__"):
        annotation = annotation.__origin__
    return annotation


def _members(annotation: Any) -> list[Any]:
    annotation = _strip(annotation)
    if get_origin(annotation) in (Union, types.UnionType):
        return [m for a in get_args(annotation) for m in _members(a)]
    return [annotation]


def _is_model(t: Any) -> bool:
    return isinstance(t, type) and issubclass(t, BaseModel)


def _pick(annotation: Any, value: Any) -> Any:
    """The member of a union that describes `value` (an event's kind, a needle's mapping)."""
    members = [m for m in _members(annotation) if m is not type(None)]
    if len(members) == 1:
        return members[0]
    models = [m for m in members if _is_model(m)]
    if isinstance(value, dict) and models:
        kind = event_kind(value)
        if kind is not None and EVENT_MODELS[kind] in models:
            return EVENT_MODELS[kind]
        return models[0] if len(models) == 1 else None
    rest = [m for m in members if not _is_model(m)]
    return rest[0] if len(rest) == 1 else None


def annotation_at(path: tuple, data: Any) -> Any:
    """The type the document expects at `path` (None when the path leads nowhere known)."""
    annotation: Any = ScenarioModel
    value = data
    for part in path:
        annotation = _pick(annotation, value)
        if annotation is None:
            return None
        if _is_model(annotation):
            if not isinstance(part, str) or part not in annotation.model_fields:
                return None
            annotation = annotation.model_fields[part].annotation
        elif get_origin(annotation) is list and isinstance(part, int):
            annotation = get_args(annotation)[0]
        elif get_origin(annotation) is dict:
            annotation = get_args(annotation)[1]
        else:
            return None
        value = value.get(part) if isinstance(value, dict) else (
            value[part] if isinstance(value, list) and isinstance(part, int) and part < len(value) else None)
    return _pick(annotation, value)


def keys_at(path: tuple, data: Any) -> tuple[tuple[str, ...], str]:
    """The keys the mapping at `path` allows, and what such a key is called ("key", "signal")."""
    model = annotation_at(path, data)
    if not _is_model(model):
        return (), "key"
    return tuple(model.model_fields), model.noun


def choices_at(path: tuple, data: Any) -> tuple[str, ...]:
    """The allowed values of the enumerated value at `path` (empty when it is not enumerated)."""
    parent = annotation_at(path[:-1], data)
    annotation = None
    if _is_model(parent) and isinstance(path[-1], str) and path[-1] in parent.model_fields:
        annotation = parent.model_fields[path[-1]].annotation
    elif get_origin(parent) is list:
        annotation = get_args(parent)[0]
    for member in _members(annotation) if annotation is not None else ():
        if get_origin(member) is Literal:
            return tuple(get_args(member))
    return ()


def json_schema() -> dict[str, Any]:
    """The JSON Schema of a scenario file, generated from the models."""
    schema = ScenarioModel.model_json_schema()
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema}

"""The structural layer of the scenario format: pydantic models of the YAML as written.

They refuse unknown keys, wrong types and unknown roles, kinds, statuses, bands and labels,
and the JSON Schema in `datasets/schema/scenario.schema.json` is generated from them
(`json_schema()`). Meaning across events (ids, times, subjects, sessions) is checked by the
loader on top of them.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal, Union

from pydantic import AfterValidator, BaseModel, ConfigDict, Discriminator, Field, Tag, WithJsonSchema

from harness.format.model import Band
from harness.format.timeparse import ABSOLUTE_PATTERN, WHEN_PATTERN, parse_absolute, parse_when
from stores.protocol import Role, Status, TurnKind

Label = Literal["profile", "preference", "episodic", "sentiment", "system_owned"]
"""Gold annotations of a turn (never shown to strategies)."""

EVENT_KINDS = ("turn", "resolve", "probe", "forget")
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


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)


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


class ExpectModel(_Strict):
    """What a good context contains at the probe (all optional)."""

    include: list[GoldItem] = []
    """Must be in the context (recall)."""
    exclude: list[GoldItem] = []
    """Must not be in the context (stale, superseded, another customer's); may name other subjects' items."""
    identity: list[Id] = []
    """Profile facts from earlier sessions that must surface."""
    preferences: list[Id] = []
    """Stated preferences that must surface."""
    superseded: list[Id] = []
    """Older preferences the newer ones replaced: must not be included."""
    above: list[Pair] = []
    """Pairs [a, b]: a must outrank b."""
    repeat_of: Id | None = None
    """The resolved session this one repeats."""
    evidence: list[Id] | None = None
    """What proves the repeat was recalled (default: `<repeat_of>#resolution`)."""
    not_repeat_of: list[Id] = []
    """Resolved sessions that are NOT the same issue (negative controls)."""
    fix_before: list[Pair] = []
    """Pairs [fix, failure]: the known fix must outrank the failed attempt."""
    health: Band | None = None
    """Expected health band of the subject now."""


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
    label: list[Label] = []
    """Gold annotations, never shown to strategies."""


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


class ForgetEvent(_EventBase):
    """A deletion request: nothing of this subject may appear afterwards."""

    forget: Id
    """The subject to forget."""


def event_kind(value: Any) -> str | None:
    """`turn`, `resolve`, `probe` or `forget` when the event has exactly one of those keys."""
    if not isinstance(value, dict):
        return None
    present = [k for k in EVENT_KINDS if k in value]
    return present[0] if len(present) == 1 else None


Event = Annotated[
    Union[
        Annotated[TurnEvent, Tag("turn")],
        Annotated[ResolveEvent, Tag("resolve")],
        Annotated[ProbeEvent, Tag("probe")],
        Annotated[ForgetEvent, Tag("forget")],
    ],
    Discriminator(
        event_kind,
        custom_error_type="event_kind",
        custom_error_message="an event needs exactly one of turn, resolve, probe, forget",
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
    """Turns, resolutions, probes and deletion requests, in time order."""


KEYS_BY_KIND: dict[str, tuple[str, ...]] = {
    kind: tuple(model.model_fields)
    for kind, model in {"turn": TurnEvent, "resolve": ResolveEvent, "probe": ProbeEvent, "forget": ForgetEvent}.items()
}
"""The keys each kind of event allows."""

CHOICES: dict[str, tuple[str, ...]] = {
    "role": Role.__args__,
    "kind": TurnKind.__args__,
    "status": Status.__args__,
    "health": Band.__args__,
    "label": Label.__args__,
}
"""The allowed values of enumerated keys, by key."""


def json_schema() -> dict[str, Any]:
    """The JSON Schema of a scenario file, generated from the models."""
    schema = ScenarioModel.model_json_schema()
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema}

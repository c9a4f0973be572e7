"""The supportbench memory protocol, version 1: what the `http` strategy says to a team's service.

A small JSON-over-HTTP protocol any language can serve (published as docs/http-protocol.openapi.json,
explained in docs/http-protocol.md). One strategy instance is one *namespace* on the service:

| call | route | body | answer |
|---|---|---|---|
| info | `GET /v1/info` | - | `Info`: protocol, version, capabilities, limits |
| open | `PUT /v1/namespaces/{ns}` | `OpenRequest` (the instance's scope) | `Ack` |
| observe | `POST /v1/namespaces/{ns}/events` | `EventBatch` (turn, resolution, forget, signal; numbered) | `EventsAck` |
| context | `POST /v1/namespaces/{ns}/context` | `ContextQuery` | `ContextAnswer` (ranked items) |
| health | `POST /v1/namespaces/{ns}/health` | `HealthQuery` | `HealthAnswer` (when claimed) |
| handoff | `POST /v1/namespaces/{ns}/handoff` | `HandoffQuery` | `HandoffAnswer` (when claimed) |
| reset | `POST /v1/namespaces/{ns}/reset` | `{}` | `Ack` |
| close | `DELETE /v1/namespaces/{ns}` | - | `Ack` |

Every time in a body is the simulated clock (ISO 8601, UTC), never wall time. Events carry a
sequence number per namespace (1, 2, 3, ... from open or reset): a service applies each number
once, so a batch sent again after a lost answer changes nothing (`EventsAck.last_seq` says how
far it has applied), and a batch that skips numbers is refused with `409 sequence_gap`. Every
answer other than 2xx has the body `ErrorBody` (`{"error": {"code": ..., "message": ...}}`).

The models here are the one definition of the messages: the strategy (`stores.remote.http_service`)
validates answers with them, the conformance check (`harness.ci.conformance`) checks a service
against them, and `openapi()` writes the published document from them.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal, Union

from pydantic import BaseModel, ConfigDict, Field

PROTOCOL = "supportbench-memory"
"""The protocol's name, as `Info.protocol` states it."""
VERSION = "1.0"
"""The version this side speaks: a service whose major version differs is refused at open."""
CAPABILITIES = ("health", "handoff")
"""What a service may claim beyond context."""

NAMESPACE = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$"
"""A namespace in a route: the harness sends `sb-` and 20 hex digits."""


class _Message(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class _Strict(BaseModel):
    """What this side sends: exactly these fields."""

    model_config = ConfigDict(extra="forbid", frozen=True)


# -- requests ------------------------------------------------------------------------------------
class Scope(_Strict):
    """Where the namespace belongs (informational: the namespace alone is the key)."""

    run_id: str
    strategy: str
    suite: str
    scenario: str
    instance: Literal["plain", "twice"]


class OpenRequest(_Strict):
    """`PUT /v1/namespaces/{ns}`: make (or keep) an empty namespace."""

    scope: Scope


class _Event(_Strict):
    """What every event carries: its number in the namespace, its customer, its simulated time."""

    seq: int = Field(ge=1)
    subject: str
    at: datetime


class TurnEvent(_Event):
    """A message of the conversation."""

    type: Literal["turn"] = "turn"
    id: str
    session: str
    role: Literal["customer", "agent"]
    kind: Literal["message", "action"]
    text: str


class ResolutionEvent(_Event):
    """A session resolved, reopened or closed unresolved; retrievable as `<session>#resolution`."""

    type: Literal["resolution"] = "resolution"
    id: str
    session: str
    status: Literal["resolved", "open", "unresolved"]
    summary: str


class ForgetEvent(_Event):
    """Nothing of this subject may appear afterwards."""

    type: Literal["forget"] = "forget"


class SignalEvent(_Event):
    """A system event (a shipment delivered); not a retrievable item."""

    type: Literal["signal"] = "signal"
    session: str
    name: str
    ref: str | None


Event = Annotated[Union[TurnEvent, ResolutionEvent, ForgetEvent, SignalEvent], Field(discriminator="type")]


class EventBatch(_Strict):
    """`POST /v1/namespaces/{ns}/events`: consecutive events, in the order they happened."""

    events: list[Event] = Field(min_length=1)


class ContextQuery(_Strict):
    """`POST .../context`: the agent is about to answer."""

    subject: str
    session: str
    task: str
    budget_tokens: int
    """Hard ceiling on the tokens of the whole context text (may be 0 or less: then nothing fits)."""
    now: datetime


class HandoffQuery(ContextQuery):
    """`POST .../handoff`: a brief for the human who takes over."""

    brief_tokens: int | None = Field(default=None, ge=0)
    """The brief's own token budget (`budget_tokens` is the context's); null: the service's default."""


class HealthQuery(_Strict):
    """`POST .../health`: the customer's health at a simulated moment."""

    subject: str
    now: datetime


# -- answers -------------------------------------------------------------------------------------
class Limits(_Message):
    """What the service accepts."""

    max_batch: int = Field(default=1000, ge=1)
    """Most events in one batch."""


class Info(_Message):
    """`GET /v1/info`."""

    protocol: Literal["supportbench-memory"]
    version: str = Field(pattern=r"^\d+\.\d+$")
    capabilities: list[str] = []
    """What it answers beyond context: `health`, `handoff` (others are ignored)."""
    limits: Limits = Limits()
    name: str = ""
    """The service's name for people."""


class Ack(_Message):
    """An empty success (`{"ok": true}`)."""

    ok: Literal[True] = True


class EventsAck(_Message):
    """The events were applied (or had been: a batch sent again)."""

    applied: int = Field(ge=0)
    """How many of this batch's events were new."""
    last_seq: int = Field(ge=0)
    """The highest sequence number applied in this namespace."""


class Item(_Message):
    """One item the service considered, with why it scored what it did."""

    id: str = Field(min_length=1)
    text: str
    """The item's line as rendered into the context (one line)."""
    score: float
    components: dict[str, float]
    """Named parts that sum to `score`."""
    source_ids: list[str] = []
    included: bool
    reason: str = ""
    """Why it was left out (empty when included): `budget`, `rank_cutoff`, or the service's word."""
    subject: str = ""
    session: str = ""


class ContextAnswer(_Message):
    """Every item considered, best first, and the context text."""

    items: list[Item]
    text: str


class Factor(_Message):
    signal: str
    impact: float
    detail: str
    source_ids: list[str] = []


class HealthAnswer(_Message):
    subject: str
    at: datetime
    base: float
    factors: list[Factor]
    score: float = Field(ge=0, le=100)
    band: Literal["healthy", "watch", "at_risk"]


class HandoffAnswer(_Message):
    subject: str
    session: str
    sections: list[tuple[str, str]]
    text: str
    used_ids: list[str]


class ErrorDetail(_Message):
    code: str = Field(min_length=1)
    message: str


class ErrorBody(_Message):
    """The body of every answer other than 2xx."""

    error: ErrorDetail


ROUTES: list[tuple[str, str, str, type[BaseModel] | None, type[BaseModel], str]] = [
    ("get", "/v1/info", "info", None, Info, "What the service speaks and claims."),
    ("put", "/v1/namespaces/{namespace}", "open", OpenRequest, Ack, "Make (or keep) an empty namespace."),
    ("delete", "/v1/namespaces/{namespace}", "close", None, Ack, "Drop the namespace and everything in it."),
    ("post", "/v1/namespaces/{namespace}/events", "observe", EventBatch, EventsAck,
     "Apply numbered events in order; numbers already applied are acknowledged, not applied again."),
    ("post", "/v1/namespaces/{namespace}/context", "context", ContextQuery, ContextAnswer,
     "Every item considered, best first, and the context text."),
    ("post", "/v1/namespaces/{namespace}/health", "health", HealthQuery, HealthAnswer, "Only when `health` is claimed."),
    ("post", "/v1/namespaces/{namespace}/handoff", "handoff", HandoffQuery, HandoffAnswer, "Only when `handoff` is claimed."),
    ("post", "/v1/namespaces/{namespace}/reset", "reset", None, Ack, "Forget everything in the namespace; numbering restarts at 1."),
]
"""(method, path, operation, request model, answer model, summary) of every route."""


def openapi() -> dict:
    """The protocol as an OpenAPI 3.1 document (what docs/http-protocol.openapi.json holds)."""
    from pydantic.json_schema import models_json_schema

    models = {m for _, _, _, req, ans, _ in ROUTES for m in (req, ans) if m is not None} | {ErrorBody}
    _, schema = models_json_schema([(m, "validation") for m in sorted(models, key=lambda m: m.__name__)],
                                   ref_template="#/components/schemas/{model}")
    error = {"description": "Any failure: `bad_request`, `unauthorized`, `not_found`, `sequence_gap`, `too_large`, "
                            "`unsupported`, `internal`", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}}}
    paths: dict[str, dict] = {}
    for method, path, op, req, ans, summary in ROUTES:
        entry: dict = {"operationId": op, "summary": summary,
                       "responses": {"200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": f"#/components/schemas/{ans.__name__}"}}}},
                                     "default": error}}
        if "{namespace}" in path:
            entry["parameters"] = [{"name": "namespace", "in": "path", "required": True, "schema": {"type": "string", "pattern": NAMESPACE}}]
        if req is not None:
            entry["requestBody"] = {"required": True, "content": {"application/json": {"schema": {"$ref": f"#/components/schemas/{req.__name__}"}}}}
        paths.setdefault(path, {})[method] = entry
    return {
        "openapi": "3.1.0",
        "info": {"title": "supportbench memory protocol", "version": VERSION,
                 "description": "What the `http` strategy sends to a team's memory service. Times are the simulated clock "
                                "(ISO 8601, UTC). Authentication, when the service wants it: `Authorization: Bearer <key>`."},
        "paths": paths,
        "components": {"schemas": schema.get("$defs", {}),
                       "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}}},
        "security": [{}, {"bearer": []}],
    }


if __name__ == "__main__":  # `python -m stores.remote.http_protocol > docs/http-protocol.openapi.json`
    import json
    import sys

    sys.stdout.write(json.dumps(openapi(), indent=2, sort_keys=True) + "\n")

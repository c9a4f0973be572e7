"""hindsight: the raw way teams use Hindsight, retain every turn and recall with the task.

Over its HTTP API (`stores.remote.hindsight_client`, hindsight-api 1.1.0):

- every turn and resolution record is an item of its session's document
  (`document_id` = `<customer>:<session>`), tagged `customer:<id>`, with the simulated time as
  its `timestamp` and our item id, session, speaker and kind as (string) metadata. Hindsight
  replaces a document when it is retained again (recorded: same `document_id` -> one unit), so
  a session's document is always retained whole: the items observed since the last read are
  buffered and, before the next recall, every session that changed is retained again with all
  its items, in one `POST .../memories` call;
- a deletion request deletes the customer's documents; `reset()` deletes the bank;
- a context request is one recall with the task, the customer's tag (`all_strict`: nothing
  untagged, nothing of another customer), the budget as `max_tokens`, the strategy's recall
  `budget` (`low` | `mid` | `high`) and the simulated `now` as `query_timestamp`.

The receipt is the recall answer: every memory unit, in the server's order, mapped to our
items through its metadata (or, when the server merged a session's items into one chunk, to
every item of the document whose text the chunk holds), with its scores as components:
`semantic` and `keyword` as the server reports them and `fusion`, what its rank fusion made of
them (`final - semantic - keyword`), so they sum to the server's final score.

The clock: unlike the other two products, Hindsight takes our time. Each item's `timestamp`
is the simulated time of the turn (it becomes `mentioned_at`) and recall's `query_timestamp`
is the probe's `now`, so its temporal scoring sees a March ticket as months older than a
September one. (Recorded: `query_timestamp` ranks, it does not hide later memories; the
replay never retains the future anyway.)

Configuration: `url` and `api_key` are secret params, read from `HINDSIGHT_URL` (required) and
`HINDSIGHT_API_KEY` (optional, a bearer token): shown as `<secret>` in a manifest, never hashed
into a baseline. The bank is the instance's namespace (its `Scope`, given through `open`), so
replays, shards and runs never share one; `close()` deletes it.
"""

from __future__ import annotations

import os
import uuid
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, ClassVar, Iterator

import httpx
from pydantic import Field

from stores.memory import RESOLUTION_ROLE, render_line
from stores.params import secret, with_environment
from stores.protocol import Bundle, ContextRequest, Event, Forget, Resolution, Scope, Signal, Turn
from stores.remote.hindsight_client import HindsightClient, HindsightNotFound, HindsightUnavailable, RecallHit, RetainItem
from stores.remote.receipt import CallLog, Hit, RemoteUnavailable, bundle_from_hits, one_line, stamp
from stores.remote.wire import DEFAULT_MAX_BYTES

BUDGETS = ("low", "mid", "high")


@dataclass(frozen=True)
class HindsightParams:
    """Parameters of `hindsight`; the server's address and key are secrets read from the environment."""

    url: str = secret(env="HINDSIGHT_URL")
    """The Hindsight server, e.g. `http://127.0.0.1:8888` (`$HINDSIGHT_URL`; never written to a manifest)."""
    api_key: str = secret(env="HINDSIGHT_API_KEY")
    """Its API key, sent as a bearer token (`$HINDSIGHT_API_KEY`; optional)."""
    budget: str = "mid"
    """How much work one recall may spend: `low`, `mid` (the server's default) or `high`."""
    items_per_retain: int = 50
    """Items one retain call carries at most (whole documents: a document is never split, since a
    second write of it would replace the first). The server handles items one by one, so a
    bigger call saves round trips, not server time, and risks the timeout."""
    timeout_s: float = 120.0
    """Seconds one call may take in all, connect to last byte (a whole-call deadline, however
    slowly the bytes arrive); past it the call counts as unavailable and its case is an error row."""
    max_response_bytes: Annotated[int, Field(ge=1_000, le=256_000_000)] = DEFAULT_MAX_BYTES
    """The largest answer body read, in bytes: a bigger one is dropped at the cap (an error row)."""
    max_items: Annotated[int, Field(ge=1, le=100_000)] = 1_000
    """The most memories one recall may return: more is an error row, not a context."""

    def __post_init__(self) -> None:
        if self.budget not in BUDGETS:
            raise ValueError(f"budget must be one of {', '.join(BUDGETS)}, got {self.budget!r}")
        if self.timeout_s <= 0 or self.items_per_retain < 1:
            raise ValueError("timeout_s must be > 0 and items_per_retain >= 1")


@dataclass(frozen=True)
class _Item:
    """One of our items in a session document."""

    item_id: str
    speaker: str
    kind: str
    status: str
    text: str
    at: datetime


def tag(subject: str) -> str:
    """The tag that scopes a customer's memories."""
    return f"customer:{subject}"


class Hindsight:
    """Hindsight over its HTTP API: a document per session, recall per probe (module docstring)."""

    name: ClassVar[str] = "hindsight"
    Params = HindsightParams
    capabilities: ClassVar[frozenset[str]] = frozenset()

    def __init__(self, params: HindsightParams | None = None, *, transport: httpx.BaseTransport | None = None,
                 namespace: str | None = None) -> None:
        # built by the registry, the secrets are already read; built by hand, read them here
        self.params = params if params is not None else with_environment(HindsightParams(), set(), dict(os.environ))
        self.namespace = namespace or f"sb-{uuid.uuid4().hex[:12]}"
        """The bank this instance writes to; the harness gives each instance its own through `open(scope)`."""
        self.calls = CallLog()
        """Round trips made, per route."""
        self._transport = transport
        self._http: HindsightClient | None = None
        self._clear()

    @property
    def _client(self) -> HindsightClient:
        """The HTTP client, made on first use; without a server address the error says what to set."""
        if self._http is None:
            if not self.params.url:
                raise RemoteUnavailable(
                    "hindsight needs a running Hindsight server: set HINDSIGHT_URL (e.g. http://127.0.0.1:8888); "
                    "the project's opt-in target starts one locally")
            self._http = HindsightClient(self.params.url, api_key=self.params.api_key or None,
                                         transport=self._transport, timeout=self.params.timeout_s,
                                         max_bytes=self.params.max_response_bytes)
        return self._http

    def open(self, scope: Scope) -> None:
        """Write to the bank named after the instance's namespace."""
        if self._retained or self._dirty:
            raise RuntimeError("hindsight: open(scope) after events were observed")
        self.namespace = scope.namespace
        # a server that is down or not configured fails here, once, naming itself: every case
        # of the instance becomes an error row saying why
        with self._round_trip("GET /health"):
            self._client.health()

    @contextmanager
    def _round_trip(self, kind: str) -> Iterator[None]:
        """Count and time one call; a server that does not answer says which variable to check."""
        with self.calls.timed(kind):
            try:
                yield
            except HindsightUnavailable as e:
                raise RemoteUnavailable(f"{e}; is the server running and HINDSIGHT_URL right?") from None

    def _clear(self) -> None:
        self._docs: dict[tuple[str, str], dict[str, _Item]] = {}  # (subject, session) -> our id -> item
        self._retained: set[tuple[str, str]] = set()  # documents the server holds
        self._dirty: list[tuple[str, str]] = []  # documents to retain again, in order of change

    @staticmethod
    def document_id(subject: str, session: str) -> str:
        """The id of a session's document."""
        return f"{subject}:{session}"

    def call_counts(self) -> dict[str, dict[str, float]]:
        """Calls made so far, per kind, with their wall seconds (for the run manifest)."""
        return self.calls.as_dict()

    # -- events ---------------------------------------------------------------------------------
    def observe(self, event: Event) -> None:
        if isinstance(event, Turn):
            self._put(event.subject, event.session, _Item(event.id, event.role, event.kind, "", event.text, event.at))
        elif isinstance(event, Resolution):
            # a resolution without a summary still says how the session ended (as for mem0)
            text = event.summary or f"{event.status} (no summary)"
            self._put(event.subject, event.session, _Item(event.id, RESOLUTION_ROLE, "message", event.status, text, event.at))
        elif isinstance(event, Forget):
            self._forget(event.subject)
        elif isinstance(event, Signal):
            return  # a system signal is not a retrievable item; the product has no place for it
        else:
            raise TypeError(f"unknown event type {type(event).__name__}")

    def _put(self, subject: str, session: str, item: _Item) -> None:
        key = (subject, session)
        doc = self._docs.setdefault(key, {})
        if doc.get(item.item_id) == item:
            return  # delivered again: nothing changed
        if item.speaker != RESOLUTION_ROLE and item.item_id in doc:
            return  # a turn id is written once
        doc[item.item_id] = item
        if key not in self._dirty:
            self._dirty.append(key)

    def _flush(self) -> None:
        """Write every changed session document whole, in one call (a stored one deleted first)."""
        if not self._dirty:
            return
        keys, self._dirty = self._dirty, []
        for key in keys:
            if key in self._retained:
                with self._round_trip("DELETE /banks/{bank}/documents/{id}"):
                    self._client.delete_document(self.namespace, self.document_id(*key))
                self._retained.discard(key)
        batch: list[RetainItem] = []
        for key in keys:
            doc = [self._retain_item(key, it) for it in self._docs[key].values() if it.text.strip()]
            if batch and len(batch) + len(doc) > self.params.items_per_retain:
                self._retain(batch)
                batch = []
            batch += doc
            self._retained.add(key)
        if batch:
            self._retain(batch)

    def _retain(self, items: list[RetainItem]) -> None:
        with self._round_trip("POST /banks/{bank}/memories"):
            self._client.retain(self.namespace, items)

    def _retain_item(self, key: tuple[str, str], it: _Item) -> RetainItem:
        subject, session = key
        meta = {"item_id": it.item_id, "subject": subject, "session": session, "speaker": it.speaker, "kind": it.kind}
        if it.status:
            meta["status"] = it.status
        return RetainItem(content=it.text, document_id=self.document_id(subject, session), timestamp=it.at,
                          context=f"support session {session}", metadata=meta, tags=(tag(subject),))

    def _forget(self, subject: str) -> None:
        self._dirty = [k for k in self._dirty if k[0] != subject]
        for key in [k for k in self._docs if k[0] == subject]:
            if key in self._retained:
                try:
                    with self._round_trip("DELETE /banks/{bank}/documents/{id}"):
                        self._client.delete_document(self.namespace, self.document_id(*key))
                except HindsightNotFound:
                    pass  # never stored (every item was empty)
                self._retained.discard(key)
            del self._docs[key]

    def reset(self) -> None:
        """Delete the bank and forget what was sent."""
        if self._retained:
            try:
                with self._round_trip("DELETE /banks/{bank}"):
                    self._client.delete_bank(self.namespace)
            except HindsightNotFound:
                pass
        self._clear()

    def close(self) -> None:
        """Delete the bank and close the connection pool."""
        try:
            self.reset()
        finally:
            if self._http is not None:
                self._http.close()

    # -- reads ----------------------------------------------------------------------------------
    def context(self, request: ContextRequest) -> Bundle:
        self._flush()
        hits: list[RecallHit] = []
        if any(k[0] == request.subject for k in self._retained):  # recall on a bank never written is a 404
            with self._round_trip("POST /banks/{bank}/memories/recall"):
                hits = self._client.recall(self.namespace, request.task, tags=[tag(request.subject)],
                                           tags_match="all_strict", max_tokens=max(request.budget_tokens, 1),
                                           budget=self.params.budget, query_timestamp=request.now)  # type: ignore[arg-type]
            if len(hits) > self.params.max_items:
                raise RemoteUnavailable(f"Hindsight recall answered {len(hits):,} memories, more than max_items="
                                        f"{self.params.max_items:,}: the answer was not used")
        by_doc = {self.document_id(*k): k for k in self._docs if k[0] == request.subject}
        return bundle_from_hits(request, [self._hit(h, by_doc) for h in hits], request.subject)

    def _hit(self, h: RecallHit, by_doc: dict[str, tuple[str, str]]) -> Hit:
        key = by_doc.get(h.document_id or "")
        doc = self._docs.get(key, {}) if key else {}
        # the unit's text is the item's text verbatim (no LLM on the server): that decides first,
        # then the metadata; a chunk holding several items cites each one whose text it holds
        text = one_line(h.text)
        named = h.metadata.get("item_id")
        sources = [it for it in doc.values() if one_line(it.text) == text]
        if not sources and named in doc:
            sources = [doc[named]]
        if not sources:
            sources = [it for it in doc.values() if it.text.strip() and one_line(it.text) in text]
        semantic = float(h.scores.get("semantic") or 0.0)
        keyword = float(h.scores.get("keyword") or 0.0)
        comps = {"semantic": semantic, "keyword": keyword, "fusion": h.score - semantic - keyword}
        session = key[1] if key else ""
        if len(sources) == 1:
            s = sources[0]
            line = render_line(s.speaker, s.kind, session, s.at, text, s.status)
            item = s.item_id
        elif sources:
            line = f"[{stamp(max(s.at for s in sources))}] ({session}) session excerpt: {text}"
            item = "+".join(s.item_id for s in sources)
        else:
            line = f"[{stamp(None)}] (hindsight) memory: {text}"
            item = f"hindsight:{h.id}"
        return Hit(item, line, comps, tuple(s.item_id for s in sources), session, h.id)

"""statewave: the Statewave memory runtime, used the way its write-up says a support team should.

How our events map to its API (server 0.7.1, `stores.remote.statewave_client`):

- a turn is an episode of the customer (`subject_id`) with its `session_id`, one message
  (`user` for the customer, `assistant` for the agent), our turn id, kind and simulated time
  in `metadata`/`provenance`; consecutive turns are buffered and sent in one
  `POST /v1/episodes/batch` just before anything that reads (context, health, handoff) or
  writes something else (a resolution, a deletion);
- a resolution is `POST /v1/resolutions` with its status and, when there is one, its summary
  (the write-up's +6 versus +4 decision); a re-delivered identical resolution is not re-sent;
- a deletion request is `DELETE /v1/subjects/{id}`;
- a context request compiles the customer's new episodes (`POST /v1/memories/compile`), then
  asks `POST /v1/context` with the task, the budget as `max_tokens` and the live `session_id`
  (without it the active-session boost cannot fire);
- the `health` capability is `GET /v1/subjects/{id}/health`, the `handoff` capability is
  `POST /v1/handoff`.

The receipt is what the server returned: every fact, episode and procedure of the context
answer, in the server's order, as a candidate named after the turns it was compiled from
(`source_episode_ids` mapped back through the ids the server gave our episodes). Statewave
returns no per-item score, only its order, so a candidate's one component `statewave_order`
is its place counted from the bottom (n for the first of n). Lines carry the simulated time
of their turns; the budget is cut by our tokenizer, whole lines.

The clock: every Statewave timestamp is server wall clock and no route takes a time, so all
of a replay's episodes are minutes-old siblings to the server, written seconds apart. Its
recency term therefore ranks by the order the replay wrote them (later in the scenario =
slightly newer), not by the months between a March ticket and a September one; its health
counts every resolution as "resolved in the last 7 days" and never sees an issue idle for a
week; its SLA figures measure the replay's speed. The strategy does not correct any of that:
it is what a team replaying history into Statewave would get, and the scores show it.

The server's re-posted resolution bug: re-posting a resolution for a (subject, session) that
already has one answers 500 although the row was updated (recorded against 0.7.1). The
strategy never hides a 500 blindly: after a 500 on a re-post it reads the subject's
resolutions back and accepts the write only if that session's row now holds the status and
summary it sent (counted in `verified_500`); otherwise the error stands.

Configuration: `url` and `api_key` are secret params, read from `STATEWAVE_URL` (required)
and `STATEWAVE_API_KEY` (optional, sent as `X-API-Key`): shown as `<secret>` in a manifest,
never hashed into a baseline. Subjects are prefixed with the instance's namespace (its
`Scope`, given through `open`), so replays, shards and runs never see each other's data;
`close()` deletes every subject the instance wrote.
"""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any, ClassVar

import httpx
from pydantic import Field

from stores.params import secret, with_environment
from stores.protocol import (Bundle, ContextRequest, Event, Forget, Handoff, HealthFactor, HealthReport, Resolution,
                             Scope, Signal, Turn)
from stores.remote.receipt import CallLog, Hit, RemoteUnavailable, bundle_from_hits, one_line, stamp
from stores.remote.statewave_client import StatewaveClient, StatewaveServerError
from stores.remote.wire import DEFAULT_MAX_BYTES
from stores.tokens import count_tokens

BANDS = {"healthy", "watch", "at_risk"}
HANDOFF_HEADINGS = (
    "Who the customer is",
    "Profile facts that matter",
    "The active issue",
    "What has already been tried",
    "Related history",
    "Resolved: deprioritize",
    "What the next agent needs now",
)


@dataclass(frozen=True)
class StatewaveParams:
    """Parameters of `statewave`; the server's address and key are secrets read from the environment."""

    url: str = secret(env="STATEWAVE_URL")
    """The Statewave server, e.g. `http://127.0.0.1:8100` (`$STATEWAVE_URL`; never written to a manifest)."""
    api_key: str = secret(env="STATEWAVE_API_KEY")
    """Its API key, sent as `X-API-Key` (`$STATEWAVE_API_KEY`; optional)."""
    compile_before_context: bool = True
    """Compile the customer's new episodes before each context request (the write-up's loop)."""
    handoff_reason: str = "escalation"
    """The `reason` sent with a handoff request."""
    handoff_budget: int = 4000
    """Token budget of a handoff brief when the caller gives none (the server's default)."""
    timeout_s: float = 30.0
    """Seconds one call may take in all, connect to last byte (a whole-call deadline, however
    slowly the bytes arrive); past it the call counts as unavailable and its case is an error row."""
    max_response_bytes: Annotated[int, Field(ge=1_000, le=256_000_000)] = DEFAULT_MAX_BYTES
    """The largest answer body read, in bytes: a bigger one is dropped at the cap (an error row)."""
    max_items: Annotated[int, Field(ge=1, le=100_000)] = 1_000
    """The most records (facts, episodes, procedures) one context may return: more is an error row."""

    def __post_init__(self) -> None:
        if self.handoff_budget < 0 or self.timeout_s <= 0:
            raise ValueError("handoff_budget must be >= 0 and timeout_s > 0")


@dataclass(frozen=True)
class _Sent:
    """What we told the server about one of our turns."""

    turn_id: str
    session: str
    role: str
    kind: str
    at: datetime


class Statewave:
    """Statewave over its HTTP API: episodes, resolutions, context, health and handoff (module docstring)."""

    name: ClassVar[str] = "statewave"
    Params = StatewaveParams
    capabilities: ClassVar[frozenset[str]] = frozenset({"health", "handoff"})

    def __init__(self, params: StatewaveParams | None = None, *, transport: httpx.BaseTransport | None = None,
                 namespace: str | None = None) -> None:
        # built by the registry, the secrets are already read; built by hand, read them here
        self.params = params if params is not None else with_environment(StatewaveParams(), set(), dict(os.environ))
        self.namespace = namespace if namespace is not None else f"sb-{uuid.uuid4().hex[:12]}"
        """Prefix of every subject id this instance writes (`<namespace>:<subject>`; empty: none);
        the harness gives each instance its own through `open(scope)`."""
        self.calls = CallLog()
        """Round trips made, per route."""
        self.verified_500 = 0
        """Re-posted resolutions answered 500 and accepted because reading back showed the row updated."""
        self._transport = transport
        self._http: StatewaveClient | None = None
        self._clear()

    @property
    def _client(self) -> StatewaveClient:
        """The HTTP client, made on first use; without a server address the error says what to set."""
        if self._http is None:
            if not self.params.url:
                raise RemoteUnavailable(
                    "statewave needs a running Statewave server: set STATEWAVE_URL (e.g. http://127.0.0.1:8100); "
                    "the server is not installable from a package registry, so none is started for you")
            self._http = StatewaveClient(self.params.url, api_key=self.params.api_key or None,
                                         transport=self._transport, timeout=self.params.timeout_s,
                                         max_bytes=self.params.max_response_bytes)
        return self._http

    def open(self, scope: Scope) -> None:
        """Write under the instance's namespace (subject ids `<namespace>:<subject>`)."""
        if self._written or self._pending:
            raise RuntimeError("statewave: open(scope) after events were observed")
        self.namespace = scope.namespace
        # a server that is down or not configured fails here, once, naming itself: every case
        # of the instance becomes an error row saying why
        with self.calls.timed("GET /healthz"):
            self._client.healthz()

    # -- state ----------------------------------------------------------------------------------
    def _clear(self) -> None:
        self._pending: list[tuple[Turn, dict[str, Any]]] = []
        self._sent: dict[str, dict[str, _Sent]] = {}  # subject -> turn id -> what we sent
        self._episodes: dict[str, str] = {}  # server episode id -> our turn id
        self._resolutions: dict[tuple[str, str], tuple[str, str, datetime]] = {}  # (subject, session) -> status, summary, at
        self._resolution_ids: dict[str, str] = {}  # server resolution id -> our `<session>#resolution`
        self._dirty: set[str] = set()  # subjects with episodes not compiled yet
        self._version: dict[str, int] = {}
        self._health: dict[str, tuple[int, dict[str, Any]]] = {}
        self._written: set[str] = set()  # subjects this namespace holds data of
        self._memories: dict[str, tuple[str, ...]] = {}  # server memory id -> our turn ids (from context answers)

    def _sid(self, subject: str) -> str:
        return f"{self.namespace}:{subject}" if self.namespace else subject

    def _text(self, value: Any) -> str:
        """A server string on one line, without our namespace prefix (the server quotes subject ids,
        and the prefix differs between instances, so it must not reach a bundle or a brief)."""
        text = one_line(str(value))
        return text.replace(self._sid(""), "") if self.namespace else text

    def _touch(self, subject: str) -> None:
        self._version[subject] = self._version.get(subject, 0) + 1

    def call_counts(self) -> dict[str, dict[str, float]]:
        """Calls made so far, per kind, with their wall seconds (for the run manifest)."""
        return self.calls.as_dict()

    # -- events ---------------------------------------------------------------------------------
    def observe(self, event: Event) -> None:
        if isinstance(event, Turn):
            sent = self._sent.setdefault(event.subject, {})
            if event.id in sent:
                return  # delivered again: the server already has it (it ignores idempotency keys)
            sent[event.id] = _Sent(event.id, event.session, event.role, event.kind, event.at)
            self._pending.append((event, self._episode(event)))
            self._touch(event.subject)
        elif isinstance(event, Resolution):
            self._flush()
            self._post_resolution(event)
        elif isinstance(event, Forget):
            self._pending = [(t, e) for t, e in self._pending if t.subject != event.subject]
            self._flush()
            self._forget(event.subject)
        elif isinstance(event, Signal):
            return  # a system signal is not a retrievable item; the product has no place for it
        else:
            raise TypeError(f"unknown event type {type(event).__name__}")

    def _episode(self, t: Turn) -> dict[str, Any]:
        return {
            "subject_id": self._sid(t.subject),
            "source": "supportbench",
            "type": "conversation",
            "payload": {"messages": [{"role": "user" if t.role == "customer" else "assistant", "content": t.text}]},
            "metadata": {"turn_id": t.id, "kind": t.kind, "at": t.at.isoformat()},
            "provenance": {"turn_id": t.id},
            "session_id": t.session,
        }

    def _flush(self) -> None:
        """Send the buffered turns in one batch (the only write that can be grouped)."""
        if not self._pending:
            return
        batch, self._pending = self._pending, []
        with self.calls.timed("POST /v1/episodes/batch"):
            created = self._client.create_episodes([e for _, e in batch])
        for (turn, _), ep in zip(batch, created):
            self._episodes[str(ep.get("id"))] = turn.id
            self._dirty.add(turn.subject)
            self._written.add(turn.subject)

    def _post_resolution(self, r: Resolution) -> None:
        key = (r.subject, r.session)
        before = self._resolutions.get(key)
        if before is not None and before[:2] == (r.status, r.summary):
            return  # delivered again, nothing changed
        meta = {"resolution_id": r.id, "at": r.at.isoformat()}
        try:
            with self.calls.timed("POST /v1/resolutions"):
                row = self._client.create_resolution(self._sid(r.subject), r.session, r.status, r.summary or None, meta)
        except StatewaveServerError:
            if before is None or not self._verify_resolution(r):
                raise
            row = None
        self._resolutions[key] = (r.status, r.summary, r.at)
        if row and row.get("id"):
            self._resolution_ids[str(row["id"])] = r.id
        self._written.add(r.subject)
        self._touch(r.subject)

    def _verify_resolution(self, r: Resolution) -> bool:
        """After a 500 on re-posting: is the row updated anyway (the recorded server bug)?"""
        with self.calls.timed("GET /v1/resolutions"):
            rows = self._client.list_resolutions(self._sid(r.subject))
        for row in rows:
            if row.get("session_id") == r.session and row.get("status") == r.status and \
                    (row.get("resolution_summary") or "") == (r.summary or ""):
                self._resolution_ids[str(row.get("id"))] = r.id
                self.verified_500 += 1
                return True
        return False

    def _forget(self, subject: str) -> None:
        if subject in self._written:
            with self.calls.timed("DELETE /v1/subjects/{id}"):
                self._client.delete_subject(self._sid(subject))
        gone = set(self._sent.pop(subject, {}))
        self._episodes = {k: v for k, v in self._episodes.items() if v not in gone}
        self._resolutions = {k: v for k, v in self._resolutions.items() if k[0] != subject}
        self._dirty.discard(subject)
        self._written.discard(subject)
        self._health.pop(subject, None)
        self._touch(subject)

    def reset(self) -> None:
        """Delete every subject this instance wrote, and forget what was sent."""
        self._pending = []
        for subject in sorted(self._written):
            with self.calls.timed("DELETE /v1/subjects/{id}"):
                self._client.delete_subject(self._sid(subject))
        self._clear()

    def close(self) -> None:
        """Delete what this instance wrote and close the connection pool."""
        try:
            self.reset()
        finally:
            if self._http is not None:
                self._http.close()

    # -- reads ----------------------------------------------------------------------------------
    def _compile(self, subject: str) -> None:
        if self.params.compile_before_context and subject in self._dirty:
            with self.calls.timed("POST /v1/memories/compile"):
                self._client.compile(self._sid(subject))
            self._dirty.discard(subject)

    def context(self, request: ContextRequest) -> Bundle:
        self._flush()
        self._compile(request.subject)
        with self.calls.timed("POST /v1/context"):
            answer = self._client.context(self._sid(request.subject), request.task,
                                          max_tokens=max(request.budget_tokens, 1), session_id=request.session)
        records = [("fact", m) for m in answer.get("facts") or []]
        records += [("episode", e) for e in answer.get("episodes") or []]
        records += [("procedure", m) for m in answer.get("procedures") or []]
        n = len(records)
        if n > self.params.max_items:
            raise RemoteUnavailable(f"Statewave POST /v1/context answered {n:,} records, more than max_items="
                                    f"{self.params.max_items:,}: the answer was not used")
        hits = [self._hit(request.subject, what, rec, float(n - i)) for i, (what, rec) in enumerate(records)]
        return bundle_from_hits(request, hits, request.subject)

    def _hit(self, subject: str, what: str, rec: dict[str, Any], order: float) -> Hit:
        sid = str(rec.get("id", ""))
        if what == "episode":
            msgs = (rec.get("payload") or {}).get("messages") or []
            content = " ".join(f"{m.get('role', '')}: {m.get('content', '')}" for m in msgs if isinstance(m, dict))
            sources = [self._episodes.get(sid)]
            label = "episode"
        else:
            content = str(rec.get("content") or rec.get("summary") or "")
            sources = [self._episodes.get(str(e)) for e in rec.get("source_episode_ids") or []]
            label = str(rec.get("kind") or what)
        known = self._sent.get(subject, {})
        ids = tuple(dict.fromkeys(s for s in sources if s is not None and s in known))
        sent = [known[s] for s in ids]
        sessions = {s.session for s in sent}
        session = sessions.pop() if len(sessions) == 1 else ""
        at = max((s.at for s in sent), default=None)
        line = f"[{stamp(at)}] ({session or 'statewave'}) {label}: {self._text(content)}"
        if what != "episode":
            self._memories[sid] = ids
        item = ids[0] if len(ids) == 1 else ("+".join(ids) if ids else f"statewave:{sid}")
        return Hit(item, line, {"statewave_order": order}, ids, session, sid)

    # -- capabilities ---------------------------------------------------------------------------
    def health(self, subject: str, now: datetime) -> HealthReport:
        """The server's health of the customer. The server reads its own wall clock, not `now`,
        so the report is fetched once per change of what we sent and reused until the next."""
        self._flush()
        version = self._version.get(subject, 0)
        cached = self._health.get(subject)
        if cached is None or cached[0] != version:
            with self.calls.timed("GET /v1/subjects/{id}/health"):
                cached = (version, self._client.health(self._sid(subject)))
            self._health[subject] = cached
        data = cached[1]
        state = str(data.get("state", ""))
        if state not in BANDS:
            raise ValueError(f"Statewave health for {subject}: unknown state {state!r} (expected one of {sorted(BANDS)})")
        factors = tuple(
            HealthFactor(signal=str(f.get("signal", "")), impact=float(f.get("impact", 0)), detail=str(f.get("detail", "")))
            for f in data.get("factors") or [] if isinstance(f, dict))
        return HealthReport(subject=subject, at=now, base=100.0, factors=factors, score=float(data.get("score", 0)),
                            band=state)  # type: ignore[arg-type]

    def handoff(self, request: ContextRequest, budget_tokens: int | None = None) -> Handoff:
        """The server's handoff brief, its sections in the reference order, cut to the budget
        by our tokenizer (whole lines; a heading goes only with at least one of its lines)."""
        self._flush()  # the server builds the brief from episodes and what is compiled already
        budget = self.params.handoff_budget if budget_tokens is None else budget_tokens
        with self.calls.timed("POST /v1/handoff"):
            data = self._client.handoff(self._sid(request.subject), request.session,
                                        reason=self.params.handoff_reason, max_tokens=max(budget, 1))
        sections = self._handoff_sections(request.subject, data)
        text_lines: list[str] = []
        used: list[str] = []
        kept: list[tuple[str, str]] = []
        remaining = budget
        for heading, lines in sections:
            body: list[str] = []
            for line, ids in lines:
                cost = count_tokens(line) + (0 if body else count_tokens(heading))
                if cost <= remaining:
                    if not body:
                        text_lines.append(heading)
                    body.append(line)
                    text_lines.append(line)
                    used += [i for i in ids if i not in used]
                    remaining -= cost
            if body:
                kept.append((heading, "\n".join(body)))
        text = "\n".join(text_lines)
        while text and count_tokens(text) > budget:  # never expected: counts of joined lines add up
            text_lines.pop()
            text = "\n".join(text_lines)
        return Handoff(subject=request.subject, session=request.session, sections=tuple(kept), text=text,
                       tokens=count_tokens(text), used_ids=tuple(used))

    def _handoff_sections(self, subject: str, data: dict[str, Any]) -> list[tuple[str, list[tuple[str, tuple[str, ...]]]]]:
        known = self._sent.get(subject, {})
        prov = data.get("provenance") or {}

        def turns(episode_ids) -> tuple[str, ...]:
            return tuple(t for t in (self._episodes.get(str(e)) for e in episode_ids or []) if t in known)

        def by_index(items: list, raw_ids: list) -> list[tuple[str, tuple[str, ...]]]:
            # the server lists ids in the order of the lines when it gives one per line; otherwise
            # every line of the section cites all of them
            per_line = len(raw_ids) == len(items)
            return [(f"- {self._text(x)}", turns([raw_ids[i]]) if per_line else turns(raw_ids))
                    for i, x in enumerate(items)]

        # a fact id names a compiled memory: it cites the turns that memory was compiled from,
        # as the last context answer told us
        facts = [str(x) for x in data.get("key_facts") or []]
        fact_ids = [str(x) for x in prov.get("fact_ids") or []]
        fact_lines = [(f"- {self._text(x)}", tuple(t for t in self._memories.get(fact_ids[i], ()) if t in known)
                       if len(fact_ids) == len(facts) else ()) for i, x in enumerate(facts)]
        recent = [str(x) for x in data.get("recent_context") or []]
        active = str(data.get("active_issue") or "")
        history = []
        for row in data.get("resolution_history") or []:
            if not isinstance(row, dict):
                continue
            session = str(row.get("session_id", ""))
            rid = f"{session}#resolution"
            cite = (rid,) if (subject, session) in self._resolutions else ()
            at = self._resolutions.get((subject, session), (None, None, None))[2]
            history.append((f"- [{stamp(at)}] ({session}) {row.get('status', '')}: {self._text(row.get('summary') or '')}",
                            cite))
        health = []
        if data.get("health_state") is not None:
            health.append((f"- health {data.get('health_state')} (score {data.get('health_score')})", ()))
            health += [(f"- {f.get('signal')} {float(f.get('impact') or 0):+g}: {self._text(f.get('detail', ''))}", ())
                       for f in data.get("health_factors") or [] if isinstance(f, dict)]
        return [
            (HANDOFF_HEADINGS[0], [(f"- {self._text(data.get('customer_summary') or '')}", ())]
             if data.get("customer_summary") else []),
            (HANDOFF_HEADINGS[1], fact_lines),
            (HANDOFF_HEADINGS[2], [(f"- {self._text(active)}", turns(prov.get("episode_ids")))] if active else []),
            (HANDOFF_HEADINGS[3], [(f"- {self._text(x)}", ()) for x in data.get("attempted_steps") or []]),
            (HANDOFF_HEADINGS[4], by_index(recent, list(prov.get("context_episode_ids") or []))),
            (HANDOFF_HEADINGS[5], history),
            (HANDOFF_HEADINGS[6], health),
        ]

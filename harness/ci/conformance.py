"""`supportbench conformance URL`: does a service keep the supportbench memory protocol?

Each check sends real protocol messages (`stores.remote.http_protocol`) to the service, in
namespaces of its own (`sbconf-<check>-<n>`, dropped afterwards), and says in one line what it
expected and what came back. The checks, in order:

- `info`: `GET /v1/info` names the protocol, a 1.x version and what it claims;
- `open`: opening a namespace answers `{"ok": true}`, and opening it again too (idempotent);
- `observe`: a numbered batch is applied and acknowledged up to its last number;
- `context`: every item has an id, its score is the sum of its components, included items have
  no reason and dropped ones have one, ids are unique, and a turn just observed comes back;
- `ordering`: events apply in the order of their numbers: a turn, a deletion of its customer,
  a newer turn in one batch leave only the newer turn;
- `isolation_customers`: one customer's turns never appear in another customer's context;
- `isolation_namespaces`: one namespace's turns never appear in another's (the same customer id
  in two scenarios);
- `replay`: a batch sent again is acknowledged without being applied (`applied` 0, the turn
  listed once);
- `sequence_gap`: a batch that skips numbers is refused with 409 `sequence_gap`;
- `reset`: after a reset nothing observed before comes back, and numbering restarts at 1;
- `batch_limit`: a batch over the service's `limits.max_batch` is refused with 413 `too_large`;
- `errors`: an unknown namespace answers 404 and a malformed body 400, each with the error body
  `{"error": {"code", "message"}}`;
- `health` / `handoff` (only when claimed): a valid answer, stamped with the simulated `now`
  asked for, never wall time;
- `close`: dropping the namespace answers ok, and the namespace is gone afterwards (404).

A check that cannot run because an earlier one failed says so and counts as failed. Exit
codes as `check`'s: 0 every check passed, 1 some failed, 2 the service could not be asked at all
(no answer, or not this protocol at `GET /v1/info`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Callable

import httpx
from pydantic import BaseModel, ValidationError

from stores.remote import http_protocol as wire
from stores.remote.http_service import Answer, bounded_request

T0 = datetime(2024, 3, 4, 9, 0, tzinfo=timezone.utc)
"""The simulated moment the checks' events start at (never the wall clock)."""


@dataclass(frozen=True)
class CheckResult:
    """One check's verdict and the sentence saying why."""

    name: str
    passed: bool
    detail: str


class Unusable(Exception):
    """The service cannot be checked at all (exit 2)."""


class _Fail(Exception):
    pass


class Conformance:
    """Runs the checks against one service (module docstring)."""

    def __init__(self, url: str, *, api_key: str = "", timeout_s: float = 10.0, max_bytes: int = 16 << 20,
                 transport: httpx.BaseTransport | None = None) -> None:
        headers = {"Accept": "application/json"}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        self.client = httpx.Client(base_url=url.rstrip("/"), headers=headers, transport=transport, trust_env=False)
        self.timeout_s, self.max_bytes = timeout_s, max_bytes
        self.info: wire.Info | None = None
        self.opened: list[str] = []
        self.count = 0

    # -- wire -------------------------------------------------------------------------------------
    def send(self, method: str, path: str, body: Any = None) -> Answer:
        try:
            return bounded_request(self.client, method, path, deadline_s=self.timeout_s, max_bytes=self.max_bytes,
                                   json_body=body)
        except Exception as e:  # no answer: a transport error, the deadline, an oversized body
            raise _Fail(f"{method} {path}: no usable answer ({type(e).__name__}: {e})") from None

    def ok(self, method: str, path: str, body: Any, model: type[BaseModel]) -> Any:
        got = self.send(method, path, body)
        if got.status != 200:
            raise _Fail(f"{method} {path}: expected 200, got {got.status}: {_excerpt(got.body)}")
        try:
            return model.model_validate_json(got.body)
        except ValidationError as e:
            first = e.errors()[0]
            raise _Fail(f"{method} {path}: the answer is not a {model.__name__}: "
                        f"{'.'.join(str(x) for x in first['loc']) or 'body'}: {first['msg']}") from None

    def refused(self, method: str, path: str, body: Any, status: int, code: str | None) -> None:
        got = self.send(method, path, body)
        if got.status != status:
            raise _Fail(f"{method} {path}: expected {status}, got {got.status}: {_excerpt(got.body)}")
        try:
            err = wire.ErrorBody.model_validate_json(got.body).error
        except (ValidationError, ValueError):
            raise _Fail(f"{method} {path}: {status} without the error body {{\"error\": {{\"code\", \"message\"}}}}: "
                        f"{_excerpt(got.body)}") from None
        if code is not None and err.code != code:
            raise _Fail(f"{method} {path}: expected error code {code!r}, got {err.code!r}")

    def namespace(self, check: str) -> str:
        self.count += 1
        ns = f"sbconf-{check.replace('_', '-')}-{self.count}"
        scope = {"scope": {"run_id": "conformance", "strategy": "http", "suite": "conformance", "scenario": check,
                           "instance": "plain"}}
        self.ok("PUT", f"/v1/namespaces/{ns}", scope, wire.Ack)
        self.opened.append(ns)
        return ns

    def events(self, ns: str, events: list[dict[str, Any]]) -> wire.EventsAck:
        return self.ok("POST", f"/v1/namespaces/{ns}/events", {"events": events}, wire.EventsAck)

    def context(self, ns: str, subject: str, task: str = "what happened before?", budget: int = 2000,
                minutes: int = 60) -> wire.ContextAnswer:
        answer = self.ok("POST", f"/v1/namespaces/{ns}/context", _query(subject, task, budget, minutes), wire.ContextAnswer)
        for i, item in enumerate(answer.items):
            total = sum(item.components.values())
            if abs(total - item.score) > 1e-9 * max(1.0, abs(item.score)):
                raise _Fail(f"context item {i} ({item.id}): score {item.score!r} is not the sum of its components {total!r}")
        return answer

    # -- the checks -------------------------------------------------------------------------------
    def run(self) -> list[CheckResult]:
        """Every check, in order; `Unusable` when `GET /v1/info` gives nothing to go on."""
        try:
            self.info = self.ok("GET", "/v1/info", None, wire.Info)
        except _Fail as e:
            raise Unusable(f"{e} (is this a supportbench memory protocol service?)") from None
        results = [self._one("info", self.check_info)]
        if not results[0].passed:
            return results
        for name, fn in self.checks():
            results.append(self._one(name, fn))
        for ns in self.opened:  # leave nothing behind
            try:
                self.send("DELETE", f"/v1/namespaces/{ns}")
            except _Fail:
                pass
        return results

    def checks(self) -> list[tuple[str, Callable[[], str]]]:
        caps = set(self.info.capabilities) if self.info else set()
        out = [("open", self.check_open), ("observe", self.check_observe), ("context", self.check_context),
               ("ordering", self.check_ordering), ("isolation_customers", self.check_customers),
               ("isolation_namespaces", self.check_namespaces), ("replay", self.check_replay),
               ("sequence_gap", self.check_gap), ("reset", self.check_reset), ("batch_limit", self.check_batch_limit),
               ("errors", self.check_errors)]
        out += [("health", self.check_health)] if "health" in caps else []
        out += [("handoff", self.check_handoff)] if "handoff" in caps else []
        return out + [("close", self.check_close)]

    def _one(self, name: str, fn: Callable[[], str]) -> CheckResult:
        try:
            return CheckResult(name, True, fn())
        except _Fail as e:
            return CheckResult(name, False, str(e))
        except Exception as e:  # a check must never crash the command: the answer was unusable
            return CheckResult(name, False, f"unusable answer: {type(e).__name__}: {e}")

    def check_info(self) -> str:
        info = self.info
        assert info is not None
        if info.version.split(".")[0] != wire.VERSION.split(".")[0]:
            raise _Fail(f"speaks protocol {info.version}; this side speaks {wire.VERSION} (the major versions differ)")
        claims = ", ".join(info.capabilities) or "nothing beyond context"
        return f"protocol {info.version}, claims {claims}, max_batch {info.limits.max_batch}"

    def check_open(self) -> str:
        ns = self.namespace("open")
        scope = {"scope": {"run_id": "conformance", "strategy": "http", "suite": "conformance", "scenario": "open",
                           "instance": "plain"}}
        self.ok("PUT", f"/v1/namespaces/{ns}", scope, wire.Ack)
        return "a namespace opens, and opening it again is accepted"

    def check_observe(self) -> str:
        ns = self.namespace("observe")
        events = [_turn(1, "c1", "o-1", "my router keeps dropping"), _resolution(2, "c1", "s1", "rebooted it"),
                  _signal(3, "c1"), _turn(4, "c1", "o-2", "it dropped again")]
        ack = self.events(ns, events)
        if ack.last_seq != 4 or ack.applied != 4:
            raise _Fail(f"a batch of events 1..4: expected applied 4, last_seq 4; got applied {ack.applied}, last_seq {ack.last_seq}")
        return "turn, resolution and signal events applied, acknowledged up to 4"

    def check_context(self) -> str:
        ns = self.namespace("context")
        self.events(ns, [_turn(1, "c1", "ctx-1", "my account number is 5531 and billing failed"),
                         _turn(2, "c1", "ctx-2", "agent here: I reset the billing profile", role="agent")])
        answer = self.context(ns, "c1", "billing failed again")
        ids = [i.id for i in answer.items]
        if len(set(ids)) != len(ids):
            raise _Fail(f"context lists an id more than once: {sorted({x for x in ids if ids.count(x) > 1})}")
        for item in answer.items:
            if item.included and item.reason:
                raise _Fail(f"item {item.id} is included but has the reason {item.reason!r}")
            if not item.included and not item.reason:
                raise _Fail(f"item {item.id} was left out without a reason")
            if item.included and item.text and item.text not in answer.text:
                raise _Fail(f"item {item.id} is included but its text is not in the context text")
        if not _mentions(answer, "ctx-1"):
            raise _Fail("a turn just observed (ctx-1) is neither an item id nor a source id of the context")
        return f"{len(ids)} item(s), scores are the sums of their components, the observed turn comes back"

    def check_ordering(self) -> str:
        ns = self.namespace("ordering")
        self.events(ns, [_turn(1, "c1", "ord-old", "old complaint about the modem"), _forget(2, "c1", minutes=5),
                         _turn(3, "c1", "ord-new", "new question about the modem", minutes=10)])
        answer = self.context(ns, "c1", "modem", minutes=20)
        if _mentions(answer, "ord-old"):
            raise _Fail("a turn observed before its customer's deletion (events 1 then 2) still comes back")
        if not _mentions(answer, "ord-new"):
            raise _Fail("the turn observed after the deletion (event 3) does not come back")
        return "a deletion applies between the turns numbered around it"

    def check_customers(self) -> str:
        ns = self.namespace("customers")
        self.events(ns, [_turn(1, "alice", "iso-a", "alice's private address is 12 Elm St"),
                         _turn(2, "bob", "iso-b", "bob asks about the elm street store")])
        answer = self.context(ns, "bob", "elm street address")
        if _mentions(answer, "iso-a") or "12 Elm St" in answer.text:
            raise _Fail("customer bob's context shows customer alice's turn iso-a")
        if not _mentions(answer, "iso-b"):
            raise _Fail("customer bob's own turn iso-b does not come back, so isolation cannot be judged")
        return "one customer's turns never reach another customer's context"

    def check_namespaces(self) -> str:
        first, second = self.namespace("scenario-a"), self.namespace("scenario-b")
        self.events(first, [_turn(1, "c1", "nsa-1", "scenario A: the password is swordfish")])
        self.events(second, [_turn(1, "c1", "nsb-1", "scenario B: what is the password?")])
        answer = self.context(second, "c1", "password")
        if _mentions(answer, "nsa-1") or "swordfish" in answer.text:
            raise _Fail(f"namespace {second} shows a turn observed in namespace {first} (same customer id)")
        if not _mentions(answer, "nsb-1"):
            raise _Fail(f"namespace {second}'s own turn nsb-1 does not come back, so isolation cannot be judged")
        return "the same customer id in two namespaces shares nothing"

    def check_replay(self) -> str:
        ns = self.namespace("replay")
        batch = [_turn(1, "c1", "rep-1", "printer jams on page two"), _turn(2, "c1", "rep-2", "still jams")]
        self.events(ns, batch)
        again = self.events(ns, batch)
        if again.applied != 0 or again.last_seq != 2:
            raise _Fail(f"the same batch sent again: expected applied 0, last_seq 2; got applied {again.applied}, "
                        f"last_seq {again.last_seq}")
        answer = self.context(ns, "c1", "printer jams")
        listed = [i.id for i in answer.items if i.id == "rep-1" or "rep-1" in i.source_ids]
        if len(listed) > 1:
            raise _Fail(f"after a batch sent twice, turn rep-1 is listed {len(listed)} times")
        return "a batch sent again is acknowledged and not applied twice"

    def check_gap(self) -> str:
        ns = self.namespace("gap")
        self.events(ns, [_turn(1, "c1", "gap-1", "first")])
        self.refused("POST", f"/v1/namespaces/{ns}/events", {"events": [_turn(3, "c1", "gap-3", "third")]}, 409, "sequence_gap")
        return "a batch skipping event 2 is refused with 409 sequence_gap"

    def check_reset(self) -> str:
        ns = self.namespace("reset")
        self.events(ns, [_turn(1, "c1", "rst-1", "the warranty claim number is W-77")])
        self.ok("POST", f"/v1/namespaces/{ns}/reset", {}, wire.Ack)
        ack = self.events(ns, [_turn(1, "c1", "rst-2", "new start after reset", minutes=5)])
        if ack.applied != 1 or ack.last_seq != 1:
            raise _Fail(f"after a reset, event 1: expected applied 1, last_seq 1; got applied {ack.applied}, last_seq {ack.last_seq}")
        answer = self.context(ns, "c1", "warranty claim")
        if _mentions(answer, "rst-1") or "W-77" in answer.text:
            raise _Fail("a turn observed before the reset still comes back")
        return "reset forgets everything and numbering restarts at 1"

    def check_batch_limit(self) -> str:
        assert self.info is not None
        limit = self.info.limits.max_batch
        if limit >= 10_000:
            return f"max_batch {limit}: too large to send one more here; not exercised"
        ns = self.namespace("batch")
        events = [_turn(i + 1, "c1", f"b-{i + 1}", f"message {i + 1}") for i in range(limit + 1)]
        self.refused("POST", f"/v1/namespaces/{ns}/events", {"events": events}, 413, "too_large")
        return f"a batch of {limit + 1} events (max_batch {limit}) is refused with 413 too_large"

    def check_errors(self) -> str:
        self.refused("POST", "/v1/namespaces/sbconf-never-opened/context", _query("c1", "x", 100, 0), 404, None)
        ns = self.namespace("errors")
        self.refused("POST", f"/v1/namespaces/{ns}/events", {"events": "not a list"}, 400, None)
        return "an unknown namespace gets 404 and a malformed batch 400, both with the error body"

    def check_health(self) -> str:
        ns = self.namespace("health")
        self.events(ns, [_turn(1, "c1", "h-1", "this is the third time it broke, I am furious")])
        now = _at(24 * 60)
        answer = self.ok("POST", f"/v1/namespaces/{ns}/health", {"subject": "c1", "now": now}, wire.HealthAnswer)
        if answer.at != datetime.fromisoformat(now):
            raise _Fail(f"the health report is stamped {answer.at.isoformat()}, not the simulated now {now} it was asked for")
        return f"score {answer.score:g} ({answer.band}) with {len(answer.factors)} factor(s), stamped with the simulated now"

    def check_handoff(self) -> str:
        ns = self.namespace("handoff")
        self.events(ns, [_turn(1, "c1", "hd-1", "I need a refund for order 881")])
        answer = self.ok("POST", f"/v1/namespaces/{ns}/handoff", _query("c1", "refund", 1000, 30), wire.HandoffAnswer)
        if answer.subject != "c1":
            raise _Fail(f"a handoff for c1 names the subject {answer.subject!r}")
        return f"a brief of {len(answer.sections)} section(s) using {len(answer.used_ids)} item(s)"

    def check_close(self) -> str:
        ns = self.namespace("close")
        self.ok("DELETE", f"/v1/namespaces/{ns}", None, wire.Ack)
        self.refused("POST", f"/v1/namespaces/{ns}/context", _query("c1", "x", 100, 0), 404, None)
        return "a closed namespace is gone (404 afterwards)"


def _at(minutes: int) -> str:
    from datetime import timedelta

    return (T0 + timedelta(minutes=minutes)).isoformat()


def _turn(seq: int, subject: str, id: str, text: str, *, role: str = "customer", minutes: int | None = None) -> dict[str, Any]:
    return {"type": "turn", "seq": seq, "id": id, "subject": subject, "session": "s1", "role": role, "kind": "message",
            "text": text, "at": _at(seq if minutes is None else minutes)}


def _resolution(seq: int, subject: str, session: str, summary: str) -> dict[str, Any]:
    return {"type": "resolution", "seq": seq, "id": f"{session}#resolution", "subject": subject, "session": session,
            "status": "resolved", "summary": summary, "at": _at(seq)}


def _signal(seq: int, subject: str) -> dict[str, Any]:
    return {"type": "signal", "seq": seq, "subject": subject, "session": "s1", "name": "rma_closed", "ref": "RMA 1",
            "at": _at(seq)}


def _forget(seq: int, subject: str, *, minutes: int) -> dict[str, Any]:
    return {"type": "forget", "seq": seq, "subject": subject, "at": _at(minutes)}


def _query(subject: str, task: str, budget: int, minutes: int) -> dict[str, Any]:
    return {"subject": subject, "session": "s1", "task": task, "budget_tokens": budget, "now": _at(minutes)}


def _mentions(answer: wire.ContextAnswer, turn_id: str) -> bool:
    return any(i.id == turn_id or turn_id in i.source_ids for i in answer.items)


def _excerpt(body: bytes) -> str:
    text = body[:160].decode("utf-8", "replace")
    return json.dumps(text) if text else "(empty body)"

"""A remote service's answer as a bundle: its hits, in its order, cut to the budget by our tokenizer.

A remote strategy does not rank anything itself: the service does (mem0's search, Hindsight's
recall, Statewave's context assembly). What the strategy owns is the receipt: every hit the
service returned becomes one candidate carrying the service's own id and scores
(`components`), mapped back to our history ids (`source_ids`) so that provenance, the
criteria and the app read it like any other bundle.

The budget stays a hard ceiling counted by `stores.tokens` (one tokenizer for every
strategy, whatever the service counts with): the header first, then the service's hits in
its order, each a whole line, a hit that does not fit is skipped (a smaller one below it may
still fit), and the final text is counted whole.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Iterator

from stores.packing import header_for
from stores.protocol import DROP_BUDGET, Bundle, Candidate, ContextRequest
from stores.tokens import count_text_tokens, count_tokens


class RemoteUnavailable(RuntimeError):
    """The service did not answer (refused, timed out) or is not configured; the message names
    the service, the address and what to do about it."""


@dataclass(frozen=True)
class Hit:
    """One thing a service returned, mapped to our ids."""

    item_id: str
    """Our id for it: the turn id or `<session>#resolution` it was made from, or
    `<service>:<its id>` when it maps to nothing we sent."""
    line: str
    """The line it takes in the context (one line, no newline)."""
    components: dict[str, float]
    """The service's scores for it (they sum to the candidate's score)."""
    source_ids: tuple[str, ...]
    """Our history ids it was built from (empty when the service's record maps to none)."""
    session: str = ""
    """The session of its sources, when they share one."""
    service_id: str = ""
    """The service's own id of the record (kept in the candidate's reason when dropped)."""


def one_line(text: str) -> str:
    """A service's text on one line: newlines and runs of whitespace become single spaces."""
    return " ".join(text.split())


def stamp(at: datetime | None) -> str:
    """How a simulated time appears in a line (the same format as `stores.memory.render_line`)."""
    return at.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M") if at is not None else "time unknown"


def unique_ids(hits: list[Hit]) -> list[Hit]:
    """The hits with distinct `item_id`s: a second record built from the same item (Statewave
    compiles a profile fact and a summary from one episode) gets `~2`, `~3` appended."""
    seen: dict[str, int] = {}
    out = []
    for h in hits:
        n = seen.get(h.item_id, 0) + 1
        seen[h.item_id] = n
        out.append(h if n == 1 else Hit(f"{h.item_id}~{n}", h.line, h.components, h.source_ids, h.session, h.service_id))
    return out


def bundle_from_hits(request: ContextRequest, hits: list[Hit], subject: str) -> Bundle:
    """The bundle of a service's answer: candidates ranked by the service's score (ties keep the
    service's order), included greedily within `request.budget_tokens`, whole lines only."""
    hits = unique_ids(hits)
    scored = [(sum(h.components.values()), i, h) for i, h in enumerate(hits)]
    scored.sort(key=lambda t: (-t[0], t[1]))
    header = header_for(request)
    remaining = request.budget_tokens - count_text_tokens(header)
    line_tokens = [count_tokens(h.line) for _, _, h in scored]
    included = [False] * len(scored)
    if remaining >= 0:
        for k, n in enumerate(line_tokens):
            if scored[k][2].line and n <= remaining:
                included[k] = True
                remaining -= n
    text, tokens = _render(header, [h.line for _, _, h in scored], included, request.budget_tokens)
    candidates = [
        Candidate(item_id=h.item_id, text=h.line, score=score, components=dict(h.components), source_ids=h.source_ids,
                  included=inc, reason="" if inc else DROP_BUDGET, tokens=n, subject=subject, session=h.session)
        for (score, _, h), inc, n in zip(scored, included, line_tokens)
    ]
    return Bundle(candidates=candidates, text=text, tokens=tokens)


def _render(header: str, lines: list[str], included: list[bool], budget: int) -> tuple[str, int]:
    """Header plus the included lines in rank order; if the whole text ever counts over the
    budget, the lowest-ranked included line goes (and `included` is updated)."""
    if budget < count_text_tokens(header):
        for k in range(len(included)):
            included[k] = False
        return "", 0
    while True:
        text = "\n".join([header, *(ln for ln, inc in zip(lines, included) if inc)])
        tokens = count_text_tokens(text)
        if tokens <= budget:
            return text, tokens
        last = max(k for k, inc in enumerate(included) if inc)
        included[last] = False


@dataclass
class CallLog:
    """Round trips a strategy made to its service: count and wall time per kind of call.

    Wall time is measured here only to report cost (it never reaches a ranking); the run
    manifest carries these numbers per strategy.
    """

    calls: dict[str, int] = field(default_factory=dict)
    """Calls per kind (`POST /v1/episodes/batch`, `mem0.add`, ...)."""
    seconds: dict[str, float] = field(default_factory=dict)
    """Wall seconds spent per kind."""

    def timed(self, kind: str) -> "_Timer":
        """`with log.timed("mem0.search"): ...` counts one call of that kind and its wall time."""
        return _Timer(self, kind)

    def total_calls(self) -> int:
        """All calls of every kind."""
        return sum(self.calls.values())

    def as_dict(self) -> dict[str, dict[str, float]]:
        """Per kind: `{"calls": n, "seconds": s}`, kinds sorted (for a manifest)."""
        return {k: {"calls": self.calls[k], "seconds": round(self.seconds.get(k, 0.0), 6)} for k in sorted(self.calls)}

    def merge(self, other: "CallLog") -> None:
        """Add another log's counts into this one."""
        for k, n in other.calls.items():
            self.calls[k] = self.calls.get(k, 0) + n
            self.seconds[k] = self.seconds.get(k, 0.0) + other.seconds.get(k, 0.0)


class _Timer:
    def __init__(self, log: CallLog, kind: str) -> None:
        self.log, self.kind = log, kind

    def __enter__(self) -> None:
        self.t0 = time.perf_counter()

    def __exit__(self, *exc) -> None:
        self.log.calls[self.kind] = self.log.calls.get(self.kind, 0) + 1
        self.log.seconds[self.kind] = self.log.seconds.get(self.kind, 0.0) + time.perf_counter() - self.t0


def iter_lines(text: str) -> Iterator[str]:
    """The non-empty lines of a service's multi-line text, each on one line."""
    for line in text.splitlines():
        if line.strip():
            yield one_line(line)

"""The expiry stage: one wrapper any strategy can take, applied before ranking.

`ExpiryStage(inner, params)` is itself a strategy. It owns the event log: every event goes to
its per-customer ledger (`stores.expiry.ledger`), which classifies each turn and resolution
record once, and the inner strategy is only ever given the items that are live for the
request being answered. So expired items never compete for the budget, and they cannot move
the inner strategy's ranking features either: the recency span, TF-IDF document frequencies,
embedding neighbours and repeat-issue keywords are all computed by the inner strategy over
what it was given, which is the live set and nothing else. The stage never looks at gold.

Why a wrapper that feeds the live set, and not an exclusion hook each strategy honours: a hook
would have to be threaded through every strategy's feature code (recency min-max, document
frequencies, keyword pools, the health model's sessions) and honoured by strategies this
project does not write (remote products behind HTTP), and a strategy that forgot one place
would leak an expired item into its statistics without any test noticing. The wrapper needs
nothing but the protocol every strategy already has: `observe`, `context`, `reset`, and
`Forget` to retract a customer's memory.

Keeping the inner memory equal to the live set: before each `context` the stage computes the
live set for that request (`now` and the request's session both matter: lifespans run on the
simulated clock, sentiment is scoped to its session). When the live set is the items already
given plus newer ones, only the new events are delivered (the common case: nothing expired
since the last request). When an item that was given is no longer live (a lifespan ran out, a
preference was superseded, a signal closed an episode) or a withheld one became live again (a
session reopened), the customer's memory in the inner strategy is retracted with a `Forget`
and the live events are replayed in their original order. The cost is one replay of that
customer's live history per such change; `bench/expiry_stage.py` measures it on a 1,000-turn
history. Replaying in the original order means that when nothing is expired the inner
strategy returns exactly what it returns without the stage (a test checks it).

The receipt: the inner bundle's candidates come first, unchanged (their components still sum
to their scores), then every item the stage removed, in observation order, with
`included=False`, score 0 and a reason from `stores.expiry.ledger` ("expired: sentiment older
than 7 days, said 2026-03-04", "superseded by pref-email on 2026-06-02", "not stored:
system-owned fact (plan tier); pointer kept"): nothing expires silently. With
`system_owned="pointer"` one line per system-owned topic follows the context's header ("Not kept
in memory: plan tier came up in an earlier conversation (last on 2026-04-02); check the billing
system for the current value."); it is an instruction, not a memory item, so it is not a
candidate and covers no gold id; its tokens are taken from the budget before the inner strategy
packs, so the whole text stays within the budget (counted by `stores.tokens`).

Capabilities pass through, plus `expiry` (`memory_class(subject, item_id)` is the class the
ledger gave an item). The hooks pass through too (`prepare`, `open`, `close`, `call_counts`). `health` reads a second inner instance that sees the
whole history (expiry decides what reaches the context, not what happened to the customer);
`handoff` is the inner strategy's brief over the live set (a human reading the brief should no
more be shown a stale mood than the model), and `memories` its typed memories of the live set. Observing an event twice, or replaying after
`reset()`, gives the same bundles: the ledger ignores a second delivery.
"""

from __future__ import annotations

import hashlib
from dataclasses import replace
from datetime import datetime
from functools import lru_cache
from typing import Any, Callable, Sequence

import numpy as np

from stores.expiry.classes import Classification
from stores.expiry.ledger import Item, SubjectLedger
from stores.expiry.params import ExpiryParams
from stores.memory import RESOLUTION_ROLE, render_line
from stores.packing import CandidateTable
from stores.protocol import (
    Bundle, CallCountsHook, Candidate, CloseHook, ContextRequest, Event, Forget, OpenHook, PrepareHook, Resolution, Scope,
    Signal, Turn,
)
from stores.tokens import count_text_tokens, count_tokens

_line_tokens = lru_cache(maxsize=1 << 16)(count_tokens)


@lru_cache(maxsize=1 << 16)
def _render(role: str, kind: str, session: str, at: datetime, text: str, status: str) -> str:
    if role == RESOLUTION_ROLE:
        return render_line(RESOLUTION_ROLE, "message", session, at, text, status)
    return render_line(role, kind, session, at, text)


def item_line(item: Item) -> str:
    """The item's rendered line, exactly as a strategy's context would show it."""
    return _render(item.role, item.kind, item.session, item.at, item.text, item.status)


def _item_id(event: Turn | Resolution | Signal) -> str | None:
    return event.id if isinstance(event, (Turn, Resolution)) else None


class ExpiryStage:
    """Any strategy, with expired memory filtered out before it ranks (see the module doc)."""

    def __init__(self, inner: Any, params: ExpiryParams | None = None, *, full_history: Any | None = None) -> None:
        """`inner` ranks the live items; `full_history` (optional, a second instance of the same
        strategy) sees every event and answers `health`."""
        self.inner = inner
        self.expiry = params or ExpiryParams()
        self.name = inner.name
        self.params = inner.params
        self.capabilities = frozenset(getattr(inner, "capabilities", frozenset())) | {"expiry"}
        self._full = full_history
        self._ledgers: dict[str, SubjectLedger] = {}
        self._given: dict[str, list[int]] = {}
        """Per customer: positions in its ledger's events that the inner strategy holds, in order."""
        from stores.expiry.learned import classifier

        self._classify = classifier(self.expiry.classifier)
        self.rebuilds = 0
        """How many times a customer's memory was retracted and replayed (for the benchmark)."""

    @classmethod
    def wrap(cls, make_inner: Callable[[], Any], params: ExpiryParams | None = None, **kw) -> "ExpiryStage":
        """The stage around a fresh strategy from `make_inner`, with a second one for `health`
        when the strategy has that capability."""
        inner = make_inner()
        full = make_inner() if "health" in getattr(inner, "capabilities", ()) else None
        return cls(inner, params, full_history=full, **kw)

    # -- the protocol ----------------------------------------------------------------------

    def observe(self, event: Event) -> None:
        if isinstance(event, Forget):
            self._ledgers.pop(event.subject, None)
            self._given.pop(event.subject, None)
            self.inner.observe(event)
        else:
            ledger = self._ledgers.get(event.subject)
            if ledger is None:
                ledger = self._ledgers[event.subject] = SubjectLedger(event.subject, classify=self._classify)
            ledger.add(event)
        if self._full is not None:
            self._full.observe(event)

    def reset(self) -> None:
        self._ledgers.clear()
        self._given.clear()
        self.inner.reset()
        if self._full is not None:
            self._full.reset()

    def context(self, request: ContextRequest) -> Bundle:
        ledger = self._ledgers.get(request.subject)
        if ledger is None:
            return self.inner.context(request)
        removed = self._sync(ledger, request.now, request.session)
        pointers = ledger.pointers(removed, self.expiry)
        pointer_tokens = count_text_tokens("\n".join(pointers)) if pointers else 0
        inner_request = replace(request, budget_tokens=request.budget_tokens - pointer_tokens) if pointers else request
        bundle = self.inner.context(inner_request)
        text, tokens = bundle.text, bundle.tokens
        if pointers and text:
            head, _, rest = text.partition("\n")
            with_pointers = "\n".join([head, *pointers, *([rest] if rest else [])])
            n = count_text_tokens(with_pointers)
            if n <= request.budget_tokens:  # always holds (newlines cost nothing); checked, not assumed
                text, tokens = with_pointers, n
        rows = [(ledger.items[i], why) for i, why in removed.items()]
        return Bundle(candidates=_append_removed(bundle.candidates, rows, request.subject), text=text,
                      tokens=tokens, latency_ms=bundle.latency_ms)

    # -- optional hooks and capabilities, passed through --------------------------------------

    def prepare(self, texts: list[str]) -> None:
        """Speed only: the inner strategy's own `prepare`, if it has one."""
        if isinstance(self.inner, PrepareHook):
            self.inner.prepare(texts)

    def open(self, scope: Scope) -> None:
        """The inner strategy's `open`, in the instance's scope; the whole-history instance gets
        a scope of its own (its namespace and work folder derived from this one's), so two
        instances never share remote memory."""
        if isinstance(self.inner, OpenHook):
            self.inner.open(scope)
        if isinstance(self._full, OpenHook):
            ns = "sb-" + hashlib.sha256(f"{scope.namespace}\x1ffull-history".encode()).hexdigest()[:20]
            work = scope.work_dir / "full-history"
            work.mkdir(parents=True, exist_ok=True)
            self._full.open(replace(scope, namespace=ns, work_dir=work))

    def close(self) -> None:
        """`close()` on the inner strategies that have it (both, even if the first raises)."""
        try:
            if isinstance(self.inner, CloseHook):
                self.inner.close()
        finally:
            if isinstance(self._full, CloseHook):
                self._full.close()

    def call_counts(self) -> dict[str, dict[str, float]]:
        """The round trips the inner strategies made to their service, summed (both instances:
        a rebuild's replays are calls the stage costs)."""
        out: dict[str, dict[str, float]] = {}
        for s in (self.inner, self._full):
            if isinstance(s, CallCountsHook):
                for kind, c in s.call_counts().items():
                    row = out.setdefault(kind, {"calls": 0, "seconds": 0.0})
                    row["calls"] += int(c.get("calls", 0))
                    row["seconds"] += float(c.get("seconds", 0.0))
        return out

    def peek_gold(self, gold: dict[str, Any]) -> None:
        """For a control with the `gold` capability: its side door, unchanged."""
        self.inner.peek_gold(gold)

    def health(self, subject: str, now: datetime):
        """The inner strategy's health model over the whole history (see the module doc)."""
        return (self._full or self.inner).health(subject, now)

    def memories(self, subject: str):
        """The inner strategy's typed memories (the `memories` capability), built from the live
        items it was given at the last request (the harness reads them right after `context`)."""
        return self.inner.memories(subject)

    def handoff(self, request: ContextRequest, budget_tokens: int | None = None):
        """The inner strategy's handoff brief, over the live items only."""
        ledger = self._ledgers.get(request.subject)
        if ledger is not None:
            self._sync(ledger, request.now, request.session)
        return self.inner.handoff(request, budget_tokens)

    # -- what the stage decided (for the classifier's criterion and the app) -------------------

    def memory_class(self, subject: str, item_id: str) -> Classification | None:
        """The class the stage gave an observed item (None for one it does not hold)."""
        ledger = self._ledgers.get(subject)
        item = ledger.items.get(item_id) if ledger else None
        return item.cls if item else None

    def items(self, subject: str) -> list[Item]:
        """A customer's items with their classes, in observation order."""
        ledger = self._ledgers.get(subject)
        return list(ledger.items.values()) if ledger else []

    def verdicts(self, subject: str, now: datetime, session: str) -> dict[str, str]:
        """Item id -> reason, for the items not live for a request in `session` at `now`."""
        ledger = self._ledgers.get(subject)
        return ledger.verdicts(now, session, self.expiry) if ledger else {}

    # -- keeping the inner memory equal to the live set ---------------------------------------

    def _sync(self, ledger: SubjectLedger, now: datetime, session: str) -> dict[str, str]:
        removed = ledger.verdicts(now, session, self.expiry)
        # signals are not items: the inner strategy sees each one, in its place among the live items
        target = [k for k, ev in enumerate(ledger.events) if _item_id(ev) not in removed]
        given = self._given.get(ledger.subject, [])
        if target[: len(given)] != given:
            self.rebuilds += 1
            self.inner.observe(Forget(ledger.subject, now))
            given = []
        for k in target[len(given):]:
            self.inner.observe(ledger.events[k])
        self._given[ledger.subject] = target
        return removed


def _append_removed(candidates: Sequence[Candidate], rows: list[tuple[Item, str]], subject: str) -> Sequence[Candidate]:
    """The inner candidates followed by the removed items (not included, score 0, with their reason)."""
    if not rows:
        return candidates
    lines = [item_line(i) for i, _ in rows]
    toks = np.asarray([_line_tokens(x) for x in lines], dtype=np.int64)
    ids = [i.id for i, _ in rows]
    if isinstance(candidates, CandidateTable):
        c, n = candidates, len(rows)
        zeros = np.zeros(n, dtype=np.float64)
        return CandidateTable(
            item_ids=list(c.item_ids) + ids,
            texts=list(c.texts) + lines,
            subjects=list(c.subjects) + [subject] * n,
            sessions=list(c.sessions) + [i.session for i, _ in rows],
            source_ids=list(c.source_ids) + [(x,) for x in ids],
            scores=np.concatenate([np.asarray(c.scores, dtype=np.float64), zeros]),
            components={k: np.concatenate([np.asarray(v, dtype=np.float64), zeros]) for k, v in c.components.items()},
            included_mask=np.concatenate([np.asarray(c.included_mask, dtype=bool), np.zeros(n, dtype=bool)]),
            reasons=list(c.reasons) + [why for _, why in rows],
            tokens=np.concatenate([np.asarray(c.tokens, dtype=np.int64), toks]),
        )
    names = list(candidates[0].components) if len(candidates) else []
    return list(candidates) + [
        Candidate(item_id=i.id, text=line, score=0.0, components={k: 0.0 for k in names}, source_ids=(i.id,),
                  included=False, reason=why, tokens=int(t), subject=subject, session=i.session)
        for (i, why), line, t in zip(rows, lines, toks)
    ]

"""Control strategies that keep the scorers honest; never shown on leaderboards by default.

`empty` returns nothing, so it must score 0 wherever something has to be recalled.
`oracle` is the only strategy given the probe's gold labels (through `peek_gold`, a side
door the harness opens only for strategies with the `gold` capability) and builds the best
bundle within budget, so it must score 1.0 on every retrieval criterion. A change that
breaks either is a scorer bug.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Literal, Sequence

import numpy as np

from stores.memory import MemoryStore
from stores.packing import pack
from stores.protocol import Bundle, ContextRequest, Event, NoParams


class Empty:
    """Remembers nothing, returns an empty context."""

    name: ClassVar[str] = "empty"
    Params = NoParams
    capabilities: ClassVar[frozenset[str]] = frozenset()

    def __init__(self, params: NoParams | None = None) -> None:
        self.params = params or NoParams()
        self.memory = MemoryStore()

    def observe(self, event: Event) -> None:
        pass

    def reset(self) -> None:
        pass

    def context(self, request: ContextRequest) -> Bundle:
        return pack(self.memory.history(request.subject), request, {})


@dataclass(frozen=True)
class OracleParams:
    """Parameters of `oracle`."""

    render: Literal["rank", "chronological"] = "rank"
    """`rank` or `chronological` rendering of the packed context."""


ORACLE_EXPIRED = "expired: named by the probe's gold (oracle control)"
"""The oracle's receipt reason for an item the probe's gold says has expired: it proves the
expiry criterion can be met; it names the gold, not a rule the oracle applied."""


class Oracle:
    """Includes exactly the gold items a probe asks for, ordered to satisfy every ordering label.

    It claims `expiry` too: what the gold says has expired stays out with `ORACLE_EXPIRED` as its
    receipt reason. It classifies nothing (`memory_class` is None), so the classifier's criterion
    does not apply to it."""

    name: ClassVar[str] = "oracle"
    Params = OracleParams
    capabilities: ClassVar[frozenset[str]] = frozenset({"gold", "expiry"})

    def __init__(self, params: OracleParams | None = None) -> None:
        self.params = params or OracleParams()
        self.memory = MemoryStore()
        self._gold: dict[str, Any] = {}

    def observe(self, event: Event) -> None:
        self.memory.observe(event)

    def reset(self) -> None:
        self.memory.reset()
        self._gold = {}

    def peek_gold(self, gold: dict[str, Any]) -> None:
        """The side door: the probe's expectations, as plain data, for the next `context` call only."""
        self._gold = gold

    def memory_class(self, subject: str, item_id: str) -> None:
        """The oracle gives no item a memory class."""
        return None

    def context(self, request: ContextRequest) -> Bundle:
        gold, self._gold = self._gold, {}
        h = self.memory.history(request.subject)
        wanted = oracle_items(gold, h.ids, h.lines, h.sessions)
        rank = {item_id: i for i, item_id in enumerate(wanted)}
        score = np.zeros(len(h))
        for i, item_id in enumerate(h.ids):
            if item_id in rank:
                score[i] = len(wanted) - rank[item_id]
        eligible = score > 0
        bundle = pack(h, request, {"gold": score}, eligible=eligible, render=self.params.render, cutoff_reason="not_gold")
        expired = set(gold.get("expired", ()))
        if expired:  # the receipt of the column-wise table is a list: name the gold's reason in place
            c = bundle.candidates
            for k, item_id in enumerate(c.item_ids):
                if item_id in expired and not c.included_mask[k]:
                    c.reasons[k] = ORACLE_EXPIRED
        return bundle


def oracle_items(gold: dict[str, Any], ids: Sequence[str], lines: Sequence[str],
                 sessions: Sequence[str] = ()) -> list[str]:
    """The history items the oracle puts in a context, best first: every item the probe's gold
    (plain data, as `peek_gold` receives it) wants, ordered so each ordering label holds, then the
    first item whose rendered line holds each wanted text needle (for a known fix or failure, followed by the
    source of the gold attempt memory with its text and outcome, when there is one, and then the gold incident
    memory's source and, if resolved, its session's resolution record), then, for each session the gold
    wants drawn on (`evidence_sessions`) that no item so far comes from, that session's first item. `ids`,
    `lines` and `sessions` are the subject's history so far (`SubjectHistory.ids`, `.lines`,
    `.sessions`). Scenario validation calls it too, to refuse gold that cannot fit its budget as
    the oracle would render it."""
    wanted = _ordered_wanted(gold)
    needles = [(key, x["text"].lower()) for key in _WANTED_NEEDLES for x in gold.get(key, ()) if isinstance(x, dict)]
    memories = [m for m in gold.get("memories", ()) if isinstance(m, dict) and m.get("source")]
    avoid = _avoided(gold)
    for key, needle in needles:
        hits = [next((i for i, line in zip(ids, lines) if needle in line.lower()), None)]
        if key in _ATTEMPT_OUTCOME:
            hits += [m["source"] for m in memories if m.get("type") == "ATTEMPT" and m.get("outcome") == _ATTEMPT_OUTCOME[key]
                     and str(m.get("text", "")).lower() == needle]
        wanted += [h for h in hits if h is not None and h not in wanted and h not in avoid]
    known = set(ids)
    if any(key in _ATTEMPT_OUTCOME for key, _ in needles):
        # the incident those attempts were made on, and the record that closed it when the gold says it is resolved
        session_of = dict(zip(ids, sessions))
        for m in (m for m in memories if m.get("type") == "INCIDENT"):
            closed = f"{session_of.get(m['source'])}#resolution" if m.get("status") == "resolved" else None
            wanted += [x for x in (m["source"], closed) if x in known and x not in wanted and x not in avoid]
    wanted = [x for x in wanted if x in known]
    if gold.get("evidence_sessions") and sessions:
        session_of = dict(zip(ids, sessions))
        drawn = {session_of[x] for x in wanted}
        for s in gold["evidence_sessions"]:
            first = next((i for i, si in zip(ids, sessions) if si == s), None) if s not in drawn else None
            if first is not None:
                wanted.append(first)
                drawn.add(s)
    return wanted


def oracle_conflicts(gold: dict[str, Any], lines: Sequence[str] = ()) -> list[str]:
    """What the gold both wants in the context and wants kept out of it, so that no strategy could
    meet it: ids wanted and forbidden at once, and forbidden text needles that the wanted items'
    rendered `lines` (as `oracle_items` chose them) contain, named `text "..."`."""
    avoid = _avoided(gold)
    out = [x for x in _wanted_ids(gold) if x in avoid]
    text = "\n".join(lines).lower()
    for key in _AVOIDED:
        for x in gold.get(key, ()):
            if isinstance(x, dict) and x.get("text") and x["text"].lower() in text:
                out.append(f'text "{x["text"]}"')
    return out


_WANTED_NEEDLES = ("include", "known_fixes", "known_failures")
"""Keys whose text needles the oracle matches against the history's lines."""

_ATTEMPT_OUTCOME = {"known_fixes": "worked", "known_failures": "failed"}
"""A known fix or failure given as a text needle is, when the gold's `memories` name it, the attempt
with that text and outcome: its source (the turn that says how the step went) goes in right after the
first line holding the needle (often the agent's suggestion, which says nothing of the outcome)."""


_AVOIDED = ("exclude", "superseded", "expired")
"""Keys whose items the oracle keeps out of the context."""


def _avoided(gold: dict[str, Any]) -> set[str]:
    """Ids the gold wants out of the context."""
    # text needles (`{"text": ...}`) name no item; a wanted line holding one is an `oracle_conflicts` case
    avoid = {x for key in _AVOIDED for x in gold.get(key, ()) if isinstance(x, str)}
    for s in gold.get("not_repeat_of", ()):
        avoid.add(f"{s}#resolution")
    return avoid


def _pairs(gold: dict[str, Any]) -> list[tuple[str, str]]:
    """Every (first, second) the oracle's order must keep."""
    pairs = [tuple(p) for p in gold.get("above", ())]
    for fix, failure in (tuple(p) for p in gold.get("fix_before", ())):
        pairs.append((fix, failure))
    fixes = [x for x in gold.get("known_fixes", ()) if isinstance(x, str)]
    failures = [x for x in gold.get("known_failures", ()) if isinstance(x, str)]
    pairs += [(fix, failure) for fix in fixes for failure in failures]
    return pairs


def _wanted_ids(gold: dict[str, Any]) -> list[str]:
    """Ids the gold wants in the context, in mention order (the second of a pair only when it is
    wanted on its own: then it must sit below)."""
    want: list[str] = []
    for key in ("evidence", "identity", "preferences", "include", "known_fixes", "known_failures"):
        want += [x for x in gold.get(key, ()) if isinstance(x, str)]
    want += [a for a, _ in _pairs(gold)]
    return list(dict.fromkeys(want))


def _ordered_wanted(gold: dict[str, Any]) -> list[str]:
    """Ids the gold wants in the context, ordered so every `above` and `fix_before` pair holds
    (and every known fix sits above every known failure, so a reply reading it leads with the fix)."""
    avoid = _avoided(gold)
    pairs = _pairs(gold)
    want = [x for x in _wanted_ids(gold) if x not in avoid]
    # order: a topological sort over the pairs, `include` items first where the pairs allow (so
    # the rank metrics, which read `include`, find them as high as they can be), then first mention
    after: dict[str, set[str]] = {x: set() for x in want}
    for a, b in pairs:
        if a in after and b in after:
            after[b].add(a)
    included = {x for x in gold.get("include", ()) if isinstance(x, str)}
    priority = [x for x in want if x in included] + [x for x in want if x not in included]
    ordered: list[str] = []
    placed: set[str] = set()
    while len(ordered) < len(want):
        nxt = next((x for x in priority if x not in placed and after[x] <= placed), None)
        if nxt is None:  # contradictory pairs: keep the rest in mention order
            ordered += [x for x in want if x not in placed]
            break
        ordered.append(nxt)
        placed.add(nxt)
    return ordered

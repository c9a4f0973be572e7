"""Typed memories read from what a strategy put in the context, for the one reply engine.

For `structured` the context items *are* typed memories: the engine takes the strategy's
memories whose ids are included. For a raw-turn strategy it runs the same rule-based extractor
over the included items, in time order, as if they were the whole conversation: what the
context does not show, the reply cannot know. Each derived memory traces to the source ids of
the items it was read from.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from datetime import datetime, timezone
from typing import Iterable, NamedTuple, Sequence

from stores.protocol import Bundle, ContextRequest, Resolution, Turn
from stores.structured.extract import Extractor
from stores.structured.lexicon import casing, find_steps, normalize, sentences
from stores.structured.model import Memory

_LINE = re.compile(
    r"^\[(?P<stamp>\d{4}-\d{2}-\d{2} \d{2}:\d{2})\] \((?P<session>[^)]*)\) "
    r"(?P<who>customer|agent action|agent|resolution, (?P<status>resolved|open|unresolved)): (?P<text>.*)$",
    re.S,
)
"""The project's rendered history line (`stores.memory.render_line`)."""


@dataclass(frozen=True)
class ContextMemory:
    """A typed memory as the reply engine sees it: the memory, and the session it came from (so the engine
    can tell an earlier session's history from the live one's)."""

    memory: Memory
    """The memory (source ids: the history items it traces to)."""
    session: str
    """The session it came from (where it was first seen)."""


class Shown(NamedTuple):
    """What the engine reads of a candidate in the context."""

    item_id: str
    text: str
    session: str
    source_ids: tuple[str, ...]


def included(bundle: Bundle) -> list[Shown]:
    """The candidates the model saw: marked included and present in the text."""
    cands = bundle.candidates
    mask = getattr(cands, "included_mask", None)
    if mask is not None and hasattr(mask, "nonzero"):  # column-wise: read the included rows' columns, no `Candidate` built
        at = mask.nonzero()[0].tolist()
        at_rows = getattr(cands, "column_at", None)
        if at_rows is not None:  # only those rows: a long pool's columns are not built for a few lines
            marked = list(map(Shown, *(at_rows(k, at) for k in ("item_ids", "texts", "sessions", "source_ids"))))
        else:
            ids, texts, sessions, sources = cands.item_ids, cands.texts, cands.sessions, cands.source_ids
            marked = [Shown(ids[i], texts[i], sessions[i], sources[i]) for i in at]
    else:
        marked = [Shown(c.item_id, c.text, c.session, c.source_ids) for c in cands if c.included]
    return [c for c in marked if c.text and c.text in bundle.text]


def from_typed(bundle: Bundle, memories: Iterable[Memory]) -> list[ContextMemory]:
    """The strategy's typed memories that are in the context, in context order."""
    by_id = {m.id: m for m in memories}
    return [ContextMemory(by_id[c.item_id], c.session) for c in included(bundle) if c.item_id in by_id]


def from_items(request: ContextRequest, bundle: Bundle) -> list[ContextMemory]:
    """Memories the extractor reads from the included items of a raw-turn context."""
    items = included(bundle)
    events, origin = [], {}
    for rank, c in enumerate(items):
        ev = _event(request, c, rank)
        events.append((ev.at, rank, ev))
        origin[ev.id] = c
    x = Extractor()
    for _, _, ev in sorted(events, key=lambda e: (e[0], e[1])):
        x.observe(ev)
    out = []
    for m in x.memories(request.subject):
        cands = [origin[i] for i in m.source_ids if i in origin]
        sources = tuple(dict.fromkeys(s for c in cands for s in (c.source_ids or (c.item_id,))))
        out.append(ContextMemory(m.evolve(source_ids=sources), cands[0].session if cands else ""))
    return out


def _event(request: ContextRequest, c: Shown, rank: int):
    parsed = _parse(c.text)
    if parsed is None:  # a line in another strategy's own format: read it as something the customer said
        return Turn(c.item_id, request.subject, c.session or request.session, "customer", "message", c.text, request.now)
    at, session, status, who, text = parsed
    session = session or c.session
    if status:
        return Resolution(request.subject, session, status, text, at)  # id: `<session>#resolution`
    role = "customer" if who == "customer" else "agent"
    kind = "action" if who == "agent action" else "message"
    return Turn(c.item_id, request.subject, session, role, kind, text, at)


@lru_cache(maxsize=1 << 16)
def _parse(line: str) -> tuple[datetime, str, str | None, str, str] | None:
    """A rendered line's (time, session, resolution status, who, text), None when it is not one
    (pure, so memoized: the same lines come back at many probes)."""
    m = _LINE.match(line)
    if m is None:
        return None
    return _stamp(m["stamp"]), m["session"], m["status"], m["who"], m["text"]


@lru_cache(maxsize=1 << 14)
def _stamp(stamp: str) -> datetime:
    """A rendered line's minute stamp (`YYYY-MM-DD HH:MM`: `_LINE` matched it) as a UTC time. ASCII
    digits are read by position, which gives what `datetime.strptime(stamp, "%Y-%m-%d %H:%M")` gives
    (out-of-range fields refused alike) without strptime's locale look-up at every call; any other
    digits go through strptime itself."""
    if not stamp.isascii():
        return datetime.strptime(stamp, "%Y-%m-%d %H:%M").replace(tzinfo=timezone.utc)
    return datetime(int(stamp[0:4]), int(stamp[5:7]), int(stamp[8:10]), int(stamp[11:13]), int(stamp[14:16]),
                    tzinfo=timezone.utc)


@lru_cache(maxsize=4096)
def steps_named(text: str) -> frozenset[str]:
    """The canonical steps a history item's text names, read as the reply engine reads them (the reply
    criteria use it to tell that a reply's step is the one a gold turn describes)."""
    out: set[str] = set()
    for sentence in sentences(text):
        out |= {s.text for s in find_steps(normalize(sentence), casing(sentence), subject_free=False) if not s.pronoun}
    return frozenset(out)


def memories_in_context(
    request: ContextRequest, bundle: Bundle, memories: Sequence[Memory] | None = None
) -> list[ContextMemory]:
    """The typed memories behind the context: the strategy's own when it has them, else derived from the items."""
    if memories is not None:
        return from_typed(bundle, memories)
    return from_items(request, bundle)


__all__ = ["ContextMemory", "Shown", "memories_in_context", "from_typed", "from_items", "included", "steps_named"]

"""The plain in-process backend strategies keep their memory in.

One `SubjectHistory` per customer holds every turn and resolution record observed so far,
column-wise (lists plus numpy views built on demand) so that strategies can score ten
thousand items with array operations. Observing the same event twice changes nothing
(idempotent by id); a later resolution of a session replaces its record in place; a
`Forget` drops the customer's history entirely. A `Signal` is a fact about the customer's
systems, not something said: it adds no item (strategies that act on signals keep their own state).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache

from typing import ClassVar

import numpy as np

from stores.protocol import Event, Forget, Resolution, Signal, Turn
from stores.tokens import count_line_tokens

RESOLUTION_ROLE = "resolution"

# A run replays each scenario three times per strategy (plain, after reset, events twice) and
# every strategy renders the same lines: each distinct line is counted once per process.
_line_tokens = count_line_tokens


def render_line(role: str, kind: str, session: str, at: datetime, text: str, status: str = "") -> str:
    """How one memory item appears in a context: a stamped, attributed line."""
    stamp = at.strftime("%Y-%m-%d %H:%M")
    if role == RESOLUTION_ROLE:
        return f"[{stamp}] ({session}) resolution, {status}: {text}"
    who = "agent action" if kind == "action" else role
    return f"[{stamp}] ({session}) {who}: {text}"


@lru_cache(maxsize=1 << 16)
def _turn_line(t: Turn) -> tuple[str, float]:
    """A turn's rendered line and POSIX time, computed once per turn per process: every
    strategy and every replay of a run remembers the same turns."""
    return render_line(t.role, t.kind, t.session, t.at, t.text), t.at.timestamp()


@dataclass
class SubjectHistory:
    """Everything remembered about one customer, in observation order."""

    subject: str
    ids: list[str] = field(default_factory=list)
    sessions: list[str] = field(default_factory=list)
    roles: list[str] = field(default_factory=list)
    """`customer`, `agent`, or `resolution` for a session's resolution record."""
    kinds: list[str] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    """The item's own words (a turn's text, a resolution's summary)."""
    times: list[float] = field(default_factory=list)
    """Simulated time as POSIX seconds."""
    lines: list[str] = field(default_factory=list)
    """The rendered line that goes into a context."""
    line_tokens: list[int] = field(default_factory=list)
    status: dict[str, str] = field(default_factory=dict)
    """Latest resolution status per session; a session absent here is open."""
    summaries: dict[str, str] = field(default_factory=dict)
    """Latest resolution summary per session."""
    session_order: dict[str, None] = field(default_factory=dict)
    """Sessions in order of first appearance (a dict used as an ordered set)."""
    replaced: list[int] = field(default_factory=list)
    """Positions of items replaced in place (a resolution record observed again with a new
    status, summary or time), in the order it happened: an index derived from the history
    keeps a cursor into this log and revisits only those positions, never every session."""
    _pos: dict[str, int] = field(default_factory=dict)
    _version: int = 0
    _arrays: dict[str, np.ndarray] = field(default_factory=dict)
    _arrays_version: int = -1
    _columns: dict[str, np.ndarray] = field(default_factory=dict)
    _lines_shared: bool = False

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def version(self) -> int:
        """Bumped on every change; strategies key their caches on it."""
        return self._version

    def position(self, item_id: str) -> int | None:
        """Index of an item, or None if it is not remembered."""
        return self._pos.get(item_id)

    def add_turn(self, t: Turn) -> bool:
        """Remember a turn; False when that id is already known (idempotent delivery)."""
        if t.id in self._pos:
            return False
        line, stamp = _turn_line(t)
        self._append(t.id, t.session, t.role, t.kind, t.text, stamp, line)
        return True

    def add_resolution(self, r: Resolution) -> bool:
        """Remember or replace a session's resolution record; False when nothing changed."""
        line = render_line(RESOLUTION_ROLE, "message", r.session, r.at, r.summary, r.status)
        i = self._pos.get(r.id)
        self.status[r.session] = r.status
        self.summaries[r.session] = r.summary
        if i is None:
            self._append(r.id, r.session, RESOLUTION_ROLE, "message", r.summary, r.at.timestamp(), line)
            return True
        if self.lines[i] == line:
            return False
        if self._lines_shared:  # a bundle reads the old lines lazily: leave its list alone
            self.lines, self._lines_shared = list(self.lines), False
        self.texts[i], self.times[i], self.lines[i] = r.summary, r.at.timestamp(), line
        self.line_tokens[i] = _line_tokens(line)
        # copy on write: a column handed out before keeps the values it was read with
        self._columns = {k: v.copy() for k, v in self._columns.items()}
        for name in self._columns:
            self._columns[name][i] = getattr(self, name)[i]
        self.replaced.append(i)
        self._version += 1
        return True

    def _append(self, item_id, session, role, kind, text, at, line) -> None:
        self._pos[item_id] = len(self.ids)
        self.ids.append(item_id)
        self.sessions.append(session)
        self.roles.append(role)
        self.kinds.append(kind)
        self.texts.append(text)
        self.times.append(at)
        self.lines.append(line)
        tokens = _line_tokens(line)
        self.line_tokens.append(tokens)
        if self._columns:
            n = len(self.ids)
            cols = self._columns
            if n > len(cols["times"]):  # grow geometrically: appending stays O(1) amortized
                cols = self._columns = {k: np.concatenate([v, np.zeros_like(v)]) for k, v in cols.items()}
            cols["times"][n - 1] = at
            cols["line_tokens"][n - 1] = tokens
        self.session_order.setdefault(session, None)
        self._version += 1

    def is_resolved(self, session: str) -> bool:
        """A session counts as resolved only with a `resolved` record (no record = open)."""
        return self.status.get(session) == "resolved"

    def array(self, name: str) -> np.ndarray:
        """A read-only numpy view of a column (`times`, `line_tokens`: kept up to date as items
        arrive, so reading one after each new item costs nothing; any other column is built
        on demand after a change)."""
        if name in _GROWN and not self._columns:
            size = 2 * len(self.ids) + 16
            for k, dtype in _GROWN.items():
                col = self._columns[k] = np.zeros(size, dtype=dtype)
                col[: len(self.ids)] = getattr(self, k)
        col = self._columns.get(name)
        if col is not None:
            view = col[: len(self.ids)]
            view.flags.writeable = False
            return view
        if self._arrays_version != self._version:
            self._arrays = {}
            self._arrays_version = self._version
        a = self._arrays.get(name)
        if a is None:
            a = np.asarray(getattr(self, name))
            self._arrays[name] = a
        return a

    def shared_lines(self) -> list[str]:
        """The rendered lines, for a reader that keeps the list and reads it later (a bundle's
        candidates, built lazily): a later in-place replacement copies the list first, so what
        the reader sees never changes after the fact."""
        self._lines_shared = True
        return self.lines


_GROWN = {"times": np.float64, "line_tokens": np.int64}
"""Columns kept as growing numpy buffers beside their lists (read at every probe)."""


class MemoryStore:
    """All customers' histories; the default backend of every strategy."""

    def __init__(self) -> None:
        self._subjects: dict[str, SubjectHistory] = {}

    def observe(self, event: Event) -> bool:
        """Apply an event; True when it changed what is remembered."""
        if isinstance(event, Turn):
            return self.history(event.subject, create=True).add_turn(event)
        if isinstance(event, Resolution):
            return self.history(event.subject, create=True).add_resolution(event)
        if isinstance(event, Forget):
            return self._subjects.pop(event.subject, None) is not None
        if isinstance(event, Signal):
            return False
        raise TypeError(f"unknown event type {type(event).__name__}")

    def history(self, subject: str, create: bool = False) -> SubjectHistory:
        """The customer's history (empty if unknown and not `create`)."""
        h = self._subjects.get(subject)
        if h is None:
            h = SubjectHistory(subject)
            if create:
                self._subjects[subject] = h
        return h

    def subjects(self) -> list[str]:
        """Customers currently remembered."""
        return list(self._subjects)

    def reset(self) -> None:
        """Forget everything."""
        self._subjects.clear()


class IndexedMemory:
    """Base for strategies that keep a `MemoryStore` plus a derived index per customer.

    The index of a customer is dropped when the customer is forgotten and everything is
    dropped on `reset()`, so a derived structure can never outlive what it was built from. A
    subclass with more per-customer structures names their attributes in `derived` (each a dict
    keyed by customer, made in its `__init__`) and they are dropped the same way.
    """

    derived: ClassVar[tuple[str, ...]] = ("_index",)
    """Attributes holding a dict per customer derived from the history."""

    def __init__(self) -> None:
        self.memory = MemoryStore()
        self._index: dict = {}

    def observe(self, event: Event) -> None:
        self.memory.observe(event)
        if isinstance(event, Forget):
            for name in self.derived:
                getattr(self, name).pop(event.subject, None)

    def reset(self) -> None:
        self.memory.reset()
        for name in self.derived:
            getattr(self, name).clear()

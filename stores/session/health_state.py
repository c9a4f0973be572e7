"""Customer health, the one implementation of the table in `stores.session.health`, at a cost per
event that does not grow with the history.

The harness asks for a health report after every event (the health timeline). Computed from
scratch, each report would walk the whole history, so a customer's timeline would cost the square
of its length. `HealthState` instead follows one `SubjectHistory` the way `SessionIndex` does: it
remembers the history's version, how many items it has read and a cursor into the log of records
replaced in place, and on each report reads only what is new. It keeps, per session, what the
table's readings derive from its items (first and last turn, first customer turn and first
response, latest activity, status, words and keywords) and, per factor, the sessions it lists, in
the order it lists them, so a report costs the factors that changed plus the parts that depend on
`now` (idle sessions, recent resolutions).

What changes the state, and how:

- a new item stamped at or after every item read so far (scenario time never goes backwards, so
  this is every item of a replay): folded in, as the next item in time order;
- a resolution record re-observed with a new status, summary or time (reopened, resolved again):
  that session's sets are taken out of the aggregates and put back with its new values;
- a `Forget`: the strategy drops the subject's state with its history; a history object the state
  did not follow (a forgotten customer's new history) is read afresh;
- rare cases, read afresh from the whole history: a new item stamped before one already read, or a
  replaced record that moves its session's first item (a record stamped before the session's turns).

A report at a `now` before an item already read (a report about the past) comes from a fresh state
that read only the items stamped up to `now`: the harness never asks for one, since its `now` is
an event's own time. Both readings (`rules="reference"` and `"project"`) are followed.
tests/stores/test_health_state.py holds the reports, factor by factor, after every event of random
histories, to the tests' reading from scratch (tests/stores/health_oracle.py).
"""

from __future__ import annotations

from bisect import bisect_left, insort
from datetime import datetime
from itertools import chain
from operator import itemgetter

import numpy as np

from stores.memory import RESOLUTION_ROLE, SubjectHistory
from stores.protocol import HealthFactor, HealthReport
from stores.session.health import HealthParams, band_for, is_health_urgent, reference_words
from stores.text import is_urgent, keywords

_NEG_INF = float("-inf")
# a resolution stamped this many seconds before the recent window's edge can never be inside it:
# the window test is `now - t <= recent_secs` in floating point, whose rounding at POSIX times
# is far below a second; candidates are taken from a sorted list, then tested exactly
_SLACK = 1.0


class _Session:
    """What the table's readings derive from one session's items, kept as items arrive."""

    __slots__ = ("name", "rank", "bit", "turn_key", "n_turns", "first_turn_id", "last_turn_id", "turn_last",
                 "last", "words", "turn_kw", "summary_kw", "kw", "first_customer", "first_customer_id",
                 "first_response", "first_response_id", "record_pos", "record_time", "status", "rid",
                 "pool", "pair", "timed")

    def __init__(self, name: str, rank: int) -> None:
        self.name = name
        self.rank = rank  # position among sessions by first item in time order: the report's order
        self.bit = 1 << rank
        self.turn_key: tuple[float, int] | None = None  # (time, position) of its first turn
        self.n_turns = 0
        self.first_turn_id = ""
        self.last_turn_id = ""
        self.turn_last = _NEG_INF  # latest time of its turns
        self.last = _NEG_INF  # latest time of any of its items (its activity)
        self.words: set[str] = set()  # `reference` words of its turns
        self.turn_kw: set[str] = set()  # keywords of its turns
        self.summary_kw: frozenset[str] = frozenset()  # keywords of its resolution summary
        self.kw: set[str] = set()  # `project` keywords: turns and summary
        self.first_customer: float | None = None
        self.first_customer_id = ""
        self.first_response: float | None = None
        self.first_response_id = ""
        self.record_pos: int | None = None
        self.record_time: float = _NEG_INF
        self.status = ""  # the history's latest status, once its record is read
        self.rid = ""  # its resolution record's id
        self.pool: str | None = None  # `reference` pool its words count in: "open", "resolved" or none
        self.pair: str | None = None  # `project` side of the pairwise test: "open", "resolved" or none
        self.timed: tuple[float, int] | None = None  # its entry in `resolved_times`

    def first_key(self, record_time: float) -> tuple[float, int]:
        """(time, position) of its first item, were its record stamped `record_time`."""
        keys = [k for k in (self.turn_key, None if self.record_pos is None else (record_time, self.record_pos)) if k]
        return min(keys)


class _Members:
    """The ranks of the sessions in one set, sorted (the order a report lists them in), with a
    version bumped on every change so that a factor built from them knows when to rebuild, and
    the version of the last change that was not an append at the end (`stable`): a listing built
    since then only needs the members appended after it."""

    __slots__ = ("ranks", "version", "stable")

    def __init__(self) -> None:
        self.ranks: list[int] = []
        self.version = 0
        self.stable = 0

    def put(self, rank: int, member: bool) -> None:
        ranks = self.ranks
        if member:
            if not ranks or rank > ranks[-1]:  # the common case: the newest session joins
                ranks.append(rank)
                self.version += 1
                return
            i = bisect_left(ranks, rank)
            if i < len(ranks) and ranks[i] == rank:
                return
            ranks.insert(i, rank)
        else:
            i = bisect_left(ranks, rank)
            if i == len(ranks) or ranks[i] != rank:
                return
            del ranks[i]
        self.version += 1
        self.stable = self.version

    def has(self, rank: int) -> bool:
        i = bisect_left(self.ranks, rank)
        return i < len(self.ranks) and self.ranks[i] == rank

    def touch(self) -> None:
        """What a factor says about a member changed (its time, its id): listings are gathered again."""
        self.version += 1
        self.stable = self.version


class _Listing:
    """Values of the members of one set, per-rank columns gathered in rank order, as a factor
    lists them: gathered again after a member left, joined in the middle or changed, extended
    when members were only appended (a new session answered, resolved, ended). A column whose
    values are pairs is gathered flat; `joined(i)` is column `i` joined with ", ", kept in step
    the same way."""

    __slots__ = ("members", "columns", "pairs", "version", "n", "values", "texts")

    def __init__(self, members: _Members, *columns: list, pairs: tuple[int, ...] = ()) -> None:
        self.members = members
        self.columns = columns
        self.pairs = pairs
        self.version = -1
        self.n = 0
        self.values: tuple[list, ...] = ()
        self.texts: dict[int, str] = {}

    def current(self) -> tuple[list, ...]:
        m = self.members
        if self.version == m.version:
            return self.values
        if 0 <= self.version and m.stable <= self.version:
            new = m.ranks[self.n:]
            for i, text in self.texts.items():
                more = ", ".join(_pick(self.columns[i], new))
                self.texts[i] = f"{text}, {more}" if text and more else text or more
        else:
            new = m.ranks
            self.values = tuple([] for _ in self.columns)
            self.texts = {}
        for i, (out, col) in enumerate(zip(self.values, self.columns)):
            got = _pick(col, new)
            out += chain.from_iterable(got) if i in self.pairs else got
        self.n, self.version = len(m.ranks), m.version
        return self.values

    def joined(self, i: int) -> str:
        values = self.current()
        text = self.texts.get(i)
        if text is None:
            text = self.texts[i] = ", ".join(values[i])
        return text


def _pick(values: list, ranks: list[int]) -> tuple | list:
    """`[values[r] for r in ranks]`, gathered in C (a listing can hold every session)."""
    if len(ranks) > 1:
        return itemgetter(*ranks)(values)
    return [values[ranks[0]]] if ranks else []


def _ranks_of(mask: int) -> list[int]:
    """The set bits of a mask of sessions, ascending."""
    if not mask:
        return []
    if mask.bit_count() <= 16:  # a few bits: cheaper one by one than through numpy
        out = []
        while mask:
            low = mask & -mask
            out.append(low.bit_length() - 1)
            mask ^= low
        return out
    raw = np.frombuffer(mask.to_bytes((mask.bit_length() + 7) // 8, "little"), dtype=np.uint8)
    return np.flatnonzero(np.unpackbits(raw, bitorder="little")).tolist()


def _chronological(h: SubjectHistory) -> list[int]:
    """Item positions by (time, observation order)."""
    if not len(h):
        return []
    return np.lexsort((np.arange(len(h)), h.array("times"))).tolist()


def _factor(signal: str, impact: float, detail: str, ids, distinct: bool = False) -> HealthFactor | None:
    """A factor only when it moves the score, its ids deduplicated in order.
    With `distinct`, the ids name different items by construction (each item once; a history's
    ids are unique), so deduplicating them would change nothing and is skipped: those listings
    can hold every session."""
    if not impact:
        return None
    return HealthFactor(signal, float(impact), detail, tuple(ids) if distinct else tuple(dict.fromkeys(ids)))


class HealthState:
    """One customer's health, kept in step with their `SubjectHistory` (see the module doc).

    `report(history, now)` is the table's report for every history and `now`; it is cheap when
    `history` is the one this state followed so far and `now` is at or after every item in it.
    """

    def __init__(self, params: HealthParams | None = None) -> None:
        self.params = params or HealthParams()
        self.reference = self.params.rules == "reference"
        # sessions the resolution rate counts: every record (`reference`), ended ones (`project`)
        self.counted = ("resolved", "unresolved", "open") if self.reference else ("resolved", "unresolved")
        self._reset(None)

    # -- following the history ----------------------------------------------------------------

    def _reset(self, h: SubjectHistory | None) -> None:
        self.history = h
        self.version = -1
        self.n_seen = 0
        self.replaced_seen = 0
        self.max_time = _NEG_INF  # no item read so far is stamped later (an upper bound)
        self.sessions: dict[str, _Session] = {}
        self.by_rank: list[_Session] = []
        self.names: list[str] = []  # per rank
        self.rids: list[str] = []  # per rank: its resolution record's id ("" without one)
        self.open_ids: list[str] = []  # per rank: the id `unresolved_issues` names (first turn, else record)
        self.waits: list[float] = []  # per rank: minutes to the first response (answered sessions)
        self.response_ids: list[tuple[str, str]] = []  # per rank: (first customer turn, first response)
        self.breach_texts: list[str] = []  # per rank: "name (26.0 h)" (breached sessions)
        self.breach_ids: list[tuple[str, str]] = []  # per rank: (first customer turn, record)
        self.open = _Members()  # open sessions under this state's rules
        self.resolved = _Members()
        self.ended = _Members()  # sessions the resolution rate counts
        self.answered = _Members()
        self.breached = _Members()
        self.missed = _Members()  # answered sessions slower than the first-response SLA target
        self.listings = {
            "open": _Listing(self.open, self.names, self.open_ids),
            "answered": _Listing(self.answered, self.waits, self.response_ids, pairs=(1,)),
            "missed": _Listing(self.missed, self.names),
            "breached": _Listing(self.breached, self.breach_texts, self.breach_ids, pairs=(1,)),
            "ended": _Listing(self.ended, self.rids),
        }
        self.urgent: list[str] = []  # ids of turns with a marker, in time order
        self.urgent_text = ""
        self.resolved_times: list[tuple[float, int]] = []  # (resolution time, rank) of resolved sessions
        self._cache: dict[str, tuple] = {}
        # `reference` pooled words: how many sessions of each pool hold each word, which resolved
        # sessions hold it (a bit per rank), the words both pools hold, and the resolved sessions
        # holding one of those (None: to be counted again)
        self.pool_open: dict[str, int] = {}
        self.pool_resolved: dict[str, int] = {}
        self.resolved_with: dict[str, int] = {}
        self.shared: set[str] = set()
        self.shared_version = 0
        self.listed: int | None = 0
        self._listed_ranks: tuple[int, list[int]] = (0, [])  # a mask and its ranks, ascending
        # `project` pairwise overlaps: per open session o, |kw(o) ∩ kw(r)| for every rank r (read
        # at resolved ones only); keyword -> ranks of the resolved sessions holding it
        self.cap = 16
        self.resolved_vec = np.zeros(self.cap, dtype=bool)
        self.inter: dict[int, np.ndarray] = {}
        self.pair_open: set[int] = set()
        self.kw_resolved: dict[str, list[int]] = {}
        self._kw_arrays: dict[str, np.ndarray] = {}
        self.passing: dict[int, list[int]] = {}  # per open session: resolved ranks at the threshold
        self.pair_dirty: set[int] = set()  # open sessions whose keywords changed: test all their pairs
        self.pair_version = 0

    def follow(self, h: SubjectHistory) -> None:
        """Read what is new in `h` since the last call (all of it, for a history not followed yet)."""
        if h is not self.history:
            self._rebuild(h)
            return
        if self.version == h.version:
            return
        n = self.n_seen
        for i in dict.fromkeys(h.replaced[self.replaced_seen:]):
            if i < n and not self._replace(i, h):
                self._rebuild(h)
                return
        self.replaced_seen = len(h.replaced)
        for i in range(n, len(h)):
            if h.times[i] < self.max_time:  # stamped before an item already read: not the next in time
                self._rebuild(h)
                return
            self._read(i, h)
            self.n_seen = i + 1
        self.version = h.version

    def _rebuild(self, h: SubjectHistory) -> None:
        """Read `h` afresh, every item in time order (then observation order)."""
        self._reset(h)
        for i in _chronological(h):
            self._read(i, h)
        self.n_seen = len(h)
        self.replaced_seen = len(h.replaced)
        self.version = h.version

    def _session(self, name: str) -> _Session:
        s = self.sessions.get(name)
        if s is None:
            s = self.sessions[name] = _Session(name, len(self.by_rank))
            self.by_rank.append(s)
            self.names.append(name)
            self.rids.append("")
            self.open_ids.append("")
            self.waits.append(0.0)
            self.response_ids.append(("", ""))
            self.breach_texts.append("")
            self.breach_ids.append(("", ""))
            if s.rank >= self.cap:
                self._grow()
        return s

    def _read(self, i: int, h: SubjectHistory) -> None:
        """Fold in item `i`, the next in time order."""
        self.max_time = max(self.max_time, h.times[i])
        s = self._session(h.sessions[i])
        if h.roles[i] == RESOLUTION_ROLE:
            self._set_record(s, i, h)
        else:
            self._add_turn(s, i, h)

    def _replace(self, i: int, h: SubjectHistory) -> bool:
        """Item `i` was replaced in place (a resolution record observed again); False when the
        change moves its session's first item, so that the state must be read afresh."""
        s = self.sessions.get(h.sessions[i])
        if s is None or s.record_pos != i or h.roles[i] != RESOLUTION_ROLE:
            return False
        if s.first_key(h.times[i]) != s.first_key(s.record_time):
            return False
        self.max_time = max(self.max_time, h.times[i])
        self._set_record(s, i, h)
        return True

    def _add_turn(self, s: _Session, i: int, h: SubjectHistory) -> None:
        text, role, tid, t = h.texts[i], h.roles[i], h.ids[i], h.times[i]
        settle = not s.n_turns  # only a first turn, customer turn or response moves a session between sets
        if settle:
            s.turn_key, s.first_turn_id = (t, i), tid
            self.open_ids[s.rank] = tid
            if self.open.has(s.rank):  # an open session of records only (`project`) is now named by its turn
                self.open.touch()
        s.n_turns += 1
        s.last_turn_id = tid
        s.turn_last = max(s.turn_last, t)
        s.last = max(s.last, t)
        if role == "customer" and s.first_customer is None:
            s.first_customer, s.first_customer_id = t, tid
            settle = True
        elif role == "agent" and s.first_customer is not None and s.first_response is None:
            s.first_response, s.first_response_id = t, tid
            settle = True
        if self.reference:
            new = reference_words(text) - s.words
            if new:
                s.words |= new
                if s.pool is not None:
                    for w in new:
                        self._pool_add(s, w)
        else:
            kw = keywords(text)
            new = kw - s.kw
            s.turn_kw |= kw
            if new:
                s.kw |= new
                for w in new:
                    self._pair_add(s, w)
        if (is_health_urgent if self.reference else is_urgent)(text):
            self.urgent.append(tid)
            self.urgent_text = f"{self.urgent_text}, {tid}" if self.urgent_text else tid
        if settle:
            self._settle(s)

    def _set_record(self, s: _Session, i: int, h: SubjectHistory) -> None:
        """Read session `s`'s resolution record at position `i`, new or replaced."""
        self._pair_detach(s)  # its summary's keywords may change: off the pairwise test, back on in `_settle`
        s.record_pos, s.record_time, s.rid = i, h.times[i], h.ids[i]
        s.status = h.status.get(s.name, "")
        s.last = max(s.turn_last, s.record_time)
        self.rids[s.rank] = s.rid
        if not s.n_turns:  # a session of records only is named by its record
            self.open_ids[s.rank] = s.rid
        s.summary_kw = keywords(h.texts[i])
        s.kw = s.turn_kw | s.summary_kw
        self._settle(s)

    def _settle(self, s: _Session) -> None:
        """Put `s` in the sets its values now place it in (and take it out of the others)."""
        p = self.params
        resolved = s.status == "resolved"
        is_open = not resolved and (s.n_turns > 0 or not self.reference)
        r = s.rank
        self.open.put(r, is_open)
        self.resolved.put(r, resolved)
        self.ended.put(r, s.status in self.counted)
        answered = s.first_response is not None
        self.answered.put(r, answered)
        if answered:
            self.waits[r] = wait = (s.first_response - s.first_customer) / 60
            self.response_ids[r] = (s.first_customer_id, s.first_response_id)
        self.missed.put(r, answered and wait > p.sla_first_response_minutes)
        breached = (resolved and s.first_customer is not None
                    and s.record_time - s.first_customer > p.sla_resolution_hours * 3600)
        if breached:
            text = f"{s.name} ({(s.record_time - s.first_customer) / 3600:.1f} h)"
            if text != self.breach_texts[r] or self.breach_ids[r][1] != s.rid:
                self.breach_texts[r], self.breach_ids[r] = text, (s.first_customer_id, s.rid)
                if self.breached.has(r):  # a listed session's hours changed (its record was moved)
                    self.breached.touch()
        self.breached.put(r, breached)
        timed = (s.record_time, r) if resolved else None
        if timed != s.timed:
            if s.timed is not None:
                del self.resolved_times[bisect_left(self.resolved_times, s.timed)]
            if timed is not None:
                insort(self.resolved_times, timed)
            s.timed = timed
        side = "open" if is_open else "resolved" if resolved else None
        if self.reference:
            if side != s.pool:
                self._pool_detach(s)
                self._pool_attach(s, side)
        elif side != s.pair:
            self._pair_detach(s)
            self._pair_attach(s, side)

    # -- `reference`: the pooled words of open and resolved sessions ----------------------------

    def _pool_attach(self, s: _Session, pool: str | None) -> None:
        s.pool = pool
        if pool is not None:
            for w in s.words:
                self._pool_add(s, w)

    def _pool_detach(self, s: _Session) -> None:
        if s.pool is not None:
            for w in s.words:
                self._pool_remove(s, w)
        s.pool = None

    def _pool_add(self, s: _Session, w: str) -> None:
        """Word `w` of `s` now counts in its pool."""
        if s.pool == "open":
            c = self.pool_open.get(w, 0)
            self.pool_open[w] = c + 1
            if not c and w in self.pool_resolved:
                self._share(w)
            return
        c = self.pool_resolved.get(w, 0)
        self.pool_resolved[w] = c + 1
        self.resolved_with[w] = self.resolved_with.get(w, 0) | s.bit
        if w in self.pool_open:
            if not c:
                self._share(w)
            elif self.listed is not None:
                self.listed |= s.bit

    def _pool_remove(self, s: _Session, w: str) -> None:
        if s.pool == "open":
            c = self.pool_open[w] - 1
            if c:
                self.pool_open[w] = c
                return
            del self.pool_open[w]
        else:
            self.listed = None  # `s` may be listed for this word only
            c = self.pool_resolved[w] - 1
            if c:
                self.pool_resolved[w] = c
                self.resolved_with[w] &= ~s.bit
                return
            del self.pool_resolved[w], self.resolved_with[w]
        if w in self.shared:
            self.shared.discard(w)
            self.shared_version += 1
            self.listed = None

    def _share(self, w: str) -> None:
        self.shared.add(w)
        self.shared_version += 1
        if self.listed is not None:
            self.listed |= self.resolved_with[w]

    # -- `project`: each open session's keywords against each resolved one's -----------------

    def _grow(self) -> None:
        self.cap *= 2
        self.resolved_vec = np.concatenate([self.resolved_vec, np.zeros_like(self.resolved_vec)])
        self.inter = {r: np.concatenate([v, np.zeros_like(v)]) for r, v in self.inter.items()}

    def _kw_array(self, w: str) -> np.ndarray | None:
        ranks = self.kw_resolved.get(w)
        if not ranks:
            return None
        a = self._kw_arrays.get(w)
        if a is None:
            a = self._kw_arrays[w] = np.asarray(ranks, dtype=np.int64)
        return a

    def _pair_changed(self, r: int) -> None:
        """Open session `r`'s keywords changed: every one of its ratios moved, test them all again."""
        self.pair_dirty.add(r)

    def _pass(self, o: int, r: int) -> None:
        """Test the pair (open `o`, resolved `r`) again after |kw(o) ∩ kw(r)| changed (one ratio moved)."""
        k = len(self.by_rank[o].kw)
        ok = bool(k) and int(self.inter[o][r]) / k >= self.params.repeat_threshold
        self._pass_put(o, r, ok)

    def _pass_put(self, o: int, r: int, ok: bool) -> None:
        passing = self.passing.setdefault(o, [])
        i = bisect_left(passing, r)
        present = i < len(passing) and passing[i] == r
        if ok and not present:
            passing.insert(i, r)
        elif present and not ok:
            del passing[i]
        else:
            return
        self.pair_version += 1

    def _pair_add(self, s: _Session, w: str) -> None:
        """Keyword `w` is new in `s.kw`."""
        if s.pair == "open":
            a = self._kw_array(w)
            if a is not None:
                self.inter[s.rank][a] += 1
            self._pair_changed(s.rank)  # |kw(s)| grew
        elif s.pair == "resolved":
            self.kw_resolved.setdefault(w, []).append(s.rank)
            self._kw_arrays.pop(w, None)
            for o in self.pair_open:
                if w in self.by_rank[o].kw:
                    self.inter[o][s.rank] += 1
                    self._pass(o, s.rank)

    def _pair_attach(self, s: _Session, side: str | None) -> None:
        s.pair = side
        if side == "open":
            v = np.zeros(self.cap, dtype=np.int32)
            for w in s.kw:
                a = self._kw_array(w)
                if a is not None:
                    v[a] += 1
            self.inter[s.rank] = v
            self.pair_open.add(s.rank)
            self._pair_changed(s.rank)
        elif side == "resolved":
            for w in s.kw:
                self.kw_resolved.setdefault(w, []).append(s.rank)
                self._kw_arrays.pop(w, None)
            self.resolved_vec[s.rank] = True
            for o in self.pair_open:
                self.inter[o][s.rank] = len(self.by_rank[o].kw & s.kw)
                self._pass(o, s.rank)

    def _pair_detach(self, s: _Session) -> None:
        if s.pair == "open":
            del self.inter[s.rank]
            self.pair_open.discard(s.rank)
            self.pair_dirty.discard(s.rank)
            if self.passing.pop(s.rank, None):
                self.pair_version += 1
        elif s.pair == "resolved":
            for w in s.kw:
                ranks = self.kw_resolved[w]
                ranks.remove(s.rank)
                if not ranks:
                    del self.kw_resolved[w]
                self._kw_arrays.pop(w, None)
            self.resolved_vec[s.rank] = False
            for o in self.pair_open:
                self._pass_put(o, s.rank, False)
        s.pair = None

    # -- the report ---------------------------------------------------------------------------

    def report(self, h: SubjectHistory, now: datetime) -> HealthReport:
        """The subject's health at `now` (the table of `stores.session.health`), from this state."""
        self.follow(h)
        cutoff = now.timestamp()
        if cutoff < self.max_time:  # a report about the past: some item is not counted
            return self._as_of(h, cutoff)._report(h, now, cutoff)
        return self._report(h, now, cutoff)

    def _as_of(self, h: SubjectHistory, cutoff: float) -> HealthState:
        """A fresh state that read only the items of `h` stamped at or before `cutoff`, in time order."""
        past = HealthState(self.params)
        past._reset(h)
        for i in _chronological(h):
            if h.times[i] <= cutoff:
                past._read(i, h)
        return past

    def _report(self, h: SubjectHistory, now: datetime, cutoff: float) -> HealthReport:
        p = self.params
        found = (
            self._unresolved(),
            self._pooled_repeat() if self.reference else self._pairwise_repeat(),
            self._urgency(),
            self._idle(cutoff),
            self._sla(),
            self._slow(),
            self._recent(cutoff),
            self._rate(),
        )
        factors = tuple(f for f in found if f is not None)
        score = min(100.0, max(0.0, p.base + sum(f.impact for f in factors)))
        return HealthReport(subject=h.subject, at=now, base=p.base, factors=factors, score=score,
                            band=band_for(score, p))

    def _cached(self, name: str, key, build) -> HealthFactor | None:
        hit = self._cache.get(name)
        if hit is not None and hit[0] == key:
            return hit[1]
        f = build()
        self._cache[name] = (key, f)
        return f

    def _unresolved(self) -> HealthFactor | None:
        def build():
            p, ranks = self.params, self.open.ranks
            if not ranks:
                return None
            listing = self.listings["open"]
            return _factor("unresolved_issues", max(p.unresolved_cap, p.unresolved_per_session * len(ranks)),
                           f"{len(ranks)} open session(s): {listing.joined(0)}", listing.current()[1], distinct=True)
        return self._cached("unresolved", self.open.version, build)

    def _pooled_repeat(self) -> HealthFactor | None:
        p = self.params
        a, b, shared = len(self.pool_open), len(self.pool_resolved), self.shared
        if not a or not b:
            return None
        ratio = len(shared) / min(a, b)
        if ratio < p.repeat_threshold or not p.repeated_issue:
            return None
        if self.listed is None:
            mask = 0
            for w in shared:
                mask |= self.resolved_with[w]
            self.listed = mask
        # what the factor says: its counts (a new word of the open sessions moves `a` at almost
        # every turn) and the sessions and words it names (which move far less often)
        named = (self.open.version, self.shared_version, self.listed)
        hit = self._cache.get("repeat")
        if hit is not None and hit[0] == (a, b, named):
            return hit[1]
        words = self._cache.get("shared words")
        if words is None or words[0] != self.shared_version:
            words = self._cache["shared words"] = (self.shared_version, ", ".join(sorted(shared)[:8]) + (
                f" and {len(shared) - 8} more" if len(shared) > 8 else ""))
        sessions = self._cache.get("repeat sessions")
        if sessions is None or sessions[0] != (self.open.version, self.listed):
            listed, open_listing = self._listed(), self.listings["open"]
            # open sessions' first turns and resolved sessions' records: distinct items
            sessions = self._cache["repeat sessions"] = (
                (self.open.version, self.listed), open_listing.joined(0), ", ".join(_pick(self.names, listed)),
                (*open_listing.current()[1], *_pick(self.rids, listed)))
        _, opened, names, ids = sessions
        f = HealthFactor(
            "repeated_issue", float(p.repeated_issue),
            f"open session(s) {opened} share {len(shared)} of min({a}, {b}) words "
            f"with resolved session(s) {names} ({ratio:.2f} >= {p.repeat_threshold:g}): {words[1]}", ids)
        self._cache["repeat"] = ((a, b, named), f)
        return f

    def _listed(self) -> list[int]:
        """Ranks of the resolved sessions holding a shared word (the mask `listed`), ascending:
        when sessions were only added to the mask (the usual change: the session resolved last),
        the previous ranks are extended instead of read again from every bit."""
        mask = self.listed
        old, ranks = self._listed_ranks
        if mask == old:
            return ranks
        added = mask & ~old
        if mask & old == old and added.bit_count() <= 16:
            new = _ranks_of(added)
            ranks = ranks + new if not ranks or new[0] > ranks[-1] else sorted(ranks + new)
        else:
            ranks = _ranks_of(mask)
        self._listed_ranks = (mask, ranks)
        return ranks

    def _pairwise_repeat(self) -> HealthFactor | None:
        p = self.params
        if self.pair_dirty:
            n = len(self.by_rank)
            for o in self.pair_dirty:
                k = len(self.by_rank[o].kw)
                got = (np.flatnonzero(self.resolved_vec[:n] & (self.inter[o][:n] / k >= p.repeat_threshold)).tolist()
                       if k else [])
                if got != self.passing.get(o, []):
                    self.passing[o] = got
                    self.pair_version += 1
            self.pair_dirty.clear()

        def build():
            by, passing = self.by_rank, self.passing
            chunks = [((by[o].first_turn_id,) if by[o].n_turns else (), _pick(self.rids, passing[o]))
                      for o in self.open.ranks if passing.get(o)]
            if not chunks:
                return None
            first = next(o for o in self.open.ranks if passing.get(o))
            n = sum(len(rids) for _, rids in chunks)
            more = f" (and {n - 1} more pair(s))" if n > 1 else ""
            # the ids pair by pair, each open session's first turn then a resolved record, deduplicated
            return _factor("repeated_issue", p.repeated_issue,
                           f"open session {by[first].name} repeats resolved session {by[passing[first][0]].name}{more}",
                           chain.from_iterable(chain(head, rids) for head, rids in chunks))
        return self._cached("pairs", (self.open.version, self.pair_version), build)

    def _urgency(self) -> HealthFactor | None:
        def build():
            p, n = self.params, len(self.urgent)
            if not n:
                return None
            return _factor("urgency", max(p.urgency_cap, p.urgency_per_turn * n),
                           f"{n} turn(s) with an urgency marker: {self.urgent_text}", self.urgent, distinct=True)
        return self._cached("urgency", len(self.urgent), build)

    def _idle(self, cutoff: float) -> HealthFactor | None:
        p = self.params
        idle_secs = p.idle_days * 86400
        by = self.by_rank
        idle = [by[r] for r in self.open.ranks if cutoff - by[r].last >= idle_secs]
        if not idle:
            return None
        return _factor("idle_open_issue", p.idle_open_issue,
                       f"open session(s) idle for {p.idle_days:g}+ days: "
                       + ", ".join(f"{s.name} ({(cutoff - s.last) / 86400:.1f} days)" for s in idle),
                       [s.last_turn_id if s.n_turns else s.rid for s in idle], distinct=True)

    def _sla(self) -> HealthFactor | None:
        def build():
            p, n = self.params, len(self.breached.ranks)
            if not n:
                return None
            listing = self.listings["breached"]
            return _factor("sla_resolution_breach", max(p.sla_breach_cap, p.sla_breach_per_session * n),
                           f"resolved later than {p.sla_resolution_hours:g} h after the first customer turn: "
                           + listing.joined(0), listing.current()[1], distinct=True)
        return self._cached("sla", self.breached.version, build)

    def _slow(self) -> HealthFactor | None:
        def build():
            p, n = self.params, len(self.answered.ranks)
            if not n:
                return None
            waits, ids = self.listings["answered"].current()
            mean = sum(waits) / n  # in session order
            if mean <= p.slow_first_response_minutes:
                return None
            missed = self.listings["missed"]
            return _factor("slow_first_response", p.slow_first_response,
                           f"mean first response {mean:.1f} min over {n} session(s) "
                           f"(> {p.slow_first_response_minutes:g} min); "
                           f"{len(self.missed.ranks)} missed the {p.sla_first_response_minutes:g}-min SLA: "
                           f"{missed.joined(0)}", ids, distinct=True)
        return self._cached("slow", (self.answered.version, self.missed.version), build)

    def _recent(self, cutoff: float) -> HealthFactor | None:
        p = self.params
        recent_secs = p.recent_days * 86400
        times = self.resolved_times
        lo = bisect_left(times, (cutoff - recent_secs - _SLACK,))
        ranks = sorted(r for t, r in times[lo:] if cutoff - t <= recent_secs)
        if not ranks:
            return None
        return self._cached("recent", tuple(ranks), lambda: _factor(
            "recent_resolution", p.recent_resolution,
            f"resolved in the last {p.recent_days:g} days: {', '.join(_pick(self.names, ranks))}",
            _pick(self.rids, ranks), distinct=True))

    def _rate(self) -> HealthFactor | None:
        def build():
            p, n_ended, n_resolved = self.params, len(self.ended.ranks), len(self.resolved.ranks)
            if n_ended < p.high_rate_min_ended:
                return None
            rate = n_resolved / n_ended
            if rate < p.high_rate_threshold:
                return None
            what = "sessions with a resolution record" if self.reference else "ended sessions"
            (rids,) = self.listings["ended"].current()
            return _factor("high_resolution_rate", p.high_resolution_rate,
                           f"{n_resolved} of {n_ended} {what} resolved ({rate:.0%})", rids, distinct=True)
        return self._cached("rate", (self.ended.version, self.resolved.version), build)


def health_report(h: SubjectHistory, now: datetime, params: HealthParams | None = None) -> HealthReport:
    """A one-off report: a fresh `HealthState` that reads the whole history (what a caller without
    a state kept in step pays, the history's length)."""
    return HealthState(params).report(h, now)

"""The session locker: deterministic session state on the simulated clock.

Three shapes cover the decision layer (seed 001):

- a consecutive counter (`incr` / `zero`): "third empty retrieval in a row"; a clean turn zeroes it,
  so it counts runs, not totals;
- a one-shot flag with a TTL (`put`): "asked for a human this hour"; its presence is the memory;
- an atomic claim (`claim`): set-if-absent with an expiry, "offered live support in the last 15
  minutes". Check and set are one operation, so two replicas can never both make the offer; the
  live claim is also the proof of offer when the customer later says "yes".

Every operation takes the simulated `now`; an entry is live while `now < expires_at`, so the same
history always reads back the same state. Implementations: `MemoryLocker` here and
`stores.decisions.redis_locker.RedisLocker`; both raise `LockerDown` when the store cannot be
reached, and `Outage` makes any locker unavailable on demand (the scenario's `fault` events).
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Mapping


INJECTED = "(fault injected)"
"""How the message of a scripted outage ends (`Outage`): an outage without it is a real one."""


class LockerDown(RuntimeError):
    """The session-state store cannot be reached: nothing that needs it may act (fail open)."""


@dataclass(frozen=True, order=True)
class Entry:
    """One live value of a session's state."""

    value: str
    """The stored value (a counter's decimal count, a flag's or claim's value)."""
    expires_at: datetime
    """Simulated time at which it stops being live."""


Snapshot = Mapping[str, Entry]
"""A session's live entries by key, read at one simulated moment."""


def to_ms(t: datetime) -> int:
    """Milliseconds since the epoch (naive times are taken as UTC)."""
    if t.tzinfo is None:
        t = t.replace(tzinfo=timezone.utc)
    return int(t.timestamp() * 1000)


def from_ms(ms: int) -> datetime:
    """The inverse of `to_ms` (UTC)."""
    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc)


def ttl_ms(ttl: timedelta) -> int:
    """A TTL in milliseconds; it must be positive."""
    ms = int(ttl.total_seconds() * 1000)
    if ms <= 0:
        raise ValueError(f"a locker TTL must be positive, got {ttl}")
    return ms


class Locker(ABC):
    """Session state keyed by session, on the simulated clock (see the module docstring)."""

    @abstractmethod
    def incr(self, session: str, key: str, *, now: datetime, ttl: timedelta) -> int:
        """Add one to a consecutive counter (an expired counter restarts at 1); returns the new count."""

    @abstractmethod
    def zero(self, session: str, key: str, *, now: datetime) -> None:
        """Reset a counter (or drop a flag): a clean turn forgives the streak."""

    @abstractmethod
    def put(self, session: str, key: str, value: str, *, now: datetime, ttl: timedelta) -> None:
        """Set a one-shot flag, live for `ttl` from `now` (overwrites and refreshes)."""

    @abstractmethod
    def claim(self, session: str, key: str, *, now: datetime, ttl: timedelta, value: str = "1") -> bool:
        """Set-if-absent with expiry, atomically: True when this call took the claim, False when a
        live claim was already on record (it is left as it was)."""

    @abstractmethod
    def snapshot(self, session: str, *, now: datetime) -> dict[str, Entry]:
        """Every live entry of the session at `now`, by key."""

    @abstractmethod
    def clear(self) -> None:
        """Forget every session (a fresh replay)."""

    def close(self) -> None:
        """Release connections; the default has none."""


def count(snapshot: Snapshot | None, key: str) -> int:
    """A counter's value in a snapshot (0 when absent)."""
    e = (snapshot or {}).get(key)
    return int(e.value) if e is not None else 0


def live(snapshot: Snapshot | None, key: str) -> bool:
    """True when a flag or claim is live in the snapshot."""
    return key in (snapshot or {})


def value(snapshot: Snapshot | None, key: str) -> str | None:
    """A flag's value in the snapshot, or None."""
    e = (snapshot or {}).get(key)
    return e.value if e is not None else None


class MemoryLocker(Locker):
    """The in-process locker: a dict per session behind one lock (so claims stay atomic across threads).

    It lives and dies with the process and is not shared between replicas; that is what the Redis
    locker is for.
    """

    def __init__(self) -> None:
        self._data: dict[str, dict[str, tuple[str, int]]] = {}
        self._lock = threading.Lock()

    def _live(self, session: str, key: str, now_ms: int) -> tuple[str, int] | None:
        entries = self._data.get(session, {})
        e = entries.get(key)
        if e is not None and e[1] <= now_ms:
            del entries[key]
            return None
        return e

    def incr(self, session, key, *, now, ttl):
        n, life = to_ms(now), ttl_ms(ttl)
        with self._lock:
            e = self._live(session, key, n)
            v = (int(e[0]) if e else 0) + 1
            self._data.setdefault(session, {})[key] = (str(v), n + life)
            return v

    def zero(self, session, key, *, now):
        with self._lock:
            self._data.get(session, {}).pop(key, None)

    def put(self, session, key, value, *, now, ttl):
        n, life = to_ms(now), ttl_ms(ttl)
        with self._lock:
            self._data.setdefault(session, {})[key] = (str(value), n + life)

    def claim(self, session, key, *, now, ttl, value="1"):
        n, life = to_ms(now), ttl_ms(ttl)
        with self._lock:
            if self._live(session, key, n) is not None:
                return False
            self._data.setdefault(session, {})[key] = (str(value), n + life)
            return True

    def snapshot(self, session, *, now):
        n = to_ms(now)
        with self._lock:
            items = self._data.get(session, {}).items()
            return {k: Entry(v, from_ms(exp)) for k, (v, exp) in sorted(items) if exp > n}

    def clear(self):
        with self._lock:
            self._data.clear()


class Outage(Locker):
    """Any locker, made unavailable on demand: while `down`, every call raises `LockerDown`.

    This is how a scenario's `fault: locker_down` reaches a policy; the wrapped store keeps what
    it held (a network partition, not a restart), and `locker_up` makes it reachable again.
    """

    def __init__(self, inner: Locker) -> None:
        self.inner = inner
        self.down = False
        """True between a `locker_down` and the next `locker_up`."""

    def _check(self) -> None:
        if self.down:
            raise LockerDown(f"the session locker is down {INJECTED}")

    def incr(self, session, key, *, now, ttl):
        self._check()
        return self.inner.incr(session, key, now=now, ttl=ttl)

    def zero(self, session, key, *, now):
        self._check()
        self.inner.zero(session, key, now=now)

    def put(self, session, key, value, *, now, ttl):
        self._check()
        self.inner.put(session, key, value, now=now, ttl=ttl)

    def claim(self, session, key, *, now, ttl, value="1"):
        self._check()
        return self.inner.claim(session, key, now=now, ttl=ttl, value=value)

    def snapshot(self, session, *, now):
        self._check()
        return self.inner.snapshot(session, now=now)

    def clear(self):
        self.down = False
        self.inner.clear()

    def close(self):
        self.inner.close()

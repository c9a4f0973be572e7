"""The session locker on Redis, so every replica of the agent sees the same state.

One Redis hash per session (`<namespace>:<session>`): field `k` holds an entry's value and field
`k@exp` its simulated expiry (epoch milliseconds). Redis expiry runs on wall time while a replay
runs on the simulated clock, so liveness is always decided against the `now` the caller passes;
every write is one Lua script (atomic on the server: the claim's check and set cannot interleave
with another client's), and the hash's real TTL only collects garbage: it is kept at the longest
simulated TTL written plus `gc_grace`, so it never fires while an entry could still be live.

An unreachable server (refused connection, timeout, a server still loading, refused
authentication) raises `stores.decisions.locker.LockerDown`, like the in-memory locker's injected
outage; connections are retried at most once with short timeouts. A circuit breaker on the
simulated clock keeps an outage cheap: after a call fails, every call fails at once (no network)
until `retry_after` of simulated time has passed, then one call tries the server again (success
closes the breaker). A server that stopped answering (SIGSTOP) therefore costs one timeout per
`retry_after` of the conversation, not one per call. Every outage is kept in `outages` (its start
on the simulated clock and what the server said) for the run's record.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from stores.decisions.locker import Entry, Locker, LockerDown, from_ms, to_ms, ttl_ms

# Lua: the live value of field k (nil when absent or expired at `now`; expired fields are dropped).
_LIVE = """
local function live(h, k, now)
  local exp = tonumber(redis.call('HGET', h, k .. '@exp'))
  if exp == nil then return nil end
  if exp <= now then redis.call('HDEL', h, k, k .. '@exp') return nil end
  return redis.call('HGET', h, k)
end
local function keep(h, gc)
  local cur = redis.call('PTTL', h)
  if cur < gc then redis.call('PEXPIRE', h, gc) end
end
"""

_INCR = _LIVE + """
local h, k = KEYS[1], ARGV[1]
local now, ttl, gc = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local v = tonumber(live(h, k, now)) or 0
v = v + 1
redis.call('HSET', h, k, string.format('%d', v), k .. '@exp', string.format('%d', now + ttl))
keep(h, gc)
return v
"""

_PUT = _LIVE + """
local h, k, value = KEYS[1], ARGV[1], ARGV[5]
local now, ttl, gc = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
redis.call('HSET', h, k, value, k .. '@exp', string.format('%d', now + ttl))
keep(h, gc)
return 1
"""

_CLAIM = _LIVE + """
local h, k, value = KEYS[1], ARGV[1], ARGV[5]
local now, ttl, gc = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
if live(h, k, now) then return 0 end
redis.call('HSET', h, k, value, k .. '@exp', string.format('%d', now + ttl))
keep(h, gc)
return 1
"""

_UNAVAILABLE = (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError)  # auth refusals included
_REFUSED = ("NOAUTH", "WRONGPASS", "NOPERM")
"""Replies that mean the server will not serve us (no password, a wrong one, no permission)."""

RETRY_AFTER = timedelta(seconds=30)
"""Simulated time an open circuit waits before one call tries the server again."""


class RedisLocker(Locker):
    """The locker on a real Redis server (see the module docstring)."""

    def __init__(
        self,
        url: str = "redis://127.0.0.1:6379/0",
        *,
        namespace: str = "supportbench",
        gc_grace: timedelta = timedelta(days=1),
        timeout_s: float = 0.5,
        client: redis.Redis | None = None,
        retry_after: timedelta = RETRY_AFTER,
    ) -> None:
        self.url = url
        self.namespace = namespace
        self.retry_after = retry_after
        """Simulated time the breaker stays open after a failure."""
        self.outages: list[tuple[datetime | None, str]] = []
        """Every outage seen: (simulated time it was first seen, what the server said)."""
        self._retry_at: int | None = None  # epoch ms on the simulated clock; None: the breaker is closed
        self._grace = ttl_ms(gc_grace)
        self._client = client or redis.Redis.from_url(
            url,
            socket_timeout=timeout_s,
            socket_connect_timeout=timeout_s,
            retry=Retry(NoBackoff(), 1),
            decode_responses=True,
        )
        self._incr = self._client.register_script(_INCR)
        self._put = self._client.register_script(_PUT)
        self._claim = self._client.register_script(_CLAIM)

    def _key(self, session: str) -> str:
        return f"{self.namespace}:{session}"

    def _call(self, what: str, fn, *args, now: datetime | None = None, **kwargs):
        if self._retry_at is not None and (now is None or to_ms(now) < self._retry_at):
            since = self.outages[-1][1] if self.outages else "unreachable"
            raise LockerDown(f"redis at {self._where()} unreachable during {what} (circuit open: {since}; "
                             f"next try after {self.retry_after} of simulated time)")
        try:
            result = fn(*args, **kwargs)
        except _UNAVAILABLE as exc:
            raise self._opened(what, now, f"{type(exc).__name__}: {exc}") from None
        except redis.exceptions.ResponseError as exc:
            if not str(exc).upper().startswith(_REFUSED):
                raise
            raise self._opened(what, now, f"refused: {exc}") from None
        self._retry_at = None  # the server answered: the breaker closes
        return result

    def _opened(self, what: str, now: datetime | None, said: str) -> LockerDown:
        """Open (or keep open) the breaker after a failed call; the error to raise."""
        message = f"redis at {self._where()} unreachable during {what}: {said}"
        if self._retry_at is None:
            self.outages.append((now, message))
        self._retry_at = to_ms(now) + ttl_ms(self.retry_after) if now is not None else 0
        return LockerDown(message)

    def _where(self) -> str:
        kw = self._client.connection_pool.connection_kwargs
        return f"{kw.get('host', '?')}:{kw.get('port', '?')}"

    def _args(self, key: str, now: datetime, ttl: timedelta, value: str = "") -> list:
        life = ttl_ms(ttl)
        return [key, to_ms(now), life, life + self._grace, value]

    def incr(self, session, key, *, now, ttl):
        return int(self._call("incr", self._incr, keys=[self._key(session)], args=self._args(key, now, ttl), now=now))

    def zero(self, session, key, *, now):
        self._call("zero", self._client.hdel, self._key(session), key, f"{key}@exp", now=now)

    def put(self, session, key, value, *, now, ttl):
        self._call("put", self._put, keys=[self._key(session)], args=self._args(key, now, ttl, str(value)), now=now)

    def claim(self, session, key, *, now, ttl, value="1"):
        return bool(self._call("claim", self._claim, keys=[self._key(session)], args=self._args(key, now, ttl, str(value)),
                               now=now))

    def snapshot(self, session, *, now):
        raw = self._call("snapshot", self._client.hgetall, self._key(session), now=now)
        n = to_ms(now)
        out: dict[str, Entry] = {}
        for field in sorted(raw):
            if field.endswith("@exp"):
                continue
            exp = raw.get(f"{field}@exp")
            if exp is not None and int(exp) > n:
                out[field] = Entry(raw[field], from_ms(int(exp)))
        return out

    def clear(self):
        def drop():
            pattern = re.sub(r"([*?\[\]\\])", r"\\\1", self.namespace) + ":*"  # the namespace literally
            keys = list(self._client.scan_iter(match=pattern, count=500))
            if keys:
                self._client.delete(*keys)

        self._call("clear", drop)

    def close(self):
        self._client.close()

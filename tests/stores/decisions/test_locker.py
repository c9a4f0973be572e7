"""The same locker suite on the in-memory locker and on a real Redis server (conftest `new_locker`)."""

from __future__ import annotations

import threading
from datetime import datetime, timedelta, timezone

import pytest
from helpers import HANG

from stores.decisions.locker import Entry, LockerDown, MemoryLocker, Outage
from stores.decisions.redis_locker import RETRY_AFTER

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc)
MIN = timedelta(minutes=1)
HOUR = timedelta(hours=1)


@pytest.fixture
def locker(new_locker):
    return new_locker()


def test_a_counter_counts_consecutive_increments(locker):
    assert [locker.incr("s1", "hostile", now=T0 + i * MIN, ttl=HOUR) for i in range(3)] == [1, 2, 3]


def test_zero_resets_the_streak_so_runs_are_counted_not_totals(locker):
    values = []
    for i, hostile in enumerate([True, True, False, True, True]):
        now = T0 + i * MIN
        if hostile:
            values.append(locker.incr("s1", "abuse", now=now, ttl=HOUR))
        else:
            locker.zero("s1", "abuse", now=now)
            values.append(0)
    assert values == [1, 2, 0, 1, 2]


def test_an_expired_counter_restarts_at_one(locker):
    locker.incr("s1", "miss", now=T0, ttl=HOUR)
    locker.incr("s1", "miss", now=T0 + MIN, ttl=HOUR)
    assert locker.incr("s1", "miss", now=T0 + MIN + HOUR, ttl=HOUR) == 1


def test_every_increment_refreshes_the_counter_expiry(locker):
    locker.incr("s1", "miss", now=T0, ttl=HOUR)
    locker.incr("s1", "miss", now=T0 + 50 * MIN, ttl=HOUR)
    assert locker.incr("s1", "miss", now=T0 + 100 * MIN, ttl=HOUR) == 3


def test_a_flag_is_live_until_its_ttl_on_the_simulated_clock(locker):
    locker.put("s1", "human_asked", "1", now=T0, ttl=HOUR)
    assert "human_asked" in locker.snapshot("s1", now=T0 + 59 * MIN)
    assert "human_asked" not in locker.snapshot("s1", now=T0 + HOUR)
    assert "human_asked" not in locker.snapshot("s1", now=T0 + timedelta(days=1))


def test_put_overwrites_and_refreshes_a_flag(locker):
    locker.put("s1", "owner", "knowledge", now=T0, ttl=HOUR)
    locker.put("s1", "owner", "recommendation", now=T0 + 30 * MIN, ttl=HOUR)
    assert locker.snapshot("s1", now=T0 + 80 * MIN)["owner"] == Entry("recommendation", T0 + 90 * MIN)


def test_a_claim_succeeds_once_per_window(locker):
    ttl = timedelta(minutes=15)
    assert locker.claim("s1", "offer", now=T0, ttl=ttl) is True
    assert locker.claim("s1", "offer", now=T0 + 5 * MIN, ttl=ttl) is False
    assert locker.claim("s1", "offer", now=T0 + 15 * MIN, ttl=ttl) is True


def test_a_failed_claim_leaves_the_live_claim_as_it_was(locker):
    ttl = timedelta(minutes=15)
    locker.claim("s1", "offer", now=T0, ttl=ttl, value="first")
    locker.claim("s1", "offer", now=T0 + 10 * MIN, ttl=ttl, value="second")
    assert locker.snapshot("s1", now=T0 + 10 * MIN)["offer"] == Entry("first", T0 + ttl)


def test_a_live_claim_is_the_proof_of_offer(locker):
    locker.claim("s1", "offer", now=T0, ttl=timedelta(minutes=15))
    assert "offer" in locker.snapshot("s1", now=T0 + 14 * MIN)
    assert "offer" not in locker.snapshot("s1", now=T0 + 16 * MIN)


def test_claims_race_and_exactly_one_replica_wins(new_locker):
    replicas = [new_locker(namespace="shared") for _ in range(8)]
    start = threading.Barrier(len(replicas))
    won: list[bool] = []

    def offer(lk):
        start.wait()
        won.append(lk.claim("s1", "offer", now=T0, ttl=timedelta(minutes=15)))

    if not hasattr(replicas[0], "url"):  # in-memory: replicas are threads sharing one process's locker
        replicas = [replicas[0]] * len(replicas)
    threads = [threading.Thread(target=offer, args=(lk,)) for lk in replicas]
    for t in threads:
        t.start()
    for t in threads:
        t.join(HANG)
    assert not [t for t in threads if t.is_alive()], f"hang: a replica's claim still waits after {HANG:.0f}s"
    assert sorted(won) == [False] * 7 + [True]


def test_sessions_do_not_share_state(locker):
    locker.incr("s1", "miss", now=T0, ttl=HOUR)
    locker.claim("s1", "offer", now=T0, ttl=HOUR)
    assert locker.snapshot("s2", now=T0) == {}
    assert locker.claim("s2", "offer", now=T0, ttl=HOUR) is True


def test_a_snapshot_lists_every_live_entry_with_its_simulated_expiry(locker):
    locker.incr("s1", "miss", now=T0, ttl=HOUR)
    locker.incr("s1", "miss", now=T0 + MIN, ttl=HOUR)
    locker.put("s1", "human_asked", "1", now=T0, ttl=MIN * 10)
    locker.claim("s1", "offer", now=T0, ttl=MIN * 15)
    assert locker.snapshot("s1", now=T0 + 2 * MIN) == {
        "human_asked": Entry("1", T0 + 10 * MIN),
        "miss": Entry("2", T0 + 61 * MIN),
        "offer": Entry("1", T0 + 15 * MIN),
    }


def test_the_same_history_reads_back_the_same_state(new_locker):
    def story(lk):
        lk.incr("s1", "a", now=T0, ttl=HOUR)
        lk.claim("s1", "b", now=T0 + MIN, ttl=MIN * 5)
        lk.zero("s1", "a", now=T0 + 2 * MIN)
        lk.incr("s1", "a", now=T0 + 3 * MIN, ttl=HOUR)
        return lk.snapshot("s1", now=T0 + 4 * MIN)

    assert story(new_locker(namespace="one")) == story(new_locker(namespace="two"))


def test_clear_forgets_every_session(locker):
    locker.incr("s1", "a", now=T0, ttl=HOUR)
    locker.put("s2", "b", "1", now=T0, ttl=HOUR)
    locker.clear()
    assert locker.snapshot("s1", now=T0) == {} and locker.snapshot("s2", now=T0) == {}


def test_a_ttl_must_be_positive(locker):
    with pytest.raises(ValueError, match="positive"):
        locker.claim("s1", "offer", now=T0, ttl=timedelta(0))


def test_an_outage_makes_every_operation_raise_locker_down(locker):
    out = Outage(locker)
    out.incr("s1", "a", now=T0, ttl=HOUR)
    out.down = True
    for op in (lambda: out.incr("s1", "a", now=T0, ttl=HOUR), lambda: out.zero("s1", "a", now=T0),
               lambda: out.put("s1", "f", "1", now=T0, ttl=HOUR), lambda: out.claim("s1", "c", now=T0, ttl=HOUR),
               lambda: out.snapshot("s1", now=T0)):
        with pytest.raises(LockerDown):
            op()
    out.down = False
    assert out.snapshot("s1", now=T0) == {"a": Entry("1", T0 + HOUR)}


def test_a_stopped_redis_server_raises_locker_down_quickly(redis_server):
    from stores.decisions.redis_locker import RedisLocker

    lk = RedisLocker(redis_server.url, namespace="t")
    lk.incr("s1", "a", now=T0, ttl=HOUR)
    sent = []  # commands that reached the client once the server is gone
    real = lk._client.execute_command
    lk._client.execute_command = lambda *a, **k: (sent.append(a[0]), real(*a, **k))[1]
    redis_server.stop()
    for op in (lambda: lk.incr("s1", "a", now=T0, ttl=HOUR), lambda: lk.claim("s1", "c", now=T0, ttl=HOUR),
               lambda: lk.snapshot("s1", now=T0), lambda: lk.zero("s1", "a", now=T0)):
        with pytest.raises(LockerDown, match="unreachable"):
            op()
    assert len(sent) == 1, sent  # the first call finds the server gone; the open breaker refuses the rest at once
    redis_server.start()
    with pytest.raises(LockerDown, match="circuit open"):  # the breaker waits on the simulated clock
        lk.snapshot("s1", now=T0 + RETRY_AFTER / 2)
    later = T0 + RETRY_AFTER
    assert lk.snapshot("s1", now=later) == {}  # nothing persisted across the restart
    assert lk.incr("s1", "a", now=later, ttl=HOUR) == 1
    assert len(lk.outages) == 1 and lk.outages[0][0] == T0 and "Connection refused" in lk.outages[0][1]


def test_a_server_that_stopped_answering_costs_one_timeout_per_retry_window(redis_server):
    import os
    import signal

    from stores.decisions.redis_locker import RedisLocker

    lk = RedisLocker(redis_server.url, namespace="t", timeout_s=0.5)
    lk.incr("s1", "a", now=T0, ttl=HOUR)
    sent = []  # every command that reached the client while the server hangs (each one waits out its timeout)
    real = lk._client.execute_command
    lk._client.execute_command = lambda *a, **k: (sent.append(a[0]), real(*a, **k))[1]
    os.kill(redis_server.proc.pid, signal.SIGSTOP)
    try:
        for second in range(100):  # 100 turns a second apart while the server hangs
            now = T0 + timedelta(seconds=second)
            for op in (lambda: lk.snapshot("s1", now=now), lambda: lk.incr("s1", "a", now=now, ttl=HOUR)):
                with pytest.raises(LockerDown):
                    op()
    finally:
        os.kill(redis_server.proc.pid, signal.SIGCONT)
    # 200 calls: one timed try per 30 s of simulated time (4), the rest refused at once; without the
    # breaker every call waited out its timeouts (about 1 s each: 200 s here). Counted, not timed:
    # a busy machine slows the tries, never their number.
    assert len(sent) == 4, sent
    assert len(lk.outages) == 1


def test_redis_keeps_a_real_ttl_for_garbage_collection_only(redis_server):
    import redis as redis_client

    from stores.decisions.redis_locker import RedisLocker

    lk = RedisLocker(redis_server.url, namespace="gc", gc_grace=timedelta(hours=1))
    lk.claim("s1", "offer", now=T0, ttl=timedelta(minutes=15))
    raw = redis_client.Redis.from_url(redis_server.url)
    ttl_ms = raw.pttl("gc:s1")
    assert timedelta(minutes=74) < timedelta(milliseconds=ttl_ms) <= timedelta(minutes=75)
    # the simulated expiry decides liveness, however little wall time has passed
    assert "offer" not in lk.snapshot("s1", now=T0 + timedelta(minutes=15))
    raw.close()


def test_under_ci_a_missing_redis_server_fails_the_redis_tests(monkeypatch, tmp_path):
    from redis_server import redis_binary

    monkeypatch.setenv("PATH", str(tmp_path))  # no redis-server on this PATH
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI requires the Redis tests"):
        redis_binary()
    monkeypatch.delenv("CI")
    with pytest.raises(pytest.skip.Exception):
        redis_binary()

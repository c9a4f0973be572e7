"""The health timeline is stored compactly: bounded per point whatever the history's length,
whole wherever it fits, and exact on score, band, base, signals and impacts."""

import json
from datetime import datetime, timezone

import random
import re

import pytest

from harness.replay import timeline
from harness.replay.probes import replay
from harness.run.tables import TableBuffer
from helpers import probe, resolve, scenario, turn
from stores.protocol import HealthFactor, HealthReport
from stores.session.session_aware import SessionAware

AT = datetime(2026, 3, 1, tzinfo=timezone.utc)


def report(factors):
    return HealthReport("c1", AT, 100.0, tuple(factors), 42.0, "watch")


def test_a_report_within_the_limits_is_stored_as_a_probe_report_is():
    f = HealthFactor("repeated_issue", -20.0, "open session(s) s9 share 3 of min(4, 5) words with s1: vpn", ("s9#0", "s1"))
    p = timeline.point("c1", 7, report([f]))
    assert p.factors == timeline.factors_json((f,))
    assert (p.score, p.band, p.base, p.at, p.event_index) == (42.0, "watch", 100.0, AT, 7)


def test_a_long_factor_keeps_its_first_and_last_ids_and_says_how_many_were_left_out():
    ids = tuple(f"s{i}" for i in range(1000))
    detail = "resolved session(s) " + ", ".join(ids) + ": vpn, tunnel"
    p = timeline.point("c1", 7, report([HealthFactor("repeated_issue", -20.0, detail, ids)]))
    (row,) = json.loads(p.factors)
    assert row["signal"] == "repeated_issue" and row["impact"] == -20.0
    assert row["source_ids"] == [f"s{i}" for i in range(50)] + [f"s{i}" for i in range(950, 1000)]
    assert row["source_ids_left_out"] == 900
    assert len(row["detail"]) <= timeline.MAX_DETAIL
    assert row["detail"].startswith("resolved session(s) s0, s1, ") and row["detail"].endswith("s999: vpn, tunnel")
    left = int(row["detail"].split(" … [")[1].split(" characters")[0].replace(",", ""))
    head, tail = row["detail"].split(" … [")[0], row["detail"].split("] … ")[1]
    assert len(head) + left + len(tail) == len(detail)  # what was kept and what was counted add up


@pytest.mark.parametrize("seed", range(200))
def test_a_shortened_detail_never_exceeds_its_limit_and_keeps_both_ends(seed):
    rng = random.Random(seed)
    alphabet = rng.choice(["ab, ", "abc def", "x", "s1, s22, s333, ", "é … [], "])
    text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 4000)))
    limit = rng.randint(80, 1500)
    out = timeline.shorten_detail(text, limit)
    assert len(out) <= limit or out == text and len(text) <= limit
    if len(text) <= limit:
        assert out == text
    else:
        m = re.fullmatch(r"(.*) … \[([\d,]+) characters left out of this timeline point\] … (.*)", out, re.S)
        head, left, tail = m[1], int(m[2].replace(",", "")), m[3]
        assert text.startswith(head) and text.endswith(tail) and len(head) + left + len(tail) == len(text)


def many_sessions(n: int):
    """`n` resolved sessions about the same product, then one open repeat: the factors name them all."""
    events, m = [], 0
    for s in range(n):
        events += [turn(f"t{s}", "my vpn tunnel drops every hour again", m, session=f"s{s}"),
                   resolve(f"s{s}", "vpn tunnel fixed by renewing the certificate", m + 5)]
        m += 60
    events += [turn("open", "the vpn tunnel drops every hour, urgent", m, session="live"),
               probe("p", "vpn tunnel drops", m + 1, session="live", health="at_risk")]
    return scenario(events)


def stored(n: int):
    sc = many_sessions(n)
    r = replay(sc, SessionAware())
    buf = TableBuffer()
    for p in r.timeline:
        buf.add_point("session_aware", sc.id, p)
    for o in r.outcomes:
        buf.add_outcome("session_aware", "session_aware", o)
    return buf.tables()["health"].to_pylist()


@pytest.mark.slow  # seconds of CPU: a long history replayed twice
def test_a_timeline_point_is_bounded_whatever_the_history_while_the_probe_report_is_whole():
    small, large = stored(150), stored(600)
    point = lambda rows: max(len(r["factors"]) for r in rows if r["probe_id"] == "")  # noqa: E731
    probe_report = lambda rows: next(r for r in rows if r["probe_id"] == "p")  # noqa: E731
    # four times the sessions: the whole report at the probe grows about three times, a timeline point not
    assert len(probe_report(large)["factors"]) > 2.5 * len(probe_report(small)["factors"])
    assert point(large) <= point(small) * 1.1
    for r in large:  # every factor within the limits, whatever it named
        for f in json.loads(r["factors"]) if r["probe_id"] == "" else ():
            assert len(f["detail"]) <= timeline.MAX_DETAIL and len(f["source_ids"]) <= timeline.MAX_IDS
    last = json.loads(next(r for r in reversed(large) if r["probe_id"] == "")["factors"])
    whole = json.loads(probe_report(large)["factors"])
    assert [(f["signal"], f["impact"]) for f in last] == [(f["signal"], f["impact"]) for f in whole]
    assert any(f.get("source_ids_left_out") for f in last) and any("left out of this timeline point" in f["detail"] for f in last)
    assert any(timeline.shortened(f) for f in last) and not any(timeline.shortened(f) for f in whole)


def test_a_timeline_handed_over_as_it_is_made_is_the_timeline_kept():
    sc = many_sessions(30)
    kept = replay(sc, SessionAware()).timeline
    handed: list = []
    streamed = replay(sc, SessionAware(), timeline_to=handed.append)
    assert streamed.timeline == [] and handed == kept and len(kept) == len(sc.events) - 1  # every event but the probe

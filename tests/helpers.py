"""Small builders for tests: scenarios and events without YAML."""

from __future__ import annotations

import signal
import subprocess
import time
from datetime import datetime, timedelta, timezone

from harness.format.model import Expect, Probe, Scenario, Subject
from stores.protocol import Forget, Resolution, Turn

HANG = 300.0
"""Seconds after which a test's wait gives up (the browser's, AppTest's script runs, a server's
start). Every wait waits for its condition, however slow the machine; this bound only turns a hang
(the condition will never come) into a failure that says so, and no real wait under load comes
near it, so no test passes or fails on time."""


def eventually(check, what: str, timeout: float = HANG, poll: float = 0.3):
    """Call `check()` until it returns something truthy, and return that; after `timeout` seconds
    of falsy answers, fail saying the condition never came (a hang, not a slow machine)."""
    deadline = time.monotonic() + timeout
    while True:
        got = check()
        if got:
            return got
        if time.monotonic() > deadline:
            raise AssertionError(f"hang: {what} still not so after {timeout:.0f}s")
        time.sleep(poll)


def finished(proc: subprocess.Popen, what: str, timeout: float = HANG) -> tuple[str, str]:
    """`proc.communicate()`: its output once it has ended, however long that takes on a busy
    machine; after `timeout` seconds it is killed and the test fails saying `what` hung."""
    try:
        return proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        # a `supportbench` command prints every thread's stack on SIGUSR1: say where it hung
        stacks = ""
        try:
            proc.send_signal(signal.SIGUSR1)
            _, err = proc.communicate(timeout=5)
            stacks = err or ""
        except (subprocess.TimeoutExpired, OSError, ValueError):
            pass
        proc.kill()
        _, err = proc.communicate()
        stacks = (stacks or err or "")[-6000:]
        raise AssertionError(f"hang: {what} still running after {timeout:.0f}s; its stderr ends:\n{stacks}") from None

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc)


def at(minutes: float) -> datetime:
    return T0 + timedelta(minutes=minutes)


def turn(id, text, minutes, subject="c1", session="s1", role="customer", kind="message") -> Turn:
    return Turn(id=id, subject=subject, session=session, role=role, kind=kind, text=text, at=at(minutes))


def resolve(session, summary, minutes, subject="c1", status="resolved") -> Resolution:
    return Resolution(subject=subject, session=session, status=status, summary=summary, at=at(minutes))


def forget(subject, minutes) -> Forget:
    return Forget(subject=subject, at=at(minutes))


def probe(id, task, minutes, subject="c1", session="s1", budget=400, on=None, handoff=False, **expect) -> Probe:
    return Probe(id=id, subject=subject, session=session, task=task, budget=budget, at=at(minutes),
                 expect=Expect(**expect), on=on, handoff=handoff)


def scenario(events, id="sc", subjects=("c1", "c2"), tags=("test",)) -> Scenario:
    return Scenario(id=id, version=1, title=f"test scenario {id}", tags=tuple(tags), start=T0,
                    subjects={s: Subject(s, s.upper()) for s in subjects}, events=tuple(events),
                    path=f"{id}.yaml", content_hash="0" * 64, suite="test")


def outage_story(id="outage") -> Scenario:
    """A closed March ticket with a fix, then a live outage using the same words."""
    return scenario([
        turn("m-1", "Our Snowflake connector keeps timing out on the nightly load.", 0, session="mar"),
        turn("m-2", "Raise connect_timeout from 30s to 120s in the connector settings.", 5, session="mar", role="agent"),
        resolve("mar", "Connection timeout fixed by raising connect_timeout to 120s.", 60),
        turn("o-1", "URGENT: the Snowflake connector is timing out again, production is down.", 60 * 24 * 180, session="sep"),
        turn("x-1", "Hello, my invoice looks wrong.", 60 * 24 * 180 + 1, subject="c2", session="other"),
        probe("p1", "still timing out", 60 * 24 * 180 + 2, session="sep", include=("o-1",),
              above=(("o-1", "m-1"),), repeat_of="mar", evidence=("mar#resolution",)),
        turn("o-2", "still timing out", 60 * 24 * 180 + 3, session="sep"),
    ], id=id)


def bench_module(name: str):
    """`bench/<name>.py` imported as a module (the benches are scripts, not a package)."""
    import importlib.util
    from pathlib import Path

    spec = importlib.util.spec_from_file_location(name, Path(__file__).resolve().parent.parent / "bench" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def kinds_far_apart(rng, dims: int = 8) -> tuple[list[str], list[str], list]:
    """A synthetic floor bank's phrases, labels and vectors: twelve per label of the `sensitive` head, each label's
    around its own axis (crisis and harm on one axis, opposite signs), so a kind held out sits far from the rest."""
    import numpy as np

    centres = {"none": (0, 1.0), "near_miss": (1, 1.0), "crisis": (2, 1.0), "harm": (2, -1.0)}
    texts, targets, rows = [], [], []
    for label, (axis, sign) in centres.items():
        for i in range(12):
            v = np.zeros(dims)
            v[axis] = sign
            rows.append(v + rng.normal(0, 0.05, dims))
            texts.append(f"{label} {i}")
            targets.append(label)
    return texts, targets, rows

"""Play a scripted chat through a decision policy, one minute per step unless told otherwise."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from stores.protocol import Turn

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc)


def c(text, signals=None, after=timedelta(minutes=1), session="s1"):
    """A customer turn."""
    return ("customer", "message", text, signals, after, session)


def a(text, signals=None, after=timedelta(minutes=1), session="s1"):
    """An agent message."""
    return ("agent", "message", text, signals, after, session)


def act(text, after=timedelta(minutes=1), session="s1"):
    """An agent action (a step tried)."""
    return ("agent", "action", text, None, after, session)


def fault(kind):
    """A locker fault (`locker_down` / `locker_up`), or any callable run at that point."""
    return ("fault", kind)


def play(policy, script, start=T0):
    """Every step through `policy`; returns the decisions of the customer turns in order."""
    now, out, n = start, [], 0
    for step in script:
        if step[0] == "fault":
            step[1]() if callable(step[1]) else policy.fault(step[1])
            continue
        role, kind, text, signals, after, session = step
        now, n = now + after, n + 1
        turn = Turn(f"{session}#{n}", "c1", session, role, kind, text, now)
        if role == "customer":
            out.append(policy.decide(turn, signals))
        else:
            policy.observe(turn, signals)
    return out


def plans(decisions):
    return [d.plan for d in decisions]


def rules(decisions):
    return [d.rule for d in decisions]

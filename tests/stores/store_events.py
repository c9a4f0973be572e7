"""Build small histories for store tests straight from protocol events."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from stores.protocol import ContextRequest, Forget, Resolution, Signal, Turn

T0 = datetime(2024, 3, 1, 9, 0, tzinfo=timezone.utc)


def at(minutes: float = 0, *, days: float = 0, hours: float = 0) -> datetime:
    """A simulated time relative to T0."""
    return T0 + timedelta(days=days, hours=hours, minutes=minutes)


def turn(id, session, role, text, when, subject="acme", kind="message") -> Turn:
    """A turn with positional essentials."""
    return Turn(id=id, subject=subject, session=session, role=role, kind=kind, text=text, at=when)


def resolve(session, when, summary="", status="resolved", subject="acme") -> Resolution:
    """A resolution record."""
    return Resolution(subject=subject, session=session, status=status, summary=summary, at=when)


def signal(name, session, when, ref=None, subject="acme") -> Signal:
    """A system signal (e.g. an RMA closed)."""
    return Signal(subject=subject, session=session, name=name, ref=ref, at=when)


def request(session, task, when, budget=2000, subject="acme") -> ContextRequest:
    """A context request."""
    return ContextRequest(subject=subject, session=session, task=task, budget_tokens=budget, now=when)


def two_customer_history() -> list:
    """Two customers, a resolved ticket, a failed fix, urgency, chatter and a repeat."""
    ev = []
    for subject, name in (("acme", "Dana at Acme"), ("globex", "Lee at Globex")):
        p = subject[0]
        ev += [
            turn(f"{p}1#1", f"{p}1", "customer", f"Hi, I'm {name}; we are on the enterprise plan and I prefer email.", at(0), subject),
            turn(f"{p}1#2", f"{p}1", "customer", "Invoice export to CSV fails with error 502 since Monday.", at(1), subject),
            turn(f"{p}1#3", f"{p}1", "agent", "Cleared the export cache and restarted the job.", at(12), subject, "action"),
            turn(f"{p}1#4", f"{p}1", "customer", "ok thanks", at(13), subject),
            resolve(f"{p}1", at(hours=3), "Export cache was stale; clearing it fixed the CSV export.", subject=subject),
            turn(f"{p}2#1", f"{p}2", "customer", "Single sign-on login loops back to the start page.", at(days=3), subject),
            turn(f"{p}2#2", f"{p}2", "agent", "Reset the SAML certificate.", at(days=3, minutes=4), subject, "action"),
            resolve(f"{p}2", at(days=3, hours=30), "", status="unresolved", subject=subject),
            turn(f"{p}3#1", f"{p}3", "customer", "URGENT: invoice CSV export fails again with error 502, blocked on month end.", at(days=10), subject),
            turn(f"{p}3#2", f"{p}3", "agent", "Looking into the export now.", at(days=10, minutes=2), subject),
        ]
    ev.sort(key=lambda e: e.at)
    return ev


def forget(subject, when) -> Forget:
    """A deletion request."""
    return Forget(subject=subject, at=when)


RANDOM_WORDS = ("invoice csv export 502 timeout login sso saml password reset urgent outage down blocked "
                "asap p1 p10 sla slack escalated download refund card sync crash ios android webhook api "
                "fixed again still please thanks the a it we broken critical deadline markdown").split()


def random_history(rng, n_events: int, subject: str = "acme", sessions: int = 6, in_order: bool = True) -> list:
    """`n_events` random turns and resolution records of one customer, for property tests.

    Sessions are revisited, resolved, reopened (`open`), closed `unresolved` and resolved again
    with a new summary (a record replaced in place); texts mix issue words, urgency markers and
    their look-alikes; some turns are short chatter. With `in_order`, times never go back;
    without, about one event in ten is stamped earlier than the one before."""
    events: list = []
    t = T0
    for k in range(n_events):
        t += timedelta(minutes=rng.choice((0, 1, 3, 20, 90, 60 * 30, 60 * 24 * 8)))
        when = t if in_order or rng.random() > 0.1 else t - timedelta(hours=rng.randint(1, 400))
        s = f"s{rng.randrange(sessions)}"
        if rng.random() < 0.15:
            status = rng.choice(("resolved", "resolved", "unresolved", "open"))
            summary = " ".join(rng.sample(RANDOM_WORDS, rng.randint(0, 4)))
            events.append(Resolution(subject=subject, session=s, status=status, summary=summary, at=when))
        else:
            role = rng.choice(("customer", "customer", "agent"))
            words = rng.sample(RANDOM_WORDS, rng.randint(1, 7))
            events.append(Turn(id=f"t{k}", subject=subject, session=s, role=role,
                               kind="action" if role == "agent" and rng.random() < 0.3 else "message",
                               text=" ".join(words), at=when))
    return events

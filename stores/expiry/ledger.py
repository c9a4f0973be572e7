"""One customer's memory items with their classes, and which of them are live at a moment.

The ledger keeps, in observation order, every turn and resolution record of a customer (each
with the class `classify` gave it), the latest resolution of each session, and the signals
the customer's systems emitted. `verdicts(now, session, params)` applies the expiry rules and
returns, for every item that is NOT live for a request in `session` at `now`, the reason a
person can audit. The reasons always start with one of `EXPIRY_PREFIXES`:

- `expired: sentiment older than 7 days, said 2026-03-04`
- `expired: sentiment scoped to its issue zd-4420, said 2026-03-04`
- `expired: episodic, closed by signal rma_closed RMA 5531 on 2026-03-09`
- `expired: episodic, closed by resolution of zd-4420 on 2026-03-09`
- `expired: preference older than 365 days, said 2025-01-10` (likewise profile, incident, unclassified)
- `superseded by pref-email on 2026-06-02 (contact channel: email)`
- `not stored: system-owned fact (plan tier); pointer kept`
- `not stored: sentiment (never stored)`

Everything is a function of the observed events and the request: no wall clock, no state that
depends on when `verdicts` was last called.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Callable

from stores.expiry.classes import Classification, topic_name
from stores.expiry.classifier import RESOLUTION, SYSTEM_OWNED, classify
from stores.expiry.params import ExpiryParams
from stores.protocol import Resolution, Signal, Turn

EXPIRY_PREFIXES = ("expired: ", "superseded by ", "not stored: ")
"""Every receipt reason the stage writes starts with one of these (and names the rule after it)."""

SYSTEMS = {
    "plan_tier": "the billing system",
    "order_status": "the order system",
    "balance": "the billing ledger",
    "open_tickets": "the ticketing system",
}
"""Which system owns each system-owned topic (named by the pointer line)."""

_DAY = 86400.0


def is_expiry_reason(reason: str | None) -> bool:
    """True when a receipt reason was written by an expiry rule (it names the rule)."""
    return bool(reason) and reason.startswith(EXPIRY_PREFIXES) and len(reason) > max(map(len, EXPIRY_PREFIXES))


REASON_CLASSES: tuple[tuple[str, str], ...] = (
    ("superseded by ", "preference"),
    ("expired: preference ", "preference"),
    ("expired: profile fact ", "profile"),
    ("expired: system-owned fact ", "system_owned"),
    ("not stored: system-owned fact", "system_owned"),
    ("expired: episodic", "episodic"),
    ("expired: sentiment ", "sentiment"),
    ("not stored: sentiment", "sentiment"),
    ("expired: incident record ", "incident"),
    ("expired: unclassified ", "unclassified"),
)
"""Which class's rule wrote a receipt reason, by the reason's opening words (`verdicts` writes them)."""


def reason_class(reason: str | None) -> str | None:
    """The memory class whose expiry rule wrote `reason` (`unclassified`: the catch-all for items
    the classifier placed nowhere), or None for a reason no class rule writes."""
    if not reason:
        return None
    return next((c for prefix, c in REASON_CLASSES if reason.startswith(prefix)), None)


def _day(t: datetime) -> str:
    return t.strftime("%Y-%m-%d")


@dataclass
class Item:
    """A memory item as the stage knows it."""

    id: str
    """Turn id or `<session>#resolution`."""
    session: str
    """The session it belongs to."""
    role: str
    """`customer`, `agent` or `resolution`."""
    kind: str
    """`message` or `action` (turns)."""
    text: str
    """Its own words (a resolution: the latest summary)."""
    at: datetime
    """When it was said (a resolution: its latest record)."""
    cls: Classification
    """What the classifier said."""
    status: str = ""
    """A resolution's latest status."""
    day: str = ""
    """`at` as YYYY-MM-DD (for reasons; computed once)."""

    def __post_init__(self) -> None:
        self.day = _day(self.at)


@dataclass(frozen=True)
class SignalSeen:
    """A system event the customer's systems emitted (`signal` in the scenario format)."""

    name: str
    """What happened, e.g. `rma_closed`."""
    ref: str
    """What it closes (matched case-insensitively against item texts); may be empty."""
    session: str
    """The session it was emitted in."""
    at: datetime
    """When."""


def signal_fields(event: Signal) -> SignalSeen:
    """A `Signal` event's fields (a missing `ref` reads as '')."""
    return SignalSeen(event.name, event.ref or "", event.session, event.at)


@dataclass
class SubjectLedger:
    """One customer: items, resolutions, signals, and the events in order (for replaying the live ones)."""

    subject: str
    items: dict[str, Item] = field(default_factory=dict)
    """Every item, in order of first observation."""
    resolved_at: dict[str, tuple[str, datetime]] = field(default_factory=dict)
    """Per session: the latest resolution's (status, time)."""
    signals: list[SignalSeen] = field(default_factory=list)
    events: list[Turn | Resolution | Signal] = field(default_factory=list)
    """Turns, resolutions and signals as observed (duplicates left out), for replay into a strategy."""
    classify: Callable[..., Classification] = field(default=classify, repr=False, compare=False)
    """The memory classifier (`classify(text, role, kind)`): the rules', or a front end's."""

    def add(self, event: Turn | Resolution | Signal) -> bool:
        """Record an event; False when it changes nothing (a second delivery)."""
        if isinstance(event, Turn):
            if event.id in self.items:
                return False
            self.items[event.id] = Item(event.id, event.session, event.role, event.kind, event.text, event.at,
                                        self.classify(event.text, event.role, event.kind))
        elif isinstance(event, Resolution):
            old = self.items.get(event.id)
            if old is not None and (old.status, old.text, old.at) == (event.status, event.summary, event.at):
                return False
            self.items[event.id] = Item(event.id, event.session, RESOLUTION, "message", event.summary, event.at,
                                        self.classify(event.summary, RESOLUTION), event.status)
            self.resolved_at[event.session] = (event.status, event.at)
            if old is not None:  # keep first-observation order: re-insert at the old place
                self.items = {k: (self.items[event.id] if k == event.id else v) for k, v in self.items.items()}
        elif isinstance(event, Signal):
            sig = signal_fields(event)
            if sig in self.signals:
                return False
            self.signals.append(sig)
        else:
            raise TypeError(f"the expiry ledger keeps turns, resolutions and signals, not {type(event).__name__}")
        self.events.append(event)
        return True

    # -- the rules -------------------------------------------------------------------------

    def supersessions(self, params: ExpiryParams) -> dict[str, tuple[Item, str, str]]:
        """Preference id -> (the newer preference that contradicts it, topic, new value)."""
        if not params.supersede:
            return {}
        prefs = sorted((i for i in self.items.values() if i.cls.cls == "preference"),
                       key=lambda i: i.at)  # stable: ties keep observation order
        out: dict[str, tuple[Item, str, str]] = {}
        for k, old in enumerate(prefs):
            values = {t: v for t, v in old.cls.topics if v}
            for new in prefs[k + 1:]:
                hit = next(((t, v) for t, v in new.cls.topics if v and t in values and values[t] != v), None)
                if hit is not None:
                    out[old.id] = (new, hit[0], hit[1])
                    break
        return out

    def _closure(self, item: Item, params: ExpiryParams) -> str | None:
        """Why an episodic item is closed (the earliest closing event so far), or None."""
        found: list[tuple[datetime, str]] = []
        if params.episodic_on_signal:
            text = item.text.lower()
            for s in self.signals:
                if s.ref and s.at >= item.at and s.ref.lower() in text:
                    found.append((s.at, f"expired: episodic, closed by signal {s.name} {s.ref} on {_day(s.at)}"))
                    break
        if params.episodic_on_resolution and item.role != RESOLUTION:
            status, at = self.resolved_at.get(item.session, ("", item.at))
            if status == "resolved" and at >= item.at:
                found.append((at, f"expired: episodic, closed by resolution of {item.session} on {_day(at)}"))
        return min(found)[1] if found else None

    def verdicts(self, now: datetime, session: str, params: ExpiryParams) -> dict[str, str]:
        """Item id -> why it is not live for a request in `session` at `now` (live items are absent)."""
        out: dict[str, str] = {}
        sup = self.supersessions(params)
        ttl = {"preference": params.preference_days, "profile": params.profile_days,
               "incident": params.incident_days, "unclassified": params.shortest_days}
        noun = {"preference": "preference", "profile": "profile fact", "incident": "incident record",
                "unclassified": "unclassified"}
        now_ts = now.timestamp()
        for item in self.items.values():
            c = item.cls.cls
            live_session = params.live_session and item.session == session
            age_days = (now_ts - item.at.timestamp()) / _DAY
            said = item.day
            if c == "preference" and item.id in sup:
                new, topic, value = sup[item.id]
                out[item.id] = f"superseded by {new.id} on {new.day} ({topic_name(topic)}: {value})"
            elif c == "episodic":
                why = self._closure(item, params)
                if why:
                    out[item.id] = why
            elif live_session:
                continue
            elif c == "system_owned" and params.system_owned == "keep":
                if age_days > params.profile_days:
                    out[item.id] = f"expired: system-owned fact older than {params.profile_days:g} days, said {said}"
            elif c == "system_owned":
                topic = topic_name(item.cls.topics[0][0]) if item.cls.topics else "a value another system owns"
                kept = "pointer kept" if params.system_owned == "pointer" else "no pointer"
                out[item.id] = f"not stored: system-owned fact ({topic}); {kept}"
            elif c == "sentiment":
                if params.sentiment == "never":
                    out[item.id] = "not stored: sentiment (never stored)"
                elif age_days > params.sentiment_days:
                    out[item.id] = f"expired: sentiment older than {params.sentiment_days:g} days, said {said}"
                elif params.sentiment_scope == "session":
                    out[item.id] = f"expired: sentiment scoped to its issue {item.session}, said {said}"
            elif age_days > ttl[c]:
                out[item.id] = f"expired: {noun[c]} older than {ttl[c]:g} days, said {said}"
        return out

    def pointers(self, removed: dict[str, str], params: ExpiryParams) -> list[str]:
        """One line per system-owned topic among the removed items: which system owns the value."""
        if params.system_owned != "pointer":
            return []
        last: dict[str, datetime] = {}
        for item in self.items.values():
            if item.cls.cls == "system_owned" and item.id in removed and item.cls.topics:
                t = item.cls.topics[0][0]
                last[t] = max(last.get(t, item.at), item.at)
        return [
            f"Not kept in memory: {topic_name(t)} came up in an earlier conversation (last on {_day(last[t])}); "
            f"check {SYSTEMS[t]} for the current value."
            for t, _ in SYSTEM_OWNED if t in last
        ]

"""The memory classes of the expiry stage, and what the classifier says about one item.

Seed 004 sorts what a support agent learns about a customer into classes that each die their
own way (stable preference, system-owned fact, episodic state, sentiment, unclassified). The
scenario format's gold vocabulary for turns (`label:`) also names `profile`: stable facts about
who the customer is (role, company, compliance constraints, setup). The stage keeps both stable
kinds for a year by default. One class is added for what the support record itself holds, which
the seed's classes (all about the customer) do not cover: `incident`, the problem as reported,
the steps tried (by the agent, or as the customer tells them) and how they went, and the
sessions' resolution records, i.e. the evidence that a fix worked or failed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

MemoryClass = Literal["preference", "profile", "system_owned", "episodic", "sentiment", "incident", "unclassified"]
"""A memory item's class."""

CLASSES: tuple[MemoryClass, ...] = (
    "preference", "profile", "system_owned", "episodic", "sentiment", "incident", "unclassified",
)
"""Every class, in the order tables show them."""

GOLD_LABELS: tuple[str, ...] = ("profile", "preference", "episodic", "sentiment", "system_owned")
"""The turn `label:` values of the scenario format (the classifier's gold)."""

DESCRIPTIONS: dict[str, str] = {
    "preference": "stable preference (contact channel, language, call times, formats, recipients): lives long, "
                  "superseded by a newer contradicting one on the same topic",
    "profile": "stable fact about who the customer is (role, company, compliance, setup): lives long",
    "system_owned": "a value another system owns (plan tier, order status, balance, open tickets): never stored "
                    "across sessions, at most a pointer to that system",
    "episodic": "state true until something happens (waiting on a replacement, a promised callback, an escalation): "
                "expires on its session's resolution or on a signal naming its reference",
    "sentiment": "how the customer felt (or the agent's apology for it): lives days, scoped to its issue, or is "
                 "never stored",
    "incident": "the support record: the customer's problem reports and accounts of what they tried, the agent's "
                "steps and answers, the resolution records",
    "unclassified": "fits no class: the shortest lifespan",
}
"""One line per class, for docs and the app."""

TOPIC_NAMES: dict[str, str] = {
    "contact_channel": "contact channel",
    "call_times": "call times",
    "call_blackout": "times not to call",
    "language": "language",
    "cc": "who to copy",
    "plan_tier": "plan tier",
    "order_status": "order status",
    "balance": "balance or credits",
    "open_tickets": "open tickets",
}
"""How a topic key reads in a receipt; `format:<thing>` and `recipient:<thing>` read as
'<thing> format' and '<thing> recipient'."""


def topic_name(topic: str) -> str:
    """The readable name of a topic key (`format:export` -> 'export format')."""
    if topic in TOPIC_NAMES:
        return TOPIC_NAMES[topic]
    kind, _, thing = topic.partition(":")
    if kind in ("format", "recipient") and thing:
        return f"{thing} {kind}"
    return topic.replace("_", " ")


@dataclass(frozen=True)
class Classification:
    """What the rule-based classifier says about one memory item (from its own text, role and kind)."""

    cls: MemoryClass
    """The class."""
    rule: str
    """The rule that decided, e.g. `sentiment: anger words` (rules are tried in a fixed order)."""
    cue: str = ""
    """The words in the text that fired the rule (empty for a rule that reads only role and kind)."""
    topics: tuple[tuple[str, str], ...] = ()
    """Preferences: (topic, value) pairs, value '' when the classifier found none (such a topic is
    never contradicted). System-owned facts: (topic, '')."""
    event: str = ""
    """Episodic state: the reference it names (e.g. `RMA 5531`), which a `signal` with that `ref`
    closes; empty when only its session's resolution closes it."""

    @property
    def topic(self) -> str:
        """The topics as one readable string ('contact channel: phone; call times: afternoon')."""
        return "; ".join(f"{topic_name(t)}: {v}" if v else topic_name(t) for t, v in self.topics)

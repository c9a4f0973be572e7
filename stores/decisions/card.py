"""The situation card: one function folds the turn's signals and the locker into a small typed card.

The card holds facts only, enums and booleans ("live offer on record", "short affirmative",
"hostile streak at the threshold"); counts are compared with the policy's thresholds here, once,
so the resolver reads yes/no facts. When the locker is down every locker fact is False and the
card says so (`locker="down"`); the resolver then lets nothing that needs the locker act.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal

from stores.decisions import keys
from stores.decisions.locker import Snapshot, count, live, value
from stores.decisions.params import SessionStateParams
from stores.decisions.signals import Signals
from stores.decisions.vocabulary import ROUTES, Intent, Severity

LockerState = Literal["up", "down", "unused"]
"""`up`, `down` (unreachable: fail open), or `unused` (a policy that keeps no session state)."""
Owner = Literal["none", "knowledge", "recommendation", "retention"]
"""The route that owns the current thread, or `none`."""


@dataclass(frozen=True)
class Card:
    """The situation on one customer turn, as the resolver sees it."""

    locker: LockerState
    """Whether session state could be read."""
    sensitive: Severity
    """Severity of the message (`none`, `harm`, `crisis`)."""
    meaningless: bool
    """Nothing to read in the message."""
    human_request: bool
    """The customer asks for a person on this turn."""
    human_asked_before: bool
    """A request for a human is already on record inside the request window."""
    affirmative: bool
    """A short yes."""
    offer_on_record: bool
    """A live-support offer is live (the claim is held): a yes can be an acceptance."""
    answers_question: bool
    """The agent's latest message asked something else, so a yes answers that."""
    hostile: bool
    """This message is hostile."""
    hostile_streak_reached: bool
    """With this message, consecutive hostile turns reach the threshold."""
    retrieval_empty: bool
    """This turn's retrieval came back empty."""
    empty_retrieval_streak_reached: bool
    """With this turn, consecutive empty retrievals reach the threshold."""
    stuck: bool
    """With this turn, consecutive repeated answers reach the threshold."""
    complexity: bool
    """The latest message is a case for a person (judged on this message only)."""
    time_critical: bool
    """The latest message says time is short (judged on this message only)."""
    resolved_confirmation: bool
    """The customer confirms the fix."""
    complaint_live: bool
    """A complaint is still open in this session (reported after the agent's last action, or hostile)."""
    support_context: bool
    """The message is about a support problem."""
    intent: Intent
    """An explicit request for another agent's job."""
    short_reply: bool
    """A short reply, which continues the current thread."""
    thread_owner: Owner
    """Who owns the current thread."""

    def as_dict(self) -> dict[str, Any]:
        """Plain data for the run tables."""
        return asdict(self)


def situation(signals: Signals, before: Snapshot | None, params: SessionStateParams, locker: LockerState = "up") -> Card:
    """Fold one turn's signals and the locker as read before the turn (None when down) into a card.

    Counters are compared as they will be after this turn: the hostile streak is reached when the
    count before plus this hostile message reaches `hostile_streak`.
    """
    s, up = signals, locker == "up" and before is not None
    state = before if up else None
    acted = live(state, keys.AGENT_ACTED)
    complaints = count(state, keys.OPEN_COMPLAINTS if acted else keys.COMPLAINTS_SINCE_REPLY)
    owner = value(state, keys.THREAD_OWNER)
    return Card(
        locker=locker if locker != "up" or up else "down",
        sensitive=s.sensitive,
        meaningless=s.meaningless,
        human_request=s.human_request,
        human_asked_before=up and live(state, keys.HUMAN_REQUESTED),
        affirmative=s.short_affirmative,
        offer_on_record=up and live(state, keys.OFFER_MADE),
        answers_question=s.answers_question,
        hostile=s.hostile,
        hostile_streak_reached=up and s.hostile and count(state, keys.HOSTILE_STREAK) + 1 >= params.hostile_streak,
        retrieval_empty=s.retrieval_empty,
        empty_retrieval_streak_reached=(
            up and s.retrieval_empty and count(state, keys.EMPTY_RETRIEVAL_STREAK) + 1 >= params.empty_retrieval_streak
        ),
        stuck=up and s.same_answer_repeated and count(state, keys.SAME_ANSWER_STREAK) + 1 >= params.same_answer_streak,
        complexity=s.complexity,
        time_critical=s.time_critical,
        resolved_confirmation=s.resolved_confirmation,
        complaint_live=up and (complaints > 0 or count(state, keys.HOSTILE_STREAK) > 0),
        support_context=s.complaint,
        intent=s.explicit_intent,
        short_reply=s.short_reply,
        thread_owner=owner if up and owner in ROUTES else "none",
    )


def stateless(signals: Signals) -> Card:
    """The card of a policy that keeps no session state: the signals alone, no locker facts."""
    return Card(
        locker="unused",
        sensitive=signals.sensitive,
        meaningless=signals.meaningless,
        human_request=signals.human_request,
        human_asked_before=False,
        affirmative=signals.short_affirmative,
        offer_on_record=False,
        answers_question=signals.answers_question,
        hostile=signals.hostile,
        hostile_streak_reached=False,
        retrieval_empty=signals.retrieval_empty,
        empty_retrieval_streak_reached=False,
        stuck=False,
        complexity=signals.complexity,
        time_critical=signals.time_critical,
        resolved_confirmation=signals.resolved_confirmation,
        complaint_live=False,
        support_context=signals.complaint,
        intent=signals.explicit_intent,
        short_reply=signals.short_reply,
        thread_owner="none",
    )

"""The prose side of a session that the producers read: the agent's latest answers and the customer's own
previous message.

Chat history is the policy's own (in process); facts that must hold across replicas and be read
the same way every time live in the locker instead.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from stores.decisions.signals import AgentFacts, TurnContext


@dataclass
class _Session:
    answer: AgentFacts | None = None
    """The agent's latest message since the customer's previous turn."""
    previous: AgentFacts | None = None
    """The agent message before it."""
    step: AgentFacts | None = None
    """The agent's latest step (an `action` turn) since the customer's previous turn."""
    earlier: str | None = None
    """The customer's previous message in this session."""


@dataclass
class Transcript:
    """Per session, the agent messages a producer may compare (bounded: two per session) and the customer's
    latest message."""

    sessions: dict[str, _Session] = field(default_factory=dict)

    def agent(self, session: str, facts: AgentFacts) -> None:
        """An agent turn happened (actions are steps, not answers: they are not compared, only kept as the
        step the customer's next message may confirm)."""
        s = self.sessions.setdefault(session, _Session())
        if facts.kind != "message":
            s.step = facts
            return
        s.previous, s.answer = (s.answer, facts) if s.answer is not None else (s.previous, facts)

    def context(self, session: str, text: str) -> TurnContext:
        """What the producers read for a customer message now."""
        s = self.sessions.get(session) or _Session()
        return TurnContext(text=text, answer=s.answer, previous_answer=s.previous, step=s.step, earlier=s.earlier)

    def customer(self, session: str, text: str | None = None) -> None:
        """A customer turn was decided: the latest answer has been replied to, and `text` (the customer's
        message, when given) is their previous message from now on."""
        s = self.sessions.get(session)
        if text is not None:
            s = self.sessions.setdefault(session, _Session())
            s.earlier = text
        if s is not None:
            s.step = None
        if s is not None and s.answer is not None:
            s.previous, s.answer = s.answer, None

    def clear(self) -> None:
        """Forget every session."""
        self.sessions.clear()

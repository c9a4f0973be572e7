"""`session_state`: the seed's pattern, every turn decided on signals plus session state.

Producers report, the card folds signals and the locker, the resolver picks the plan with the
fixed precedence, the executor acts once and alone writes the locker (stores/decisions/*). Every
threshold is a parameter (`SessionStateParams`); the locker is in-memory or Redis.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any, ClassVar, Mapping

from stores.protocol import Turn

from stores.decisions.decision import AgentNote, Decision
from stores.decisions.executor import Act, Executor
from stores.decisions.locker import Locker, MemoryLocker, Outage
from stores.decisions.params import SessionStateParams
from stores.decisions.policy import FAULTS, Fault
from stores.decisions.signals import agent_facts, override, produce
from stores.decisions.transcript import Transcript


def make_locker(params: SessionStateParams, namespace: str) -> Locker:
    """The locker the params name (Redis is imported only when chosen)."""
    if params.locker == "redis":
        from stores.decisions.redis_locker import RedisLocker

        return RedisLocker(params.redis_url, namespace=namespace, gc_grace=timedelta(hours=params.redis_gc_grace_hours))
    return MemoryLocker()


class SessionState:
    """The session-state decision policy (see the module docstring)."""

    name: ClassVar[str] = "session_state"
    uses_locker: ClassVar[bool] = True
    Params = SessionStateParams

    def __init__(
        self,
        params: SessionStateParams = SessionStateParams(),
        *,
        locker: Locker | None = None,
        namespace: str = "supportbench",
        act: Act | None = None,
    ) -> None:
        self.params = params
        self.outage = Outage(locker if locker is not None else make_locker(params, namespace))
        """The locker behind the fault switch (`fault()` flips it)."""
        self.executor = Executor(self.outage, params, act)
        self.transcript = Transcript()

    def decide(self, turn: Turn, signals: Mapping[str, Any] | None = None) -> Decision:
        ctx = self.transcript.context(turn.session, turn.text)
        reported = override(produce(ctx, self.params.producers), signals, turn.id)
        decision = self.executor.decide(turn, reported)
        self.transcript.customer(turn.session, turn.text)
        return decision

    def observe(self, turn: Turn, signals: Mapping[str, Any] | None = None) -> AgentNote:
        facts = agent_facts(turn.id, turn.text, turn.kind, signals)
        self.transcript.agent(turn.session, facts)
        return self.executor.observe_agent(turn, facts)

    def fault(self, kind: Fault) -> None:
        if kind not in FAULTS:
            raise ValueError(f"unknown fault {kind!r} (known: {', '.join(FAULTS)})")
        self.outage.down = kind == "locker_down"

    def reset(self) -> None:
        self.outage.clear()
        self.transcript.clear()

    def close(self) -> None:
        self.outage.close()

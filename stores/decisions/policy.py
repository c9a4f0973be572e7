"""The contract between the replay harness and every decision policy.

A policy sees what a deployed decision layer would see, in time order: customer turns (which it
decides), agent turns (what the agent said or did), other events, and infrastructure faults. It
never sees gold (`plan:`, `route:`) and reads the simulated clock from the events, never wall
time. Scripted `signals:` arrive beside a turn: they stand in for the producers (classifiers).
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal, Mapping, Protocol, runtime_checkable

from stores.protocol import Turn

from stores.decisions.decision import AgentNote, Decision

Fault = Literal["locker_down", "locker_up"]
"""An infrastructure fault: the session-state store becomes unavailable / available again."""
FAULTS: tuple[str, ...] = ("locker_down", "locker_up")


@runtime_checkable
class DecisionPolicy(Protocol):
    """Decides every customer turn; observes everything else."""

    name: ClassVar[str]
    """Registry key (the same in the CLI, the run tables and the app)."""
    params: Any
    """Frozen, hashable parameters."""
    uses_locker: ClassVar[bool]
    """Whether it keeps session state (a policy without it is unaffected by locker faults)."""

    def decide(self, turn: Turn, signals: Mapping[str, Any] | None = None) -> Decision:
        """Decide a customer turn and act on it once."""
        ...

    def observe(self, turn: Turn, signals: Mapping[str, Any] | None = None) -> AgentNote:
        """Record an agent turn."""
        ...

    def fault(self, kind: Fault) -> None:
        """Apply an infrastructure fault."""
        ...

    def reset(self) -> None:
        """Forget everything (a fresh replay)."""
        ...

    def close(self) -> None:
        """Release connections."""
        ...

"""The life of the strategy instances one scenario needs: built, opened in their own scope, always closed.

For each (scenario, strategy spec) the runner builds the `plain` instance (the replay, and the
replay after `reset()`) and, for the idempotency check, a fresh `twice` instance. `Instances`
builds them, gives each its `stores.protocol.Scope` through the optional `open(scope)` hook, and
on leaving its `with` block calls `close()` on every instance it built, whatever raised. An
instance that cannot be built or opened is replaced by a stand-in that raises the reason on
every call, so each case it owed becomes an `error` row naming it, and the run goes on.

A scope's namespace is a hash of (run id, strategy label, suite, scenario, instance): different
for every instance a run builds, the same whenever the same run id replays the same scenario,
and independent of which worker or shard runs it.
"""

from __future__ import annotations

import hashlib
import logging
import shutil
from typing import Any, Literal

from stores.cache import cache_root
from stores.protocol import CloseHook, OpenHook, Scope, Strategy
from stores.redaction import ScrubFilter
from stores.registry import StrategySpec

from harness.format.model import Scenario

log = logging.getLogger("supportbench.run")
log.addFilter(ScrubFilter())  # a close() error may quote a service's URL or key

LOCAL_RUN = "local"
"""The run id of replays outside a run (a test, a notebook): scopes still get a namespace."""

Instance = Literal["plain", "twice"]


def namespace(run_id: str, label: str, suite: str, scenario: str, instance: str) -> str:
    """`sb-` and 20 hex digits of sha256 over the five parts (unit-separated, so no two tuples meet)."""
    key = "\x1f".join((run_id, label, suite, scenario, instance))
    return "sb-" + hashlib.sha256(key.encode()).hexdigest()[:20]


def scope_for(run_id: str, spec: StrategySpec, scenario: Scenario, instance: Instance) -> Scope:
    """The scope of one instance (its folders are not created here)."""
    ns = namespace(run_id, spec.label, scenario.suite, scenario.id, instance)
    root = cache_root()
    return Scope(namespace=ns, run_id=run_id, strategy=spec.label, suite=scenario.suite, scenario=scenario.id,
                 instance=instance, cache_dir=root / "strategies" / spec.name, work_dir=root / "scopes" / ns)


def _why(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


class Unavailable:
    """Stands in for a strategy instance that could not be built or opened: every call raises
    the reason, so every case it owed becomes an error row (not `unsupported`: it claims what
    the real class claims, the side door to gold aside)."""

    def __init__(self, spec: StrategySpec, why: str) -> None:
        self.name, self.params, self.why = spec.name, None, why
        try:
            caps = spec.capabilities()  # the class's, plus `expiry` behind the expiry stage
        except Exception:
            caps = frozenset()
        self.capabilities = frozenset(caps) - {"gold"}

    def observe(self, event):
        raise RuntimeError(self.why)

    def context(self, request):
        raise RuntimeError(self.why)

    def reset(self):
        pass


class Instances:
    """Builds, opens and always closes the instances of one scenario x strategy spec.

        with Instances(spec, scenario, run_id) as instances:
            strategy = instances.new("plain")
            ...
            fresh = instances.new("twice")
    """

    def __init__(self, spec: StrategySpec, scenario: Scenario, run_id: str = LOCAL_RUN) -> None:
        self.spec, self.scenario, self.run_id = spec, scenario, run_id
        self.built: list[tuple[Any, Scope]] = []

    def new(self, instance: Instance) -> Strategy:
        """A fresh instance, opened in its scope; a stand-in raising the reason if either failed."""
        scope = scope_for(self.run_id, self.spec, self.scenario, instance)
        try:
            strategy = self.spec.build()
        except Exception as exc:
            return Unavailable(self.spec, f"could not build strategy {self.spec.label!r}: {_why(exc)}")
        self.built.append((strategy, scope))
        if isinstance(strategy, OpenHook):
            try:
                scope.cache_dir.mkdir(parents=True, exist_ok=True)
                scope.work_dir.mkdir(parents=True, exist_ok=True)
                strategy.open(scope)
            except Exception as exc:
                return Unavailable(self.spec, f"could not open strategy {self.spec.label!r} in {scope.namespace}: {_why(exc)}")
        return strategy

    def close(self) -> None:
        """`close()` every instance built, in order, each once; failures are logged, not raised."""
        built, self.built = self.built, []
        for strategy, scope in built:
            if isinstance(strategy, CloseHook):
                try:
                    strategy.close()
                except Exception as exc:
                    log.warning("strategy %s: close() raised %s (scenario %s, %s instance, namespace %s)",
                                self.spec.label, _why(exc), self.scenario.id, scope.instance, scope.namespace)
            shutil.rmtree(scope.work_dir, ignore_errors=True)

    def __enter__(self) -> "Instances":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

"""Strategies that exist only for tests of the harness's lifecycle and secrets (register them
as an installed package would, with the `plugins` fixture: `plugins.strategy(name, "fake_strategies:Class")`)."""

from __future__ import annotations

import itertools
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from stores.params import secret
from stores.protocol import Bundle, ContextRequest, Event, Scope
from stores.retrieval.history_stuffing import HistoryStuffing, HistoryStuffingParams

LOG: list[tuple[int, str, str]] = []
"""(instance serial, what happened, the instance's scope namespace or '') in order, this process only."""
_SERIALS = itertools.count(1)
"""Each `LifecycleProbe` its own number: `id()` is reused once an instance is freed, and two
instances of one run would then count as one."""


@dataclass(frozen=True)
class LifecycleParams(HistoryStuffingParams):
    """Parameters of `LifecycleProbe`."""

    fail_in: str = ""
    """Raise in this step: `build`, `open`, `observe`, `context`, `reset` or `close` (empty: never)."""
    fail_instance: str = ""
    """Raise only in the instance of this kind (`plain`, `twice`); empty: in every instance."""


class LifecycleProbe(HistoryStuffing):
    """`history_stuffing` that records every lifecycle call in `LOG` and fails where told."""

    name: ClassVar[str] = "lifecycle_probe"
    Params = LifecycleParams
    capabilities: ClassVar[frozenset[str]] = frozenset()

    def __init__(self, params: LifecycleParams | None = None) -> None:
        params = params or LifecycleParams()
        if params.fail_in == "build":
            raise RuntimeError("constructor failed on purpose")
        super().__init__(params)
        self.scope: Scope | None = None
        self.serial = next(_SERIALS)
        self._log("build")

    def _log(self, what: str) -> None:
        LOG.append((self.serial, what, self.scope.namespace if self.scope else ""))

    def _maybe_fail(self, step: str) -> None:
        kind = self.scope.instance if self.scope else ""
        if self.params.fail_in == step and self.params.fail_instance in ("", kind):
            raise RuntimeError(f"{step} failed on purpose")

    def open(self, scope: Scope) -> None:
        self.scope = scope
        self._log("open")
        assert scope.work_dir.is_dir() and scope.cache_dir.is_dir()
        (scope.work_dir / "store.bin").write_bytes(b"remote state")
        self._maybe_fail("open")

    def observe(self, event: Event) -> None:
        self._maybe_fail("observe")
        super().observe(event)

    def context(self, request: ContextRequest) -> Bundle:
        self._maybe_fail("context")
        return super().context(request)

    def reset(self) -> None:
        self._log("reset")
        self._maybe_fail("reset")
        super().reset()

    def close(self) -> None:
        self._log("close")
        self._maybe_fail("close")


@dataclass(frozen=True)
class SecretParams(HistoryStuffingParams):
    """Parameters of `NeedsKey`."""

    api_key: str = secret(env="SUPPORTBENCH_FAKE_KEY")
    """The service's key."""
    region: str = "eu"
    """A plain parameter beside it."""
    echo_key: bool = False
    """Fail every context request, and `close()`, with an error message that quotes the key (as a careless client would)."""


class NeedsKey(HistoryStuffing):
    """`history_stuffing` that refuses to work without its key (so a run proves the key reached it)."""

    name: ClassVar[str] = "needs_key"
    Params = SecretParams
    capabilities: ClassVar[frozenset[str]] = frozenset()

    def __init__(self, params: SecretParams | None = None) -> None:
        super().__init__(params or SecretParams())
        if not self.params.api_key:
            raise RuntimeError("no api key")

    def context(self, request: ContextRequest) -> Bundle:
        if self.params.echo_key:
            raise PermissionError(f"401 Unauthorized for Authorization: Bearer {self.params.api_key}")
        return super().context(request)

    def close(self) -> None:
        if self.params.echo_key:
            raise ConnectionError(f"could not close the session opened with key {self.params.api_key}")


class Stuck(HistoryStuffing):
    """`history_stuffing` whose first context request never returns, so a shard holding it never
    finishes: a run of it ends only if it stops its workers (tests/hostile/test_faults.py). Before it
    blocks it leaves a file named after its process in the folder `SB_STUCK_DIR` names, so a test
    knows each worker is mid-shard."""

    name: ClassVar[str] = "stuck"
    capabilities: ClassVar[frozenset[str]] = frozenset()

    def context(self, request: ContextRequest) -> Bundle:
        folder = os.environ.get("SB_STUCK_DIR")
        if folder:
            Path(folder, str(os.getpid())).touch()
        threading.Event().wait()  # never set
        raise AssertionError("unreachable")

"""Workers forked after their run is gone die quietly.

Imported by the fork server only (`harness.run.workers.open_pool` preloads it there). When a run is
stopped (SIGTERM, Ctrl-C) while its pool is starting, the fork server may still be forking a worker
for it; that worker then fails to read its start-up state (the run's semaphores are gone) and used
to print a Python traceback with file paths under the run's own "terminated: nothing was written".
The fork server reports such a failure through `sys.excepthook`, so the hook installed here says
nothing when the run that started the fork server is no longer there (it has already said what
happened), and is Python's own hook otherwise: a worker that fails while its run lives still shows
its traceback.
"""

from __future__ import annotations

import os
import sys

RUN_PID = os.getppid()
"""The fork server's parent when this module is imported there: the run that started the pool."""

_default = sys.excepthook


def run_alive(pid: int | None = None) -> bool:
    """Whether the run process is still there."""
    try:
        os.kill(RUN_PID if pid is None else pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def quiet_when_orphaned(kind, value, tb) -> None:
    """`sys.excepthook`: nothing when the run is gone, Python's own report otherwise."""
    if not run_alive():
        return
    _default(kind, value, tb)


sys.excepthook = quiet_when_orphaned

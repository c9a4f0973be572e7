"""Worker processes that live exactly as long as the run that started them.

A run with `--workers N` shards scenarios over a process pool. Left to themselves, its
processes outlive a killed run: after `kill -9` of the run, the workers kept replaying for
minutes and writing parts into the run's temporary folder. Two rules prevent that:

- A worker watches the run process itself and exits the moment it is gone. Not with
  `PR_SET_PDEATHSIG`: that signal follows a process's *parent*, and under the forkserver start
  method a worker's parent is the fork server, not the run. The watch holds a pidfd of the run
  (Linux 5.3+: readable once the process exits, and immune to pid reuse), else it polls the pid.
- The run stops its workers itself when it stops early (an error, Ctrl-C, SIGTERM), instead of
  waiting for the shards in flight to finish, and only then removes its temporary folder.

Workers ignore SIGINT: a Ctrl-C in the terminal reaches the whole process group, and the run
alone decides what happens (it stops them), so no worker prints a traceback of its own.
"""

from __future__ import annotations

import os
import select
import signal
import threading
import time

POLL_S = 0.2
"""How often the fallback watch looks for the run when there is no pidfd."""


def init_worker(run_pid: int) -> None:
    """Pool initializer: ignore SIGINT and exit as soon as the run process `run_pid` is gone."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        fd = os.pidfd_open(run_pid)
    except ProcessLookupError:
        os._exit(1)  # the run died before this worker even started
    except (AttributeError, OSError):
        fd = None
    threading.Thread(target=_watch, args=(run_pid, fd), name="run-watch", daemon=True).start()


def _watch(run_pid: int, fd: int | None) -> None:
    if fd is not None:
        select.select([fd], [], [])  # returns when the run process has exited
    else:
        while _alive(run_pid):
            time.sleep(POLL_S)
    # the run is gone: nobody will collect this worker's parts; stop now, mid-shard
    os._exit(1)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def stop_workers(pool, timeout: float = 5.0) -> None:
    """Stop a `ProcessPoolExecutor`'s workers now (SIGTERM, then SIGKILL after `timeout`).

    The executor only offers to wait for running work, which for a shard can take minutes;
    its process table is the one handle on the workers it has.
    """
    table = getattr(pool, "_processes", None)
    procs = list(table.values()) if isinstance(table, dict) else []
    for p in procs:
        if p.is_alive():
            p.terminate()
    deadline = time.monotonic() + timeout
    for p in procs:
        p.join(max(0.0, deadline - time.monotonic()))
        if p.is_alive():
            p.kill()
            p.join(1.0)

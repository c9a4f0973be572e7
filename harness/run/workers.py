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

`open_pool` makes the pool (forkserver where available, else spawn); the run uses the same
pool to check and load its scenario files (`harness.run.intake`) and then to run its shards.
Each worker sets torch's thread count to the share of the cores the run decided for it (`stores.cpu`),
and takes the run's `sys.path` and environment: the fork server keeps the path and environment it
was started with, so a package put on the path later (a team's plugin, `stores.plugins`) or a
variable set later (a service's address, read by a `secret(env=...)` param) would be invisible
to the workers; with the run's they read the same installed strategies, policies and criteria,
and the same secrets.
"""

from __future__ import annotations

import os
import select
import signal
import sys
import threading
import time
from contextlib import contextmanager

POLL_S = 0.2
"""How often the fallback watch looks for the run when there is no pidfd."""


def open_pool(workers: int, preload: tuple[str, ...] = ("harness.run.runner",)):
    """A `ProcessPoolExecutor` of `workers` processes tied to this run (see the module doc);
    under forkserver, `preload` modules are imported once in the server, not in each worker, and
    `harness.run.orphans` keeps a worker forked after the run is gone from printing a traceback."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    method = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
    ctx = multiprocessing.get_context(method)
    if method == "forkserver":
        ctx.set_forkserver_preload(["harness.run.orphans", *preload])
    from stores.retrieval.encoder import torch_threads

    # decided here, once: a worker's own view of the load would count this run's processes
    return ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=init_worker,
                               initargs=(os.getpid(), workers, torch_threads(workers), tuple(sys.path), dict(os.environ)))


@contextmanager
def run_pool(workers: int):
    """`open_pool` for the length of a `with` block: on any exception (an invalid suite, Ctrl-C,
    SIGTERM) its workers are stopped at once instead of awaited, then the pool is shut down."""
    pool = open_pool(workers)
    try:
        yield pool
    except BaseException:
        stop_workers(pool)
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    pool.shutdown(wait=True)


def init_worker(run_pid: int, workers: int = 1, threads: int | None = None, path: tuple[str, ...] | None = None,
                environ: dict[str, str] | None = None) -> None:
    """Pool initializer: take the run's import `path` and environment, ignore SIGINT, exit as soon
    as the run process `run_pid` is gone, and give torch this worker's share of the cores (one of
    `workers`; `threads`, as the run process decided them, when given)."""
    if environ is not None:
        for key in set(os.environ) - set(environ):
            del os.environ[key]
        os.environ.update(environ)
    if path is not None and tuple(sys.path) != path:
        import importlib

        sys.path[:] = list(path)  # the registries read installed entries again from it (`stores.plugins`)
        importlib.invalidate_caches()
    from stores.retrieval.encoder import set_worker_share

    set_worker_share(workers, threads)
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

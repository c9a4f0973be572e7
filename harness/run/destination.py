"""Where a run may be written: a safe run id, a writable folder, and the run id's reservation.

A run's temporary folder `.tmp-<run_id>` is created atomically before any work: a second run
with the same id stops at once, instead of failing at the final rename after doing all the work.
Its writer holds an exclusive `flock` on `.tmp-<run_id>/lock` for as long as it lives; the
kernel drops the lock when the process dies, however it dies, which is how `collect_stale` tells
a folder a live run is writing from one a killed run left behind. (A pid file alone would not
do: a dead run's pid can belong to another process by the time anyone looks.)
"""

from __future__ import annotations

import errno
import fcntl
import os
import re
import shutil
import tempfile
import time
from pathlib import Path

TMP_PREFIX = ".tmp-"
LOCK = "lock"
RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
"""A run id is a safe folder name: visible (no leading dot), no separators, no quotes or spaces."""
LEGACY_AGE_S = 24 * 3600
"""A temporary folder without a lock file (written before runs held one) is collected only
when its writer's pid (the name's suffix) is gone and it has not changed for this long."""


class RunIdError(ValueError):
    """A run id that is not a safe folder name."""


def check_run_id(run_id: str) -> str:
    """`run_id` if it is a safe, visible folder name, else `RunIdError` saying what is allowed."""
    if not isinstance(run_id, str) or not RUN_ID.fullmatch(run_id):
        raise RunIdError(f"run id {run_id!r} is not a safe folder name: use letters, digits, '.', '_' and '-', "
                         "starting with a letter or digit, at most 100 characters")
    return run_id


class DestinationError(OSError):
    """Runs cannot be written where asked (read-only, not a folder, run id taken)."""

    def __str__(self) -> str:
        return self.strerror or super().__str__()


def reason(e: OSError) -> str:
    """An OS error's reason in lower case, for one-line messages."""
    return (e.strerror or str(e)).lower()


def check_destination(out_dir: str | Path, run_id: str | None) -> Path:
    """Before any work: the run id is safe and free, and runs can be written into `out_dir`
    (created if needed). Raises `RunIdError` or `DestinationError` with one line."""
    out = Path(out_dir)
    if run_id is not None:
        check_run_id(run_id)
        if (out / run_id).exists():
            raise DestinationError(errno.EEXIST, f"run {run_id!r} already exists in {out}; choose another --run-id")
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = tempfile.mkdtemp(prefix=".probe-", dir=out)
        os.rmdir(probe)
    except OSError as e:
        raise DestinationError(e.errno, f"cannot write runs into {out}: {reason(e)}") from None
    if run_id is not None:
        owner = live_owner(out / f"{TMP_PREFIX}{run_id}")
        if owner is not None:
            raise DestinationError(errno.EBUSY, f"run {run_id!r} is being written in {out} by another run ({owner}); "
                                   "choose another --run-id")
    return out


def hold_lock(folder: Path) -> int:
    """Create `folder/lock`, already locked: it is written and locked under a private name
    first, so `collect_stale` never sees an unlocked lock file of a live run."""
    staged = folder / f".{LOCK}-{os.getpid()}"
    fd = os.open(staged, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.write(fd, f"pid {os.getpid()}\n".encode())
        os.rename(staged, folder / LOCK)
    except BaseException:
        os.close(fd)
        raise
    return fd


def live_owner(tmp: Path) -> str | None:
    """`pid N` when a live process holds the temporary folder's lock; None when nobody does
    (or there is no such folder)."""
    try:
        fd = os.open(tmp / LOCK, os.O_RDONLY)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return os.pread(fd, 64, 0).decode(errors="replace").strip() or "a live process"
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


def collect_stale(out_dir: str | Path) -> list[Path]:
    """Remove temporary folders of runs that died (their lock is free); returns what was removed.

    Never one a live run is writing: the lock is taken before removing, so a live writer (who
    holds it) is never touched, and two collectors never remove the same folder twice.
    Best effort: a folder that cannot be removed stays for the next run.
    """
    removed: list[Path] = []
    try:
        candidates = [p for p in Path(out_dir).iterdir() if p.name.startswith(TMP_PREFIX) and p.is_dir()]
    except OSError:
        return removed
    for tmp in candidates:
        try:
            if (tmp / LOCK).exists():
                fd = os.open(tmp / LOCK, os.O_RDONLY)
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    continue  # a live run holds it
                else:
                    shutil.rmtree(tmp)  # while holding the lock: nobody else collects or revives it meanwhile
                finally:
                    os.close(fd)
            elif _legacy_stale(tmp):
                shutil.rmtree(tmp)
            else:
                continue
            removed.append(tmp)
        except OSError:
            continue
    return removed


def _legacy_stale(tmp: Path) -> bool:
    m = re.fullmatch(re.escape(TMP_PREFIX) + r".+-(\d+)", tmp.name)
    if m is None or time.time() - tmp.stat().st_mtime < LEGACY_AGE_S:
        return False
    try:
        os.kill(int(m.group(1)), 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False
    return False

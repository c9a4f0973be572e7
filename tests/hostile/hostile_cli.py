"""Run `supportbench` as a user would: a real subprocess from a shell-like environment."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

from helpers import HANG

ROOT = Path(__file__).resolve().parents[2]
CORPUS = Path(__file__).resolve().parent / "corpus"


def cli_env(**extra: str) -> dict[str, str]:
    """The environment of a CLI call: this checkout first on the path, one torch thread."""
    env = {k: v for k, v in os.environ.items() if k != "SUPPORTBENCH_RUNS"}
    return {**env, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1", **extra}


def cli_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "harness.cli", *map(str, args)]


def sb(*args: str, timeout: float = HANG, memory_mb: int | None = None, cwd: Path | None = None,
       **env: str) -> subprocess.CompletedProcess:
    """`supportbench ARGS` in a subprocess; `memory_mb` caps its address space (RLIMIT_AS). It may
    take as long as a busy machine makes it; `timeout` only turns a hang into a failure saying so."""

    def limit() -> None:
        if memory_mb:
            cap = memory_mb * 1024 * 1024
            resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

    try:
        return subprocess.run(cli_command(*args), cwd=cwd or ROOT, env=cli_env(**env), capture_output=True, text=True,
                              timeout=timeout, preexec_fn=limit if memory_mb else None)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"hang: supportbench {' '.join(map(str, args))} still running after {timeout:.0f}s") from None

"""A real `redis-server` for tests: started on a free port on 127.0.0.1, nothing persisted.

Tests that need it take the `redis_server` fixture (tests/conftest.py). Without the binary they
skip locally; under CI (env `CI` set) a missing server fails them instead, so CI can never go
green without having run them.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time

import pytest
from helpers import HANG


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class RedisServer:
    """One redis-server process that a test may stop and start again (same port, empty data)."""

    def __init__(self, binary: str) -> None:
        self.binary = binary
        self.port = _free_port()
        self.dir = tempfile.mkdtemp(prefix="sb-redis-")
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        """The URL clients connect to."""
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self, timeout_s: float = HANG) -> None:
        """Start the server and wait until it answers PING, however long a busy machine takes
        (`timeout_s` only turns a server that never answers into a failure saying so)."""
        self.proc = subprocess.Popen(
            [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--dir", self.dir, "--protected-mode", "yes"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"redis-server exited with {self.proc.returncode} on port {self.port}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2) as s:
                    s.sendall(b"PING\r\n")
                    if s.recv(16).startswith(b"+PONG"):
                        return
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"hang: redis-server did not answer on port {self.port} within {timeout_s:.0f}s")

    def stop(self) -> None:
        """Stop the server (what it held is gone: nothing is persisted)."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        self.proc = None

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None


def redis_binary() -> str:
    """The redis-server binary, or skip (fail under CI) when it is missing."""
    found = shutil.which("redis-server")
    if found is None:
        if os.environ.get("CI"):
            pytest.fail("redis-server is not installed; CI requires the Redis tests to run (.ci/run installs it)")
        pytest.skip("redis-server is not installed (apt-get install redis-server)")
    return found

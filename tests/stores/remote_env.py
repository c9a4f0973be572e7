"""When the remote strategies' tests can run here, and a plain reason when they cannot.

`mem0` needs the pinned `mem0ai` package: without it its tests skip locally and fail under
CI=true (CI installs the project's pins). `hindsight` and `statewave` need a server: their
live tests run only when `HINDSIGHT_URL` / `STATEWAVE_URL` is set; their wire contracts run
everywhere on recorded pairs. `http` runs everywhere against the reference server of its
protocol (tests/http_reference.py, over `session_aware`, on 127.0.0.1), started once per session.
"""

from __future__ import annotations

import importlib.util
import os

import pytest

LIVE_URL = {"hindsight": "HINDSIGHT_URL", "statewave": "STATEWAVE_URL"}
"""Strategies that need a server, and the variable that names it."""


def have_mem0() -> bool:
    """Whether the `mem0ai` package is importable."""
    return importlib.util.find_spec("mem0") is not None


def need_mem0() -> None:
    """Skip (or, under CI=true, fail) a test that needs `mem0ai`."""
    if not have_mem0():
        if os.environ.get("CI") == "true":
            pytest.fail("CI=true but mem0ai is not installed: the project pins it, `pip install -e .` installs it")
        pytest.skip("mem0ai is not installed in this environment (pinned in pyproject.toml)")


def need_server(name: str) -> str:
    """The live server's URL for `name`, or skip."""
    url = os.environ.get(LIVE_URL[name], "")
    if not url:
        pytest.skip(f"{LIVE_URL[name]} is not set: no live {name} server to test against")
    return url


_REFERENCE: dict[str, str] = {}


def reference_url() -> str:
    """The URL of this session's reference server of the http protocol (started on first use)."""
    if "url" not in _REFERENCE:
        from http_reference import ReferenceService

        _REFERENCE["url"] = ReferenceService("session_aware").serve()
    return _REFERENCE["url"]


def runnable(name: str) -> None:
    """Skip a registered strategy's contract test when what it needs is not here (`http` gets the
    reference server through its environment variable)."""
    if name == "mem0":
        need_mem0()
    elif name == "http":
        os.environ["SUPPORTBENCH_HTTP_URL"] = reference_url()
    elif name in LIVE_URL:
        need_server(name)

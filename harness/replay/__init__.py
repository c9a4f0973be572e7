"""Replay on the simulated clock: a strategy over a scenario's events (`probes`, what each probe
yields), a decision policy over its turns (`decide`), the health timeline a replay makes
(`timeline`). Below the criteria, which score what a replay yields; the runner in `harness.run`
sits above both."""

import traceback


def describe_error(exc: BaseException) -> str:
    """What a strategy or policy raised, for its row: the type, the message and the last frame."""
    tb = traceback.extract_tb(exc.__traceback__)
    where = f" at {tb[-1].filename.rsplit('/', 1)[-1]}:{tb[-1].lineno}" if tb else ""
    return f"{type(exc).__name__}: {exc}{where}"

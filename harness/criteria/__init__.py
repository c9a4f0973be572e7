"""Criteria: small functions registered by a decorator, each returning a readable `Score`.

A criterion declares when it applies (from the probe's gold labels alone, so that every
expected case gets a row whatever the strategy did), which capability it needs, and how to
score one probe outcome (or one scenario, for `idempotency`). The framework turns strategy
errors into `error` rows and missing capabilities into `unsupported` rows: shown, never
dropped, counted as 0.

Applicability is decided from the gold labels, so every expected case has a row. One
criterion also depends on what the strategy returned: provenance is only defined for a
non-empty context. Its function returns `None` for a bundle with nothing included, meaning
"no case here" (no row); that is the only way a criterion function may decline, and it is
only reached once the strategy has answered (an error or a missing capability still gives
its row).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any, Callable, Literal

from harness.run.replay import ProbeOutcome
from harness.format.model import Probe, Scenario

Status = Literal["ok", "fail", "unsupported", "error"]


@dataclass(frozen=True)
class Score:
    """One verdict on one case, with its reason next to its value."""

    criterion: str
    """Registry key of the criterion."""
    value: float | None
    """In [0, 1]; None for unsupported or error cases (they count as 0)."""
    passed: bool
    """Whether the case passes the criterion's bar."""
    status: Status
    """`ok` (passed), `fail`, `unsupported` (capability missing) or `error` (the strategy raised)."""
    explanation: str
    """A sentence a PM can read: what was expected, what was there, what was missing."""
    evidence: tuple[str, ...] = ()
    """Item ids the verdict rests on (missing or offending ones first)."""
    meta: dict[str, Any] = field(default_factory=dict)
    """Criterion-specific extras, e.g. `{"kind": "positive", "outcome": "tp"}` for repeat detection."""


def ok_or_fail(criterion: str, value: float, passed: bool, explanation: str, evidence=(), **meta) -> Score:
    """A scored case: status follows `passed`."""
    return Score(criterion, float(value), bool(passed), "ok" if passed else "fail", explanation, tuple(evidence), meta)


@dataclass(frozen=True)
class Criterion:
    """A registered criterion."""

    key: str
    title: str
    group: Literal["core", "extra"]
    level: Literal["probe", "scenario"]
    applies: Callable[[Probe], bool]
    requires: str | None
    fn: Callable[..., Score | None]
    """Scores one case; `None` only where the case depends on the bundle (see the module doc)."""
    description: str = ""


CRITERIA: dict[str, Criterion] = {}
"""Every criterion, in registration order (the order of docs/criteria.md)."""


def criterion(
    key: str,
    *,
    title: str,
    group: Literal["core", "extra"] = "core",
    level: Literal["probe", "scenario"] = "probe",
    applies: Callable[[Probe], bool] = lambda p: True,
    requires: str | None = None,
):
    """Register a criterion function under `key`."""

    def register(fn):
        if key in CRITERIA:
            raise ValueError(f"criterion {key!r} registered twice")
        CRITERIA[key] = Criterion(key, title, group, level, applies, requires, fn, (fn.__doc__ or "").strip())
        return fn

    return register


def _load() -> None:
    # registration order is the order of docs/criteria.md: the eight, then the extras
    importlib.import_module(f"{__name__}.support")
    importlib.import_module(f"{__name__}.extra")


def registry() -> dict[str, Criterion]:
    """All criteria (importing their module on first use)."""
    if not CRITERIA:
        _load()
    return CRITERIA


def unsupported(c: Criterion) -> Score:
    """The row for a case the strategy lacks the capability to answer."""
    return Score(c.key, None, False, "unsupported", f"the strategy has no {c.requires} capability, so {c.title} cannot be shown; counted as 0")


def errored(c: Criterion | str, why: str) -> Score:
    """The row for a case with no verdict because something raised (counts as 0)."""
    if isinstance(c, str):
        c = registry()[c]
    return Score(c.key, None, False, "error", f"no verdict: {why}; counted as 0")


def score_probe(outcome: ProbeOutcome) -> list[Score]:
    """Every applicable probe-level criterion's verdict on one outcome."""
    scores = []
    for c in registry().values():
        if c.level != "probe" or not c.applies(outcome.probe):
            continue
        if c.requires and c.requires not in outcome.capabilities:
            scores.append(unsupported(c))
        elif outcome.bundle is None:
            scores.append(errored(c, outcome.error or "no bundle"))
        else:
            try:
                s = c.fn(outcome)
            except Exception as exc:  # a scorer bug is shown, not hidden
                s = errored(c, f"the scorer raised {type(exc).__name__}: {exc}")
            if s is not None:
                scores.append(s)
    return scores


def score_scenario(scenario: Scenario, outcomes: list[ProbeOutcome], extra: dict[str, Any]) -> list[Score]:
    """Every scenario-level criterion's verdict (e.g. idempotency, from `extra['idempotency']`)."""
    scores = []
    for c in registry().values():
        if c.level != "scenario":
            continue
        try:
            s = c.fn(scenario, outcomes, extra)
        except Exception as exc:
            s = errored(c, f"the scorer raised {type(exc).__name__}: {exc}")
        if s is not None:
            scores.append(s)
    return scores

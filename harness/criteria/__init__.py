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

A registration also declares the criterion's role and aggregation, so no consumer names a
criterion: `group` (one of `harness.criteria.groups.GROUPS`: which total it feeds, how its
rows are labelled) and `metric` (`harness.criteria.metrics`: the headline and the columns
beside it, and how a case without a verdict counts, e.g. `metric=prf(gold)` for precision,
recall and F1).

Criteria modules are found by the one registry mechanism (`stores.plugins`): the built-in
modules (`MODULES`), then the `supportbench.criteria` entry points of installed packages, each
naming a module whose `@criterion` functions register when it is imported. A plugin module that
fails to import (or registers a key twice) is one line in `problems()` naming its package; the
other criteria are still there.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Literal

from harness.criteria.groups import DEFAULT as DEFAULT_GROUP
from harness.criteria.groups import group as _group
from harness.criteria.metrics import Mean, Metric, check_metric, metric_description
from stores.plugins import Entry, Registry
from harness.replay.probes import ProbeOutcome
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
    """Criterion-specific extras, e.g. `{"kind": "positive", "outcome": "tp"}` for repeat detection,
    and the counts the criterion's metric sums (`metrics.Metric.counts`)."""


def ok_or_fail(criterion: str, value: float, passed: bool, explanation: str, evidence=(), **meta) -> Score:
    """A scored case: status follows `passed`."""
    return Score(criterion, float(value), bool(passed), "ok" if passed else "fail", explanation, tuple(evidence), meta)


@dataclass(frozen=True)
class Criterion:
    """A registered criterion."""

    key: str
    """Registry key, as in the scores table, the report and the app."""
    title: str
    """Readable name (`repeat-issue detection`)."""
    group: str
    """Its role: a key of `harness.criteria.groups.GROUPS` (validated at registration)."""
    level: Literal["probe", "scenario", "decision"]
    """Judged once per probe, once per scenario (idempotency), or once per turn a decision policy
    decided (`harness.replay.decide.TurnOutcome`)."""
    applies: Callable[[Any], bool]
    """Whether a probe (or, for `decision`, a replayed turn) is a case of it, from the scenario alone."""
    requires: str | None
    """The strategy capability it needs (`health`); without it a case is `unsupported`."""
    fn: Callable[..., Score | None]
    """Scores one case; `None` only where the case depends on the bundle (see the module doc)."""
    description: str = ""
    """The function's docstring."""
    metric: Metric = field(default_factory=Mean)
    """How its cases aggregate (`harness.criteria.metrics`); the plain mean unless declared."""


CRITERIA: dict[str, Criterion] = {}
"""Every criterion, in registration order (the order of docs/criteria.md)."""

_REGISTERED: dict[str, int] = {}
"""Key -> when it was first registered (the order within its module)."""

LEVELS = ("probe", "scenario", "decision")


def criterion(
    key: str,
    *,
    title: str,
    group: str = DEFAULT_GROUP,
    level: Literal["probe", "scenario", "decision"] = "probe",
    applies: Callable[[Any], bool] = lambda case: True,
    requires: str | None = None,
    metric: Metric | None = None,
):
    """Register a criterion function under `key`, in `group` (its role), aggregated by `metric`
    (default: the mean case value). A bad group, level or metric fails here, at import."""
    _group(group)
    if level not in LEVELS:
        raise ValueError(f"criterion {key!r}: level must be one of {', '.join(LEVELS)}, got {level!r}")
    m = check_metric(key, metric if metric is not None else Mean())

    def register(fn):
        if key in CRITERIA:
            raise ValueError(f"criterion {key!r} registered twice")
        CRITERIA[key] = Criterion(key, title, group, level, applies, requires, fn, (fn.__doc__ or "").strip(), m)
        _REGISTERED.setdefault(key, len(_REGISTERED))
        return fn

    return register


MODULES = ("support", "extra", "rank", "reply", "expiry", "decisions")
"""The modules that register criteria, in the order of docs/criteria.md: the eight, the extras,
the rank metrics, then the reply and typed-memory criteria, the expiry stage's, then the decision criteria."""

MODULE_REGISTRY = Registry("criterion", {m: f"{__name__}.{m}" for m in MODULES}, ValueError)
"""The modules that register criteria: built-in, then installed (`supportbench.criteria`)."""

_loaded_for: tuple[str, ...] | None = None
_load_problems: dict[str, str] = {}
_plugin_keys: dict[str, str] = {}
"""Criterion key -> the target of the installed entry whose import registered it."""
_stashed: dict[str, Criterion] = {}
"""Installed criteria whose package has left the import path: out of the registry until it is back
(its module stays imported, so it would not register them again)."""


def _load() -> None:
    global _loaded_for
    path = tuple(sys.path)
    entries = MODULE_REGISTRY.entries()
    _load_problems.clear()
    for entry in entries.values():
        before = set(CRITERIA)
        try:
            MODULE_REGISTRY.load(entry)
        except ValueError as e:  # a broken plugin: one line naming its package; the others stay
            if entry.origin == "built-in":
                raise  # a built-in module that cannot load is a bug of ours, never a row quietly missing
            _load_problems[entry.name] = str(e)
            continue
        if entry.origin != "built-in":
            _plugin_keys.update(dict.fromkeys(set(CRITERIA) - before, entry.target))
    active = {e.target for e in entries.values() if e.origin != "built-in" and e.name not in _load_problems}
    for key, target in _plugin_keys.items():
        if target in active and key in _stashed:
            CRITERIA[key] = _stashed.pop(key)
        elif target not in active and key in CRITERIA:
            _stashed[key] = CRITERIA.pop(key)
    # whichever module a caller imported first, the registry keeps the documented order
    # (within a module, in registration order; plugins' next; criteria registered elsewhere, such as a test's, last)
    rank = {f"{__name__}.{m}": i for i, m in enumerate(MODULES)}
    ordered = sorted(CRITERIA.items(), key=lambda kv: (rank.get(getattr(kv[1].fn, "__module__", ""),
                                                                len(rank) + (source(kv[0]) is None)),
                                                        _REGISTERED.get(kv[0], len(_REGISTERED))))
    CRITERIA.clear()
    CRITERIA.update(ordered)
    _loaded_for = path


def registry() -> dict[str, Criterion]:
    """All criteria (importing their modules on first use, and again when `sys.path` changed:
    a worker process given the run's path finds the same installed criteria)."""
    if _loaded_for != tuple(sys.path):
        _load()
    return CRITERIA


def source(key: str) -> Entry | None:
    """The registry entry (built-in module or plugin) a criterion was registered by; None for
    one registered by code outside them (a test's)."""
    c = CRITERIA.get(key)
    module = getattr(getattr(c, "fn", None), "__module__", "") or ""
    for entry in MODULE_REGISTRY.entries().values():
        base = entry.target.partition(":")[0]
        if module == base or module.startswith(base + "."):
            return entry
    return None


def problems() -> list[str]:
    """One line per installed criteria module that cannot be used, naming its package."""
    registry()
    return MODULE_REGISTRY.problems() + [_load_problems[k] for k in sorted(_load_problems)]


def describe() -> list[dict[str, Any]]:
    """What a run manifest records of every criterion: key, title, group, level and metric."""
    out = []
    for c in registry().values():
        row = {"key": c.key, "title": c.title, "group": c.group, "level": c.level, "metric": metric_description(c.metric)}
        entry = source(c.key)
        if entry is not None and entry.origin != "built-in":
            row["source"] = entry.manifest()
        out.append(row)
    return out


def unsupported(c: Criterion) -> Score:
    """The row for a case the strategy lacks the capability to answer."""
    return Score(c.key, None, False, "unsupported", f"the strategy has no {c.requires} capability, so {c.title} cannot be shown; counted as 0")


def errored(c: Criterion | str, why: str) -> Score:
    """The row for a case with no verdict because something raised (counts as 0)."""
    if isinstance(c, str):
        c = registry()[c]
    return Score(c.key, None, False, "error", f"no verdict: {why}; counted as 0")


def _counted(c: Criterion, case: Any, s: Score) -> Score:
    """The row as its metric needs it: a case without a verdict gets the metric's counts for it
    (from the case's gold, at scoring time); a verdict that lacks a count its metric sums is a
    scorer bug, shown as an error."""
    if not c.metric.counts:
        return s
    if s.status in ("unsupported", "error"):
        return replace(s, meta={**s.meta, **c.metric.no_verdict(case)})
    missing = [k for k in c.metric.counts if not isinstance(s.meta.get(k), int)]
    if missing:
        bug = errored(c, f"the scorer recorded no {', '.join(missing)} count for its {c.metric.name} metric")
        return replace(bug, meta=c.metric.no_verdict(case))
    return s


def score_probe(outcome: ProbeOutcome) -> list[Score]:
    """Every applicable probe-level criterion's verdict on one outcome."""
    scores: list[Score] = []
    if outcome.probe.unlabelled:  # no gold yet: shown in the run, in no score
        return scores
    for c in registry().values():
        if c.level != "probe" or not c.applies(outcome.probe):
            continue
        if c.requires and c.requires not in outcome.capabilities:
            s = unsupported(c)
        elif outcome.bundle is None:
            s = errored(c, outcome.error or "no bundle")
        else:
            try:
                s = c.fn(outcome)
            except Exception as exc:  # a scorer bug is shown, not hidden
                s = errored(c, f"the scorer raised {type(exc).__name__}: {exc}")
        if s is not None:
            scores.append(_counted(c, outcome.probe, s))
    return scores


def score_decision(outcome: Any) -> list[Score]:
    """Every applicable decision criterion's verdict on one turn a policy decided
    (`harness.replay.decide.TurnOutcome`); a turn the policy raised on gets `error` rows."""
    scores = []
    for c in registry().values():
        if c.level != "decision" or not c.applies(outcome):
            continue
        try:
            s = c.fn(outcome)
        except Exception as exc:
            s = errored(c, f"the scorer raised {type(exc).__name__}: {exc}")
        scores.append(_counted(c, outcome, s))
    return scores


def score_scenario(scenario: Scenario, outcomes: list[ProbeOutcome], extra: dict[str, Any]) -> list[Score]:
    """Every scenario-level criterion's verdict (e.g. idempotency, from `extra['idempotency']`).

    A scenario-level criterion's `applies` is given the scenario; one that `requires` a
    capability the strategy lacks (`extra['capabilities']`, when the caller gives it) gets its
    `unsupported` row without being called."""
    scores = []
    caps = extra.get("capabilities")
    for c in registry().values():
        if c.level != "scenario" or not c.applies(scenario):
            continue
        if c.requires and caps is not None and c.requires not in caps:
            scores.append(_counted(c, scenario, unsupported(c)))
            continue
        try:
            s = c.fn(scenario, outcomes, extra)
        except Exception as exc:
            s = errored(c, f"the scorer raised {type(exc).__name__}: {exc}")
        if s is not None:
            scores.append(_counted(c, scenario, s))
    return scores

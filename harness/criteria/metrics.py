"""How a criterion's cases become its headline number: the metric a criterion registers with.

A criterion's registration carries its metric (`@criterion(..., metric=prf(...))`), so every
consumer (the aggregate, the CI comparison, the report, the app) reads the headline, the
columns beside it and how a case without a verdict counts from the declaration, and none of
them names a criterion.

A metric works on sums over a set of cases (one strategy's cases of one criterion, or of one
bootstrap resample of scenarios). Every metric is given two sums, `value` (the summed case
values; a case without a verdict adds 0) and `cases` (how many cases), plus one sum per key of
its `counts`: integers the criterion records in each case's `Score.meta` (for example `tp`,
`fp`, `fn`). A case without a verdict (`unsupported` or `error`) gets its counts from the
metric's `no_verdict`, stamped into its meta when the row is made, so the aggregate never
reads gold labels.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Protocol

import numpy as np

_KEY = re.compile(r"^[a-z][a-z0-9_]*$")

RESERVED = frozenset({"value", "cases", "mean", "strategy", "strategy_name", "criterion", "grp", "scenario", "n", "total",
                      "passes", "pass_rate", "lo", "hi", "pass_lo", "pass_hi", "unsupported", "errors"})
"""Names a metric's counts and columns may not take: the sums every metric gets, and the columns the
aggregate already has."""


@dataclass(frozen=True)
class MetricColumn:
    """A number a metric reports beside its headline (e.g. precision next to F1)."""

    key: str
    """Column name in the aggregate and key in `report --format json` (e.g. `precision`)."""
    abbrev: str
    """Short form in table cells (e.g. `P` in `0.86 [0.62–1.00] P 0.90 R 0.82`)."""


class Metric(Protocol):
    """What a criterion's registration says about aggregating its cases."""

    name: str
    """Kind of metric, recorded in the run manifest (`mean`, `prf`)."""
    headline: str
    """What the criterion's `mean` column holds, as a reader calls it (`mean`, `F1`)."""
    columns: tuple[MetricColumn, ...]
    """Numbers reported beside the headline; empty for a plain mean."""
    counts: tuple[str, ...]
    """Integer keys each case records in `Score.meta`, summed over cases."""

    def summarize(self, sums: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        """`mean` (the headline) and each of `columns`, from `value`, `cases` and the `counts`
        summed over a set of cases (arrays, one entry per strategy or resample)."""
        ...

    def no_verdict(self, case: Any) -> dict[str, int]:
        """The counts of a case without a verdict (`unsupported`, `error`): `case` is what the
        criterion's `applies` received (the `Probe`, or the `Scenario` of a scenario-level one)."""
        ...


@dataclass(frozen=True)
class Mean:
    """The mean case value: summed values over the number of cases (no verdict counts 0)."""

    name: str = "mean"
    headline: str = "mean"
    columns: tuple[MetricColumn, ...] = ()
    counts: tuple[str, ...] = ()

    def summarize(self, sums: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        with np.errstate(invalid="ignore", divide="ignore"):
            return {"mean": np.asarray(sums["value"], dtype=float) / np.asarray(sums["cases"], dtype=float)}

    def no_verdict(self, case: Any) -> dict[str, int]:
        return {}


def mean() -> Mean:
    """The default metric: the mean per-case value."""
    return Mean()


def precision_recall_f1(tp, fp, fn) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Precision, recall and F1 (vectorized). With nothing flagged, precision is 1 if nothing was
    missed either, else 0; with nothing to find, recall is 1 if nothing was wrongly flagged."""
    tp, fp, fn = (np.asarray(x, dtype=float) for x in (tp, fp, fn))
    with np.errstate(invalid="ignore", divide="ignore"):
        p = np.where(tp + fp > 0, tp / (tp + fp), (fn == 0).astype(float))
        r = np.where(tp + fn > 0, tp / (tp + fn), (fp == 0).astype(float))
        f = np.where(p + r > 0, 2 * p * r / (p + r), 0.0)
    return p, r, f


@dataclass(frozen=True)
class PRF:
    """F1 over true positives, false positives and false negatives counted across all cases, with
    precision and recall beside it. Each case records `tp`, `fp` and `fn` in its meta."""

    gold: Callable[[Any], tuple[int, int]]
    """(positives, negatives) a case's gold asks about; a case without a verdict counts each
    positive as missed (`fn`) and each negative as wrongly flagged (`fp`): a no-answer is never right."""
    name: str = "prf"
    headline: str = "F1"
    columns: tuple[MetricColumn, ...] = (MetricColumn("precision", "P"), MetricColumn("recall", "R"))
    counts: tuple[str, ...] = ("tp", "fp", "fn")

    def summarize(self, sums: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        p, r, f = precision_recall_f1(sums["tp"], sums["fp"], sums["fn"])
        return {"mean": f, "precision": p, "recall": r}

    def no_verdict(self, case: Any) -> dict[str, int]:
        positives, negatives = self.gold(case)
        return {"tp": 0, "fp": int(negatives), "fn": int(positives)}


def prf(gold: Callable[[Any], tuple[int, int]]) -> PRF:
    """Precision, recall and F1 over the cases' `tp`/`fp`/`fn` counts; `gold(case)` gives the
    (positives, negatives) a case asks about, for counting a case without a verdict."""
    return PRF(gold)


@dataclass(frozen=True)
class Accuracy:
    """The share of judged items that are right, over all cases' items together (a case of 2
    items and one of 20 weigh as their items do, not as one case each). Each case records
    `correct` and `judged` in its meta."""

    judged: Callable[[Any], int]
    """How many items a case's gold asks about; a case without a verdict counts them all wrong."""
    name: str = "accuracy"
    headline: str = "accuracy"
    columns: tuple[MetricColumn, ...] = ()
    counts: tuple[str, ...] = ("correct", "judged")

    def summarize(self, sums: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        correct, judged = (np.asarray(sums[k], dtype=float) for k in ("correct", "judged"))
        with np.errstate(invalid="ignore", divide="ignore"):
            return {"mean": correct / judged}

    def no_verdict(self, case: Any) -> dict[str, int]:
        return {"correct": 0, "judged": int(self.judged(case))}


def accuracy(judged: Callable[[Any], int]) -> Accuracy:
    """Accuracy over the items of all cases (`correct` / `judged` summed); `judged(case)` counts
    a case's items from its gold, for a case without a verdict."""
    return Accuracy(judged)


@dataclass(frozen=True)
class MeanAndCount:
    """The mean case value, with the number of cases that recorded one `count` beside it (the
    irreversible errors of a gate, say). Each case records its `count` (0 or 1) in its meta; a
    case without a verdict counts 0 there (nothing was observed) and 0 in the mean."""

    count: str
    """The meta key each case records, and the column's name (`irreversible`)."""
    abbrev: str = "#"
    """Its short form in table cells."""
    name: str = "mean+count"
    headline: str = "mean"

    @property
    def columns(self) -> tuple[MetricColumn, ...]:
        return (MetricColumn(self.count, self.abbrev),)

    @property
    def counts(self) -> tuple[str, ...]:
        return (self.count,)

    def summarize(self, sums: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = np.asarray(sums["value"], dtype=float) / np.asarray(sums["cases"], dtype=float)
        return {"mean": mean, self.count: np.asarray(sums[self.count], dtype=float)}

    def no_verdict(self, case: Any) -> dict[str, int]:
        return {self.count: 0}


def mean_and_count(count: str, abbrev: str = "#") -> MeanAndCount:
    """The mean case value, with how many cases recorded `count` beside it."""
    return MeanAndCount(count, abbrev)


def check_metric(owner: str, m: Any) -> Metric:
    """`m` if it is a usable metric, else a `ValueError` naming `owner` and what is wrong."""
    missing = [a for a in ("name", "headline", "columns", "counts", "summarize", "no_verdict") if not hasattr(m, a)]
    if missing:
        raise ValueError(f"criterion {owner!r}: metric {m!r} lacks {', '.join(missing)} (see harness.criteria.metrics.Metric)")
    for key in (*m.counts, *(c.key for c in m.columns)):
        if not _KEY.match(key) or key in RESERVED:
            raise ValueError(f"criterion {owner!r}: metric key {key!r} must be a lower-case identifier other than "
                             f"{', '.join(sorted(RESERVED))}")
    return m


def metric_description(m: Metric) -> dict[str, Any]:
    """What a run manifest records of a metric."""
    return {"name": m.name, "headline": m.headline, "columns": [c.key for c in m.columns], "counts": list(m.counts)}

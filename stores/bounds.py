"""Declared ranges of strategy parameters: one way to say what a parameter may be.

A params dataclass annotates a field with one of these types (`top_k: PositiveInt = 12`), and
the registry checks every override against it when a spec is built (`stores.registry`), with
its usual "strategy 'tfidf' parameter 'top_k'=-5: ..." error, before anything runs. The types
are `typing.Annotated` over pydantic constraints, so the check is the registry's one pydantic
validation, and a reader of the dataclass sees the range next to the default.

Ranges between two parameters (`ngram_max >= ngram_min`) are `NotBelow` / `NotAbove` markers
in the same annotation, checked on the finished params (defaults included).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import AfterValidator, Field

PositiveInt = Annotated[int, Field(ge=1)]
"""An integer >= 1 (a count, a budget)."""
NonNegativeInt = Annotated[int, Field(ge=0)]
"""An integer >= 0."""
Positive = Annotated[float, Field(gt=0.0)]
"""A number > 0 (a duration, a time scale)."""
NonNegative = Annotated[float, Field(ge=0.0)]
"""A number >= 0 (a bonus, a largest component)."""
NonPositive = Annotated[float, Field(le=0.0)]
"""A number <= 0 (a penalty, the floor of a penalty)."""
Share = Annotated[float, Field(ge=0.0, le=1.0)]
"""A share or threshold between 0 and 1."""
Cosine = Annotated[float, Field(ge=-1.0, le=1.0)]
"""A cosine similarity, between -1 and 1."""
Score100 = Annotated[float, Field(ge=0.0, le=100.0)]
"""A point on the 0-100 health scale."""


@dataclass(frozen=True)
class Relation:
    """This parameter must compare to another parameter of the same dataclass."""

    other: str
    """The other parameter's name."""

    def holds(self, value: Any, other: Any) -> bool:
        """Whether `value` stands in this relation to `other`."""
        raise NotImplementedError

    def expected(self) -> str:
        """What was expected, for the error message."""
        raise NotImplementedError


@dataclass(frozen=True)
class NotBelow(Relation):
    """This parameter must be >= `other`."""

    def holds(self, value: Any, other: Any) -> bool:
        return value >= other

    def expected(self) -> str:
        return f"at least {self.other}"


@dataclass(frozen=True)
class NotAbove(Relation):
    """This parameter must be <= `other`."""

    def holds(self, value: Any, other: Any) -> bool:
        return value <= other

    def expected(self) -> str:
        return f"at most {self.other}"


def _local_model(model: str) -> str:
    from stores.retrieval.encoder import DEFAULT_MODEL, model_problem

    if model != DEFAULT_MODEL:
        problem = model_problem(model)
        if problem:
            raise ValueError(problem)
    return model


ModelRef = Annotated[str, AfterValidator(_local_model)]
"""A sentence-transformers model this machine has: the packaged default or a local folder."""


def relations(annotation: Any) -> list[Relation]:
    """The `Relation` markers of a field's annotation."""
    return [m for m in getattr(annotation, "__metadata__", ()) if isinstance(m, Relation)]


__all__ = ["PositiveInt", "NonNegativeInt", "Positive", "NonNegative", "NonPositive", "Share", "Cosine", "Score100",
           "NotBelow", "NotAbove", "Relation", "ModelRef", "relations"]

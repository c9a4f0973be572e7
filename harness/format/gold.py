"""The gold vocabulary of the scenario format: how a gold key is declared, and what follows from it.

A gold key is a field of a pydantic model of the file format (`schema.ExpectModel` for a
probe's `expect`, `schema.TurnEvent` for the gold of a turn) annotated with a `Gold`: what kind
of reference its value is (`Ref`), its polarity for the context (`Polarity`) and the name the
app shows for it. That annotation is the only place a key is declared; everything else is
derived from it, so no reader of runs or of scenarios names a key:

- `runtime_type` builds the frozen, hashable dataclass the criteria read (`model.Expect`,
  `model.TurnGold`), with the key's declared default (`Gold.default`) applied;
- `GoldValues.to_data` / `from_data` (and `to_json` / `from_json`) are its plain data: what
  the oracle is handed, what the run tables store, and back again, losslessly;
- `declared` and `keys_of` list the keys by polarity or by kind of reference, for the
  semantic checks (`harness.format.checks`) and the app's gold marks
  (`harness.analysis.queries`).

`record_type` is the same derivation for records without gold semantics (a gold memory's
fields, a turn's scripted signals): a pydantic model of the file becomes a frozen dataclass.
"""

from __future__ import annotations

import json
import types
from dataclasses import MISSING, asdict, dataclass, field, fields, make_dataclass
from functools import lru_cache
from typing import Any, Callable, ClassVar, Iterator, Literal, Mapping, Union, get_args, get_origin

from pydantic import BaseModel

Ref = Literal["ids", "needles", "pairs", "session", "sessions", "history", "band", "bool", "records", "classes", "choice"]
"""What a gold key's value refers to:

- `ids`: item ids (turn ids, `<session>#resolution`);
- `needles`: item ids or text needles (`{text: ...}`, a case-insensitive substring);
- `pairs`: `[first, second]` pairs of item ids;
- `session` / `sessions`: one / several resolved sessions of the probe's subject;
- `history`: sessions of the probe's subject that began before the probe, resolved or not;
- `band`: a health band; `bool`: true or false;
- `records`: structured records (a list of mappings with their own fields);
- `classes`: names from a fixed list (a turn's memory classes); `choice`: one name from a fixed list.
"""

Polarity = Literal["in", "out", "order", "other"]
"""What a key says about the context: `in` each item must be in it, `out` each must stay out
of it, `order` the first of each pair must outrank the second, `other` it is judged on
something else (a band, a reply, a store, a decision), so it marks no item."""

LISTS: frozenset[str] = frozenset({"ids", "needles", "pairs", "sessions", "history", "classes"})
"""Kinds whose value is a list (empty when not given)."""

ITEMS: frozenset[str] = frozenset({"ids", "needles", "pairs"})
"""Kinds whose values name items of the history (turns, resolutions)."""


@dataclass(frozen=True)
class TextNeedle:
    """A gold item given as text: a case-insensitive substring of the context text."""

    text: str
    """The text to look for."""


GoldRef = Union[str, TextNeedle]
"""A gold item: a turn id, `<session>#resolution`, or a text needle."""


@dataclass(frozen=True)
class Gold:
    """The declaration of one gold key (put it in the key's `Annotated[...]`)."""

    ref: Ref
    """What the value refers to."""
    polarity: Polarity = "other"
    """What it says about the context."""
    display: str = ""
    """How the app names it (e.g. `must include`); the key itself when empty."""
    any_subject: bool = False
    """Its items may belong to other subjects (only what must stay out can say so)."""
    default: Callable[[Mapping[str, Any]], Any] | None = None
    """The value when the file leaves it empty, computed from the other keys' values."""
    column: str = ""
    """For a turn's gold: its column in the run's `events` table (the key when empty)."""

    def name(self, key: str) -> str:
        """How the app names the key."""
        return self.display or key


def declared(model: type[BaseModel], polarity: Polarity | None = None) -> Iterator[tuple[str, Gold]]:
    """The gold keys of `model` (in declaration order), optionally only those of one polarity."""
    for key, info in model.model_fields.items():
        g = next((m for m in info.metadata if isinstance(m, Gold)), None)
        if g is not None and (polarity is None or g.polarity == polarity):
            yield key, g


def keys_of(model: type[BaseModel], *refs: str) -> tuple[str, ...]:
    """The gold keys of `model` whose reference is one of `refs`."""
    return tuple(k for k, g in declared(model) if g.ref in refs)


# -- values by kind of reference --------------------------------------------------------------


_EMPTY: dict[str, Any] = {"records": None}
"""Runtime values of a key that is not set (lists are empty tuples, the rest None)."""


def empty(ref: str) -> Any:
    """The runtime value of a key of this kind that the file does not give."""
    return _EMPTY.get(ref, () if ref in LISTS else None)


def _runtime(ref: str, value: Any, record: type | None) -> Any:
    """A value (as the file model holds it, or as plain data) in its runtime form."""
    if value is None:
        return empty(ref)
    if ref == "needles":
        return tuple(_needle(x) for x in value)
    if ref == "pairs":
        return tuple((str(a), str(b)) for a, b in value)
    if ref == "records":
        return tuple(record.from_data(_plain(x)) for x in value)  # type: ignore[union-attr]
    if ref in LISTS:
        return tuple(value)
    return value


def _needle(x: Any) -> GoldRef:
    if isinstance(x, TextNeedle):
        return x
    if isinstance(x, BaseModel):
        return TextNeedle(str(getattr(x, "text")))
    if isinstance(x, Mapping):
        return TextNeedle(str(x["text"]))
    return str(x)


def _plain(x: Any) -> dict[str, Any]:
    return x.model_dump() if isinstance(x, BaseModel) else dict(x)


def _data(ref: str, value: Any) -> Any:
    """A runtime value as plain data (JSON-ready)."""
    if ref == "needles":
        return [{"text": x.text} if isinstance(x, TextNeedle) else x for x in value]
    if ref == "pairs":
        return [list(p) for p in value]
    if ref == "records":
        return [x.to_data() for x in value]
    if ref in LISTS:
        return list(value)
    return value


# -- the runtime type -------------------------------------------------------------------------


class GoldValues:
    """Behaviour shared by every runtime gold type built by `runtime_type`."""

    __gold__: ClassVar[dict[str, Gold]]
    __records__: ClassVar[dict[str, type]]

    def __post_init__(self) -> None:
        given = {k: getattr(self, k) for k in self.__gold__}
        for key, g in self.__gold__.items():
            if g.default is not None and given[key] == empty(g.ref):
                object.__setattr__(self, key, _runtime(g.ref, g.default(given), self.__records__.get(key)))

    def is_set(self, key: str) -> bool:
        """Whether the key has a value (it is given, or has a declared default)."""
        return getattr(self, key) != empty(self.__gold__[key].ref)

    def asks(self, ref: str) -> bool:
        """Whether any key with this kind of reference is set (e.g. `asks("band")`)."""
        return any(g.ref == ref and self.is_set(k) for k, g in self.__gold__.items())

    def to_data(self) -> dict[str, Any]:
        """The keys that are set, as plain data (text needles as `{"text": ...}`)."""
        return {k: _data(g.ref, getattr(self, k)) for k, g in self.__gold__.items() if self.is_set(k)}

    def as_gold(self) -> dict[str, Any]:
        """Plain data for the oracle's side door (the same as `to_data`)."""
        return self.to_data()

    def to_json(self) -> str:
        """`to_data` as JSON with sorted keys (the `expect` column of the run's `events` table)."""
        return json.dumps(self.to_data(), sort_keys=True)

    @classmethod
    def from_data(cls, data: Mapping[str, Any] | None):
        """The inverse of `to_data`; keys it does not declare are ignored (a newer run's)."""
        data = data or {}
        return cls(**{k: _runtime(g.ref, data.get(k), cls.__records__.get(k)) for k, g in cls.__gold__.items()})

    @classmethod
    def from_json(cls, text: str | None):
        """The inverse of `to_json` (empty or missing text: nothing set)."""
        return cls.from_data(json.loads(text) if text else {})

    @classmethod
    def from_file(cls, model: BaseModel):
        """From the validated file model that declares the keys."""
        return cls(**{k: _runtime(g.ref, getattr(model, k), cls.__records__.get(k)) for k, g in cls.__gold__.items()})

    @classmethod
    def record_of(cls, item: type[BaseModel]) -> type:
        """The runtime type of the records built from the file model `item`."""
        return next(r for r in cls.__records__.values() if r.__item__ is item)

    @classmethod
    def columns(cls) -> list[tuple[str, str, str]]:
        """(key, column, kind of reference) of each key, for tables with a column per key."""
        return [(k, g.column or k, g.ref) for k, g in cls.__gold__.items()]

    def to_columns(self) -> dict[str, Any]:
        """Column -> plain value (unset lists as empty lists, unset scalars as None)."""
        return {g.column or k: _data(g.ref, getattr(self, k)) if getattr(self, k) is not None else None
                for k, g in self.__gold__.items()}

    @classmethod
    def from_columns(cls, row: Mapping[str, Any]):
        """The inverse of `to_columns`; a missing column (an older run) is unset."""
        return cls(**{k: _runtime(g.ref, row.get(g.column or k), cls.__records__.get(k)) for k, g in cls.__gold__.items()})


def _python_type(ref: str, record: type | None) -> Any:
    return {
        "ids": tuple[str, ...], "sessions": tuple[str, ...], "history": tuple[str, ...], "classes": tuple[str, ...],
        "needles": tuple[GoldRef, ...], "pairs": tuple[tuple[str, str], ...],
        "records": Union[tuple[record, ...], None] if record else Any,
        "session": Union[str, None], "choice": Union[str, None], "band": Union[str, None], "bool": Union[bool, None],
    }[ref]


def _record_model(annotation: Any) -> type[BaseModel] | None:
    """The pydantic model inside `list[Model] | None` (the items of a `records` key)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in get_args(annotation):
        found = _record_model(arg)
        if found is not None:
            return found
    return None


def runtime_type(model: type[BaseModel], name: str, doc: str, module: str) -> type:
    """The frozen dataclass of `model`'s gold keys: one field per key, in declaration order,
    typed and defaulted by its kind of reference, documented by the key's docstring."""
    gold = dict(declared(model))
    records: dict[str, type] = {}
    specs = []
    for key, g in gold.items():
        info = model.model_fields[key]
        record = None
        if g.ref == "records":
            item = _record_model(info.annotation)
            if item is None:
                raise TypeError(f"{model.__name__}.{key}: a records key needs a list of a pydantic model")
            record = records[key] = record_type(item, f"{name}{item.__name__.removesuffix('Model')}",
                                                item.__doc__ or "", module)
        specs.append((key, _python_type(g.ref, record), field(default=empty(g.ref), metadata={"doc": info.description or ""})))
    cls = make_dataclass(name, specs, bases=(GoldValues,), frozen=True, namespace={"__doc__": doc})
    cls.__module__ = module
    cls.__gold__ = gold
    cls.__records__ = records
    return cls


# -- records ----------------------------------------------------------------------------------


class RecordValues:
    """Behaviour shared by every type built by `record_type`."""

    def to_data(self) -> dict[str, Any]:
        """The fields that are set (not None), as plain data."""
        if all(getattr(self, k) is None for k in _field_names(type(self))):
            return {}  # nothing set (most turns of a transcript): asdict's deep copy would give the same
        return {k: v for k, v in asdict(self).items() if v is not None}

    def scripted(self) -> dict[str, Any]:
        """The same as `to_data`: what the file set."""
        return self.to_data()

    @classmethod
    def from_data(cls, data: Mapping[str, Any] | None):
        """The inverse of `to_data` (unknown keys ignored)."""
        data = data or {}
        return cls(**{f.name: data.get(f.name) for f in fields(cls) if f.name in data or f.default is MISSING})


@lru_cache(maxsize=None)
def _field_names(cls: type) -> tuple[str, ...]:
    return tuple(f.name for f in fields(cls))


def _optional(annotation: Any) -> Any:
    if get_origin(annotation) in (Union, types.UnionType) and type(None) in get_args(annotation):
        return annotation
    return Union[annotation, None]


def record_type(model: type[BaseModel], name: str, doc: str, module: str) -> type:
    """A frozen dataclass with `model`'s fields (required ones first, as the file requires them;
    optional ones default to None, meaning not given)."""
    required, optional = [], []
    for key, info in model.model_fields.items():
        meta = {"doc": info.description or ""}
        if info.is_required():
            required.append((key, info.annotation, field(metadata=meta)))
        else:
            optional.append((key, _optional(info.annotation), field(default=None, metadata=meta)))
    cls = make_dataclass(name, required + optional, bases=(RecordValues,), frozen=True, namespace={"__doc__": doc})
    cls.__module__ = module
    cls.__item__ = model
    return cls

"""Lazy strategy registry, strategy specs and variant configs.

A registry entry maps a strategy's name (the same in YAML, the CLI and the app) to
`"module:Class"`, imported only when chosen, so the embedding strategy's torch import is
paid only by runs that use it. A *spec* is a strategy plus parameter overrides and a label;
a named variant (`session_aware[no_repeat_boost]`) is its own row everywhere. A variant name a
strategy class declares in its `presets` (`session_aware[published]`, `hybrid[published]`) starts
from that preset's params, and the spec's overrides apply on top.

Any spec can switch on the expiry stage (`stores.expiry`): `history_stuffing:expiry=on` runs
`history_stuffing` behind the stage and is its own row, `history_stuffing[expiry]`; the stage's
rules are reached with dotted keys, `session_aware:expiry=on,expiry.sentiment_days=3`. In a
TOML config the same keys go in `params`, or `expiry = true` / `expiry = {sentiment_days = 3}`
sits beside `name`.

Names are found by the one registry mechanism of `stores.plugins`: the built-in table below,
then the `supportbench.strategies` entry points of installed packages, then an explicit target
(`acme_memory.strategy.Acme` in a spec; `class = "acme_memory.strategy:Acme"` beside `name` in a
TOML config, which then names the row).
"""

from __future__ import annotations

import difflib
import functools
import hashlib
import json
import math
import os
from dataclasses import dataclass, fields, is_dataclass, replace
from pathlib import Path
from typing import Any, get_type_hints

from stores.plugins import Entry, Registry
from stores.params import SECRET, hashed_params, secret_fields, secret_problems, secret_values, with_environment
from stores.protocol import contract_problems
from stores.spec_text import check_variant, config_target, flatten, read_toml, split_list, split_spec

REGISTRY: dict[str, str] = {
    "history_stuffing": "stores.retrieval.history_stuffing:HistoryStuffing",
    "tfidf": "stores.retrieval.tfidf:TfidfRetrieval",
    "embedding": "stores.retrieval.embedding:EmbeddingRetrieval",
    "session_aware": "stores.session.session_aware:SessionAware",
    "hybrid": "stores.session.hybrid:Hybrid",
    "mem0": "stores.remote.mem0:Mem0",
    "hindsight": "stores.remote.hindsight:Hindsight",
    "statewave": "stores.remote.statewave:Statewave",
    "http": "stores.remote.http_service:HttpService",
    "structured": "stores.structured.strategy:Structured",
    "oracle": "stores.controls:Oracle",
    "empty": "stores.controls:Empty",
    "first_turn_pin": "stores.shortcuts:FirstTurnPin",
    "role_first": "stores.shortcuts:RoleFirst",
    "nth_turn_pin": "stores.shortcuts:NthTurnPin",
    "keyword_only": "stores.shortcuts:KeywordOnly",
    "recency": "stores.shortcuts:Recency",
}

SHORTCUTS = ("first_turn_pin", "role_first", "nth_turn_pin", "keyword_only", "recency")
"""Shortcut controls (`stores.shortcuts`): trivial rules every verdict must be separated from."""

CONTROLS = frozenset({"oracle", "empty", *SHORTCUTS})
"""Strategies that exist to prove the scorers honest (oracle, empty) or the verdict shortcut-proof
(the shortcuts); kept out of leaderboards by default."""

DEFAULT_STRATEGIES = ("history_stuffing", "tfidf", "embedding", "session_aware", "hybrid", "structured", "oracle", "empty",
                      *SHORTCUTS)


class SpecError(ValueError):
    """A strategy name, parameter or config file that cannot be used."""


STRATEGIES = Registry("strategy", REGISTRY, SpecError)
"""Built-in strategies, then installed ones (`supportbench.strategies` entry points), then targets."""


def strategy_class(name: str):
    """Import and return the class `name` resolves to (built-in, installed or a target,
    `stores.plugins`), or fail with 'did you mean'; a class that does not keep the protocol it
    claims (`stores.protocol.contract_problems`, secret fields that are not optional strings)
    fails here, naming what is wrong."""
    entry = STRATEGIES.entry(name)
    found = STRATEGIES.load(entry)
    if not isinstance(found, type):
        raise SpecError(f"strategy {name!r} ({entry.target}) is not a class but {type(found).__name__}")
    problems = _contract(found)
    if problems:
        raise SpecError(f"strategy {name!r} ({entry.target}) does not keep the strategy protocol: {'; '.join(problems)}")
    return found


@functools.cache
def _contract(cls: type) -> tuple[str, ...]:
    return tuple(contract_problems(cls)) + tuple(secret_problems(getattr(cls, "Params", None)))


@functools.cache
def _secret_paths_of(cls: type) -> frozenset[str]:
    return frozenset(secret_fields(cls.Params()))


def _secret_paths(name: str) -> frozenset[str]:
    return _secret_paths_of(strategy_class(name))


@dataclass(frozen=True)
class StrategySpec:
    """Which strategy to run, with which parameter overrides, under which label."""

    name: str
    """Registry key."""
    overrides: tuple[tuple[str, Any], ...] = ()
    """Parameter overrides, sorted by name."""
    variant: str = ""
    """Optional variant name; the label becomes `name[variant]`."""
    expiry: tuple[tuple[str, Any], ...] | None = None
    """None: no expiry stage; otherwise the stage is on, with these overrides of its rules
    (`stores.expiry.ExpiryParams` fields), sorted by name."""
    target: str = ""
    """An explicit class (`module:Class`, a TOML config's `class`) that `name` labels; empty:
    `name` itself is looked up (`stores.plugins`)."""

    @property
    def ref(self) -> str:
        """What the registry resolves: the explicit target, else the name."""
        return self.target or self.name

    def entry(self) -> Entry:
        """Where the strategy comes from (built-in, plugin, target), for the manifest and `ls`."""
        return STRATEGIES.entry(self.ref)

    @property
    def label(self) -> str:
        """The row name shown everywhere: `name`, `name[variant]`, `name[k=v,...]` (a secret
        override reads `k=<secret>`), and with the expiry stage `name[expiry]` or
        `name[expiry,k=v,...,expiry.k=v,...]`."""
        if self.variant:
            return f"{self.name}[{self.variant}]"
        parts = ["expiry"] if self.expiry is not None else []
        parts += [f"{k}={v}" for k, v in self.public_overrides().items()]
        parts += [f"expiry.{k}={v}" for k, v in self.expiry or ()]
        return f"{self.name}[{','.join(parts)}]" if parts else self.name

    def public_overrides(self) -> dict[str, Any]:
        """The overrides as the manifest shows them: secret values as `<secret>`."""
        secret = _secret_paths(self.ref) if self.overrides else frozenset()
        return {k: (SECRET if k in secret and v else v) for k, v in self.overrides}

    def secret_paths(self) -> list[str]:
        """Dotted keys of the strategy's secret params (`stores.params.secret`)."""
        return sorted(_secret_paths(self.ref))

    def secret_values(self) -> list[str]:
        """The secret values this spec runs with (from its overrides or the environment)."""
        return secret_values(self.params())

    def params(self):
        """The strategy's frozen params with the overrides applied (validated and coerced).

        A variant the class names in `presets` starts from that preset instead of the defaults.
        A dotted key reaches into a nested params dataclass: `health.sla_resolution_hours=48`.
        A secret field the overrides do not set is read from its environment variable
        (`stores.params.secret`).
        """
        cls = strategy_class(self.ref)
        base = cls.Params()
        preset = getattr(cls, "presets", {}).get(self.variant)
        if preset:
            base = replace(base, **preset)
        given = {k for k, _ in self.overrides}
        if not self.overrides:
            return with_environment(base, given, os.environ)
        nested: dict[str, list[tuple[str, Any]]] = {}
        flat: list[tuple[str, Any]] = []
        for key, raw in self.overrides:
            head, dot, rest = key.partition(".")
            (nested.setdefault(head, []).append((rest, raw)) if dot else flat.append((key, raw)))
        values = _coerce(self.name, base, flat)
        for head, items in nested.items():
            if head not in {f.name for f in fields(base)}:
                _coerce(self.name, base, [(head, None)])  # raises, naming the unknown key with suggestions
            inner = getattr(base, head)
            if not is_dataclass(inner):
                raise SpecError(f"strategy {self.name!r} parameter {head!r} has no sub-parameters")
            sub = _coerce(f"{self.name}.{head}", inner, items)
            try:
                values[head] = replace(inner, **sub)
            except (TypeError, ValueError) as e:
                raise SpecError(f"strategy {self.name!r} parameter {head!r}: {e}") from None
        try:
            result = with_environment(replace(base, **values), given, os.environ)
        except (TypeError, ValueError) as e:  # a Params class's own range checks (__post_init__)
            raise SpecError(f"strategy {self.name!r}: {e}") from None
        _check_relations(self.name, result)
        return result

    def expiry_params(self):
        """The expiry stage's rules with the overrides applied, or None when the stage is off."""
        if self.expiry is None:
            return None
        from stores.expiry import ExpiryParams

        values = _coerce(f"{self.name}.expiry", ExpiryParams(), list(self.expiry))
        try:
            return ExpiryParams(**values)
        except (TypeError, ValueError) as e:
            raise SpecError(f"strategy {self.name!r} expiry stage: {e}") from None

    def build(self):
        """A fresh strategy instance (behind the expiry stage when it is on)."""
        cls, params = strategy_class(self.ref), self.params()
        stage = self.expiry_params()
        if stage is None:
            return cls(params)
        from stores.expiry import ExpiryStage

        return ExpiryStage.wrap(lambda: cls(params), stage)

    def capabilities(self) -> frozenset[str]:
        """What the built strategy can answer beyond context (the class's, plus `expiry` with the stage);
        a class whose claims depend on the service it talks to says so with `service_claims(params)`."""
        cls = strategy_class(self.ref)
        claims = getattr(cls, "service_claims", None)
        caps = frozenset(claims(self.params()) if callable(claims) else getattr(cls, "capabilities", frozenset()))
        return caps | {"expiry"} if self.expiry is not None else caps

    def params_hash(self) -> str:
        """Stable hash of the name and the full effective params (defaults included), secrets
        left out (a rotated key is the same strategy), and the expiry stage's rules when it is on."""
        p = self.params()
        body: dict[str, Any] = {"name": self.name, "params": hashed_params(p)}
        if self.target:
            body["target"] = self.target
        stage = self.expiry_params()
        if stage is not None:
            body["expiry"] = hashed_params(stage)
        payload = json.dumps(body, sort_keys=True, default=str)
        return hashlib.sha256(payload.encode()).hexdigest()[:16]


def _coerce(owner: str, params: Any, items: list[tuple[str, Any]]) -> dict[str, Any]:
    """Validate and coerce `key=value` overrides against a params dataclass's fields and types."""
    from pydantic import TypeAdapter, ValidationError

    known = {f.name for f in fields(params)}
    hints = get_type_hints(type(params), include_extras=True)  # extras: the ranges of `stores.bounds`
    values: dict[str, Any] = {}
    for key, raw in items:
        if key not in known:
            close = difflib.get_close_matches(key, known, n=3)
            hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
            raise SpecError(f"strategy {owner!r} has no parameter {key!r}{hint} (parameters: {', '.join(sorted(known))})")
        if isinstance(raw, float) and not math.isfinite(raw):  # before the ranges, which nan would fail obscurely
            raise SpecError(f"strategy {owner!r} parameter {key!r}={raw!r}: expected a finite number")
        try:
            values[key] = TypeAdapter(hints[key]).validate_python(raw)
        except ValidationError as e:
            msg = e.errors()[0]["msg"].removeprefix("Value error, ")
            raise SpecError(f"strategy {owner!r} parameter {key!r}={raw!r}: {msg}") from None
        if isinstance(values[key], float) and not math.isfinite(values[key]):
            raise SpecError(f"strategy {owner!r} parameter {key!r}={raw!r}: expected a finite number")
    return values


def _check_relations(owner: str, params: Any) -> None:
    """Ranges between parameters (`stores.bounds.NotBelow`...), on the finished params, nested ones included."""
    from stores.bounds import relations

    hints = get_type_hints(type(params), include_extras=True)
    for f in fields(params):
        value = getattr(params, f.name)
        if is_dataclass(value):
            _check_relations(f"{owner}.{f.name}", value)
        for rel in relations(hints.get(f.name)):
            other = getattr(params, rel.other)
            if not rel.holds(value, other):
                raise SpecError(f"strategy {owner!r} parameter {f.name!r}={value!r}: must be {rel.expected()} ({other!r})")


_ON = {"on": True, "true": True, "yes": True, "1": True, "off": False, "false": False, "no": False, "0": False}


def split_expiry(owner: str, overrides: list[tuple[str, Any]]) -> tuple[list[tuple[str, Any]], tuple | None]:
    """Take the expiry stage's keys out of a spec's overrides, `expiry=on|off` (true/false from
    TOML) and `expiry.<rule>=v`. Returns the strategy's own overrides and the stage's (None when
    the stage is off)."""
    own: list[tuple[str, Any]] = []
    switch: bool | None = None
    rules: dict[str, Any] = {}
    for key, value in overrides:
        if key == "expiry":
            if isinstance(value, bool) or str(value).lower() in _ON:
                switch = value if isinstance(value, bool) else _ON[str(value).lower()]
            else:
                raise SpecError(f"strategy {owner!r}: expiry={value!r}: expected on or off")
        elif key.startswith("expiry."):
            rules[key.removeprefix("expiry.")] = value
        else:
            own.append((key, value))
    if rules and switch is not True:
        raise SpecError(f"strategy {owner!r}: expiry rules {', '.join(sorted(rules))} given but the stage is "
                        f"{'off' if switch is False else 'not switched on'}: add expiry=on")
    return own, (tuple(sorted(rules.items())) if switch else None)


def parse_spec(text: str) -> StrategySpec:
    """`name`, `name:key=value,key=value` or `name[variant]:key=value` (`expiry=on` and
    `expiry.<rule>=value` switch on and tune the expiry stage); `name` may be a dotted target,
    `acme_memory.strategy.Acme:top_k=5`."""
    head, variant, overrides = split_spec(text, "strategy", SpecError)
    strategy_class(head)  # fail early on unknown names
    own, stage = split_expiry(head, overrides)
    spec = StrategySpec(head, tuple(sorted(own)), variant, stage)
    spec.params()  # validate overrides now, not midway through a run
    spec.expiry_params()
    return spec


def parse_specs(text: str) -> list[StrategySpec]:
    """A comma-separated list where each item may carry `:k=v` overrides.

    Overrides bind to the strategy before them: `tfidf,session_aware:recency=half_life,half_life_days=14`.
    """
    return [parse_spec(s) for s in split_list(text)]


def load_config(path: str | Path) -> list[StrategySpec]:
    """Strategies from a TOML file: `[[strategy]]` tables with `name`, optional `variant`, `params`,
    `expiry`, and `class = "module:Class"` (an explicit target the row is then named `name` for).

    Any problem is one `SpecError` line naming the file (and the table): not a file, not UTF-8,
    not TOML, a table of the wrong shape, an unknown strategy or parameter, a value out of range.
    """
    path = Path(path)
    data = read_toml(path, "strategy", SpecError)
    entries = data.get("strategy")
    if not isinstance(entries, list) or not entries:
        raise SpecError(f"{path}: expected one or more [[strategy]] tables with a name")
    specs = []
    for i, entry in enumerate(entries):
        where = f"{path}: strategy[{i}]: "
        if not isinstance(entry, dict):
            raise SpecError(f"{where}expected a table with keys name, class, variant, params, expiry; got {entry!r}")
        unknown = set(entry) - {"name", "class", "variant", "params", "expiry"}
        if unknown or "name" not in entry:
            raise SpecError(f"{where}expected keys name, class, variant, params, expiry; got {', '.join(sorted(entry)) or 'none'}")
        target = config_target(entry, where, SpecError)
        params = entry.get("params", {})
        if not isinstance(params, dict):
            raise SpecError(f"{where}params: expected a table of parameter = value, got {params!r}")
        try:
            strategy_class(target or entry["name"])
            items = flatten(params)
            if "expiry" in entry:  # beside name: true/false/"on"/"off", or a table of the stage's rules
                stage = entry["expiry"]
                items += [("expiry", "on"), *flatten(stage, "expiry.")] if isinstance(stage, dict) else [("expiry", stage)]
            own, stage_rules = split_expiry(entry["name"], items)
            spec = StrategySpec(entry["name"], tuple(sorted(own)), check_variant(entry.get("variant", ""), "", SpecError),
                                stage_rules, target)
            spec.params()
            spec.expiry_params()
        except SpecError as e:
            raise SpecError(f"{where}{e}") from None
        specs.append(spec)
    labels = [s.label for s in specs]
    dupes = sorted({x for x in labels if labels.count(x) > 1})
    if dupes:
        raise SpecError(f"{path}: duplicate strategy labels {dupes}: give each variant its own name")
    return specs

"""Lazy registry of decision policies, policy specs and variant configs.

The same shape as the strategy registry (`stores.registry`), on its own axis: a name maps to
`"module:Class"`, imported only when chosen. A spec is `name`, `name:key=value,key=value` or
`name[variant]:key=value`; a dotted key reaches a nested params dataclass
(`session_state:producers.short_max_words=3`). A variant is its own row everywhere
(`session_state[hostile_streak=3]`, or `session_state[strict]` when named).

Names are found as strategies' are (`stores.plugins`): the built-in table, then the
`supportbench.policies` entry points of installed packages, then an explicit target
(`acme_policy.Policy` in a spec, `class = "acme_policy:Policy"` beside `name` in a config).
"""

from __future__ import annotations

import difflib
import hashlib
import json
import math
from dataclasses import asdict, dataclass, fields, is_dataclass, replace
from pathlib import Path
from typing import Any, get_type_hints

from stores.plugins import Entry, Registry
from stores.redaction import redact_url
from stores.spec_text import check_variant, config_target, flatten, read_toml, split_list, split_spec

POLICIES: dict[str, str] = {
    "session_state": "stores.decisions.session_state:SessionState",
    "per_message": "stores.decisions.per_message:PerMessage",
}

DEFAULT_POLICIES = ("session_state", "per_message")
"""What `--policies` runs when not given."""


class PolicySpecError(ValueError):
    """A policy name, parameter or config file that cannot be used."""


POLICY_REGISTRY = Registry("policy", POLICIES, PolicySpecError)
"""Built-in policies, then installed ones (`supportbench.policies` entry points), then targets."""


def policy_class(name: str):
    """Import and return the class `name` resolves to (built-in, installed or a target), or
    fail with 'did you mean'; a class without a `Params` dataclass fails here."""
    entry = POLICY_REGISTRY.entry(name)
    found = POLICY_REGISTRY.load(entry)
    if not isinstance(found, type) or not is_dataclass(getattr(found, "Params", None)):
        raise PolicySpecError(f"policy {name!r} ({entry.target}) is not a policy class with a Params dataclass")
    return found


@dataclass(frozen=True)
class PolicySpec:
    """Which policy to run, with which parameter overrides, under which label."""

    name: str
    """Registry key."""
    overrides: tuple[tuple[str, Any], ...] = ()
    """Parameter overrides, sorted by key."""
    variant: str = ""
    """Optional variant name; the label becomes `name[variant]`."""
    target: str = ""
    """An explicit class (`module:Class`, a config's `class`) that `name` labels; empty: `name` is looked up."""

    @property
    def ref(self) -> str:
        """What the registry resolves: the explicit target, else the name."""
        return self.target or self.name

    def entry(self) -> Entry:
        """Where the policy comes from (built-in, plugin, target), for the manifest and `ls`."""
        return POLICY_REGISTRY.entry(self.ref)

    @property
    def label(self) -> str:
        """The row name shown everywhere: `name`, `name[variant]` or `name[k=v,...]`."""
        if self.variant:
            return f"{self.name}[{self.variant}]"
        if self.overrides:
            return f"{self.name}[{','.join(f'{k}={_shown(v)}' for k, v in self.overrides)}]"
        return self.name

    def params(self):
        """The policy's frozen params with the overrides applied (validated and coerced)."""
        base = policy_class(self.ref).Params()
        return _apply(self.name, base, list(self.overrides))

    def build(self, **kwargs: Any):
        """A fresh policy instance (`kwargs` go to the constructor, e.g. `namespace=`)."""
        return policy_class(self.ref)(self.params(), **kwargs)

    def params_hash(self) -> str:
        """Stable hash of the name and the full effective params (defaults included)."""
        # a connection URL's credentials are no part of what the policy is (a rotated password is the same policy)
        body: dict[str, Any] = {"name": self.name, "params": {k: _shown(v) for k, v in asdict(self.params()).items()}}
        if self.target:
            body["target"] = self.target
        payload = json.dumps(body, sort_keys=True, default=str)
        return hashlib.sha256(payload.encode()).hexdigest()[:16]


def _shown(value: Any) -> Any:
    """An override as a label shows it: a URL's credentials redacted."""
    return redact_url(value) if isinstance(value, str) else value


def _apply(owner: str, base: Any, items: list[tuple[str, Any]]) -> Any:
    """`base` with `key=value` overrides applied; dotted keys recurse into nested dataclasses."""
    from pydantic import TypeAdapter, ValidationError

    known = {f.name for f in fields(base)}
    hints = get_type_hints(type(base), include_extras=True)  # keep the declared ranges (stores.bounds)
    flat: dict[str, Any] = {}
    nested: dict[str, list[tuple[str, Any]]] = {}
    for key, raw in items:
        head, dot, rest = key.partition(".")
        if head not in known:
            close = difflib.get_close_matches(head, known, n=3)
            hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
            raise PolicySpecError(f"policy {owner!r} has no parameter {head!r}{hint} (parameters: {', '.join(sorted(known))})")
        if dot:
            if not is_dataclass(getattr(base, head)):
                raise PolicySpecError(f"policy {owner!r} parameter {head!r} has no sub-parameters")
            nested.setdefault(head, []).append((rest, raw))
            continue
        if is_dataclass(getattr(base, head)):
            raise PolicySpecError(f"policy {owner!r} parameter {head!r} takes sub-parameters ({head}.NAME=VALUE)")
        try:
            flat[key] = TypeAdapter(hints[key]).validate_python(raw)
        except ValidationError as e:
            raise PolicySpecError(f"policy {owner!r} parameter {key!r}={raw!r}: {e.errors()[0]['msg']}") from None
        if isinstance(flat[key], float) and not math.isfinite(flat[key]):
            raise PolicySpecError(f"policy {owner!r} parameter {key!r}={raw!r}: expected a finite number")
    for head, sub in nested.items():
        flat[head] = _apply(f"{owner}.{head}", getattr(base, head), sub)
    try:
        return replace(base, **flat)
    except (TypeError, ValueError) as e:  # the params class's own range checks (__post_init__)
        raise PolicySpecError(f"policy {owner!r}: {e}") from None


def parse_policy(text: str) -> PolicySpec:
    """`name`, `name:key=value,key=value` or `name[variant]:key=value`."""
    head, variant, overrides = split_spec(text, "policy", PolicySpecError)
    policy_class(head)
    spec = PolicySpec(head, tuple(sorted(overrides)), variant)
    spec.params()  # validate now, not midway through a run
    return spec


def parse_policies(text: str) -> list[PolicySpec]:
    """A comma-separated list; `key=value` parts bind to the policy before them; `none` is no policy.

    `session_state,per_message,session_state:hostile_streak=3,offer_ttl_minutes=30`
    """
    if text.strip().lower() == "none":
        return []
    items = split_list(text)
    specs = [parse_policy(s) for s in items]
    _no_duplicates(specs, "--policies")
    return specs


def _no_duplicates(specs: list[PolicySpec], where: str) -> None:
    labels = [s.label for s in specs]
    dupes = sorted({x for x in labels if labels.count(x) > 1})
    if dupes:
        raise PolicySpecError(f"{where}: duplicate policy labels {dupes}: give each variant its own name")


def load_policy_config(path: str | Path) -> list[PolicySpec]:
    """Policies from a TOML file: `[[policy]]` tables with `name`, optional `variant`, `params`,
    and `class = "module:Class"` (an explicit target the row is then named `name` for)."""
    path = Path(path)
    data = read_toml(path, "policy", PolicySpecError)
    entries = data.get("policy")
    if not isinstance(entries, list) or not entries:
        raise PolicySpecError(f"{path}: expected one or more [[policy]] tables with a name")
    specs = []
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict) or set(entry) - {"name", "class", "variant", "params"} or "name" not in entry:
            got = ', '.join(sorted(entry)) if isinstance(entry, dict) else repr(entry)
            raise PolicySpecError(f"{path}: policy[{i}]: expected keys name, class, variant, params; got {got}")
        target = config_target(entry, f"{path}: policy[{i}]: ", PolicySpecError)
        try:
            policy_class(target or entry["name"])
            params = flatten(entry.get("params") or {})
            variant = check_variant(entry.get("variant", ""), "", PolicySpecError)
            spec = PolicySpec(entry["name"], tuple(sorted(params)), variant, target)
            spec.params()
        except PolicySpecError as e:
            raise PolicySpecError(f"{path}: policy[{i}]: {e}") from None
        specs.append(spec)
    _no_duplicates(specs, str(path))
    return specs


def describe(name: str) -> list[tuple[str, Any, str]]:
    """(parameter, default, docstring) of a policy, nested ones dotted (for `ls policies`)."""
    import ast
    import inspect

    def docs(cls) -> dict[str, str]:
        out: dict[str, str] = {}
        try:
            body = ast.parse(inspect.getsource(cls)).body[0].body
        except (OSError, TypeError, IndexError):
            return out
        for a, b in zip(body, body[1:]):
            if isinstance(a, ast.AnnAssign) and isinstance(a.target, ast.Name) and isinstance(b, ast.Expr) \
                    and isinstance(b.value, ast.Constant) and isinstance(b.value.value, str):
                out[a.target.id] = " ".join(b.value.value.split())
        return out

    def walk(params, prefix: str) -> list[tuple[str, Any, str]]:
        d, rows = docs(type(params)), []
        for f in fields(params):
            v = getattr(params, f.name)
            rows.extend(walk(v, f"{prefix}{f.name}.") if is_dataclass(v) else [(f"{prefix}{f.name}", v, d.get(f.name, ""))])
        return rows

    return walk(policy_class(name).Params(), "")

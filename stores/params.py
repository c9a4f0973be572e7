"""Strategy parameters that are secrets: declared on the params dataclass, never written down.

A remote strategy needs an API key; a run writes every parameter to its manifest and hashes
them into `params_hash`, and a baseline copies both into the repository. A field declared with
`secret(env="VAR")` is different in each of those places:

- its value comes from `$VAR` when the spec does not give it (a spec may, e.g. in a test; the
  environment is the way to pass one in CI);
- `public_params` shows it as `SECRET` (`<secret>`) when set and `""` when not, which is what
  the run manifest, the strategy's label (`name[api_key=<secret>]`) and `supportbench ls
  strategies` show;
- `hashed_params` leaves it out, so `params_hash` (and the baseline's check of it) does not
  change with the key, and the baseline leaves it out of its params;
- the dataclass `repr` leaves it out, so an error message that prints the params cannot leak it.

Only `str` fields can be secret.
"""

from __future__ import annotations

import re
from dataclasses import MISSING, asdict, field, fields, is_dataclass, replace
from typing import Any, get_type_hints

from stores.redaction import SECRET, declare_env  # SECRET: how a set secret is shown, here and in every output

_ENV = re.compile(r"^[A-Z][A-Z0-9_]*$")


def secret(env: str, default: str = "") -> Any:
    """A secret `str` field of a params dataclass, read from `$env` when a spec does not set it:

        api_key: str = secret(env="HINDSIGHT_API_KEY")
        \"\"\"The Hindsight API key.\"\"\"
    """
    if not _ENV.match(env):
        raise ValueError(f"secret env {env!r}: expected an upper-case environment variable name")
    declare_env(env)  # its value is scrubbed from every output (stores.redaction)
    return field(default=default, repr=False, metadata={"secret": True, "env": env})


def secret_fields(params: Any, prefix: str = "") -> dict[str, str]:
    """Dotted path -> environment variable, for every secret field of a params instance
    (nested params dataclasses included, as dotted keys reach them: `health.key`)."""
    out: dict[str, str] = {}
    if not is_dataclass(params):
        return out
    for f in fields(params):
        path = f"{prefix}{f.name}"
        if f.metadata.get("secret"):
            out[path] = f.metadata["env"]
        else:
            value = getattr(params, f.name)
            if is_dataclass(value) and not isinstance(value, type):
                out.update(secret_fields(value, f"{path}."))
    return out


def secret_problems(params_cls: type) -> list[str]:
    """Secret fields that are not `str`, or without a default (they must be optional: read from
    the environment when not given)."""
    if not is_dataclass(params_cls):
        return []
    hints = get_type_hints(params_cls)
    problems = []
    for f in fields(params_cls):
        if f.metadata.get("secret"):
            if hints.get(f.name) is not str:
                problems.append(f"{params_cls.__name__}.{f.name} is secret but typed {hints.get(f.name)!r}, not str")
            if f.default is MISSING:
                problems.append(f"{params_cls.__name__}.{f.name} is secret but has no default")
    return problems


def _get(params: Any, path: str) -> Any:
    for part in path.split("."):
        params = getattr(params, part)
    return params


def _set(params: Any, path: str, value: Any) -> Any:
    head, _, rest = path.partition(".")
    if not rest:
        return replace(params, **{head: value})
    return replace(params, **{head: _set(getattr(params, head), rest, value)})


def with_environment(params: Any, given: set[str], environ: dict[str, str]) -> Any:
    """`params` with each secret field that is not in `given` (dotted keys a spec set) read
    from its environment variable, where that is set."""
    for path, env in secret_fields(params).items():
        if path not in given and env in environ:
            params = _set(params, path, environ[env])
    return params


def secret_values(params: Any) -> list[str]:
    """The non-empty values of the secret fields (what must never be written anywhere)."""
    return [v for v in (_get(params, p) for p in secret_fields(params)) if v]


def _plain(params: Any) -> dict[str, Any]:
    return asdict(params) if is_dataclass(params) else dict(params or {})


def _edit(d: dict[str, Any], path: str, value: Any = MISSING) -> None:
    """Set (or, with no value, delete) a dotted key in a nested dict."""
    *parents, last = path.split(".")
    for p in parents:
        d = d[p]
    if value is MISSING:
        d.pop(last, None)
    else:
        d[last] = value


def public_params(params: Any) -> dict[str, Any]:
    """The params as a plain dict with each secret shown as `SECRET` (or `""` when unset)."""
    d = _plain(params)
    for path in secret_fields(params):
        _edit(d, path, SECRET if _get(params, path) else "")
    return d


def hashed_params(params: Any) -> dict[str, Any]:
    """The params as a plain dict without the secret fields (what `params_hash` covers)."""
    d = _plain(params)
    for path in secret_fields(params):
        _edit(d, path)
    return d


def without(d: dict[str, Any], paths) -> dict[str, Any]:
    """A copy of the nested params dict `d` without the dotted keys `paths` (where present)."""
    import copy

    out = copy.deepcopy(d)
    for path in paths:
        try:
            _edit(out, path)
        except (KeyError, TypeError):
            pass
    return out


def redact(text: str, values) -> str:
    """`text` with every occurrence of each of `values` replaced by `SECRET`."""
    for v in sorted({v for v in values if v}, key=len, reverse=True):
        text = text.replace(v, SECRET)
    return text

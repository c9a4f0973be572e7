"""The text grammar shared by strategy and policy specs: `name`, `name[variant]`,
`name:key=value,key=value`, lists of them, and TOML parameter tables as dotted keys. A name may
be an explicit target (`package.module.Class`), and a TOML table may name its class beside its
name (`class = "package.module:Class"`); `stores.plugins` resolves both.

`stores.registry` (strategies) and `stores.decisions.registry` (decision policies) read specs
the same way, so a command line that works for `--strategies` works for `--policies`; each
registry then checks the names and parameters against its own classes. Errors are raised as the
caller's error class, with the caller's word for what is being parsed (`strategy`, `policy`).
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

from stores.files import CONFIG_BYTES, read_text_capped
from stores.redaction import register_url

VARIANT = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
"""A variant name: it becomes part of the label `name[variant]`, so no brackets, commas or spaces."""


def parse_value(raw: str) -> Any:
    """`true`/`false` as booleans, then an int, then a float, else the text itself."""
    low = raw.lower()
    if low in ("true", "false"):
        return low == "true"
    for conv in (int, float):
        try:
            return conv(raw)
        except ValueError:
            pass
    return raw


def check_variant(variant: Any, where: str, error: type[Exception]) -> str:
    """`variant` when it is a valid variant name (empty for none), else `error` naming `where`."""
    if not isinstance(variant, str) or (variant and not VARIANT.fullmatch(variant)):
        raise error(f"{where}variant {variant!r}: expected a name of letters, digits, '_', '.' and '-'")
    return variant


def config_target(entry: dict[str, Any], where: str, error: type[Exception]) -> str:
    """A config table's explicit class, `class = "package.module:Class"` beside `name` (empty
    when absent), or `error` naming `where`; with a class, `name` only labels the row, so it must
    be a plain name."""
    from stores.plugins import is_target

    target = entry.get("class", "")
    if not isinstance(target, str) or (target and not is_target(target)):
        raise error(f"{where}class {target!r}: expected \"package.module:Class\"")
    if target and not (isinstance(entry.get("name"), str) and VARIANT.fullmatch(entry["name"])):
        raise error(f"{where}name {entry.get('name')!r}: expected a name of letters, digits, '_', '.' and '-'")
    return target


def split_spec(text: str, kind: str, error: type[Exception]) -> tuple[str, str, list[tuple[str, Any]]]:
    """`name[variant]:k=v,k=v` as (name, variant, [(k, value), ...]), values read by `parse_value`;
    `error` (`bad <kind> spec ...`) on a malformed variant or override."""
    text = text.strip()
    head, _, tail = text.partition(":")
    variant = ""
    if "[" in head:
        if not head.endswith("]"):
            raise error(f"bad {kind} spec {text!r}: expected name[variant]")
        head, _, variant = head[:-1].partition("[")
        check_variant(variant, f"bad {kind} spec {text!r}: ", error)
    overrides = []
    for part in tail.split(",") if tail else ():
        k, eq, v = part.partition("=")
        if not eq or not k.strip():
            raise error(f"bad {kind} spec {text!r}: expected key=value, got {part!r}")
        value = parse_value(v.strip())
        if isinstance(value, str):
            register_url(value)  # a URL's credentials (a Redis password) are scrubbed from every output
        overrides.append((k.strip(), value))
    return head, variant, overrides


_KEY_VALUE = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*\s*=")
"""A `key=value` part: a (dotted) parameter name, then `=`; whatever follows is the value, colons
included (`redis_url=redis://127.0.0.1:6379/0`)."""


def split_list(text: str) -> list[str]:
    """A comma-separated list of specs, where `key=value` parts bind to the spec before them:
    `tfidf,session_aware:recency=half_life,half_life_days=14` is two specs, and so is
    `tfidf,session_state:locker=redis,redis_url=redis://127.0.0.1:6379/0` (a part is a new spec
    when it starts with a name followed by `:` or `[`, a parameter when it starts with `key=`)."""
    items: list[str] = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        if items and _KEY_VALUE.match(part):
            items[-1] += "," + part
        else:
            items.append(part)
    return items


def flatten(params: dict[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    """TOML sub-tables as dotted keys: `{health: {sla_resolution_hours: 48}}` ->
    `[("health.sla_resolution_hours", 48)]`."""
    out: list[tuple[str, Any]] = []
    for key, value in params.items():
        if isinstance(value, dict):
            out += flatten(value, f"{prefix}{key}.")
        else:
            out.append((f"{prefix}{key}", value))
    return out


def read_toml(path: Path, table: str, error: type[Exception]) -> dict[str, Any]:
    """The TOML document at `path`, or `error` in one line naming the file: missing, a folder,
    not UTF-8, unreadable, or not valid TOML (`table` names the tables the file should hold)."""
    try:
        return tomllib.loads(read_text_capped(path, CONFIG_BYTES))
    except FileNotFoundError:
        raise error(f"{path}: no such {table} config") from None
    except IsADirectoryError:
        raise error(f"{path}: is a folder; expected a TOML file of [[{table}]] tables") from None
    except UnicodeDecodeError as e:
        raise error(f"{path}: not a TOML file (not UTF-8 text: {e.reason} at byte {e.start})") from None
    except OSError as e:
        raise error(f"{path}: cannot read: {(e.strerror or str(e)).lower()}") from None
    except tomllib.TOMLDecodeError as e:
        raise error(f"{path}: not valid TOML: {e}") from None

"""One registry of secret values and one scrubber that every writer of the project uses.

A secret gets out in many spellings: a URL with `user:password@` written with or without its
trailing slash, percent-encoded or not; an API key read from the environment with a stray
`\\r`; a Redis password inside `redis_url`; a token in a query string. So a secret is
*registered* once, at start, in every spelling that can appear in text, and every output (the
run's manifest and Parquet tables, JUnit, baselines, reports, the `--summary` markdown, exports,
whatever the command line prints on stdout and stderr) passes through `scrub` before it is
written. Two rules need no registration at all: the userinfo of any URL
(`scheme://user:pw@host` -> `scheme://<secret>@host`) and the value of a key-like query parameter
(`?api_key=...`, `&token=...`) are redacted wherever a URL appears.

What is registered:

- `register_environment()`: the value of every environment variable declared by a secret field
  (`stores.params.secret(env=...)`) or listed in `SECRET_ENV`, of every variable whose name says
  it holds a secret (a `KEY`, `TOKEN`, `SECRET`, `PASSWORD`... part), and the credentials inside
  any variable's value that is a URL with them. It runs on the first `scrub` of a process (a
  worker process included) and again whenever a command starts.
- `register(value)`: a secret value from elsewhere (a spec's secret override, the password of a
  policy's `redis_url`), with its spellings: as given, stripped of surrounding whitespace,
  percent-encoded and decoded, and for a URL its password, its `user:password` and its
  key-like query values.

A value shorter than `MIN_LENGTH` characters is not scrubbed as free text (a two-letter password
would blank every word holding those letters); it is still redacted wherever it sits in a URL's
userinfo, by the URL rule.
"""

from __future__ import annotations

import logging
import os
import re
import sys
import threading
from contextlib import contextmanager
from typing import Any, Iterable, Iterator, Mapping
from urllib.parse import parse_qsl, quote, unquote, urlsplit

SECRET = "<secret>"
"""What a secret is replaced by wherever text is written or printed."""

MIN_LENGTH = 6
"""Registered values shorter than this are not scrubbed as free text (see the module doc)."""

SECRET_ENV = ("HINDSIGHT_URL", "HINDSIGHT_API_KEY", "STATEWAVE_URL", "STATEWAVE_API_KEY",
              "SUPPORTBENCH_REPLY_URL", "SUPPORTBENCH_REPLY_KEY")
"""Environment variables that hold secrets whether or not the module declaring them was imported
(a `check` never imports the strategies that wrote the run); `secret(env=...)` adds its own."""

_SECRET_NAME_PARTS = frozenset({"KEY", "APIKEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL",
                                "CREDENTIALS", "PASSPHRASE"})
"""A variable whose name has one of these `_`-separated parts holds a secret (`MY_API_KEY`)."""

KEY_PARAMS = ("api_key", "api-key", "apikey", "key", "token", "access_token", "auth", "password", "passwd", "pwd",
              "secret", "client_secret", "sig", "signature")
"""Query parameters whose values are redacted in any URL."""

URL_USERINFO = r"(?i)\b([a-z][a-z0-9+.\-]*://)[^\s/?#<>\"'`]*@"
"""A URL's scheme and userinfo (group 1 is the scheme): replaced by `\\1<secret>@`. Written for both
Python's `re` and RE2 (pyarrow's compute), so the Parquet tables are scrubbed by the same rule."""

URL_KEY_PARAM = r"(?i)([?&;](?:" + "|".join(re.escape(k) for k in KEY_PARAMS) + r")=)[^&#\s\"'<>`]+"
"""A key-like query parameter's name (group 1, with its `?`/`&`) and value: replaced by `\\1<secret>`."""

_USERINFO = re.compile(URL_USERINFO)
_KEY_PARAM = re.compile(URL_KEY_PARAM)
_URL = re.compile(r"(?i)\b[a-z][a-z0-9+.\-]*://[^\s\"'<>`]+")

_lock = threading.Lock()
_values: set[str] = set()
_declared_env: set[str] = set(SECRET_ENV)
_environment_done = False
_pattern: re.Pattern[str] | None = None


def declare_env(name: str) -> None:
    """Say that `$name` holds a secret (`stores.params.secret` calls this for each field)."""
    global _environment_done
    with _lock:
        if name not in _declared_env:
            _declared_env.add(name)
            _environment_done = False


def spellings(value: str) -> set[str]:
    """Every way `value` may appear in text: as given, stripped, percent-encoded and decoded, and
    for a URL its password, `user:password`, key-like query values and the URL without a
    trailing slash."""
    out: set[str] = set()
    if not isinstance(value, str) or not value:
        return out
    for v in {value, value.strip()}:
        if not v:
            continue
        out |= {v, quote(v, safe=""), unquote(v), v.rstrip("/")}
        out |= _url_parts(v)
    return {s for s in out if len(s.strip()) >= MIN_LENGTH}


def _url_parts(text: str) -> set[str]:
    """The credentials inside each URL of `text`."""
    out: set[str] = set()
    for m in _URL.finditer(text):
        try:
            parts = urlsplit(m.group(0))
        except ValueError:
            continue
        userinfo = parts.netloc.rpartition("@")[0] if "@" in parts.netloc else ""
        if userinfo:
            user, colon, password = userinfo.partition(":")
            out |= {userinfo, unquote(userinfo)}
            if colon and password:
                out |= {password, unquote(password), quote(unquote(password), safe="")}
        for k, v in parse_qsl(parts.query, keep_blank_values=False):
            if k.lower() in KEY_PARAMS and v:
                out |= {v, quote(v, safe="")}
    return out


def register(value: str | None) -> None:
    """Register a secret value in all its spellings (see `spellings`)."""
    global _pattern
    new = spellings(value or "") - _values
    if new:
        with _lock:
            _values.update(new)
            _pattern = None


def register_url(url: str | None) -> None:
    """Register the credentials inside a URL (not the URL itself: its host is no secret)."""
    global _pattern
    new = {s for s in _url_parts(url or "") if len(s.strip()) >= MIN_LENGTH} - _values
    if new:
        with _lock:
            _values.update(new)
            _pattern = None


def secret_name(name: str) -> bool:
    """Whether an environment variable's name says it holds a secret."""
    return name in _declared_env or bool(_SECRET_NAME_PARTS & set(name.upper().split("_")))


def register_environment(environ: Mapping[str, str] | None = None) -> None:
    """Register the secrets of the environment (see the module doc)."""
    global _environment_done
    environ = os.environ if environ is None else environ
    for name, value in list(environ.items()):
        if not value:
            continue
        if secret_name(name):
            register(value)
        elif "@" in value or "=" in value:
            register_url(value)
    if environ is os.environ:
        _environment_done = True


def registered() -> frozenset[str]:
    """The registered spellings (what `scrub` replaces literally), the environment's included."""
    _ensure_environment()
    return frozenset(_values)


def _ensure_environment() -> None:
    if not _environment_done:
        register_environment()


def _literal() -> re.Pattern[str] | None:
    global _pattern
    _ensure_environment()
    pattern = _pattern
    if pattern is None and _values:
        with _lock:
            ordered = sorted(_values, key=lambda v: (-len(v), v))  # the longest spelling first
            pattern = _pattern = re.compile("|".join(re.escape(v) for v in ordered))
    return pattern


def scrub(text: str) -> str:
    """`text` with every registered secret and every URL credential replaced by `SECRET`."""
    if not text or not isinstance(text, str):
        return text
    pattern = _literal()
    if pattern is not None:
        text = pattern.sub(SECRET, text)
    return redact_url(text)


def scrub_data(data: Any) -> Any:
    """A JSON-like value (dicts, lists, tuples, strings) with `scrub` applied to every string,
    dictionary keys included."""
    if isinstance(data, str):
        return scrub(data)
    if isinstance(data, Mapping):
        return {scrub_data(k): scrub_data(v) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return type(data)(scrub_data(v) for v in data) if isinstance(data, list) else tuple(scrub_data(v) for v in data)
    return data


def redact_url(text: str) -> str:
    """`text` with the userinfo and key-like query values of every URL in it replaced by `SECRET`:
    the two rules that need nothing registered, so the result depends on the text alone (a label,
    a hash)."""
    if not text or not isinstance(text, str):
        return text
    if "@" in text:
        text = _USERINFO.sub(r"\1" + SECRET + "@", text)
    if "=" in text:
        text = _KEY_PARAM.sub(r"\1" + SECRET, text)
    return text


class ScrubFilter(logging.Filter):
    """A logging filter that scrubs each record's message and traceback (add it to a logger whose
    records may quote a secret: an exception from a remote service's client, say)."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        clean = scrub(message)
        if clean != message:
            record.msg, record.args = clean, ()
        if record.exc_info and not record.exc_text:  # formatters print exc_text when it is set
            import traceback

            record.exc_text = scrub("".join(traceback.format_exception(*record.exc_info))).rstrip("\n")
        return True


class ScrubbedStream:
    """A text stream that scrubs what is written through it, and is otherwise the stream it
    wraps (`scrubbed_output` puts one over stdout and stderr while a command runs)."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def write(self, text: str) -> int:
        self._inner.write(scrub(text))
        return len(text)

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


@contextmanager
def scrubbed_output() -> Iterator[None]:
    """While the block runs, everything printed to `sys.stdout` and `sys.stderr` (rich's consoles,
    `print`, logging's last-resort handler, warnings) is scrubbed."""
    register_environment()
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = ScrubbedStream(saved[0]), ScrubbedStream(saved[1])
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved


def register_all(values: Iterable[str]) -> None:
    """`register` each of `values`."""
    for v in values:
        register(v)


__all__ = ["SECRET", "MIN_LENGTH", "SECRET_ENV", "URL_USERINFO", "URL_KEY_PARAM", "declare_env", "spellings", "register",
           "register_url", "register_environment", "register_all", "registered", "scrub", "scrub_data", "redact_url",
           "secret_name", "ScrubFilter", "ScrubbedStream", "scrubbed_output"]

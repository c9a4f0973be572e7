"""One way to find a strategy, a decision policy or a criterion: built-in, installed, or named.

A name is looked up in three places, in this order:

1. the built-in table (`name -> "module:Class"`, imported only when chosen);
2. the entry points of installed packages, group `supportbench.strategies`,
   `supportbench.policies` or `supportbench.criteria` (`importlib.metadata`), so a team's
   package registers its own design by declaring, in its `pyproject.toml`,
   `[project.entry-points."supportbench.strategies"] acme = "acme_memory.strategy:Acme"`;
3. an explicit target: a dotted name with a dot in it (`acme_memory.strategy.Acme`), or
   `module:Attr` (the form a TOML config's `class = "acme_memory.strategy:Acme"` takes).

The table of installed entries is read in every process that looks a name up, from that
process's `sys.path`, and read again whenever `sys.path` changes; the worker processes of a run
get the run's `sys.path` (`harness.run.workers.init_worker`), so they find the same set.
A built-in name wins over an installed one of the same name, and two packages that claim one
name are both refused: each of those, and an entry point that is not `module:Attr` or whose
import fails, is one line in `problems()` naming the package, and never hides the other entries.

Every `Entry` says where it came from (`where()`: `built-in`, `plugin acme-memory 1.2.0`,
`target`), which `supportbench ls` shows and the run manifest records with the resolved target
and the package's version (`Entry.manifest()`).
"""

from __future__ import annotations

import functools
import importlib
import importlib.metadata as metadata
import re
import sys
from dataclasses import dataclass
from typing import Any, Callable, Mapping

GROUPS = {"strategy": "supportbench.strategies", "policy": "supportbench.policies", "criterion": "supportbench.criteria"}
"""The entry point group of each kind of entry."""

PROJECT = "supportbench"
"""The package the built-in entries belong to."""

_TARGET = re.compile(r"^[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*(:[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*)?$")


@dataclass(frozen=True)
class Entry:
    """One registered name and what it resolves to."""

    name: str
    """The name specs use (`tfidf`, `acme`, or the dotted target itself)."""
    target: str
    """`module:Attr` (`module` alone for a criteria module)."""
    origin: str
    """`built-in`, `plugin` (an installed package's entry point) or `target` (named in the spec)."""
    package: str = PROJECT
    """The distribution it comes from (empty when no installed distribution holds the module)."""
    version: str = ""
    """That distribution's version (empty when unknown)."""

    def where(self) -> str:
        """Where the entry came from, as `ls` shows it."""
        if self.origin == "built-in":
            return "built-in"
        pkg = f" ({self.package} {self.version})".rstrip() if self.package else ""
        return f"plugin {self.package} {self.version}".rstrip() if self.origin == "plugin" else f"target {self.target}{pkg}"

    def manifest(self) -> dict[str, str]:
        """What a run manifest records of it: origin, target, package and version."""
        return {"origin": self.origin, "target": self.target, "package": self.package, "version": self.version}

    def load(self) -> Any:
        """Import the target and return the attribute it names (the module, when it names none)."""
        module, _, attr = self.target.partition(":")
        found: Any = importlib.import_module(module)
        for part in attr.split(".") if attr else ():
            found = getattr(found, part)
        return found


def is_target(text: str) -> bool:
    """Whether a spec's name is an explicit target (`pkg.module.Class` or `pkg.module:Class`)."""
    return ("." in text or ":" in text) and bool(_TARGET.match(text))


def split_target(text: str) -> str:
    """`pkg.module.Class` (the last dot separates the attribute) or `pkg.module:Class`, as `module:Attr`."""
    if ":" in text:
        return text
    module, _, attr = text.rpartition(".")
    return f"{module}:{attr}"


class Registry:
    """Built-in table, then installed entry points, then explicit targets, for one kind of entry."""

    def __init__(self, kind: str, builtins: Mapping[str, str], error: Callable[[str], Exception]) -> None:
        self.kind = kind
        """`strategy`, `policy` or `criterion`."""
        self.group = GROUPS[kind]
        """The entry point group read."""
        self.builtins = builtins
        """Name -> `module:Class` of what ships with the project."""
        self.error = error
        """The exception class a lookup raises (`SpecError`, `PolicySpecError`)."""
        self._seen: tuple[str, ...] | None = None
        self._plugins: dict[str, Entry] = {}
        self._problems: list[str] = []

    # -- reading the installed packages ----------------------------------------------------------
    def _scan(self) -> None:
        path = tuple(sys.path)
        if self._seen == path:
            return
        importlib.invalidate_caches()
        plugins: dict[str, Entry] = {}
        problems: list[str] = []
        claims: dict[str, list[str]] = {}
        for ep in sorted(metadata.entry_points(group=self.group), key=lambda e: (e.name, e.value)):
            dist = getattr(ep, "dist", None)
            package = dist.name if dist is not None else "?"
            version = dist.version if dist is not None else ""
            if package in claims.get(ep.name, []):
                continue  # the same distribution seen twice on the path
            claims.setdefault(ep.name, []).append(package)
            if ep.name in self.builtins:
                problems.append(f"{self.kind} plugin {ep.name!r} of package {package} {version}: "
                                f"the name is built in; the built-in {self.kind} is used")
                continue
            value = re.sub(r"\s*:\s*", ":", ep.value.partition("[")[0].strip())  # `module : Attr [extra]`
            if not _TARGET.match(value):
                problems.append(f"{self.kind} plugin {ep.name!r} of package {package} {version}: "
                                f"entry point {ep.value!r} is not module:Attr")
                continue
            plugins[ep.name] = Entry(ep.name, value, "plugin", package, version)
        for name, packages in claims.items():
            if len(packages) > 1 and name in plugins:
                del plugins[name]
                problems.append(f"{self.kind} plugin {name!r} is claimed by packages {', '.join(packages)}: "
                                f"none is used; uninstall one or name a target")
        self._plugins, self._problems, self._seen = plugins, problems, path

    def entries(self) -> dict[str, Entry]:
        """Every name this process can use without a target: built-ins first, then plugins by name."""
        self._scan()
        out = {n: Entry(n, t, "built-in", PROJECT, _project_version()) for n, t in self.builtins.items()}
        out.update(self._plugins)
        return out

    def problems(self) -> list[str]:
        """One line per installed entry that cannot be used (the package named), in name order."""
        self._scan()
        return list(self._problems)

    def entry(self, name: str) -> Entry:
        """What `name` resolves to: built-in, installed, or an explicit target; else the registry's
        error with 'did you mean' and the known names."""
        if not isinstance(name, str):
            raise self.error(f"a {self.kind} name is a string, got {name!r} (known: {', '.join(self.entries())})")
        if name in self.builtins:
            return Entry(name, self.builtins[name], "built-in", PROJECT, _project_version())
        known = self.entries()
        if name in known:
            return known[name]
        if is_target(name):
            target = split_target(name)
            package, version = _distribution_of(target.partition(":")[0])
            return Entry(name, target, "target", package, version)
        import difflib

        close = difflib.get_close_matches(name, known, n=3)
        hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
        broken = [p for p in self._problems if f" {name!r} " in p]
        why = f"; {broken[0]}" if broken else ""
        raise self.error(f"unknown {self.kind} {name!r}{hint}{why} (known: {', '.join(known)}; "
                         f"or a target such as package.module.Class)")

    def load(self, entry: Entry) -> Any:
        """Import what `entry` names; a failure is the registry's error in one line naming the
        package (a broken plugin) or the target (a wrong one)."""
        try:
            return entry.load()
        except Exception as e:  # an import error, a missing attribute, a plugin that raises on import
            where = entry.where() if entry.origin == "target" else f"{entry.where()}, {entry.target}"
            who = f"{self.kind} {entry.name!r} ({where})"
            raise self.error(f"cannot load {who}: {type(e).__name__}: {_one_line(e)}") from None


def _one_line(e: BaseException) -> str:
    return " ".join(str(e).split())[:300]


@functools.cache
def _project_version() -> str:
    """The installed project's version, or the one in its pyproject.toml (it runs from a checkout)."""
    try:
        return metadata.version(PROJECT)
    except metadata.PackageNotFoundError:
        import tomllib
        from pathlib import Path

        try:
            return tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())["project"]["version"]
        except (OSError, KeyError, tomllib.TOMLDecodeError):
            return ""


_DISTS: tuple[tuple[str, ...], Mapping[str, list[str]]] | None = None


def _distribution_of(module: str) -> tuple[str, str]:
    """(distribution, version) that installs the top-level package of `module`, or ("", "")."""
    global _DISTS
    path = tuple(sys.path)
    if _DISTS is None or _DISTS[0] != path:
        _DISTS = (path, metadata.packages_distributions())
    top = module.partition(".")[0]
    names = _DISTS[1].get(top) or []
    if top in ("stores", "harness"):
        return PROJECT, _project_version()
    if not names:
        return "", ""
    try:
        return names[0], metadata.version(names[0])
    except metadata.PackageNotFoundError:
        return names[0], ""

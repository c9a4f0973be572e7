"""An installed package, made on the fly: how the tests register a strategy, policy or criterion.

The registry finds installed entries through `importlib.metadata` (`stores.plugins`), so a test
registers its own the way a team's package does: a `<name>-<version>.dist-info` folder with
`METADATA` and `entry_points.txt` in a folder on the import path (and on `PYTHONPATH`, so the
command-line runs a test starts, and every worker process of a run, see it too). Nothing is
patched: a run in worker processes finds the entry exactly as the test process does.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

GROUPS = {"strategy": "supportbench.strategies", "policy": "supportbench.policies", "criterion": "supportbench.criteria"}


def write_distribution(root: Path, package: str, version: str, entries: dict[str, dict[str, str]],
                       modules: dict[str, str] | None = None) -> Path:
    """Write an installed distribution `package` under `root`: its entry points (`{"strategy":
    {name: "module:Class"}, ...}`) and, optionally, its modules (`{"acme/strategy.py": source}`).
    Returns `root`, the folder to put on the import path."""
    root.mkdir(parents=True, exist_ok=True)
    info = root / f"{re.sub(r'[^A-Za-z0-9.]+', '_', package)}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {package}\nVersion: {version}\n")
    lines = []
    for kind, names in entries.items():
        lines.append(f"[{GROUPS[kind]}]")
        lines += [f"{name} = {target}" for name, target in names.items()]
        lines.append("")
    (info / "entry_points.txt").write_text("\n".join(lines))
    for rel, source in (modules or {}).items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source)
    return root


class Plugins:
    """Registers test entries as installed packages for one test (the `plugins` fixture)."""

    def __init__(self, tmp: Path, monkeypatch) -> None:
        self.tmp = tmp
        self.monkeypatch = monkeypatch
        self.count = 0

    def install(self, entries: dict[str, dict[str, str]], package: str = "", version: str = "0.0.1",
                modules: dict[str, str] | None = None) -> Path:
        """A package holding `entries` (and `modules`), put on `sys.path` and `PYTHONPATH` for this test."""
        self.count += 1
        package = package or f"sb-test-plugin-{self.count}"
        root = write_distribution(self.tmp / f"site-{self.count}", package, version, entries, modules)
        self.monkeypatch.syspath_prepend(str(root))
        self.monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in (str(root), os.environ.get("PYTHONPATH", "")) if p))
        return root

    def strategy(self, name: str, target: str) -> None:
        """Make `name` a strategy: `target` is `module:Class` (e.g. `fake_strategies:NeedsKey`)."""
        self.install({"strategy": {name: target}})

    def policy(self, name: str, target: str) -> None:
        """Make `name` a decision policy."""
        self.install({"policy": {name: target}})

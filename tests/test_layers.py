"""Layers without circles: which package may import which, read from the syntax tree.

Every `import` and `from ... import` of the project's own code counts, at module level or inside a
function alike (an import moved into a function still ties two packages together). A package is
the folder holding the module (`harness/criteria/decisions.py` is `harness.criteria`); `app.py`
counts as `app`. `ALLOWED` is the whole map: an import that is not in it fails here, naming the
file and line, and the map itself must have no circle, so one cannot come back by adding an edge.

The one exception to "no circle" is a package importing its own sub-packages (`stores.registry`
builds a strategy behind `stores.expiry`): Python imports a parent before any child, so a child's
import of its parent is no circle of ours to break.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TOPS = ("harness", "stores", "pages", "app")

STORES = {"stores"}
ALLOWED: dict[str, set[str]] = {
    # the app: the entry file, then pages that read runs (and start one from Get started)
    "app": {"pages"},
    "pages": {"harness.analysis", "harness.criteria", "harness.format", "harness.replay", "harness.run", "stores",
              "stores.decisions"},
    # the command line sits on everything the harness has
    "harness.cli": {"harness.analysis", "harness.ci", "harness.criteria", "harness.format", "harness.generate",
                    "harness.importers", "harness.run", "stores", "stores.decisions", "stores.expiry", "stores.frontend",
                    "stores.retrieval"},
    # regression gate over the analysis of runs
    "harness.ci": {"harness.analysis", "harness.criteria", "harness.run", "stores", "stores.remote"},
    # reading runs: results, aggregation, comparison, the app's queries
    "harness.analysis": {"harness.criteria", "harness.format", "harness.replay", "harness.run", "stores",
                         "stores.decisions", "stores.expiry", "stores.reply", "stores.session", "stores.structured"},
    # the runner shards the replay and scores what it yields
    "harness.run": {"harness.criteria", "harness.format", "harness.replay", "stores", "stores.decisions",
                    "stores.retrieval"},
    # criteria score what a replay yields
    "harness.criteria": {"harness.format", "harness.replay", "stores", "stores.decisions", "stores.expiry",
                         "stores.reply"},
    # replay on the simulated clock
    "harness.replay": {"harness.format", "stores", "stores.decisions", "stores.reply"},
    "harness.generate": {"harness.format", "stores"},
    # other people's text into the scenario format
    "harness.importers": {"harness.format", "stores"},
    # the scenario format
    "harness.format": {"stores", "stores.decisions"},
    # strategies and policies: never the harness
    "stores": {"stores.expiry", "stores.retrieval"},
    "stores.decisions": {"stores", "stores.frontend"},
    "stores.expiry": {"stores", "stores.frontend"},
    # the learned and chat readers the seams above ask (their adapters live in each seam)
    "stores.frontend": {"stores", "stores.remote", "stores.retrieval"},
    "stores.remote": STORES,
    "stores.retrieval": STORES,
    "stores.session": {"stores", "stores.retrieval"},
    "stores.structured": {"stores", "stores.frontend", "stores.remote"},
    "stores.reply": {"stores", "stores.remote", "stores.structured"},
}


def package_of(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    if parts == ("app",):
        return "app"
    return ".".join(parts[:-1])


def target_package(dotted: str) -> str:
    """The package a dotted import names: the longest prefix that is a folder of ours."""
    parts = dotted.split(".")
    if parts[0] == "app":
        return "app"
    while parts and not (ROOT.joinpath(*parts).is_dir()):
        parts = parts[:-1]
    return ".".join(parts)


def imports(path: Path, text: str | None = None) -> list[tuple[int, str]]:
    """(line, package) of every import of the project's own code in `path` (or in `text` read as it)."""
    tree = ast.parse(path.read_text() if text is None else text, filename=str(path))
    here = package_of(path)
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here.split(".")[: len(here.split(".")) - (node.level - 1)]
                names = [".".join([*base, *([node.module] if node.module else [])])]
            else:
                names = [node.module or ""]
        else:
            continue
        out += [(node.lineno, target_package(n)) for n in names if n.split(".")[0] in TOPS]
    return out


def sources() -> list[Path]:
    return [ROOT / "app.py", *(p for top in TOPS[:-1] for p in sorted((ROOT / top).rglob("*.py")))]


def edges_not_allowed(path: Path, text: str | None = None) -> list[str]:
    here = package_of(path)
    return [f"{path.relative_to(ROOT)}:{line}: {here} imports {there}, which ALLOWED does not let it"
            for line, there in imports(path, text) if there != here and there not in ALLOWED.get(here, set())]


def test_every_import_of_our_own_code_is_an_allowed_edge():
    found = [v for p in sources() for v in edges_not_allowed(p)]
    assert not found, "\n".join(found)


def test_every_package_is_in_the_map():
    packages = {package_of(p) for p in sources()}
    assert packages == set(ALLOWED), f"unmapped: {packages - set(ALLOWED)}; gone: {set(ALLOWED) - packages}"


def circle(graph: dict[str, set[str]]) -> list[str] | None:
    """One circle of `graph` as a path (first node repeated at the end), None when there is none."""
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        state[node] = 2
        path.pop()
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def without_parent_to_child(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    return {a: {b for b in bs if not b.startswith(a + ".")} for a, bs in graph.items()}


def test_the_allowed_map_has_no_circle():
    assert circle(without_parent_to_child(ALLOWED)) is None, circle(without_parent_to_child(ALLOWED))


@pytest.mark.parametrize("where, code", [
    ("harness/criteria/support.py", "from harness.run.runner import execute"),
    ("harness/replay/decide.py", "def rows():\n    from harness.criteria.decisions import x\n"),
    ("harness/analysis/queries.py", "import harness.ci.check"),
    ("pages/_shared.py", "import app"),
    ("stores/session/health.py", "from harness.format.model import Scenario"),
])
def test_the_rule_catches_an_edge_that_would_close_a_circle(where, code):
    assert edges_not_allowed(ROOT / where, code)


def test_the_circle_finder_finds_one():
    assert circle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert circle({"a": {"b"}, "b": set()}) is None
    assert circle(without_parent_to_child({"stores": {"stores.expiry"}, "stores.expiry": {"stores"}})) is None

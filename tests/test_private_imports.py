"""Private stays private: no module imports another package's underscore module, or another
module's underscore name (`from x._y import`, `import x._y`, `from x import _z`).

An underscore module (`harness/criteria/_memo.py`) is private to its package: modules of that
package (and of its sub-packages) may import it, nothing else. An underscore name is private to
its module; a package's `__init__` may hold names private to the package. What is shared across
packages gets a public name that says what it is (`harness.criteria.bundle`, `SessionIndex`).

One grouping is the app's, not Python's: `app.py` is the entry file of the pages in `pages/`, so it
counts as part of that package (`pages/_shared.py` is underscored because every other file in the
folder is a page, and Streamlit's folder discovery must not list it as one).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CHECKED = ("harness", "stores", "pages", "bench")
APP_PACKAGE = {"app": "pages"}
"""Top-level modules that count as part of a package."""


def sources() -> list[Path]:
    files = [p for d in CHECKED for p in sorted((ROOT / d).rglob("*.py"))]
    return files + [ROOT / "app.py"]


def module_of(path: Path) -> tuple[str, str]:
    """(module name, the package it belongs to) of a source file."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
        return ".".join(parts), ".".join(parts)
    name = ".".join(parts)
    return name, APP_PACKAGE.get(name, ".".join(parts[:-1]))


def private(part: str) -> bool:
    return part.startswith("_") and not (part.startswith("__") and part.endswith("__"))


def is_package(dotted: str) -> bool:
    return (ROOT.joinpath(*dotted.split(".")) / "__init__.py").exists()


def inside(package: str, owner: str) -> bool:
    return package == owner or package.startswith(owner + ".")


def violations(path: Path, text: str | None = None) -> list[str]:
    """Every import in `path` (or in `text`, read as if it were that file) that reaches into
    something private elsewhere."""
    module, package = module_of(path)
    tree = ast.parse(path.read_text() if text is None else text, filename=str(path))
    out = []

    def check_module(dotted: str, line: int) -> None:
        parts = dotted.split(".")
        for i, part in enumerate(parts):
            if private(part):
                owner = ".".join(parts[:i])
                if not inside(package, owner):
                    out.append(f"{path.relative_to(ROOT)}:{line}: imports private module {'.'.join(parts[: i + 1])} "
                               f"from outside {owner or 'its top level'}")
                return

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                check_module(alias.name, node.lineno)
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against this module's package
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                source = ".".join([*base, *([node.module] if node.module else [])])
            else:
                source = node.module or ""
            check_module(source, node.lineno)
            for alias in node.names:
                if not private(alias.name):
                    continue
                if is_package(source) and (ROOT.joinpath(*source.split("."), alias.name + ".py").exists()
                                           or is_package(f"{source}.{alias.name}")):
                    check_module(f"{source}.{alias.name}", node.lineno)  # a private submodule
                elif not (is_package(source) and inside(package, source)) and source != module:
                    out.append(f"{path.relative_to(ROOT)}:{node.lineno}: imports private name {alias.name} from {source}")
    return out


def test_no_module_imports_something_private_of_another_package_or_module():
    found = [v for p in sources() for v in violations(p)]
    assert not found, "\n".join(found)


@pytest.mark.parametrize("code, bad", [
    ("from harness.criteria._memo import x", True),
    ("import harness.criteria._memo", True),
    ("from harness.criteria import _memo", True),
    ("from stores.session.session_aware import _Index", True),
    ("from streamlit.runtime._pages import x", True),
    ("from harness.criteria import bundle", False),
    ("from harness.criteria.bundle import View, hit", False),
    ("from __future__ import annotations", False),
])
def test_the_rule_catches_each_form_of_reaching_into_private(code, bad):
    # read as a module of harness.analysis
    assert bool(violations(ROOT / "harness" / "analysis" / "queries.py", code)) is bad


def test_a_package_may_import_its_own_private_modules_and_names():
    code = "from harness.criteria._memo import x\nfrom harness.criteria import _load\n"
    assert violations(ROOT / "harness" / "criteria" / "support.py", code) == []

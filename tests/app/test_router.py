"""The router (`pages/_router.py`, behind app.py) is the only way into a page: deep links in a fresh session, page modules, public Streamlit API."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from helpers import HANG
from streamlit.testing.v1 import AppTest

from pages import _views as views
from pages._shared import CURRENT_PAGE

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
MAIN = "20260102-000000-main"
APP_FILES = [ROOT / "app.py", *sorted((ROOT / "pages").glob("*.py"))]
PAGE_FILES = sorted(p.name for p in (ROOT / "pages").glob("*.py"))
"""Every file Streamlit's legacy `pages/` discovery would serve on its own."""


def deep_link(file: str, **params) -> AppTest:
    """A session whose first script run asks for the page of `pages/<file>` (what a fresh server
    does with `/<name>?...`: it runs that file by itself until some session calls st.navigation)."""
    at = AppTest.from_file(APP, default_timeout=HANG)
    at.query_params.update({"run": MAIN, **params})
    at.switch_page(f"pages/{file}")
    return at.run()


@pytest.mark.parametrize("file", PAGE_FILES)
def test_a_deep_link_to_any_page_file_runs_under_the_router(app_runs, file):
    at = deep_link(file)
    assert not at.exception, [e.message for e in at.exception]
    picker = at.sidebar.selectbox
    assert picker and picker[0].label == "Run" and picker[0].value == MAIN, "no run picker: the page ran without the router"
    by_file = {f"{v.url_path}.py": v.url_path for v in views.VIEWS[1:]}  # the default view answers the root URL only
    assert at.session_state[CURRENT_PAGE] == by_file.get(file, views.VIEWS[0].url_path)  # no view: the default page
    assert at.title, "the page drew nothing"


def test_a_deep_link_keeps_its_parameters(app_runs):
    case = "session_aware|billing-repeat|p-bill|preference_surfacing"
    at = deep_link("failures.py", case=case, strategy="session_aware")
    assert at.query_params["case"] == case and at.query_params["strategy"] == "session_aware"
    assert any(m.value.startswith("#### Transcript") for m in at.markdown)


def test_every_view_is_drawn_by_the_render_function_of_its_own_page_module():
    """A view's URL path names its file: that is the file a fresh server runs for the link."""
    for v in (*views.VIEWS, views.GET_STARTED):
        assert v.render.__module__ == f"pages.{v.url_path}" and v.render.__name__ == "render", v
        assert (ROOT / "pages" / f"{v.url_path}.py").is_file(), v
    paths = [v.url_path for v in (*views.VIEWS, views.GET_STARTED)]
    assert len(set(paths)) == len(paths)


def test_the_router_knows_a_page_by_its_url_path_only():
    assert views.view("failures").title == "Failures"
    with pytest.raises(KeyError, match="no page 'pages/failures.py'; known: leaderboard, rankings"):
        views.view("pages/failures.py")


def _private_uses(path: Path) -> list[str]:
    """Streamlit internals used by a file: `streamlit.runtime` (or any underscored module or name)
    imported, or an underscored attribute reached from the streamlit module."""
    tree = ast.parse(path.read_text(), str(path))
    aliases, found = set(), []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] == "streamlit":
                    aliases.add((a.asname or a.name).split(".")[0])
                    if a.name != "streamlit" and (".runtime" in a.name or any(p.startswith("_") for p in a.name.split("."))):
                        found.append(f"{path.name}:{node.lineno} import {a.name}")
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "streamlit":
            mod = node.module or ""
            names = [a.name for a in node.names]
            if ".runtime" in mod or any(p.startswith("_") for p in mod.split(".")) or any(n.startswith("_") for n in names):
                found.append(f"{path.name}:{node.lineno} from {mod} import {', '.join(names)}")
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
            base = node.value
            while isinstance(base, ast.Attribute):
                base = base.value
            if isinstance(base, ast.Name) and base.id in aliases:
                found.append(f"{path.name}:{node.lineno} .{node.attr}")
    return found


def test_the_app_uses_no_private_streamlit_api():
    found = [u for p in APP_FILES for u in _private_uses(p)]
    found += [f"{p.name}: {w}" for p in APP_FILES for w in ("streamlit.runtime", "PagesManager", "get_script_run_ctx")
              if w in p.read_text()]
    assert not found, found


def test_the_private_api_check_sees_what_the_old_routing_used(tmp_path):
    old = tmp_path / "old.py"
    old.write_text("import streamlit as st\nfrom streamlit.runtime.pages_manager import PagesManager\n"
                   "from streamlit.runtime.scriptrunner import get_script_run_ctx\nst._main\n")
    assert len(_private_uses(old)) == 3


def test_the_app_doc_tours_every_page():
    """docs/app.md's table names every view by its title and URL path (the page tour stays whole)."""
    doc = (ROOT / "docs" / "app.md").read_text()
    rows = [line for line in doc.splitlines() if line.startswith("| ")]
    for v in (*views.VIEWS, views.GET_STARTED):
        assert any(line.startswith(f"| {v.title} |") for line in rows), v.title
        assert v is views.GET_STARTED or v is views.VIEWS[0] or f"`/{v.url_path}`" in doc, v.url_path

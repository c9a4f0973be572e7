"""supportbench workbench: the router. Every page is declared once here; nothing else lives here.

    streamlit run app.py          # runs are read from $SUPPORTBENCH_RUNS or runs/

A page is a function, `render()` in its module under `pages/`, given to `st.Page` with the URL
path, title and icon declared in `VIEWS` below. `main()` draws the run picker in the sidebar,
hands the views to `st.navigation` and runs the one the URL names.

Adding a page: write `pages/<name>.py` with a `render()` that opens with `start(title)` and ends
with the guard every page module has (below), then add one `View` line to `VIEWS`.

    if __name__ == "__main__":  # Streamlit's pages/ folder discovery ran this file directly (see app.py)
        from pages._shared import hand_over

        hand_over()

The view's URL path is the module's file name (`/failures` is `pages/failures.py`): that is the
file a fresh server runs for the link, and `tests/app/test_router.py` holds every view to it.
Other pages open it with `go("<url path>", **params)` from `pages._shared`. The default view
answers the root URL; its own path (`/leaderboard?...`) is a hidden alias that reopens the root
with the same parameters. A link to a run that is not on disk gets a page saying so, with the
runs that are, never another run under its name.

Why the guard: a `pages/` folder next to the entry file is also the folder of Streamlit's legacy
multipage mode, which a server process uses until some session has called `st.navigation`
(Streamlit's documented rule: from then on the folder is ignored, in every session). So the first
link a fresh server receives, `/failures?case=...`, runs `pages/failures.py` as a script of its
own. Pages here are only ever called as functions by this router, so a page file running as a
script can only mean that; it hands over to `main()`, whose `st.navigation` call switches the
process to router mode and runs the page the URL names, under the router.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import streamlit as st

sys.path.insert(0, str(Path(__file__).resolve().parent))  # `pages` and `harness` from any cwd

from pages import compare, decisions, failures, get_started, glossary, health, leaderboard, rankings, trends  # noqa: E402
from pages._safety import damaged_notice, guarded, run_listing  # noqa: E402
from pages._shared import CURRENT_PAGE, go, missing_run, run_summary, url_selectbox  # noqa: E402

# The browser tab's icon, shipped with the app: a Material icon name would make the browser fetch it
# from a font host on every load (offline that fails; online it tells a third party who reads what).
ICON = Path(__file__).resolve().parent / "pages" / "assets" / "icon.svg"


@dataclass(frozen=True)
class View:
    """One page of the app, as the router registers it."""

    url_path: str
    """The page's path in links (`/<url_path>?...`) and its name for `go()` and the widget keys."""
    title: str
    """Its name in the navigation and the browser tab."""
    icon: str
    """A Material icon (`:material/<name>:`)."""
    render: Callable[[], None]
    """The function that draws the page."""


# The pages shown when there is a run; the first is the default (the app's root URL). Comments, not
# docstrings, at this level: Streamlit's magic would print a bare string of the entry file.
VIEWS: tuple[View, ...] = (
    View("leaderboard", "Leaderboard", ":material/leaderboard:", leaderboard.render),
    View("rankings", "Rankings per turn", ":material/format_list_numbered:", rankings.render),
    View("health", "Health", ":material/monitor_heart:", health.render),
    View("failures", "Failures", ":material/report:", failures.render),
    View("compare", "Compare runs", ":material/compare_arrows:", compare.render),
    View("trends", "Distributions and trends", ":material/insights:", trends.render),
    View("decisions", "Decisions", ":material/alt_route:", decisions.render),
    View("glossary", "Glossary", ":material/menu_book:", glossary.render),
)

# The only page while there is no run.
GET_STARTED = View("get_started", "Get started", ":material/play_circle:", get_started.render)


def view(url_path: str) -> View:
    """The view registered under `url_path` (KeyError naming the known ones when there is none)."""
    for v in (*VIEWS, GET_STARTED):
        if v.url_path == url_path:
            return v
    raise KeyError(f"no page {url_path!r}; known: {', '.join(v.url_path for v in (*VIEWS, GET_STARTED))}")


def page(url_path: str) -> st.Page:
    """A fresh `st.Page` for the view at `url_path` (what `st.navigation` and `st.switch_page` take).

    The default view (the first of `VIEWS`, or Get started) answers the root URL; its own path is
    served by `alias()`."""
    v = view(url_path)
    default = v is VIEWS[0] or v is GET_STARTED
    return st.Page(v.render, title=v.title, icon=v.icon, url_path="" if default else v.url_path, default=default)


def alias(v: View) -> st.Page:
    """A hidden page at the default view's own path (`/leaderboard?...`, which a reader may type or
    share): it reopens the root URL with the same parameters, instead of Streamlit's "page not found"."""

    def reopen() -> None:
        go(v.url_path, **{k: st.query_params.get_all(k) for k in st.query_params if k != "run"})

    return st.Page(reopen, title=v.title, icon=v.icon, url_path=v.url_path, visibility="hidden")


def main() -> None:
    """Route one script run: page config, run picker, navigation, then the page itself."""
    st.set_page_config(page_title="supportbench", page_icon=str(ICON), layout="wide")
    labels, damaged = run_listing()  # damaged runs are named in the sidebar, never offered
    ids = list(labels)
    views = VIEWS if ids else (GET_STARTED,)
    routes = [(v.url_path, page(v.url_path)) for v in views] + ([(views[0].url_path, alias(views[0]))] if ids else [])
    wanted = st.query_params.get("run")
    missing = bool(ids) and wanted is not None and wanted not in labels
    with st.sidebar:
        if ids and not missing:
            run = url_selectbox("Run", ids, "run", default=ids[0], format_func=lambda r: labels.get(r, r),
                                help="Runs under $SUPPORTBENCH_RUNS (or runs/), newest first: name or id, then suite.")
            guarded(lambda: run_summary(run), "this run's summary")
        damaged_notice(damaged)
    nav = st.navigation([p for _, p in routes])
    if missing:
        guarded(lambda: missing_run(wanted, labels, damaged), "the missing run's page")
        return
    if ids:
        st.query_params["run"] = run  # a page switch clears the URL; the run stays with the reader
    st.session_state[CURRENT_PAGE] = next(k for k, p in routes if p is nav)
    guarded(nav.run)  # a page that raises says so briefly; the traceback goes to the server log


if __name__ == "__main__":  # Streamlit runs the entry file as __main__; pages import it for `page()`
    main()

"""The app's router: `main()` draws the run picker in the sidebar, hands the views of
`pages/_views.py` to `st.navigation` and runs the one the URL names (`streamlit run app.py`).

The default view answers the root URL; its own path (`/leaderboard?...`) is a hidden alias that
reopens the root with the same parameters. Other pages open a view with `go("<url path>", **params)`
from `pages._shared`. A link to a run that is not on disk gets a page saying so, with the runs that
are, never another run under its name.

Why every page file ends with a guard calling `hand_over()`: a `pages/` folder next to the entry
file is also the folder of Streamlit's legacy multipage mode, which a server process uses until
some session has called `st.navigation` (Streamlit's documented rule: from then on the folder is
ignored, in every session). So the first link a fresh server receives, `/failures?case=...`, runs
`pages/failures.py` as a script of its own. Pages here are only ever called as functions by this
router, so a page file running as a script can only mean that; it hands over to `main()`, whose
`st.navigation` call switches the process to router mode and runs the page the URL names, under
the router.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from pages._safety import damaged_notice, guarded, run_listing
from pages._shared import CURRENT_PAGE, LISTED_RUNS, go, missing_run, run_summary, url_selectbox
from pages._views import GET_STARTED, VIEWS, View, page

# The browser tab's icon, shipped with the app: a Material icon name would make the browser fetch it
# from a font host on every load (offline that fails; online it tells a third party who reads what).
ICON = Path(__file__).resolve().parent / "assets" / "icon.svg"


def hand_over() -> None:
    """Run the router in place of a page file that Streamlit ran as a script of its own.

    Only Streamlit's legacy `pages/` folder mode does that (the first link a fresh server process
    receives, before any session has called `st.navigation`; see above). The router's
    `st.navigation` ends that mode for the whole process and runs the page the URL names.
    """
    main()


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
    st.session_state[LISTED_RUNS] = labels  # pages that offer another run reuse this listing
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



if __name__ == "__main__":  # Streamlit's pages/ folder discovery ran this file directly (see pages/_router.py)
    hand_over()

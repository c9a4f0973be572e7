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
from urllib.parse import urlencode

import streamlit as st

from pages._safety import damaged_notice, guarded, run_listing
from pages._shared import CURRENT_PAGE, LISTED_RUNS, go, missing_run, name_the_run, open_address, run_summary, url_selectbox, wkey
from pages._views import GET_STARTED, VIEWS, View, page

READING = "reading_run"
"""The session's key of the run the reader last had in the picker (a sidebar page switch clears the URL)."""

REDRAWN = "run_picker_redrawn"
"""Set on a run that leaves the picker out (a bare address): the next run draws it anew."""

# The browser tab's icon, shipped with the app: a Material icon name would make the browser fetch it
# from a font host on every load (offline that fails; online it tells a third party who reads what).
ICON = Path(__file__).resolve().parent / "assets" / "icon.svg"


def hand_over() -> None:
    """Run the router in place of a page file that Streamlit ran as a script of its own.

    Only Streamlit's legacy `pages/` folder mode does that (the first link a fresh server process
    receives, before any session has called `st.navigation`; see above). The router's
    `st.navigation` ends that mode for the whole process and runs the page the URL names.
    """
    main(handed_over=True)


def alias(v: View, handed_over: bool = False) -> st.Page:
    """A hidden page at the default view's own path (`/leaderboard?...`, which a reader may type or
    share): it reopens the root URL with the same parameters, instead of Streamlit's "page not found",
    in place of the alias's history entry (Back from the page goes where the reader came from, not
    to the alias, which would only reopen it)."""

    def reopen() -> None:
        if handed_over:
            # the first script run of a fresh server (the page file ran by itself, `hand_over`): the
            # browser's widgets are not yet those of the router, and a rerun the browser starts now
            # sends the run picker's first option as the reader's pick; Streamlit's own switch keeps the run
            go(v.url_path, **{k: st.query_params.get_all(k) for k in st.query_params if k != "run"})
        qp = {k: st.query_params.get_all(k) for k in st.query_params}
        open_address(f"./?{urlencode(qp, doseq=True)}", replace=True)

    return st.Page(reopen, title=v.title, icon=v.icon, url_path=v.url_path, visibility="hidden")


def main(handed_over: bool = False) -> None:
    """Route one script run: page config, run picker, navigation, then the page itself
    (`handed_over`: a page file ran by itself and handed over, see `hand_over`)."""
    st.set_page_config(page_title="supportbench", page_icon=str(ICON), layout="wide")
    labels, damaged = run_listing()  # damaged runs are named in the sidebar, never offered
    st.session_state[LISTED_RUNS] = labels  # pages that offer another run reuse this listing
    ids = list(labels)
    views = VIEWS if ids else (GET_STARTED,)
    routes = [(v.url_path, page(v.url_path)) for v in views] + ([(views[0].url_path, alias(views[0], handed_over))] if ids else [])
    wanted = st.query_params.get("run")
    missing = bool(ids) and wanted is not None and wanted not in labels
    bare = bool(ids) and wanted is None  # a bare address, or a page the sidebar opened (a page switch clears the URL)
    with st.sidebar:
        if ids and not missing and not bare:  # (drawn for a bare address, the picker would send the run: a history entry)
            if st.session_state.pop(REDRAWN, False):  # the picker comes back after a run without it: a new widget
                st.session_state[wkey("run")] = wanted  # would start on its first option, not on the run the URL names
            run = url_selectbox("Run", ids, "run", default=ids[0], format_func=lambda r: labels.get(r, r),
                                help="Runs under $SUPPORTBENCH_RUNS (or runs/), newest first: name or id, then suite.")
            st.session_state[READING] = run  # a plain key: Streamlit drops a widget's key on a run that does not draw it
            guarded(lambda: run_summary(run), "this run's summary")
        damaged_notice(damaged)
    nav = st.navigation([p for _, p in routes])
    if missing:
        guarded(lambda: missing_run(wanted, labels, damaged), "the missing run's page")
        return
    if bare:  # the run the reader had (the picker's), else the newest, named in place: one visit, one history entry
        kept = st.session_state.get(READING)
        st.session_state[REDRAWN] = True
        name_the_run(kept if kept in labels else ids[0])
    if ids:
        st.query_params["run"] = run
    st.session_state[CURRENT_PAGE] = next(k for k, p in routes if p is nav)
    guarded(nav.run)  # a page that raises says so briefly; the traceback goes to the server log



if __name__ == "__main__":  # Streamlit's pages/ folder discovery ran this file directly (see pages/_router.py)
    hand_over()


"""What keeps every page usable: damaged runs named instead of opened, and no traceback on a page.

A page that raises shows a short message and the app carries on (the sidebar, the other pages,
the other runs); the traceback goes to the server log, where whoever runs the app can read it,
and never to a visitor (it names files of the machine). `.streamlit/config.toml` also sets
`client.showErrorDetails = "none"`, so anything raised outside this guard is redacted too.
"""

from __future__ import annotations

import logging
from typing import Callable

import streamlit as st

from harness.analysis.results import RunInfo, list_runs
from pages._shared import run_label

log = logging.getLogger("supportbench.app")


def run_listing() -> tuple[dict[str, str], list[RunInfo]]:
    """Usable runs (newest first), each with the label a picker shows (`pages._shared.run_label`),
    and damaged runs, from one scan of the runs folder."""
    runs = list_runs(include_damaged=True)
    return ({r.run_id: run_label(r.run_id, r.manifest) for r in runs if r.problem is None},
            [r for r in runs if r.problem is not None])


def damaged_notice(damaged: list[RunInfo]) -> None:
    """Name the runs the picker leaves out, and why (in the sidebar)."""
    if not damaged:
        return
    from pages._shared import code, plain
    n = len(damaged)
    with st.expander(f"{n} damaged run{'s' if n != 1 else ''} not shown", icon=":material/warning:"):
        for r in damaged:
            st.caption(f"{code(r.run_id)}: {plain(r.problem)}")


def guarded(render: Callable[[], None], what: str = "this page") -> None:
    """Run `render`; if it raises, log the traceback and show a short message instead."""
    try:
        render()
    except Exception as e:  # Streamlit's stop and rerun are BaseExceptions and pass through
        log.exception("%s failed", what)
        st.error(f"Something went wrong showing {what} ({type(e).__name__}). The details are in the app's log; "
                 "the other pages and runs still work.", icon=":material/error:")


if __name__ == "__main__":  # Streamlit's pages/ folder discovery ran this file directly (see pages/_router.py)
    from pages._router import hand_over

    hand_over()

"""supportbench workbench: routes to the pages and holds the run picker. Nothing else lives here.

    streamlit run app.py          # runs are read from $SUPPORTBENCH_RUNS or runs/
"""

from __future__ import annotations

import sys
from pathlib import Path

import streamlit as st

sys.path.insert(0, str(Path(__file__).resolve().parent))  # `pages._shared` and `harness` from any cwd

from pages._shared import run_ids, run_summary, url_selectbox  # noqa: E402

st.set_page_config(page_title="supportbench", page_icon=":material/support_agent:", layout="wide")

PAGES = {
    "leaderboard": st.Page("pages/leaderboard.py", title="Leaderboard", icon=":material/leaderboard:", default=True),
    "rankings": st.Page("pages/rankings.py", title="Rankings per turn", icon=":material/format_list_numbered:"),
    "health": st.Page("pages/health.py", title="Health", icon=":material/monitor_heart:"),
    "failures": st.Page("pages/failures.py", title="Failures", icon=":material/report:"),
    "compare": st.Page("pages/compare.py", title="Compare runs", icon=":material/compare_arrows:"),
}
GET_STARTED = st.Page("pages/get_started.py", title="Get started", icon=":material/play_circle:", default=True)

ids = run_ids()
if ids:
    with st.sidebar:
        run = url_selectbox("Run", ids, "run", default=ids[0], help="Runs under $SUPPORTBENCH_RUNS (or runs/), newest first.")
        run_summary(run)
    nav = st.navigation(list(PAGES.values()))
    st.query_params["run"] = run  # a page switch clears the URL; the run stays with the reader
else:
    nav = st.navigation([GET_STARTED])
nav.run()

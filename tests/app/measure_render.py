"""Time each page's render with AppTest on the runs under a folder (not a test; run by hand).

    SUPPORTBENCH_RUNS=/tmp/big .venv/bin/python tests/app/measure_render.py [RUN_ID]

For each page: a cold render (query cache cleared) and a warm rerun, in seconds.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import streamlit as st
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
PARAMS = {"leaderboard": {"controls": "1"}, "compare": {"mode": "strategies"}}
"""URL parameters per page beyond the run (every page of the router is measured)."""


def main() -> int:
    run = sys.argv[1] if len(sys.argv) > 1 else None
    print(f"runs folder: {os.environ.get('SUPPORTBENCH_RUNS', 'runs')}")
    sys.path.insert(0, str(ROOT))
    import app as router

    for v in router.VIEWS:
        page = v.url_path
        run = run or AppTest.from_file(APP, default_timeout=600).run().query_params["run"]
        at = AppTest.from_file(APP, default_timeout=600)
        at.query_params.update({"run": run, **PARAMS.get(page, {})})
        if v is not router.VIEWS[0]:  # the default page is the root URL
            at.switch_page(f"pages/{page}.py")
        st.cache_data.clear()
        t = time.perf_counter()
        at.run()
        cold = time.perf_counter() - t
        t = time.perf_counter()
        at.run()
        warm = time.perf_counter() - t
        bad = [e.message for e in at.exception]
        print(f"{page:12s} cold {cold:6.2f}s  warm {warm:6.2f}s  {'EXCEPTION ' + str(bad) if bad else 'ok'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

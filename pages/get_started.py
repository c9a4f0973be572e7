"""Get started: shown when no run exists; one button runs the canonical suite.

This is the one place the app runs strategies, and it does so only through the harness API
(`harness.run.runner.execute`), never by importing a strategy. The app's one other write is a
label saved on the Rankings case view (`pages/_label.py`), through `harness.format.label`.
"""

from __future__ import annotations

import time

import streamlit as st

from harness.analysis.results import runs_root
from pages._shared import url_page

CANONICAL = "datasets/canonical"


@url_page
def render() -> None:
    st.title("supportbench")
    st.write(
        "supportbench replays scripted support conversations through memory strategies and scores what each "
        "strategy put in front of the model. There is no run under "
        f"`{runs_root()}` yet (set `SUPPORTBENCH_RUNS` to read runs from elsewhere)."
    )
    from stores.decisions.registry import DEFAULT_POLICIES
    from stores.registry import DEFAULT_STRATEGIES

    st.caption(f"Suite: `{CANONICAL}` · strategies: {', '.join(DEFAULT_STRATEGIES)} · decision policies: "
               f"{', '.join(DEFAULT_POLICIES)} (what `supportbench run {CANONICAL}` runs). The progress bar says how "
               "long is left, from the pace so far.")
    if not st.button("Run the canonical suite", type="primary", icon=":material/play_arrow:"):
        return
    run_canonical(DEFAULT_STRATEGIES)


def run_canonical(names) -> None:
    from harness.run.runner import execute
    from stores.registry import parse_specs

    try:
        from harness.format.loader import load_suite

        scenarios = load_suite([CANONICAL])
    except Exception as exc:  # a broken suite is shown, not hidden
        st.error(f"Could not load `{CANONICAL}`: {type(exc).__name__}: {exc}")
        return
    from stores.decisions.registry import DEFAULT_POLICIES, parse_policies

    specs = parse_specs(",".join(names))
    policies = parse_policies(",".join(DEFAULT_POLICIES))
    total = max(1, sum(len(s.probes) for s in scenarios) * len(specs))
    bar = st.progress(0.0, text=f"0 of {total} probe answers")
    done, started = 0, time.monotonic()

    def progress(probes: int, _scenarios: int) -> None:
        nonlocal done
        done += probes
        spent = time.monotonic() - started
        left = spent / done * (total - done) if done else None
        eta = f" · about {left:.0f} s left at this pace" if left is not None and done < total else ""
        bar.progress(min(1.0, done / total), text=f"{done} of {total} probe answers · {spent:.0f} s{eta}")

    result = execute(scenarios, specs, runs_root(), progress=progress, policies=policies,
                     command="app: run the canonical suite")
    bar.progress(1.0, text=f"{result.probes} probe answers in {result.seconds:.1f}s")
    st.success(f"Run `{result.run_id}` written.")
    st.query_params["run"] = result.run_id
    st.rerun()


if __name__ == "__main__":  # Streamlit's pages/ folder discovery ran this file directly (see pages/_router.py)
    from pages._router import hand_over

    hand_over()

"""Compare: two runs (strategies matched by label) or two strategies in one run.

Numbers come from `harness.ci.compare`, the same code as `supportbench compare`, so the page
and the CLI agree: per-criterion deltas (B - A, positive is better) and the cases whose verdict
flipped, regressions worst first.
"""

from __future__ import annotations

import plotly.graph_objects as go
import streamlit as st

from pages._shared import (start, case_key, criterion_titles, go as go_page, q, query, root, run_ids, url_multiselect,
                           url_keep, url_pagination, url_seed, url_selectbox)

MODES = {"runs": "Two runs", "strategies": "Two strategies in one run"}


def delta_chart(crit, titles) -> go.Figure:
    crit = crit.dropna(subset=["delta"])
    labels = [f"{titles.get(c, c)} · {s}" for s, c in zip(crit["strategy"], crit["criterion"])]
    colors = ["#c62828" if d < 0 else ("#2e7d32" if d > 0 else "#9e9e9e") for d in crit["delta"]]
    fig = go.Figure(go.Bar(
        x=crit["delta"], y=labels, orientation="h", marker_color=colors,
        hovertext=[f"{l}<br>A {a:.3f} → B {b:.3f} ({d:+.3f})" for l, a, b, d in zip(labels, crit["mean_a"], crit["mean_b"], crit["delta"])],
        hoverinfo="text",
    ))
    fig.update_layout(height=80 + 22 * len(crit), margin=dict(l=10, r=10, t=10, b=10),
                      xaxis=dict(title="B − A (mean)", zeroline=True, zerolinewidth=2), yaxis=dict(autorange="reversed"))
    return fig


def render() -> None:
    run = start("Compare")
    if run is None:
        return
    ids = run_ids()
    key = url_seed("mode", list(MODES), "runs")
    mode = st.segmented_control("Compare", list(MODES), format_func=MODES.get, key=key) or "runs"
    url_keep("mode", mode)
    c1, c2, c3 = st.columns(3)
    if mode == "runs":
        if len(ids) < 2:
            st.info("Only one run on disk: compare two strategies of it instead, or write another run.")
            return
        run_b = url_selectbox("Run B (new)", ids, "b", default=run, where=c2)
        run_a = url_selectbox("Run A (baseline)", [r for r in ids if r != run_b], "a", where=c1)
        shared = sorted(set(q("strategies", run=run_a)["strategy"]) & set(q("strategies", run=run_b)["strategy"]))
        chosen = url_multiselect("Strategies", shared, "strategies", where=c3, placeholder="all shared strategies")
        result = query("compare", (run_a, run_b), root(), run_a, run_b, strategies=tuple(chosen or shared))
        case_run = run_b
    else:
        names = list(q("strategies", run=run)["strategy"])
        sa = url_selectbox("Strategy A", names, "sa", where=c1)
        sb = url_selectbox("Strategy B", [n for n in names if n != sa], "sb", where=c2)
        c3.caption(f"in run `{run}`")
        if sb is None:
            st.info("This run has only one strategy.")
            return
        result = query("compare", (run,), root(), run, run, strategy_a=sa, strategy_b=sb)
        case_run = run

    titles = criterion_titles(case_run)
    crit = result.criteria
    m1, m2, m3, m4 = st.columns(4)
    m1.metric("regressions", len(result.regressions))
    m2.metric("improvements", len(result.improvements))
    changed = crit.dropna(subset=["delta"])
    m3.metric("criteria worse", int((changed["delta"] < -1e-9).sum()))
    m4.metric("cases on one side only", len(result.one_sided))

    st.subheader("Per-criterion deltas")
    moved = changed[changed["delta"].abs() > 1e-9].sort_values("delta")
    if moved.empty:
        st.success("No criterion moved.")
    else:
        st.plotly_chart(delta_chart(moved, titles), key="deltas", config={"displayModeBar": False})
    with st.expander(f"All {len(crit)} strategy × criterion rows"):
        st.dataframe(crit.assign(criterion=crit["criterion"].map(lambda k: titles.get(k, k))), hide_index=True, width="stretch",
                     column_config={k: st.column_config.NumberColumn(format="%.3f")
                                    for k in ("mean_a", "mean_b", "delta", "pass_rate_a", "pass_rate_b", "pass_rate_delta")})

    st.subheader("Cases that flipped")
    tab_r, tab_i = st.tabs([f"Regressions ({len(result.regressions)})", f"Improvements ({len(result.improvements)})"])
    for tab, df, param in ((tab_r, result.regressions, "rpage"), (tab_i, result.improvements, "ipage")):
        with tab:
            if df.empty:
                st.caption("None.")
                continue
            limit, offset = url_pagination(len(df), param)
            page = df.iloc[offset:offset + limit]
            st.dataframe(
                page.assign(criterion=page["criterion"].map(lambda k: titles.get(k, k)))[
                    ["strategy", "criterion", "case", "status_a", "status_b", "value_a", "value_b", "delta", "explanation_b", "explanation_a"]],
                hide_index=True, width="stretch",
                column_config={"value_a": st.column_config.NumberColumn("A", format="%.2f"),
                               "value_b": st.column_config.NumberColumn("B", format="%.2f"),
                               "delta": st.column_config.NumberColumn("Δ", format="%+.2f"),
                               "explanation_b": st.column_config.TextColumn("why (B)", width="large"),
                               "explanation_a": st.column_config.TextColumn("why (A)")},
            )
    if len(result.regressions):
        r = result.regressions.iloc[0]
        strat = r["strategy"].split(" -> ")[-1]
        if st.button(f"Open the worst regression in Failures ({r['case']} · {titles.get(r['criterion'], r['criterion'])})",
                     icon=":material/report:"):
            st.query_params["run"] = case_run
            go_page("failures", run=case_run,
                    case=case_key(strat, r["scenario"], r["probe_id"], r["criterion"]))


if __name__ == "__main__":  # Streamlit's pages/ folder discovery ran this file directly (see app.py)
    from pages._shared import hand_over

    hand_over()

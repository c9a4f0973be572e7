"""Distributions and trends: how one run's scores spread (per case of a criterion, per scenario),
and how each strategy's total moved across the runs of the same suite.

Every number here is one the other pages show: the per-scenario scores of the Leaderboard's table
by scenario, and per run the Leaderboard's own totals for that run.
"""

from __future__ import annotations

import html

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from harness.analysis.queries import Filter, shared_totals
from harness.analysis.results import Results, resolve_run
from harness.analysis.trends import NO_VERDICT, content_digest, same_suite
from harness.analysis.visible import for_display
from pages._charts import CASE_VALUE, SCORE, SCORE_RANGE, SHARE_OF_CASES, SHARED_TOTAL
from pages._shared import url_page, plain, start, criterion_titles, q, root, run_manifests, url_selectbox, url_toggle

TREND_RUNS = 12  # the newest runs of the suite a trend shows (each run's totals read once, then kept: `run_totals`)
COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"]


@url_page
def render() -> None:
    run = start("Distributions and trends")
    if run is None:
        return
    controls = url_toggle("Show controls (oracle, empty, shortcuts)", "controls",
                          help="Controls exist to prove the scorers honest; they are left out by default.")
    f = Filter(include_controls=controls)
    case_section(f)
    scenario_section(f)
    trend_section(run, f)


def case_section(f: Filter) -> None:
    """How the cases of one criterion spread, per strategy."""
    st.subheader("Per case")
    titles = criterion_titles()
    crit = url_selectbox("Criterion", list(titles), "criterion", format_func=lambda k: titles.get(k, k))
    if crit is None:
        return
    hist = q("trends.case_histogram", crit, f)
    if hist.empty:
        st.caption("No case of this criterion.")
        return
    st.caption(f"Share of each strategy's cases of {plain(titles.get(crit, crit))} by value; “{NO_VERDICT}” are unsupported or "
               "errored cases (they count as 0 in totals). A mean hides whether a strategy is mostly right or mostly half right.")
    st.plotly_chart(histogram(hist), key="case_hist", config={"displayModeBar": False})


def histogram(hist: pd.DataFrame) -> go.Figure:
    fig = go.Figure()
    for i, (strat, grp) in enumerate(hist.groupby("strategy", sort=True)):
        fig.add_trace(go.Bar(
            x=grp["bin"], y=grp["share"], name=strat, marker_color=COLORS[i % len(COLORS)],
            customdata=grp["cases"], hovertemplate=f"<b>{strat}</b><br>value %{{x}}: %{{y:.0%}} of its cases (%{{customdata}})<extra></extra>",
        ))
    fig.update_layout(barmode="group", height=340, margin=dict(l=10, r=10, t=10, b=10), yaxis=dict(tickformat=".0%", title=SHARE_OF_CASES, range=[0, 1.02]),
                      xaxis=dict(title=CASE_VALUE, type="category"), legend=dict(orientation="h", y=-0.25))
    return fig


def scenario_section(f: Filter) -> None:
    """Each strategy's scores over the scenarios, one box per strategy."""
    st.subheader("Per scenario")
    scores = q("trends.scenario_distribution", f)
    if scores.empty:
        st.caption("No scenario scores.")
        return
    st.caption("Each point is a scenario: the strategy's mean over the headline criteria there (the Leaderboard's table by "
               "scenario). Hover a point for its scenario.")
    fig = go.Figure()
    for i, (strat, grp) in enumerate(scores.groupby("strategy", sort=True)):
        fig.add_trace(go.Box(y=grp["score"], name=strat, boxpoints="all", jitter=0.4, pointpos=0, marker=dict(size=4),
                             line=dict(color=COLORS[i % len(COLORS)]), hovertext=grp["scenario"], hoverinfo="text+y"))
    fig.update_layout(height=360, margin=dict(l=10, r=10, t=10, b=10), showlegend=False, yaxis=dict(range=list(SCORE_RANGE), title=SCORE))
    st.plotly_chart(fig, key="scenario_box", config={"displayModeBar": False})


@st.cache_data(show_spinner=False, max_entries=512)
def run_totals(run: str, content: str, root_dir: str, f: Filter) -> pd.DataFrame:
    """One run's shared totals per strategy (`harness.analysis.queries.shared_totals`), read once:
    kept under the run id and `content` (`content_digest` of its manifest: a run written again
    under the same id is read again), so drawing the trend again, or with one more run of the
    suite, reads no run it read before."""
    with Results([resolve_run(run, root_dir)]) as res:
        return for_display(shared_totals(res, f))


def trend_section(run: str, f: Filter) -> None:
    """Each strategy's headline total across the runs of this run's suite, oldest first."""
    st.subheader("Across runs of this suite")
    manifests = run_manifests()
    runs = same_suite(manifests, run)[-TREND_RUNS:]
    suites = ", ".join(sorted({str(d.get("suite", "?")) for d in manifests[run].get("datasets", [])}))
    if len(runs) < 2:
        st.caption(f"This is the only run of suite {plain(suites)}: write another (`supportbench run ... --name ...`) to see a trend.")
        return
    head, head_title = "shared", "shared"  # the Leaderboard's headline (`harness.analysis.aggregate.totals`)
    rows = []
    for r, same_content in runs:
        m = manifests[r]
        label = f"{m.get('name') or r}"
        for t in run_totals(r, content_digest(m), root(), f).itertuples(index=False):
            rows.append({"run": r, "label": label, "started": m.get("started", "")[:16].replace("T", " "),
                         "strategy": t.strategy, "total": getattr(t, head), "same_content": same_content})
    df = pd.DataFrame(rows)
    edited = sorted({r for r, same in runs if not same})
    st.caption(f"The {head_title} total of each strategy in each of the {len(runs)} newest runs of suite {plain(suites)} (the "
               "Leaderboard's headline for that run: the mean over the quality criteria every strategy of that run "
               "supports, so a run with other strategies may average other criteria); strategies are matched by label, "
               "so a variant is a line of its own."
               + (f" Hollow points: runs whose scenarios differ from this run's ({len(edited)})." if edited else ""))
    fig = go.Figure()
    order = list(dict.fromkeys(df["label"]))
    for i, (strat, grp) in enumerate(df.groupby("strategy", sort=True)):
        fig.add_trace(go.Scatter(
            x=grp["label"], y=grp["total"], name=strat, mode="lines+markers", line=dict(color=COLORS[i % len(COLORS)]),
            marker=dict(size=9, symbol=["circle" if s else "circle-open" for s in grp["same_content"]]),
            hovertext=[f"<b>{html.escape(strat)}</b> · {html.escape(r.label)}<br>{head_title} total {r.total:.2f}<br>started {r.started} UTC"
                       + ("" if r.same_content else "<br>its scenarios differ from this run's") for r in grp.itertuples()],
            hoverinfo="text",
        ))
    fig.update_layout(height=360, margin=dict(l=10, r=10, t=10, b=10), legend=dict(orientation="h", y=-0.25),
                      xaxis=dict(type="category", categoryorder="array", categoryarray=order, title=None),
                      yaxis=dict(title=SHARED_TOTAL, range=list(SCORE_RANGE)))
    st.plotly_chart(fig, key="trend", config={"displayModeBar": False})
    wide = df.pivot_table(index=["started", "label"], columns="strategy", values="total").reset_index()
    st.dataframe(wide, hide_index=True, width="stretch",
                 column_config={s: st.column_config.NumberColumn(format="%.2f") for s in df["strategy"].unique()})


if __name__ == "__main__":  # Streamlit's pages/ folder discovery ran this file directly (see pages/_router.py)
    from pages._router import hand_over

    hand_over()

"""Rankings per turn: a scenario's timeline, then one probe's ranked candidates side by side.

Each candidate's score is a stacked bar of its components (they sum to the score); dropped
candidates are faded, the budget cut line marks where the running token total passes the
budget, and gold markers show what the probe expected.
"""

from __future__ import annotations

import textwrap

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from harness.analysis.queries import components, gold_check, gold_marks, parse_expect
from pages._shared import start, q, scenario_select, url_multiselect, url_pagination, url_selectbox

RANK_PAGE = 15
KIND_STYLE = {
    "customer": dict(symbol="circle", color="#1f77b4"),
    "agent": dict(symbol="diamond", color="#7f7f7f"),
    "action": dict(symbol="square", color="#9467bd"),
    "resolve": dict(symbol="star", color="#2ca02c"),
    "probe": dict(symbol="triangle-down", color="#d62728"),
    "forget": dict(symbol="x", color="#000000"),
}


def _wrap(s: str, width: int = 70) -> str:
    return "<br>".join(textwrap.wrap(str(s or ""), width)[:6])


def timeline(ev: pd.DataFrame, selected_probe: str | None) -> go.Figure:
    ev = ev.copy()
    ev["who"] = ev["subject_name"].fillna("").where(ev["subject_name"].fillna("") != "", ev["subject"])
    ev["lane"] = ev["who"].fillna("") + " · " + ev["session"].fillna("(forget)")
    ev["style"] = ev.apply(lambda r: ("action" if r.turn_kind == "action" else r.role) if r.kind == "turn" else r.kind, axis=1)
    names = {"customer": "customer turn", "agent": "agent turn", "action": "agent action", "resolve": "resolution",
             "probe": "probe", "forget": "forget"}
    fig = go.Figure()
    for style, grp in ev.groupby("style", sort=False):
        st_ = KIND_STYLE.get(style, KIND_STYLE["customer"])
        hover = [f"<b>{r.item_id}</b> · {r.at:%Y-%m-%d %H:%M}<br>{_wrap(r.text)}" for r in grp.itertuples()]
        fig.add_trace(go.Scatter(
            x=grp["at"], y=grp["lane"], mode="markers", name=names.get(style, style), hovertext=hover, hoverinfo="text",
            marker=dict(size=[18 if (style == "probe" and i == selected_probe) else 11 for i in grp["item_id"]],
                        symbol=st_["symbol"], color=st_["color"], line=dict(width=1, color="white")),
        ))
    if selected_probe:
        sel = ev[ev["item_id"] == selected_probe]
        if len(sel):
            fig.add_vline(x=sel["at"].iloc[0], line=dict(color="#d62728", dash="dot", width=1))
    lanes = list(dict.fromkeys(ev.sort_values("event_index")["lane"]))
    fig.update_layout(
        height=120 + 36 * len(lanes), margin=dict(l=10, r=10, t=10, b=10), legend=dict(orientation="h", y=-0.25),
        yaxis=dict(categoryorder="array", categoryarray=lanes[::-1], title=None), xaxis=dict(title=None),
    )
    return fig


def ranking_chart(cands: pd.DataFrame, budget: int, marks: dict[str, str]) -> go.Figure:
    """Stacked horizontal bars of score components, dropped faded, the budget cut line drawn."""
    labels = []
    for r in cands.itertuples(index=False):
        mark = marks.get(r.item_id, "")
        prefix = "✓ " if mark.startswith("✓") else ("⚠ " if mark.startswith("⚠") else "")
        labels.append(f"{prefix}#{r.rank} {r.item_id}")
    comps = [components(c) for c in cands["components"]]
    names = list(dict.fromkeys(k for c in comps for k in c))
    opacity = [1.0 if inc else 0.35 for inc in cands["included"]]
    fig = go.Figure()
    for name in names:
        fig.add_trace(go.Bar(
            y=labels, x=[c.get(name, 0.0) for c in comps], name=name, orientation="h", marker=dict(opacity=opacity),
            hovertemplate=f"{name}: %{{x:.3f}}<extra></extra>",
        ))
    fig.add_trace(go.Scatter(
        y=labels, x=cands["score"], mode="markers", name="score", marker=dict(symbol="line-ns-open", size=14, color="black"),
        hovertext=[f"<b>#{r.rank} {r.item_id}</b> score {r.score:.3f}<br>{'included' if r.included else 'dropped: ' + (r.reason or '')}"
                   f" · {r.tokens} tokens<br>{_wrap(r.text, 60)}" for r in cands.itertuples(index=False)],
        hoverinfo="text",
    ))
    over = cands.index[cands["cum_tokens"] > budget]
    if len(over):
        k = cands.index.get_loc(over[0])
        if k > 0 or cands["rank"].iloc[0] > 1:
            fig.add_hline(y=k - 0.5, line=dict(color="#d62728", dash="dash", width=2),
                          annotation_text=f"budget {budget} tokens", annotation_position="bottom right",
                          annotation_font_color="#d62728")
    fig.update_layout(
        barmode="relative", height=120 + 30 * len(cands) + 20 * ((len(names) + 2) // 2), margin=dict(l=10, r=10, t=10, b=10), bargap=0.25,
        yaxis=dict(autorange="reversed", categoryorder="array", categoryarray=labels, title=None, tickfont=dict(size=12)),
        xaxis=dict(title="score (sum of components)", zeroline=True, side="top"),
        legend=dict(orientation="h", yanchor="top", y=-0.02, xanchor="left", x=0, font=dict(size=11)),
    )
    return fig


def render() -> None:
    if start("Rankings per turn") is None:
        return
    scenario = scenario_select()
    probes = q("probe_events", scenario)
    ev = q("events", scenario)
    probe_ids = list(probes["probe_id"])
    tasks = dict(zip(probes["probe_id"], probes["task"]))

    c1, c2 = st.columns([2, 3])
    probe = url_selectbox("Probe", probe_ids, "probe", where=c1, format_func=lambda p: f"{p} — {tasks.get(p, '')}")
    strat_df = q("strategies")
    names = list(strat_df["strategy"])
    default = list(strat_df.loc[~strat_df["control"], "strategy"])[:3] or names[:3]
    chosen = url_multiselect("Strategies side by side", names, "strategies", default=default, where=c2,
                             max_selections=4)

    st.plotly_chart(timeline(ev, probe), key="timeline", config={"displayModeBar": False})
    if probe is None:
        st.info("This scenario has no probes.")
        return
    if not chosen:
        st.info("Pick one or more strategies to compare their rankings.")
        return

    prow = probes[probes["probe_id"] == probe].iloc[0]
    expect = parse_expect(prow["expect"])
    marks = gold_marks(expect)
    st.markdown(f"**Probe `{probe}`** at {prow['at']:%Y-%m-%d %H:%M} UTC · _{prow['task']}_ · budget **{prow['budget']}** tokens")
    if expect:
        with st.expander("Gold labels of this probe"):
            st.json(expect)
    rows = q("probe_rows", scenario, probe, tuple(chosen)).set_index("strategy")
    cands = {s: q("candidates", s, scenario, probe) for s in chosen}  # all of them: the gold check reads every rank
    most = max(len(c) for c in cands.values())
    limit, offset = url_pagination(most, "rank_page", page_size=RANK_PAGE)
    if most > RANK_PAGE:
        st.caption(f"Ranks {offset + 1}–{offset + limit} of up to {most} candidates")

    cols = st.columns(len(chosen), gap="medium")
    for col, strat in zip(cols, chosen):
        with col:
            st.markdown(f"#### {strat}")
            if strat not in rows.index:
                st.warning("No row for this probe.")
            elif rows.loc[strat, "error"]:
                st.error(f"raised: {rows.loc[strat, 'error']}")
            else:
                ranking_column(strat, rows.loc[strat], cands[strat], expect, marks, int(prow["budget"]),
                               slice(offset, offset + limit))


def ranking_column(strat: str, r: pd.Series, allc: pd.DataFrame, expect: dict, marks: dict[str, str], budget: int,
                   ranks: slice) -> None:
    """One strategy's answer to the probe: its numbers, the gold check over all its candidates,
    then this page of its ranking as a chart and a table."""
    a, b, c = st.columns(3)
    a.metric("tokens", f"{r['tokens']}", f"{r['tokens'] - r['budget']:+d} vs budget", delta_color="inverse")
    b.metric("included", f"{r['n_included']} / {r['n_candidates']}")
    c.metric("latency", f"{r['latency_ms']:.1f} ms")
    gold = gold_check(expect, allc, r["context"])
    if not gold.empty:
        ok = int(gold["ok"].sum())
        st.caption(f"gold: {ok} of {len(gold)} right")
        st.dataframe(gold[["mark", "kind", "ref"]], hide_index=True, width="stretch",
                     height=min(36 * (len(gold) + 1) + 3, 250))
    page = allc.iloc[ranks]
    if page.empty:
        st.caption("No candidates on this page.")
        return
    st.plotly_chart(ranking_chart(page, budget, marks), key=f"rank_{strat}", config={"displayModeBar": False})
    table = page.assign(
        gold=page["item_id"].map(marks).fillna(""),
        status=page["included"].map({True: "included", False: "dropped"}),
    )[["rank", "item_id", "score", "status", "reason", "tokens", "gold", "text"]]
    st.dataframe(table, hide_index=True, width="stretch",
                 column_config={"score": st.column_config.NumberColumn(format="%.2f")})

if __name__ == "__main__":  # Streamlit's pages/ folder discovery ran this file directly (see app.py)
    from pages._shared import hand_over

    hand_over()

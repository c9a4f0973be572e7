"""Leaderboard: strategies x criteria, with n and interval on hover, totals, tokens and latency.

Clicking a cell (or choosing it below the chart) opens the matching failures.
"""

from __future__ import annotations

import plotly.graph_objects as go
import streamlit as st

from harness.analysis.queries import Filter, total_columns
from pages._shared import start, go as go_page, manifest, pct, q, root, url_multiselect, url_selectbox, url_toggle

FAILURES = "failures"


def cell_from_selection(event) -> tuple[str, str] | None:
    """(strategy, criterion) of the clicked heatmap cell, from a plotly selection event."""
    try:
        points = event["selection"]["points"]
    except (KeyError, TypeError):
        return None
    for p in points:
        cd = p.get("customdata")
        if cd and len(cd) >= 2:
            return str(cd[0]), str(cd[1])
    return None


def heatmap(cells, strategies: list[str], crit_keys: list[str], meta) -> go.Figure:
    """Strategies x criteria; `meta` is `criteria_meta` (title, group, metric headline and columns)."""
    info = meta.set_index("criterion")
    titles = info["title"].to_dict()
    by = {(r.strategy, r.criterion): r for r in cells.itertuples(index=False)}
    z, text, hover, xs, ys, cds = [], [], [], [], [], []
    for s in strategies:
        zr, tr, hr = [], [], []
        for c in crit_keys:
            r = by.get((s, c))
            if r is None or not r.n:
                zr.append(None)
                tr.append("–")
                hr.append(f"<b>{s}</b> · {titles[c]}<br>no case of this criterion")
                continue
            zr.append(r.mean)
            label = "unsup." if r.unsupported == r.n else f"{r.mean:.2f}" + (" ⚠" if r.errors else "")
            tr.append(label)
            beside = [(k, getattr(r, k)) for k in info.at[c, "metric_columns"]]
            extra = ("<br>" + " · ".join(f"{k} {v:.2f}" for k, v in beside)
                     if beside and all(v == v for _, v in beside) else "")
            hr.append(
                f"<b>{s}</b> · {titles[c]}<br>{info.at[c, 'headline']} {r.mean:.3f} (95% CI {pct(r.lo)}–{pct(r.hi)}) over n={r.n}{extra}"
                f"<br>pass rate {pct(r.pass_rate)} (95% CI {pct(r.pass_lo)}–{pct(r.pass_hi)})"
                f"<br>fail {int(r.fails)} · unsupported {r.unsupported} · errors {r.errors}"
                f"<br><i>click to open the failing cases</i>"
            )
            xs.append(titles[c])
            ys.append(s)
            cds.append([s, c])
        z.append(zr)
        text.append(tr)
        hover.append(hr)
    x = [titles[c] for c in crit_keys]
    fig = go.Figure(go.Heatmap(
        z=z, x=x, y=strategies, text=text, texttemplate="%{text}", hovertext=hover, hoverinfo="text",
        colorscale="RdYlGn", zmin=0, zmax=1, xgap=2, ygap=2, colorbar=dict(title="mean", thickness=12),
    ))
    # An invisible marker on every cell: heatmaps emit no selection events, scatter points do.
    fig.add_trace(go.Scatter(
        x=xs, y=ys, customdata=cds, mode="markers", hoverinfo="skip", showlegend=False,
        marker=dict(size=40, symbol="square", color="rgba(0,0,0,0)", opacity=0.01),
    ))
    # a rule where each group after the first begins (criteria come sorted by group)
    keys = [info.at[c, "grp"] for c in crit_keys]
    for i in range(1, len(keys)):
        if keys[i] != keys[i - 1]:
            fig.add_vline(x=i - 0.5, line=dict(color="#333", width=2))
            fig.add_annotation(x=i - 0.5, y=1.0, yref="paper", yanchor="bottom", xanchor="left", showarrow=False,
                               text=f" {info.at[crit_keys[i], 'group_title']} →", font=dict(size=11, color="#555"))
    fig.update_layout(
        height=110 + 46 * len(strategies), margin=dict(l=10, r=10, t=30, b=10), clickmode="event+select",
        xaxis=dict(side="top", tickangle=-25), yaxis=dict(autorange="reversed"), dragmode=False,
    )
    return fig


def render() -> None:
    run = start("Leaderboard")
    if run is None:
        return
    m = manifest(run, root())
    counts = m.get("counts", {})
    st.caption(f"Run `{run}` · {counts.get('scenarios', '?')} scenarios · {counts.get('probes', '?')} probes · "
               f"started {m.get('started', '')[:19].replace('T', ' ')} UTC")

    suites, tags = q("suites_and_tags")
    c1, c2, c3 = st.columns([2, 3, 2])
    sel_suites = url_multiselect("Suite", suites, "suite", where=c1, placeholder="all suites")
    sel_tags = url_multiselect("Tag", tags, "tag", where=c2, placeholder="all tags")
    controls = url_toggle("Show controls (oracle, empty)", "controls", where=c3,
                          help="Controls exist to prove the scorers honest; they are kept out of the ranking by default.")
    f = Filter(suites=tuple(sel_suites), tags=tuple(sel_tags), include_controls=controls)

    cells, totals = q("leaderboard", f)
    if cells.empty:
        st.warning("No scores match these filters.")
        return
    meta = q("criteria_meta")
    scored = set(cells["criterion"])
    crit_keys = [c for c in meta["criterion"] if c in scored]
    titles = dict(zip(meta["criterion"], meta["title"]))
    strategies = list(totals["strategy"])

    st.subheader("Score by criterion")
    shows = "".join(f"; {r.title} shows {r.headline}" for r in meta.itertuples() if r.criterion in scored and r.headline != "mean")
    st.caption(f"Mean per case (unsupported and errors count as 0{shows}). Hover for n and "
               "the 95% intervals; click a cell to open its failing cases.")
    event = st.plotly_chart(heatmap(cells, strategies, crit_keys, meta), on_select="rerun",
                            selection_mode="points", key="heat", config={"displayModeBar": False})
    clicked = cell_from_selection(event)
    if clicked:
        go_page(FAILURES, strategy=clicked[0], criterion=clicked[1])

    with st.container(border=True):
        a, b, c = st.columns([3, 3, 2], vertical_alignment="bottom")
        strat = url_selectbox("Strategy", strategies, "strategy", where=a)
        crit = url_selectbox("Criterion", crit_keys, "criterion", where=b, format_func=lambda k: titles.get(k, k))
        if c.button("Open failing cases", icon=":material/report:", width="stretch"):
            go_page(FAILURES, strategy=strat, criterion=crit)

    st.subheader("Totals, tokens and latency")
    st.caption("Total weights every criterion equally. Tokens are the context the model would see at a probe.")
    feeding = total_columns()
    view = totals.assign(budget_use=totals["tokens_mean"] / totals["budget_mean"], pass_rate=100 * totals["pass_rate"])[
        ["strategy", *(col for col, _ in feeding), "pass_rate", "cases", "failing", "unsupported", "tokens_mean", "budget_use",
         "latency_p50", "latency_p95", "probe_errors"]]
    (head, head_title), *rest = feeding
    st.dataframe(
        view, hide_index=True, width="stretch",
        column_config={
            head: st.column_config.ProgressColumn(f"total ({head_title})", min_value=0, max_value=1, format="%.2f",
                                                  help=f"Mean of the {head_title} criteria's means, equal weights"),
            **{col: st.column_config.NumberColumn(title, format="%.2f", help=f"Mean over the {title} criteria's means, equal weights")
               for col, title in rest},
            "pass_rate": st.column_config.NumberColumn("cases passed", format="%.0f%%"),
            "tokens_mean": st.column_config.NumberColumn("tokens / probe", format="%.0f"),
            "budget_use": st.column_config.ProgressColumn("budget used", min_value=0, max_value=1, format="percent",
                                                          help="Mean tokens of the context over the mean probe budget"),
            "latency_p50": st.column_config.NumberColumn("latency p50 (ms)", format="%.2f"),
            "latency_p95": st.column_config.NumberColumn("latency p95 (ms)", format="%.2f"),
            "probe_errors": "errors",
        },
    )

if __name__ == "__main__":  # Streamlit's pages/ folder discovery ran this file directly (see app.py)
    from pages._shared import hand_over

    hand_over()

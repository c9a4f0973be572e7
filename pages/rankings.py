"""Rankings per turn: a scenario's timeline, then one probe's ranked candidates side by side,
and any two strategies' contexts for that probe diffed.

Each candidate's score is a stacked bar of its components (they sum to the score). What the
strategy did with it is read from the bundle itself (its `included` flag and `reason`), never
recomputed: included candidates are solid, the others faded on a band that says why they were
left out (dropped for budget, dropped by the rank cutoff, expired before ranking). Gold
markers show what the probe expected.
"""

from __future__ import annotations

import html
import json
import textwrap

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from harness.analysis.contexts import BOTH, CHANGED, ONLY_A, ONLY_B, ONLY_LEFT, ONLY_RIGHT, item_diff, line_diff
from harness.analysis.queries import (BUDGET, CUTOFF, DROPPED, EXPIRED, GOLD_MARK, INCLUDED, OUT_MARK, components,
                                      gold_check, gold_marks, parse_expect, received_context)
from pages._charts import CLOCK, RANKING_SCORE, same_range, span
from pages._expiry import removed_panel
from pages._label import label_section
from pages._shared import url_page, plain, code, start, manifest, q, root, scenario_select, url_multiselect, url_pagination, url_selectbox

RANK_PAGE = 15
KIND_STYLE = {
    "customer": dict(symbol="circle", color="#1f77b4"),
    "agent": dict(symbol="diamond", color="#7f7f7f"),
    "action": dict(symbol="square", color="#9467bd"),
    "resolve": dict(symbol="star", color="#2ca02c"),
    "probe": dict(symbol="triangle-down", color="#d62728"),
    "forget": dict(symbol="x", color="#000000"),
}
# the band behind a candidate that did not make the context, by why (included ones have none)
STATUS_BANDS = {BUDGET: "rgba(198,40,40,0.13)", CUTOFF: "rgba(97,97,97,0.13)", EXPIRED: "rgba(123,31,162,0.13)",
                DROPPED: "rgba(245,127,23,0.13)"}


def _wrap(s: str, width: int = 70) -> str:
    return "<br>".join(textwrap.wrap(s if isinstance(s, str) else "", width)[:6])  # a signal's text is NaN


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
        yaxis=dict(categoryorder="array", categoryarray=lanes[::-1], title=None), xaxis=dict(title=CLOCK),
    )
    return fig


def candidate_label(r, marks: dict[str, str]) -> str:
    """A candidate's row label: its gold mark (◆ expected, ⊘ must stay out), rank and id."""
    mark = marks.get(r.item_id, "")
    prefix = f"{GOLD_MARK} " if mark.startswith(GOLD_MARK) else (f"{OUT_MARK} " if mark.startswith(OUT_MARK) else "")
    return f"{prefix}#{r.rank} {html.escape(str(r.item_id))}"


# component colours, fixed here (not left to the theme) so the legend under the chart can name them
PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
           "#393b79", "#637939", "#8c6d31", "#843c39")


def component_colors(names: list[str]) -> dict[str, str]:
    return {n: PALETTE[i % len(PALETTE)] for i, n in enumerate(names)}


def score_span(cands: pd.DataFrame) -> tuple[float, float]:
    """The score axis a strategy's ranking needs: its stacked bars reach the sum of the negative
    components on the left and of the positive ones on the right (the score marker in between)."""
    comps = [components(c) for c in cands["components"]]
    lows = [sum(v for v in c.values() if v < 0) for c in comps] + list(cands["score"])
    highs = [sum(v for v in c.values() if v > 0) for c in comps] + list(cands["score"])
    return span(lows, highs)


def ranking_axes(cands: dict[str, pd.DataFrame]) -> dict[str, tuple[tuple[float, float], str]]:
    """Per strategy, the score axis of its ranking chart: (range, title). Strategies whose scores sum
    the same components measure the same thing: their columns share one range (over all their
    candidates, every page of ranks) so equal bars are equal scores. A strategy whose score is made
    of other components is on a scale of its own, and its axis title says so."""
    measures: dict[frozenset, list[str]] = {}
    for strat, c in cands.items():
        measures.setdefault(frozenset(k for comp in c["components"] for k in components(comp)), []).append(strat)
    out = {}
    for group in measures.values():
        spans = [score_span(cands[s]) for s in group]
        rng = span([lo for lo, _ in spans], [hi for _, hi in spans], pad=0)
        for strat in group:
            own = len(measures) > 1 and len(group) == 1
            shared = len(measures) > 1 and len(group) > 1
            title = (f"{RANKING_SCORE}, {strat}'s own scale" if own
                     else f"{RANKING_SCORE}, the scale of {', '.join(group)}" if shared else RANKING_SCORE)
            out[strat] = (rng, title)
    return out


def ranking_chart(cands: pd.DataFrame, budget: int, marks: dict[str, str],
                  axis: tuple[tuple[float, float], str] | None = None) -> go.Figure:
    """Stacked horizontal bars of score components; a candidate left out of the context is faded,
    on a band coloured by why (its `status`), with the rank cutoff drawn where the strategy cut.
    `axis`: the score axis's (range, title) (`ranking_axes`; by default fitted to these candidates).
    The legend is drawn under the chart by `chart_legend` (plotly's own, in a narrow column,
    would take the plot's height)."""
    rng, title = axis or (score_span(cands), RANKING_SCORE)
    labels = [candidate_label(r, marks) for r in cands.itertuples(index=False)]
    comps = [components(c) for c in cands["components"]]
    names = list(dict.fromkeys(k for c in comps for k in c))
    colors = component_colors(names)
    status = list(cands["status"])
    opacity = [1.0 if s == INCLUDED else 0.35 for s in status]
    fig = go.Figure()
    for name in names:
        fig.add_trace(go.Bar(
            y=labels, x=[c.get(name, 0.0) for c in comps], name=name, orientation="h",
            marker=dict(opacity=opacity, color=colors[name]), hovertemplate=f"{name}: %{{x:.3f}}<extra></extra>",
        ))
    fig.add_trace(go.Scatter(
        y=labels, x=cands["score"], mode="markers", name="score", marker=dict(symbol="line-ns-open", size=14, color="black"),
        hovertext=[f"<b>#{r.rank} {html.escape(str(r.item_id))}</b> score {r.score:.3f}<br>{html.escape(_what_happened(r))} · {r.tokens} tokens"
                   f"<br>{_wrap(r.text, 60)}" for r in cands.itertuples(index=False)],
        hoverinfo="text",
    ))
    # one list of shapes, set once (an add_shape per row costs plotly's validation each time)
    shapes = [dict(type="rect", xref="paper", x0=0, x1=1, yref="y", y0=k - 0.5, y1=k + 0.5, fillcolor=STATUS_BANDS[s],
                   line=dict(width=0), layer="below") for k, s in enumerate(status) if s in STATUS_BANDS]
    annotations = []
    if CUTOFF in status:
        k = status.index(CUTOFF)
        shapes.append(dict(type="line", xref="paper", x0=0, x1=1, yref="y", y0=k - 0.5, y1=k - 0.5,
                           line=dict(color="#616161", dash="dash", width=2)))
        annotations.append(dict(xref="paper", x=1, xanchor="right", yref="y", y=k - 0.5, yanchor="top", showarrow=False,
                                text="rank cutoff", font=dict(color="#616161")))
    fig.update_layout(
        shapes=shapes, annotations=annotations, barmode="relative", height=80 + 30 * len(cands),
        margin=dict(l=10, r=10, t=10, b=10), bargap=0.25, showlegend=False,
        yaxis=dict(autorange="reversed", categoryorder="array", categoryarray=labels, title=None, tickfont=dict(size=12)),
        xaxis=dict(title=title, zeroline=True, side="top"),
    )
    same_range([fig], "xaxis", rng)
    return fig


def chart_legend(cands: pd.DataFrame) -> str:
    """The chart's legend as HTML that wraps in any column width: component colours, then the bands shown."""
    names = list(dict.fromkeys(k for c in cands["components"] for k in components(c)))
    sw = "display:inline-block;width:.8em;height:.8em;margin:0 .25em 0 .6em;vertical-align:-.05em"
    entry = "<span style='white-space:nowrap'><span style='{sw};background:{bg}'></span>{name}</span> "
    parts = [entry.format(sw=sw, bg=c, name=html.escape(n)) for n, c in component_colors(names).items()]
    parts += [entry.format(sw=sw + ";outline:1px solid #bbb", bg=STATUS_BANDS[s], name=s)
              for s in STATUS_BANDS if s in set(cands["status"])]
    return f"<div style='font-size:.78em;line-height:1.6;color:#444'>{''.join(parts)}</div>"


def _what_happened(r) -> str:
    if r.status == INCLUDED:
        return "included"
    return r.status + (f": {r.reason}" if r.status in (EXPIRED, DROPPED) and r.reason else "")


def default_strategies(run: str, names: list[str], controls: set[str]) -> list[str]:
    """Up to three strategies to show first: the session-aware family first (what the page is
    about), then the run's other non-control strategies in the order the run lists them."""
    order = [s.get("label") for s in manifest(run, root()).get("strategies", [])]
    registry = {s.get("label"): s.get("name") for s in manifest(run, root()).get("strategies", [])}
    ranked = [s for s in order if s in names and s not in controls] + sorted(s for s in names if s not in order and s not in controls)
    ranked.sort(key=lambda s: registry.get(s, s) != "session_aware")  # stable: run order otherwise
    return ranked[:3] or names[:3]


@url_page
def render() -> None:
    run = start("Rankings per turn")
    if run is None:
        return
    scenario = scenario_select()
    probes = q("probe_events", scenario)
    ev = q("events", scenario)
    probe_ids = list(probes["probe_id"])
    tasks = dict(zip(probes["probe_id"], probes["task"]))
    waiting = set(probes.loc[probes["unlabelled"], "probe_id"])

    c1, c2 = st.columns([2, 3])
    probe = url_selectbox("Probe", probe_ids, "probe", where=c1, format_func=lambda p: f"{p} — {tasks.get(p, '')}" + (" · unlabelled" if p in waiting else ""))
    strat_df = q("strategies")
    # decision policies answer customer turns, not probes: they have no ranking to show here
    policies = {p.get("label") for p in manifest(run, root()).get("policies", [])}
    strat_df = strat_df[~strat_df["strategy"].isin(policies)]
    names = list(strat_df["strategy"])
    default = default_strategies(run, names, set(strat_df.loc[strat_df["control"], "strategy"]))
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
    st.markdown(f"**Probe {code(probe)}** at {prow['at']:%Y-%m-%d %H:%M} UTC · _{plain(prow['task'])}_ · budget **{prow['budget']}** tokens")
    st.caption(f"{GOLD_MARK} a gold item (expected in the context) · {OUT_MARK} must stay out · faded on a band: left out, "
               "and why (dropped for budget, dropped by the rank cutoff, expired before ranking)")
    if expect:
        with st.expander("Gold labels of this probe"):
            st.json(expect)
    label_section(run, scenario, probe, prow, ev)
    rows = q("probe_rows", scenario, probe, tuple(chosen)).set_index("strategy")
    cands = {s: q("candidates", s, scenario, probe) for s in chosen}  # all of them: the gold check reads every rank
    most = max(len(c) for c in cands.values())
    limit, offset = url_pagination(most, "rank_page", page_size=RANK_PAGE)
    if most > RANK_PAGE:
        st.caption(f"Ranks {offset + 1}–{offset + limit} of up to {most} candidates")

    answered = {s: cands[s] for s in chosen if s in rows.index and not rows.loc[s, "error"] and len(cands[s])}
    axes = ranking_axes(answered)
    if len(answered) > 1:
        st.caption("Columns whose strategies sum the same score components share one score axis; a strategy scoring "
                   "with other components is on a scale of its own, and its axis says so.")
    cols = st.columns(len(chosen), gap="medium")
    for col, strat in zip(cols, chosen):
        with col:
            st.markdown(f"#### {plain(strat)}")
            if strat not in rows.index:
                st.warning("No row for this probe.")
            elif rows.loc[strat, "error"]:
                st.error(f"raised: {plain(rows.loc[strat, 'error'])}")
            else:
                ranking_column(strat, rows.loc[strat], cands[strat], expect, marks, int(prow["budget"]),
                               slice(offset, offset + limit), axes.get(strat))
    diff_section(scenario, probe, names, chosen, marks)


def numbers(r: pd.Series, allc: pd.DataFrame, budget: int) -> None:
    """A strategy's answer in one line that wraps (metrics in four narrow columns would truncate)."""
    over = int(r["tokens"]) - budget
    fit = f"**{over:+d}** over" if over > 0 else f"{-over} to spare"
    counts = allc["status"].value_counts()
    left = " · ".join(f"{counts[s]} {s}" for s in (BUDGET, CUTOFF, EXPIRED, DROPPED) if counts.get(s, 0))
    st.markdown(f"**{r['tokens']}** tokens of {budget} ({fit}) · **{r['n_included']} / {r['n_candidates']}** included · "
                f"{r['latency_ms']:.1f} ms" + (f"  \n:gray[left out: {left}]" if left else ""))
    shortened = shortened_note(r, len(allc))
    if shortened:
        st.caption(shortened)


def shortened_note(r: pd.Series, rows: int) -> str:
    """What a shortened receipt (docs/run-format.md) says of itself, or "" for a complete one: how
    many candidates it lists of how many, and why the others were not included (runs written
    before receipts were shortened have no `left_out` column and are complete)."""
    left_out = r.get("left_out")
    if left_out is None or pd.isna(left_out) or int(left_out) == 0:
        return ""
    try:
        reasons = json.loads(r.get("left_out_reasons") or "{}")
    except ValueError:
        reasons = {}
    why = ", ".join(f"{n} {k}" for k, n in sorted(reasons.items()))
    return (f"Shortened receipt: {rows} of {int(r['n_candidates'])} candidates listed (the top of the ranking, every "
            f"included and every gold item, with their true ranks); {int(left_out)} more not listed" + (f" ({why})" if why else "") + ".")


def ranking_column(strat: str, r: pd.Series, allc: pd.DataFrame, expect: dict, marks: dict[str, str], budget: int,
                   ranks: slice, axis: tuple[tuple[float, float], str] | None = None) -> None:
    """One strategy's answer to the probe: its numbers, the gold check over all its candidates,
    then this page of its ranking as a chart and a table."""
    numbers(r, allc, budget)
    if r["tokens"] > budget:
        seen = received_context(allc, r["context"], budget)
        cut = (r["context"] or "").count("\n") - seen.count("\n")
        st.warning(f"Over budget: the criteria judge the context cut at {budget} tokens ({cut} line(s) cut, "
                   "lowest ranks first), what the model would receive.", icon=":material/content_cut:")
    gold = gold_check(expect, allc, r["context"], budget)
    if not gold.empty:
        ok = int(gold["ok"].sum())
        st.caption(f"gold: {ok} of {len(gold)} right")
        st.dataframe(gold[["mark", "kind", "ref"]], hide_index=True, width="stretch",
                     height=min(36 * (len(gold) + 1) + 3, 250))
    page = allc.iloc[ranks]
    if page.empty:
        st.caption("No candidates on this page.")
        return
    st.plotly_chart(ranking_chart(page, budget, marks, axis), key=f"rank_{strat}", config={"displayModeBar": False})
    st.markdown(chart_legend(page), unsafe_allow_html=True)
    table = page.assign(gold=[marks.get(i, "") for i in page["item_id"]])[
        ["rank", "item_id", "score", "status", "reason", "tokens", "gold", "text"]]
    st.dataframe(table, hide_index=True, width="stretch",
                 column_config={"score": st.column_config.NumberColumn(format="%.2f")})
    removed_panel(allc)


def diff_section(scenario: str, probe: str, names: list[str], chosen: list[str], marks: dict[str, str]) -> None:
    """Two strategies' contexts for this probe, side by side: which items each put in, then the texts."""
    st.subheader("Two contexts side by side")
    if len(names) < 2:
        st.caption("The run has one strategy: nothing to diff.")
        return
    a, b = st.columns(2)
    sa = url_selectbox("Context A", names, "da", default=chosen[0], where=a)
    rest = [n for n in names if n != sa]
    sb = url_selectbox("Context B", rest, "db", default=next((c for c in chosen if c != sa), rest[0]), where=b)
    items = item_diff(q("candidates", sa, scenario, probe), q("candidates", sb, scenario, probe), marks)
    rows = q("probe_rows", scenario, probe, (sa, sb)).set_index("strategy")
    differ = items[items["where"].isin([ONLY_A, ONLY_B])]
    st.caption(f"{len(differ)} item{'s' if len(differ) != 1 else ''} in one context only · "
               f"{int((items['where'] == BOTH).sum())} in both")
    st.dataframe(items, hide_index=True, width="stretch", height=min(36 * (len(items) + 1) + 3, 420),
                 column_config={"rank_a": "A rank", "status_a": f"A: {sa}", "rank_b": "B rank", "status_b": f"B: {sb}",
                                "text": st.column_config.TextColumn("text", width="large")})
    texts = {s: (rows.loc[s, "context"] if s in rows.index else "") for s in (sa, sb)}
    with st.expander("The two texts, line by line", expanded=False):
        st.markdown(diff_table(line_diff(texts[sa], texts[sb]), sa, sb), unsafe_allow_html=True)


def diff_table(rows: list[tuple[str, str, str]], sa: str, sb: str) -> str:
    """An HTML table of `line_diff` rows: lines only in A on red, only in B on green, changed on amber."""
    colour = {ONLY_LEFT: ("#fde7e9", ""), ONLY_RIGHT: ("", "#e6f4ea"), CHANGED: ("#fff4ce", "#fff4ce")}
    cells = []
    for kind, x, y in rows:
        ca, cb = colour.get(kind, ("", ""))
        cells.append(f"<tr><td style='background:{ca}'>{html.escape(x)}</td><td style='background:{cb}'>{html.escape(y)}</td></tr>")
    return ("<table style='width:100%;table-layout:fixed;font-size:0.8em;border-collapse:collapse'>"
            f"<tr><th>A: {html.escape(sa)}</th><th>B: {html.escape(sb)}</th></tr>" + "".join(cells) + "</table>")


if __name__ == "__main__":  # Streamlit's pages/ folder discovery ran this file directly (see pages/_router.py)
    from pages._router import hand_over

    hand_over()

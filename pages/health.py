"""Health: a subject's health score over time per strategy, its factor waterfall at a moment,
and the gold bands from the probes overlaid so disagreement is visible."""

from __future__ import annotations

import html
import json

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from harness.replay.timeline import MAX_DETAIL, MAX_IDS, shortened
from pages._charts import CLOCK, HEALTH, same_range, span
from pages._shared import (url_page, plain, param_get, start, BAND_COLORS, clear_params, q, scenario_select, url_keep, url_multiselect, url_seed,
                           url_selectbox, wkey)
from pages.glossary import plain_label

# (name, low, high) per band, from `harness.analysis.queries.health_bands` (the strategy's own thresholds);
# a comment, not a docstring: Streamlit's magic would print a bare string on the page
Bands = tuple[tuple[str, float, float], ...]
LINE_COLORS = ["#1f77b4", "#ff7f0e", "#9467bd", "#17becf", "#8c564b"]


def band_label(b: str | None) -> str:
    return {"at_risk": "at risk"}.get(b or "", b or "–")


DASHES = ("solid", "dash", "dot", "dashdot", "longdash")
MARKERS = ("circle", "diamond", "square", "triangle-up", "x")


def timeline(tl: pd.DataFrame, gold: pd.DataFrame, moment, bands: Bands) -> go.Figure:
    fig = go.Figure()
    for name, lo, hi in bands:
        fig.add_hrect(y0=lo, y1=hi, fillcolor=BAND_COLORS[name], opacity=0.09, line_width=0,
                      annotation_text=band_label(name), annotation_position="top left",
                      annotation_font_color=BAND_COLORS[name])
    for i, (strat, grp) in enumerate(tl.groupby("strategy", sort=True)):
        hover = [f"<b>{strat}</b> {r.at:%Y-%m-%d %H:%M}<br>score {r.score:.0f} ({band_label(r.band)})<br>after {r.kind} {html.escape(str(r.item_id))}"
                 for r in grp.itertuples()]
        # each line its own dash, marker and width (widest first): a strategy scoring the same as another
        # is still seen under it
        fig.add_trace(go.Scatter(x=grp["at"], y=grp["score"], mode="lines+markers", name=strat, line_shape="hv",
                                 hovertext=hover, hoverinfo="text",
                                 marker=dict(symbol=MARKERS[i % len(MARKERS)], size=9 - min(i, 4)),
                                 line=dict(color=LINE_COLORS[i % len(LINE_COLORS)], dash=DASHES[i % len(DASHES)],
                                           width=max(1.5, 4 - i))))
    g = gold.drop_duplicates("probe_id")
    if len(g):
        rng = {name: (lo, hi) for name, lo, hi in bands}
        mid = {name: (lo + hi) / 2 for name, (lo, hi) in rng.items()}
        lo = [mid[b] - rng[b][0] for b in g["gold"]]
        hi = [rng[b][1] - mid[b] for b in g["gold"]]
        fig.add_trace(go.Scatter(
            x=g["at"], y=[mid[b] for b in g["gold"]], mode="markers", name="gold band (probe)",
            marker=dict(symbol="square-open", size=14, color="black", line=dict(width=2)),
            error_y=dict(type="data", symmetric=False, array=hi, arrayminus=lo, color="black", thickness=2, width=10),
            hovertext=[f"<b>gold at {r.probe_id}</b>: {band_label(r.gold)}" for r in g.itertuples()], hoverinfo="text",
        ))
    if moment is not None:
        fig.add_vline(x=moment, line=dict(color="#555", dash="dot", width=1))
    fig.update_layout(height=380, margin=dict(l=10, r=10, t=10, b=10), yaxis=dict(range=[0, 100], title=HEALTH),
                      legend=dict(orientation="h", y=-0.15), xaxis=dict(title=CLOCK))
    return fig


def factors_of(row) -> list[dict]:
    """A timeline row's factors, read from their JSON: once per row and render, then handed to
    the waterfall's steps and the factor table."""
    return json.loads(row["factors"] or "[]")


def waterfall_steps(row, factors: list[dict] | None = None) -> list[tuple[str, float, str]]:
    """The waterfall's steps between base and score: (label, impact, hover) per factor, then the
    cap's own step when the 0-100 scale capped or floored the sum (`factors`: the row's, already
    read by `factors_of`; read here when None)."""
    factors = factors_of(row) if factors is None else factors
    steps = [(plain_label(f["signal"]), f["impact"],
              f"{html.escape(plain_label(f['signal']))} ({html.escape(str(f['signal']))}): {f['impact']:+.0f}<br>"
              f"{html.escape(str(f['detail']))}") for f in factors]
    cap = row["score"] - (row["base"] + sum(f["impact"] for f in factors))
    if abs(cap) >= 0.5:
        steps.append(("capped at 100" if cap < 0 else "floored at 0", cap,
                      f"the score is kept within 0-100: {cap:+.0f}"))
    return steps


def waterfall_span(row, steps: list[tuple[str, float, str]] | None = None) -> tuple[float, float]:
    """The health axis a waterfall needs: 0 to the highest level its running sum reaches (at least
    110: the 0-100 scale and the bars' labels above it), lower than 0 when the sum dips below
    (`steps`: the row's `waterfall_steps`, made here when None)."""
    level, levels = float(row["base"]), [float(row["base"])]
    for _, impact, _ in waterfall_steps(row) if steps is None else steps:
        level += impact
        levels.append(level)
    return min(0.0, min(levels) - 10), max(110.0, max(levels) + 10)


def waterfall_range(rows, steps: list | None = None) -> tuple[float, float]:
    """One health axis for waterfalls drawn side by side: it holds each one's bars and labels
    (`steps`: each row's `waterfall_steps`, in the same order; made here when None)."""
    spans = [waterfall_span(r, s) for r, s in zip(rows, steps or [None] * len(rows))]
    return span([lo for lo, _ in spans], [hi for _, hi in spans], pad=0)


def waterfall(row, bands: Bands, rng: tuple[float, float] | None = None,
              steps: list[tuple[str, float, str]] | None = None) -> go.Figure:
    """Base, each factor's impact, and the score, on the health axis `rng` (the row's own when
    None; waterfalls side by side share one, `waterfall_range`). Plotly draws a total bar at the
    running sum, so a score the 0-100 scale capped gets a bar of its own for the cap (else the
    last bar would stand at the uncapped sum, labelled with the capped score). `steps`: the row's
    `waterfall_steps`, made here when None."""
    steps = waterfall_steps(row) if steps is None else steps
    x = ["base"] + [name for name, _, _ in steps] + ["score"]
    y = [row["base"]] + [impact for _, impact, _ in steps] + [row["score"]]
    text = [f"{row['base']:.0f}"] + [f"{impact:+.0f}" for _, impact, _ in steps] + [f"{row['score']:.0f}"]
    fig = go.Figure(go.Waterfall(
        x=x, y=y, measure=["absolute"] + ["relative"] * len(steps) + ["total"], text=text, textposition="outside",
        hovertext=[f"base {row['base']:.0f}"] + [hover for _, _, hover in steps]
        + [f"score {row['score']:.0f} ({band_label(row['band'])})"], hoverinfo="text",
        increasing=dict(marker=dict(color="#2e7d32")), decreasing=dict(marker=dict(color="#c62828")),
        totals=dict(marker=dict(color=BAND_COLORS.get(row["band"], "#555"))),
    ))
    for name, lo, hi in bands:
        fig.add_hrect(y0=lo, y1=hi, fillcolor=BAND_COLORS[name], opacity=0.07, line_width=0)
    fig.update_layout(height=340, margin=dict(l=10, r=10, t=10, b=10), yaxis=dict(title=HEALTH), showlegend=False)
    same_range([fig], "yaxis", rng or waterfall_span(row, steps))
    return fig


@url_page
def render() -> None:
    if start("Health") is None:
        return
    c1, c2, c3 = st.columns([3, 2, 3])
    scenario = scenario_select(where=c1)
    subj = q("health_subjects", scenario)
    names = dict(zip(subj["subject"], subj["name"]))
    subject = url_selectbox("Subject", list(subj["subject"]), "subject", where=c2,
                            format_func=lambda s: f"{names.get(s) or s} ({s})")
    have = q("health_strategies", scenario)
    if not have:
        st.info("No strategy in this run reports health (only strategies with the `health` capability do).")
        return
    chosen = url_multiselect("Strategies", have, "strategies", default=have, where=c3)
    tl = q("health_timeline", scenario, subject, tuple(chosen))
    gold = q("health_gold", scenario, subject)
    if tl.empty:
        st.info("No health reports for this subject.")
        return

    moments = list(dict.fromkeys(tl.sort_values("event_index")["event_index"]))
    ev_at = dict(zip(tl["event_index"], tl["at"]))
    ev_what = dict(zip(tl["event_index"], tl["kind"].fillna("") + " " + tl["item_id"].fillna("")))
    forget_moment_of_another_story(scenario, subject)
    key = url_seed("at", moments, moments[-1], parse=int)

    reported = set(tl["strategy"])
    shown = [s for s in chosen if s in reported] or list(have)
    bands = q("health_bands", shown[0])
    st.plotly_chart(timeline(tl, gold, ev_at.get(st.session_state[key]), bands), key="health_timeline",
                    config={"displayModeBar": False})
    if any(q("health_bands", s) != bands for s in shown[1:]):
        st.caption(f"Band thresholds differ between these strategies; the chart shows {plain(shown[0])}'s.")
    moment = st.select_slider("Moment", moments, key=key,
                              format_func=lambda i: f"{ev_at[i]:%Y-%m-%d %H:%M} · after {ev_what[i]}")
    url_keep("at", moment, default=moments[-1])

    if len(gold):
        st.markdown("##### Gold bands at the probes")
        g = gold[gold["strategy"].isin(chosen) | gold["strategy"].isna()].copy()
        g["agrees"] = g["band"].eq(g["gold"]).map({True: "✓ agrees", False: "✗ disagrees"}).where(g["band"].notna(), "–")
        g["gold"] = g["gold"].map(band_label)
        g["band"] = g["band"].map(lambda b: band_label(b) if isinstance(b, str) else "–")
        st.dataframe(g[["probe_id", "at", "gold", "strategy", "score", "band", "agrees"]], hide_index=True, width="stretch",
                     column_config={"at": st.column_config.DatetimeColumn(format="YYYY-MM-DD HH:mm"),
                                    "band": "strategy's band", "gold": "gold band"})

    st.markdown(f"##### Why: the factors at {ev_at[moment]:%Y-%m-%d %H:%M}")
    rows = [r for _, r in tl[tl["event_index"] == moment].iterrows()]
    listed_of = [factors_of(r) for r in rows]  # each row's factors read once, for its waterfall and its table
    steps_of = [waterfall_steps(r, listed) for r, listed in zip(rows, listed_of)]
    rng = waterfall_range(rows, steps_of)
    if len(rows) > 1:
        st.caption(f"The waterfalls share one health axis ({rng[0]:.0f} to {rng[1]:.0f} points), so equal bars are equal impacts.")
    cols = st.columns(len(rows))
    for col, row, listed, steps in zip(cols, rows, listed_of, steps_of):
        with col:
            st.markdown(f"**{plain(row['strategy'])}**: {row['score']:.0f} · :{_color(row['band'])}-badge[{band_label(row['band'])}]")
            st.plotly_chart(waterfall(row, q("health_bands", row["strategy"]), rng, steps), key=f"wf_{row['strategy']}",
                            config={"displayModeBar": False})
            ids_cut = any("source_ids_left_out" in f for f in listed)
            factors = pd.DataFrame(listed, columns=["signal", "impact", "detail", "source_ids"]
                                   + (["source_ids_left_out"] if ids_cut else []))
            st.dataframe(factors, hide_index=True, width="stretch",
                         column_config={"source_ids_left_out": st.column_config.NumberColumn("ids left out")})
            if any(shortened(f) for f in listed):
                st.caption(f"A timeline point keeps at most {MAX_IDS} source ids and {MAX_DETAIL:,} characters of "
                           "detail per factor (the first and the last); the report at each probe is stored whole.")


def forget_moment_of_another_story(scenario: str | None, subject: str | None) -> None:
    """The moment (`?at=`, an event index) belongs to one scenario and subject: when the reader picks
    another, start at its latest moment instead of whatever event has the same index there (a link
    that brings its own moment keeps it)."""
    owner = wkey("at") + "__of"
    mine = st.session_state.get(wkey("at") + "__url")
    brought = param_get("at") not in (None, str(mine))
    if st.session_state.get(owner) not in (None, (scenario, subject)) and not brought:
        clear_params("at")
    st.session_state[owner] = (scenario, subject)


def _color(band: str) -> str:
    return {"healthy": "green", "watch": "orange", "at_risk": "red"}.get(band, "gray")


if __name__ == "__main__":  # Streamlit's pages/ folder discovery ran this file directly (see pages/_router.py)
    from pages._router import hand_over

    hand_over()

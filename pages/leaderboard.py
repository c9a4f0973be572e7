"""Leaderboard: quality criteria x strategies, with n and intervals on hover; the shared total and
coverage that order it; the pass/fail gates with their failing cases; tokens and latency; and a
table per scenario.

Clicking a cell (or choosing it below the chart) opens the matching failures; clicking a
scenario's row opens that scenario's failures.
"""

from __future__ import annotations

import re

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from harness.analysis.aggregate import order_sentence, pass_interval_of
from harness.analysis.queries import Filter, total_columns
from harness.criteria.groups import is_gate
from harness.criteria.groups import totals as group_totals
from pages._expiry import classes_panel
from pages._shared import (url_page, plain, code, probe_count, visit_key, param_get, start, go as go_page, manifest, pct, q, root, url_multiselect, url_pagination, url_selectbox,
                           url_toggle, listed_runs, query, criterion_titles)

FAILURES = "failures"
# Comments, not docstrings, at module level: a page file run as a script (see pages/_router.py) would print them.
UNSUPPORTED_TEXT = "n/a"  # short enough for a phone's cell (a 390 px screen gives each about 50 px)
NEUTRAL = "#e6e6e6"  # the fill of a cell that is not a score: no case of the criterion, or every case unsupported
SCORE, UNSUPPORTED, NO_CASE = "score", "unsupported", "none"  # what a cell holds (its click target's customdata[2])


def cell_from_selection(event) -> tuple[str, str] | None:
    """(strategy, criterion) of the clicked heatmap cell, from a plotly selection event; None for
    no click, or a click on a cell without cases (nothing to open)."""
    try:
        points = event["selection"]["points"]
    except (KeyError, TypeError):
        return None
    for p in points:
        cd = p.get("customdata")
        if cd and len(cd) >= 2 and (len(cd) < 3 or cd[2] != NO_CASE):
            return str(cd[0]), str(cd[1])
    return None


def _wrap(label: str, width: int) -> str:
    """An axis label over lines of about `width` characters, broken after spaces and underscores (a
    variant's parameters on a line of their own), so columns stay narrow enough for a phone."""
    head, sep, tail = label.partition("[")
    lines: list[str] = []
    for word in re.split(r"(?<=[ _])", head):
        if lines and len(lines[-1]) + len(word) <= width:
            lines[-1] += word
        else:
            lines.append(word)
    lines = [ln.strip() for ln in lines if ln.strip()] or [head]
    if sep:
        lines.append(sep + tail)
    return "<br>".join(lines)


def pass_ci(r) -> str:
    """The pass rate's 95% interval, named: the cluster bootstrap over scenarios where cases share
    one, Wilson where each case has its own (`harness.analysis.aggregate.pass_interval_of`)."""
    lo, hi, name = pass_interval_of(r)
    return f"95% CI {pct(lo)}–{pct(hi)}, {name}"


def gate_view(gates, strategies: list[str], titles: dict[str, str]):
    """Strategies x gates: ✓ pass, ✗ k of n failing, or – without a case."""
    import pandas as pd

    rows = []
    for s in strategies:
        row = {"strategy": s}
        for g in gates[gates["strategy"] == s].itertuples(index=False):
            row[titles.get(g.criterion, g.criterion)] = ("–" if g.passed is None else "✓ pass" if g.passed
                                                         else f"✗ {g.failing} of {g.n} failing")
        rows.append(row)
    return pd.DataFrame(rows)


def cell_hover(s: str, title: str, r, headline: str, beside: tuple[str, ...]) -> str:
    """A cell's hover: scores and their intervals as fractions (0-1, like the cell), rates as
    percentages; `headline` is what the cell's value is (mean, F1), `beside` the metric's other columns."""
    head = f"<b>{s}</b> · {title}"
    if r.unsupported == r.n:
        return (f"{head}<br>unsupported: this strategy cannot answer it ({r.n} cases, each counted as 0 in totals)"
                f"<br><i>click to open the cases</i>")
    values = [(k, getattr(r, k)) for k in beside]
    extra = ("<br>" + " · ".join(f"{k} {v:.2f}" for k, v in values) if values and all(v == v for _, v in values) else "")
    ci = f" (95% CI {r.lo:.2f}–{r.hi:.2f})" if r.lo == r.lo else ""
    pci = f" ({pass_ci(r)})" if r.pass_lo == r.pass_lo else ""
    return (f"{head}<br>{headline} {r.mean:.2f}{ci} over {r.n} case{'s' if r.n != 1 else ''}{extra}"
            f"<br>pass rate {pct(r.pass_rate)}{pci}"
            f"<br>{int(r.fails)} fail · {r.unsupported} unsupported · {r.errors} errors"
            f"<br><i>click to open the failing cases</i>")


def heatmap(cells, strategies: list[str], crit_keys: list[str], meta) -> go.Figure:
    """Criteria down, strategies across (criterion names read level, on a phone too), scores coloured
    red to green; cells that are not scores (no case, all unsupported) drawn neutral grey. `meta` is
    `criteria_meta` (title, group, metric headline and columns)."""
    info = meta.set_index("criterion")
    titles = info["title"].to_dict()
    by = {(r.strategy, r.criterion): r for r in cells.itertuples(index=False)}
    z, text, nz, ntext = [], [], [], []
    px, py, cds, hover = [], [], [], []
    for c in crit_keys:
        zr, tr, nzr, ntr = [], [], [], []
        for s in strategies:
            r = by.get((s, c))
            if r is None or not r.n:
                kind, tip = NO_CASE, f"<b>{s}</b> · {titles[c]}<br>no case of this criterion"
            else:
                kind = UNSUPPORTED if r.unsupported == r.n else SCORE
                tip = cell_hover(s, titles[c], r, info.at[c, "headline"], tuple(info.at[c, "metric_columns"]))
            score = kind == SCORE
            zr.append(r.mean if score else None)
            tr.append((f"{r.mean:.2f}" + (" ‼" if r.errors else "")) if score else "")
            nzr.append(None if score else 0)
            ntr.append("" if score else (UNSUPPORTED_TEXT if kind == UNSUPPORTED else "–"))
            px.append(s)
            py.append(c)
            cds.append([s, c, kind])
            hover.append(tip)
        z.append(zr)
        text.append(tr)
        nz.append(nzr)
        ntext.append(ntr)
    fig = go.Figure()
    fig.add_trace(go.Heatmap(
        z=nz, x=strategies, y=crit_keys, text=ntext, texttemplate="%{text}", hoverinfo="skip", showscale=False,
        colorscale=[[0, NEUTRAL], [1, NEUTRAL]], xgap=2, ygap=2, textfont=dict(color="#666", size=11),
    ))
    fig.add_trace(go.Heatmap(
        z=z, x=strategies, y=crit_keys, text=text, texttemplate="%{text}", hoverinfo="skip", showscale=False,
        colorscale="RdYlGn", zmin=0, zmax=1, xgap=2, ygap=2, textfont=dict(size=12),
    ))
    # The click (and hover) target: one invisible marker per cell. Plotly heatmaps emit no selection
    # events, scatter points do, and only when they take part in hovering (hoverinfo "skip" would
    # leave them out of clicks too). hoverdistance -1 makes the nearest cell centre the one under
    # the pointer, so the whole cell answers, not only the marker in its middle.
    fig.add_trace(go.Scatter(
        x=px, y=py, customdata=cds, mode="markers", hovertext=hover, hoverinfo="text", showlegend=False,
        marker=dict(size=30, symbol="square", color="rgba(0,0,0,0)"),
    ))
    # a rule where each group after the first begins (criteria come sorted by group); the headline
    # group's criteria read upright, the others (not in the headline total) in italics
    grps = [info.at[c, "grp"] for c in crit_keys]
    for i in range(1, len(grps)):
        if grps[i] != grps[i - 1]:
            fig.add_hline(y=i - 0.5, line=dict(color="#333", width=2))
    headline = group_totals()[0].key
    labels = [_wrap(titles[c], 18) if g == headline else f"<i>{_wrap(titles[c], 18)}</i>" for c, g in zip(crit_keys, grps)]
    fig.update_layout(
        height=70 + 34 * len(crit_keys) + 14 * max(_wrap(s, 12).count("<br>") for s in strategies),
        margin=dict(l=4, r=4, t=10, b=4), clickmode="event+select", hovermode="closest", hoverdistance=-1,
        dragmode=False, showlegend=False, plot_bgcolor="rgba(0,0,0,0)",
        xaxis=dict(side="top", tickangle=0, tickmode="array", tickvals=strategies, ticktext=[_wrap(s, 12) for s in strategies],
                   automargin=True, fixedrange=True, showgrid=False, zeroline=False, tickfont=dict(size=11)),
        yaxis=dict(autorange="reversed", tickmode="array", tickvals=crit_keys, ticktext=labels,
                   automargin=True, fixedrange=True, showgrid=False, zeroline=False, tickfont=dict(size=11)),
    )
    return fig


@url_page
def render() -> None:
    run = start("Leaderboard")
    if run is None:
        return
    m = manifest(run, root())
    counts = m.get("counts", {})
    st.caption(f"Run {code(run)} · {counts.get('scenarios', '?')} scenarios · {probe_count(counts)} · "
               f"started {m.get('started', '')[:19].replace('T', ' ')} UTC")
    f = filters()
    cells, totals = q("leaderboard", f)
    if cells.empty:
        st.warning("No scores match these filters.")
        beside_section(run)  # a run of decision policies alone still has figures to set beside another's
        return
    meta = q("criteria_meta")
    scored = set(cells["criterion"])
    gate_keys = [c for c, g in zip(meta["criterion"], meta["grp"]) if c in scored and is_gate(g)]
    crit_keys = [c for c in meta["criterion"] if c in scored and c not in gate_keys]
    titles = dict(zip(meta["criterion"], meta["title"]))
    strategies = list(totals["strategy"])
    score_section(cells, strategies, crit_keys, meta[meta["criterion"].isin(crit_keys)])
    open_section(strategies, crit_keys + gate_keys, titles)
    totals_section(totals)
    verdict = q("shortcut_verdict", f)
    if verdict:  # a board whose order a trivial rule matches says so under its totals
        st.caption(verdict)
    gates_section(f, strategies, titles)
    decision_policies()
    beside_section(run)
    scenario_section(f, strategies)
    memory_classes(strategies)


def filters() -> Filter:
    """Suite, tag, probe tag (when the run's probes carry any) and controls, bound to the URL."""
    suites, tags = q("suites_and_tags")
    probe_tags = q("probe_tag_counts")
    c1, c2, c3 = st.columns([2, 3, 2])
    sel_suites = url_multiselect("Suite", suites, "suite", where=c1, placeholder="all suites")
    sel_tags = url_multiselect("Tag", tags, "tag", where=c2, placeholder="all tags")
    controls = url_toggle("Show controls (oracle, empty, shortcuts)", "controls", where=c3,
                          help="Controls exist to prove the scorers honest; they are kept out of the ranking by default.")
    sel_probe_tags: list[str] = []
    if len(probe_tags):
        counts = dict(zip(probe_tags["tag"], probe_tags["probes"]))
        sel_probe_tags = url_multiselect(
            "Probe tag", list(counts), "ptag", placeholder="all probes",
            format_func=lambda t: f"{t} ({counts.get(t, 0)} probes)",
            help="Score only the probes carrying one of these tags (an imported benchmark's question category, say).")
    return Filter(suites=tuple(sel_suites), tags=tuple(sel_tags), probe_tags=tuple(sel_probe_tags),
                  include_controls=controls)


def score_section(cells, strategies, crit_keys, meta) -> None:
    """The heatmap; a click on a cell opens its failing cases."""
    st.subheader("Score by criterion")
    shows = "".join(f"; {r.title} shows {r.headline}" for r in meta.itertuples() if r.headline != "mean")
    head = group_totals()[0]
    others = [g for g in dict.fromkeys(meta["group_title"]) if g != head.title]
    apart = f" Criteria in italics ({', '.join(others)}) are outside the {head.title} total." if others else ""
    st.caption(f"Mean per case, 0 (red) to 1 (green); unsupported and errors (‼) count as 0{shows}, and a cell whose cases "
               f"are all unsupported is grey and reads {UNSUPPORTED_TEXT}.{apart} Hover for n and the 95% intervals; click a cell to open its failing cases.")
    event = st.plotly_chart(heatmap(cells, strategies, crit_keys, meta), on_select="rerun",
                            selection_mode="points", key=visit_key("heat"), config={"displayModeBar": False})
    clicked = cell_from_selection(event)
    if clicked:
        open_cell(cells, *clicked)


def open_cell(cells, strategy: str, criterion: str) -> None:
    """Open the Failures page on one cell's cases (with unsupported ones when those are all it has)."""
    row = cells[(cells["strategy"] == strategy) & (cells["criterion"] == criterion)]
    unsup = bool(len(row)) and int(row["unsupported"].iloc[0]) == int(row["n"].iloc[0]) > 0
    go_page(FAILURES, strategy=strategy, criterion=criterion, unsupported="1" if unsup else None,
            controls="1" if param_get("controls") == "1" else None)


def open_section(strategies, crit_keys, titles) -> None:
    """The same as a click, for keyboards and for anyone who prefers menus."""
    with st.container(border=True):
        a, b, c = st.columns([3, 3, 2], vertical_alignment="bottom")
        strat = url_selectbox("Strategy", strategies, "strategy", where=a)
        crit = url_selectbox("Criterion", crit_keys, "criterion", where=b, format_func=lambda k: titles.get(k, k))
        if c.button("Open failing cases", icon=":material/report:", width="stretch"):
            go_page(FAILURES, strategy=strat, criterion=crit,
                    controls="1" if param_get("controls") == "1" else None)


def totals_section(totals) -> None:
    st.subheader("Totals, tokens and latency")
    n_shared = int(totals["shared_criteria"].iloc[0]) if len(totals) else 0
    st.caption(f"The shared total, which orders the board, is the equal-weight mean over the {n_shared} quality criteria "
               "that every strategy shown (controls aside) supports, so a capability only some have cannot decide the "
               "order; coverage is how many of the quality criteria shown each strategy supports. Group totals count "
               "unsupported cases as 0. Gates are in no total. Tokens are the context the model would see at a probe.")
    feeding = total_columns()
    st.caption(order_caption(totals))
    view = totals.assign(budget_use=totals["used"], pass_rate=100 * totals["pass_rate"],
                         budget_flag=[f"⚠ {int(n)} probes" if flag else "" for n, flag in
                                      zip(totals["empty_missing"].fillna(0), totals["flagged"].fillna(False))],
                         coverage=[f"{int(a)} of {int(b)}" for a, b in zip(totals["supported"], totals["shown"])],
                         interval=[f"{lo:.2f}–{hi:.2f}" if lo == lo and hi == hi else "–"
                                   for lo, hi in zip(totals["shared_lo"], totals["shared_hi"])])[
        ["strategy", "shared", "interval", "coverage", *(col for col, _ in feeding), "pass_rate", "cases", "failing", "unsupported",
         "tokens_mean", "budget_use", "cap", "budget_flag", "latency_p50", "latency_p95", "probe_errors"]]
    st.dataframe(
        view, hide_index=True, width="stretch",
        column_config={
            "shared": st.column_config.ProgressColumn("shared total", min_value=0, max_value=1, format="%.2f",
                                                      help=f"Mean over the {n_shared} quality criteria every strategy compared supports"),
            "interval": st.column_config.TextColumn("95 % interval", help="The shared total's interval: one cluster "
                                                    "bootstrap over scenarios for every shared criterion at once"),
            "coverage": st.column_config.TextColumn("coverage", help="Quality criteria the strategy supports, of those shown"),
            **{col: st.column_config.NumberColumn(f"total ({title})", format="%.2f",
                                                  help=f"Mean over the {title} criteria's means, equal weights, unsupported as 0")
               for col, title in feeding},
            "pass_rate": st.column_config.NumberColumn("cases passed", format="%.0f%%"),
            "tokens_mean": st.column_config.NumberColumn("tokens / probe", format="%.0f"),
            "budget_use": st.column_config.ProgressColumn("budget used", min_value=0, max_value=1, format="percent",
                                                          help="Mean over probes of the context's tokens over the probe's budget"),
            "cap": st.column_config.NumberColumn("stopped by item cap", format="%d",
                                                 help="Probes whose context stopped at the strategy's opt-in item cap, not the budget"),
            "budget_flag": st.column_config.TextColumn("budget left empty, gold missing",
                                                       help="Probes where the context used under half its budget while gold "
                                                            "the probe names was missing (the recall criterion)"),
            "latency_p50": st.column_config.NumberColumn("latency p50 (ms)", format="%.2f"),
            "latency_p95": st.column_config.NumberColumn("latency p95 (ms)", format="%.2f"),
            "probe_errors": "errors",
        },
    )


def order_caption(totals) -> str:
    """Which neighbours of the order this suite separates, from the totals' gap columns."""
    gaps = [(r.strategy, r.next_strategy, r.next_gap_lo, r.next_gap_hi) for r in totals.itertuples(index=False)
            if isinstance(r.next_strategy, str)]  # not a control, not the last strategy compared
    return order_sentence(gaps)


def decision_policies() -> None:
    """The decision policies' own leaderboard, when the run has any (details on the Decisions page)."""
    from pages.decisions import policy_table

    policies = q("decision_policies")
    if not policies:
        return
    st.subheader("Decision policies")
    st.caption("What each policy decided on the customer turns with a gold plan; the two gates list their failing "
               "cases (irreversible errors: false transfers, surveys mid-complaint, missed escalations).")
    policy_table(policies)
    if st.button("Open the decisions turn by turn", icon=":material/alt_route:"):
        go_page("decisions")


def beside_section(run: str) -> None:
    """This run beside another run chosen in the sidebar (the challenge suite's, say): the figures the
    front ends move (harness.analysis.beside), row by row; nothing until another run is chosen."""
    labels = listed_runs()
    others = [r for r in labels if r != run]
    if not others:
        return
    other = url_selectbox("Beside another run", [""] + others, "beside", where=st.sidebar,
                          format_func=lambda r: labels.get(r, "nothing beside") if r else "nothing beside",
                          help="Show this run's decisions, classes, extraction and reply figures beside another "
                               "run's, e.g. the canonical suite beside the challenge suite (never trained on).")
    if not other:
        return
    table = query("beside.side_by_side", (run, other), root(), run, other)
    st.subheader("Beside another run")
    st.caption(f"This run ({code(run)}) beside {code(other)}: per row both runs have, each criterion's mean over its "
               "cases (unsupported and errors count 0) and the number of cases; in sample beside out of sample when "
               "one run is the canonical suite and the other the challenge suite.")
    if table.empty:
        st.caption("The two runs have no row with a decision, memory-class, extraction or reply criterion in common.")
        return
    titles = criterion_titles(run)
    shown = pd.DataFrame({
        "row": table["row"],
        "criterion": [titles.get(c, c) for c in table["criterion"]],
        "this run": [f"{m:.3f} (n={n})" if pd.notna(n) else "no case" for m, n in zip(table["this_mean"], table["this_n"])],
        "beside": [f"{m:.3f} (n={n})" if pd.notna(n) else "no case" for m, n in zip(table["other_mean"], table["other_n"])],
    })
    st.dataframe(shown, hide_index=True, width="stretch")


def memory_classes(strategies: list[str]) -> None:
    """The expiry stage's classifier on the labelled turns: one strategy's confusion table (every
    strategy behind the stage shares the classifier; the picker shows each one's own record)."""
    turns = q("memory_classes", tuple(strategies))
    staged = [s for s in strategies if s in set(turns["strategy"])]
    if not staged:
        return
    st.subheader("Memory classes (expiry stage)")
    st.caption("The classes the expiry stage's classifier (learned or rules, as the row says) gave the labelled turns, against their labels: "
               "rows are the gold label, columns the class assigned.")
    pick = url_selectbox("Strategy behind the stage", staged, "classes_of")
    classes_panel(turns[turns["strategy"] == pick])


def gates_section(f: Filter, strategies: list[str], titles: dict[str, str]) -> None:
    """The pass/fail gates: a table of pass or fail per strategy, and each failing gate's first cases."""
    gates = q("gate_table", f)
    if not len(gates):
        return
    st.subheader("Gates")
    st.caption("Pass/fail: a strategy passes a gate when every case passes; gates say whether it may ship, not how "
               "good it is, and are kept out of every total. Pick a strategy and a gate above to open the failing cases.")
    st.dataframe(gate_view(gates, strategies, titles), hide_index=True, width="stretch")
    failing = gates[gates["passed"] == False]  # noqa: E712 (None means no case)
    for g in failing.itertuples(index=False):
        with st.expander(f"{plain(g.strategy)} fails {plain(titles.get(g.criterion, g.criterion))}: {g.failing} of {g.n} cases"):
            for c in g.cases:
                where = f"{c['scenario']}/{c['probe_id']}" if c["probe_id"] else c["scenario"]
                st.markdown(f"- {code(where)} ({plain(c['status'])}): {plain(c['explanation'])}")
            if g.failing > len(g.cases):
                st.caption(f"and {g.failing - len(g.cases)} more")


SCENARIO_ORDER = {"hardest": "hardest first (lowest best score)", "spread": "most disagreement first",
                  "failing": "most failing cases first", "name": "by name"}


def scenario_section(f: Filter, strategies: list[str]) -> None:
    """One row per scenario: each strategy's score on it, so a suite's hard cases and the scenarios
    strategies disagree on stand out; a click on a row opens that scenario's failures."""
    st.subheader("By scenario")
    st.caption("Per scenario, each strategy's mean over the headline total's criteria of its mean case value there (each "
               "criterion by its case values, so F1 criteria too). Click a row to open the scenario's failing cases.")
    order = url_selectbox("Order", list(SCENARIO_ORDER), "sorder", format_func=SCENARIO_ORDER.get)
    total = q("scenario_count", f)
    limit, offset = url_pagination(total, "spage")
    table = q("scenario_table", f, order, limit=limit, offset=offset)
    if table.empty:
        st.caption("No scenario matches these filters.")
        return
    shown = [s for s in strategies if s in table.columns]
    cfg = {s: st.column_config.ProgressColumn(s, min_value=0, max_value=1, format="%.2f") for s in shown}
    cfg.update({"spread": st.column_config.NumberColumn("spread", format="%.2f", help="Best minus worst strategy"),
                "failing": st.column_config.NumberColumn("failing cases"), "title": st.column_config.TextColumn("title")})
    event = st.dataframe(table[["scenario", "title", *shown, "spread", "failing"]], hide_index=True, width="stretch",
                         on_select="rerun", selection_mode="single-row", key=visit_key("scenario_table"), column_config=cfg)
    rows = list(getattr(getattr(event, "selection", None), "rows", []) or [])
    if rows:
        go_page(FAILURES, scenario=table["scenario"].iloc[rows[0]],
                controls="1" if f.include_controls else None)


if __name__ == "__main__":  # Streamlit's pages/ folder discovery ran this file directly (see pages/_router.py)
    from pages._router import hand_over

    hand_over()

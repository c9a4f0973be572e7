"""Compare: two runs (any strategy of A paired with any of B) or two strategies in one run.

Numbers come from `harness.analysis.compare`, the same code as `supportbench compare`, so the page
and the CLI agree: per-criterion deltas (B - A, positive is better) and the cases whose verdict
flipped, regressions worst first; a click on a flipped case opens it. Two runs that share no
case (different suites) are said to, loudly, before any delta is shown.
"""

from __future__ import annotations

import html
import re

import plotly.graph_objects as go
import streamlit as st

from harness.analysis.cases import judged_specs
from harness.analysis.compare import default_pairs
from pages._charts import SCORE_DELTA
from pages._shared import (url_page, current_run, plain, code, visit_key, start, case_key, criterion_titles, go as go_page, manifest, q, query, root, listed_runs,
                           url_keep, url_multiselect, url_pagination, url_seed, url_selectbox)

MODES = {"runs": "Two runs", "strategies": "Two strategies in one run"}
ARROW = " → "


def wrap_label(label: str, width: int = 24) -> str:
    """A strategy or pair label for a chart axis, HTML-escaped, broken after ` -> `, spaces, commas
    and before `[` so no line is much longer than `width`."""
    parts, line = [], ""
    for piece in re.split(r"(?<=-> )|(?<=[ ,_])|(?=\[)", label):
        if line and len(line) + len(piece) > width:
            parts.append(line)
            line = ""
        line += piece
    parts.append(line)
    return "<br>".join(html.escape(p) for p in parts if p)


def delta_chart(crit, titles) -> go.Figure:
    crit = crit.dropna(subset=["delta"])
    # on two lines (criterion, then the strategy or pair, its variant's parameters wrapped): a phone
    # leaves the labels about half its width, and one long line was cut
    labels = [f"{html.escape(titles.get(c, c))}<br>{wrap_label(s)}" for s, c in zip(crit["strategy"], crit["criterion"])]
    colors = ["#c62828" if d < 0 else ("#2e7d32" if d > 0 else "#9e9e9e") for d in crit["delta"]]
    lo, hi = crit["lo"], crit["hi"]  # `deltas_section` merged `delta_intervals`: these columns are always there
    # whiskers around the bar: the paired interval, shifted onto the bar's own delta (the two differ only
    # when one side has cases the other lacks)
    centre = crit["paired_delta"]
    ci = [f" · 95% interval {l:+.2f} to {h:+.2f} over {int(n)} paired cases" if l == l else ""
          for l, h, n in zip(lo, hi, crit["n_paired"])]
    fig = go.Figure(go.Bar(
        x=crit["delta"], y=labels, orientation="h", marker_color=colors,
        error_x=dict(type="data", symmetric=False, array=(hi - centre).fillna(0).clip(lower=0),
                     arrayminus=(centre - lo).fillna(0).clip(lower=0), color="#424242", thickness=1.5, width=4),
        hovertext=[f"{l}<br>A {a:.2f} → B {b:.2f} ({d:+.2f}){c}"
                   for l, a, b, d, c in zip(labels, crit["mean_a"], crit["mean_b"], crit["delta"], ci)],
        hoverinfo="text",
    ))
    fig.update_layout(height=80 + 34 * len(crit), margin=dict(l=10, r=10, t=10, b=10),
                      xaxis=dict(title=SCORE_DELTA, zeroline=True, zerolinewidth=2), yaxis=dict(autorange="reversed"))
    return fig


@url_page
def render() -> None:
    run = start("Compare")
    if run is None:
        return
    key = url_seed("mode", list(MODES), "runs")
    mode = st.segmented_control("Compare", list(MODES), format_func=MODES.get, key=key) or "runs"
    url_keep("mode", mode, default="runs")
    if mode == "runs":
        picked = two_runs(run)
    else:
        picked = two_strategies(run)
    if picked is None:
        return
    result, case_run, run_a, pairs = picked
    titles = criterion_titles(case_run)
    headline(result)
    intervals = query("delta_intervals", tuple(dict.fromkeys((run_a, case_run))), root(), run_a, case_run, pairs)
    deltas_section(result, titles, intervals)
    flips_section(result, titles, case_run, run_a)


def two_runs(run: str):
    """Run A and run B, the pairs of strategies to compare, and the overlap check. Returns
    (result, run whose cases a click opens), or None when there is nothing to show."""
    labels = listed_runs()  # the router listed them in this script run
    ids = list(labels)
    if len(ids) < 2:
        st.info("Only one run on disk: compare two strategies of it instead, or write another run.")
        return None
    c1, c2 = st.columns(2)
    run_b = url_selectbox("Run B (new)", ids, "b", default=run, where=c2, format_func=lambda r: labels.get(r, r))
    run_a = url_selectbox("Run A (baseline)", [r for r in ids if r != run_b], "a", where=c1, format_func=lambda r: labels.get(r, r))
    overlap = query("case_overlap", (run_a, run_b), root(), run_a, run_b)
    if not overlap_ok(overlap, run_a, run_b):
        return None
    # strategies, then decision policies: a policy variant's regressions are cases like any other
    strat_a = list(judged_specs(manifest(run_a, root())).values())
    strat_b = list(judged_specs(manifest(run_b, root())).values())
    options = [f"{a['label']}{ARROW}{b['label']}" for a in strat_a for b in strat_b]
    default = [f"{a}{ARROW}{b}" for a, b in default_pairs(strat_a, strat_b)]
    chosen = url_multiselect("Pairs (strategy of A → strategy of B)", options, "pair", default=default,
                             placeholder="pick pairs to compare",
                             help="By default each strategy (or decision policy) of B is paired with the one of A of "
                                  "the same label, else with A's of the same name (a variant with its base). Add any pair.")
    left = [("A", a["label"]) for a in strat_a if not any(p.startswith(a["label"] + ARROW) for p in chosen)]
    left += [("B", b["label"]) for b in strat_b if not any(p.endswith(ARROW + b["label"]) for p in chosen)]
    if left:
        st.caption("Not compared (in no chosen pair): " + ", ".join(f"{side} {code(name)}" for side, name in left))
    if not chosen:
        st.info("Pick at least one pair of strategies to compare.")
        return None
    pairs = tuple(tuple(p.split(ARROW, 1)) for p in chosen)
    return query("compare_pairs", (run_a, run_b), root(), run_a, run_b, pairs), run_b, run_a, pairs


def overlap_ok(o, run_a: str, run_b: str) -> bool:
    """Say how many cases the runs share, and when they ran different suites; False (nothing to
    compare) when they share no case."""
    suites = f"A ran {plain(', '.join(o.suites_a) or '?')} ({o.a:,} cases), B ran {plain(', '.join(o.suites_b) or '?')} ({o.b:,} cases)"
    if o.shared and set(o.suites_a) != set(o.suites_b):
        st.warning(f"**These runs are of different suites.** {suites}. Deltas compare the cases they share only; a "
                   "suite's other conversations are not in them.", icon=":material/warning:")
    if o.shared == 0:
        st.error(f"**These runs share no case.** {suites}. A delta between them would compare different conversations, "
                 "not strategies: pick two runs of the same suite.", icon=":material/block:")
        return False
    if o.shared < max(o.a, o.b):
        st.warning(f"The runs share {o.shared:,} cases; {suites}. Only the shared cases can flip; the per-criterion means "
                   "are over each run's own cases.", icon=":material/warning:")
    return True


def two_strategies(run: str):
    c1, c2, c3 = st.columns(3)
    names = list(q("strategies", run=run)["strategy"])
    sa = url_selectbox("Strategy A", names, "sa", where=c1)
    sb = url_selectbox("Strategy B", [n for n in names if n != sa], "sb", where=c2)
    c3.caption(f"in run `{run}`")
    if sb is None:
        st.info("This run has only one strategy.")
        return None
    return query("compare", (run,), root(), run, run, strategy_a=sa, strategy_b=sb), run, run, ((sa, sb),)


def headline(result) -> None:
    m1, m2, m3, m4 = st.columns(4)
    m1.metric("regressions", len(result.regressions))
    m2.metric("improvements", len(result.improvements))
    changed = result.criteria.dropna(subset=["delta"])
    m3.metric("criteria worse", int((changed["delta"] < -1e-9).sum()))
    m4.metric("cases on one side only", len(result.one_sided))


def deltas_section(result, titles, intervals) -> None:
    """The per-criterion deltas (B − A of each side's own mean), with the 95% interval of the mean
    per-case difference over the cases both sides judged where the metric is a mean of cases."""
    crit = result.criteria.merge(intervals, on=["strategy", "criterion"], how="left")
    st.subheader("Per-criterion deltas")
    changed = crit.dropna(subset=["delta"])
    moved = changed[changed["delta"].abs() > 1e-9].sort_values("delta")
    if moved.empty and len(result.one_sided):
        st.warning(f"No criterion moved over the cases both sides have, but {len(result.one_sided):,} cases are on one side "
                   "only: they are not compared (see the table below).", icon=":material/warning:")
    elif moved.empty:
        st.success("No criterion moved.")
    else:
        st.plotly_chart(delta_chart(moved, titles), key="deltas", config={"displayModeBar": False})
    st.caption("Bars: B − A of each side's mean; whiskers: the 95% interval of the mean per-case difference over the "
               "cases both runs judged (normal approximation; none for a criterion whose figure is not a mean of cases, "
               "such as an F1). A whisker that crosses 0 is a change the cases do not settle.")
    with st.expander(f"All {len(crit)} strategy × criterion rows"):
        st.dataframe(crit.assign(criterion=crit["criterion"].map(lambda k: titles.get(k, k))), hide_index=True, width="stretch",
                     column_config={k: st.column_config.NumberColumn(format="%.3f")
                                    for k in ("mean_a", "mean_b", "delta", "pass_rate_a", "pass_rate_b", "pass_rate_delta",
                                              "paired_delta", "lo", "hi")})
    if len(result.one_sided):
        with st.expander(f"{len(result.one_sided):,} cases on one side only"):
            st.dataframe(result.one_sided.head(500), hide_index=True, width="stretch")


def flips_section(result, titles, case_run: str, run_a: str) -> None:
    """The flipped cases, regressions and improvements; a click on a row opens that case with both
    sides (A and B), on the Failures page of run B, its list narrowed to the flip's strategy,
    criterion and scenario."""
    st.subheader("Cases that flipped")
    switch = "" if case_run == current_run() else f"; the sidebar then shows run B, {code(case_run)}"
    st.caption(f"Click a row to open the case with both sides, A's and B's{switch}.")
    tab_r, tab_i = st.tabs([f"Regressions ({len(result.regressions)})", f"Improvements ({len(result.improvements)})"])
    for tab, df, param in ((tab_r, result.regressions, "rpage"), (tab_i, result.improvements, "ipage")):
        with tab:
            if df.empty:
                st.caption("None.")
                continue
            limit, offset = url_pagination(len(df), param)
            page = df.iloc[offset:offset + limit]
            event = st.dataframe(
                page.assign(criterion=page["criterion"].map(lambda k: titles.get(k, k)))[
                    ["strategy", "criterion", "case", "status_a", "status_b", "value_a", "value_b", "delta", "explanation_b", "explanation_a"]],
                hide_index=True, width="stretch", on_select="rerun", selection_mode="single-row", key=visit_key(f"flips_{param}"),
                column_config={"value_a": st.column_config.NumberColumn("A", format="%.2f"),
                               "value_b": st.column_config.NumberColumn("B", format="%.2f"),
                               "delta": st.column_config.NumberColumn("Δ", format="%+.2f"),
                               "explanation_b": st.column_config.TextColumn("why (B)", width="large"),
                               "explanation_a": st.column_config.TextColumn("why (A)")},
            )
            rows = list(getattr(getattr(event, "selection", None), "rows", []) or [])
            if rows:
                r = page.iloc[rows[0]]
                strat_a, _, strat = r["strategy"].rpartition(" -> ")  # a pair's label is `a -> b`: B's case is b's
                go_page("failures", run=case_run, case=case_key(strat, r["scenario"], r["probe_id"], r["criterion"]),
                        vs=run_a, vsstrat=strat_a or strat, strategy=strat, criterion=r["criterion"],
                        scenario=r["scenario"], unsupported="1" if "unsupported" in (r["status_a"], r["status_b"]) else None)


if __name__ == "__main__":  # Streamlit's pages/ folder discovery ran this file directly (see pages/_router.py)
    from pages._router import hand_over

    hand_over()

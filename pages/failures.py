"""Failures: every failing or errored case, filterable and searchable; open one to read it.

A case is (strategy, scenario, probe, criterion). Opening it shows the transcript up to the
probe, what the strategy put in the context against the gold labels, the score explanation
and the handoff brief when there is one.
"""

from __future__ import annotations

import re

import pandas as pd
import streamlit as st

from harness.analysis.queries import FAILING, Filter, gap_label, gold_check, gold_marks, gold_view, hit, parse_expect, present
from pages._shared import (start, STATUS_ICONS, case_key, parse_case, wkey, criterion_titles, q, url_multiselect,
                           url_pagination, url_selectbox, url_text, url_toggle)

GAP = pd.Timedelta(hours=1)


def render() -> None:
    if start("Failures") is None:
        return
    titles = criterion_titles()
    strategies = list(q("strategies")["strategy"])
    scenarios = list(q("scenarios")["scenario"])
    _suites, tags = q("suites_and_tags")

    with st.container(border=True):
        a, b, c, d = st.columns(4)
        f_strat = url_multiselect("Strategy", strategies, "strategy", where=a, placeholder="all strategies")
        f_crit = url_multiselect("Criterion", list(titles), "criterion", where=b, placeholder="all criteria",
                                 format_func=lambda k: titles.get(k, k))
        f_scen = url_multiselect("Scenario", scenarios, "scenario", where=c, placeholder="all scenarios")
        f_tag = url_multiselect("Tag", tags, "tag", where=d, placeholder="all tags")
        e, g = st.columns([3, 1], vertical_alignment="bottom")
        text = url_text("Search explanations and tasks", "q", where=e, placeholder="e.g. missing, budget, timeout")
        unsup = url_toggle("Include unsupported", "unsupported", where=g)

    statuses = FAILING + (("unsupported",) if unsup else ())
    f = Filter(strategies=tuple(f_strat), criteria=tuple(f_crit), scenarios=tuple(f_scen), tags=tuple(f_tag))
    total = q("failure_count", f, statuses, text)
    if total == 0:
        st.success("No failing cases match these filters.")
        opened = st.query_params.get("case")
        if opened:
            open_case(opened)
        return
    st.caption(f"{total} case{'s' if total != 1 else ''} · errors first, then lowest value")
    limit, offset = url_pagination(total, "page")
    page = q("failures", f, statuses, text, limit=limit, offset=offset)
    page = page.assign(
        icon=page["status"].map(STATUS_ICONS).fillna("") + " " + page["status"],
        crit=page["criterion"].map(lambda k: titles.get(k, k)),
        probe=page["probe_id"].replace("", "(whole scenario)"),
    )
    event = st.dataframe(
        page[["icon", "strategy", "scenario", "probe", "crit", "value", "explanation", "task"]],
        hide_index=True, width="stretch", on_select="rerun", selection_mode="single-row", key="failures_table",
        column_config={"icon": "status", "crit": "criterion", "value": st.column_config.NumberColumn("value", format="%.2f"),
                       "explanation": st.column_config.TextColumn("explanation", width="large")},
    )
    keys = [case_key(r.strategy, r.scenario, r.probe_id, r.criterion) for r in page.itertuples(index=False)]
    try:
        rows = list(event["selection"]["rows"])
    except (KeyError, TypeError):
        rows = []
    if rows:
        picked = keys[rows[0]]
        if st.session_state.get("_picked_row") != picked:
            st.session_state["_picked_row"] = picked
            st.session_state[wkey("case")] = picked
    url_case = st.query_params.get("case")
    if url_case and parse_case(url_case) is None:
        not_a_case(url_case)
        url_case = None
    options = [""] + keys + ([url_case] if url_case and url_case not in keys else [])

    def label(k: str) -> str:
        if not k:
            return "— pick a case (or click a row) —"
        case = parse_case(k)
        if case is None:  # not among the options (malformed links are left out); shown as given
            return k
        s, sc, p, c = case
        return f"{sc} · {p or 'whole scenario'} · {titles.get(c, c)} · {s}"

    opened = url_selectbox("Open a case", options, "case", format_func=label)
    if opened:
        open_case(opened)
    else:
        st.query_params.pop("case", None)


def open_case(value: str) -> None:
    """Show the case a `?case=` value names, or say the link is not one."""
    case = parse_case(value)
    if case is None:
        not_a_case(value)
    else:
        render_case(*case)


def not_a_case(value: str) -> None:
    st.warning(f"The link's case `{value[:80]}` is not a case: a case reads strategy|scenario|probe|criterion. "
               "Pick one from the table instead.", icon=":material/link_off:")


def render_case(strategy: str, scenario: str, probe_id: str, criterion: str) -> None:
    titles = criterion_titles()
    score = q("score_row", strategy, scenario, probe_id, criterion)
    st.divider()
    st.subheader(f"{scenario} · {probe_id or 'whole scenario'} · {titles.get(criterion, criterion)} · {strategy}")
    if score.empty:
        st.warning("This case is not in the selected run.")
        return
    s = score.iloc[0]
    msg = f"**{s.status}** (value {'–' if pd.isna(s.value) else f'{s.value:.2f}'}): {s.explanation}"
    icons = {"ok": ":material/check_circle:", "fail": ":material/cancel:", "error": ":material/error:"}
    {"ok": st.success, "fail": st.error, "error": st.error}.get(s.status, st.info)(msg, icon=icons.get(s.status, ":material/remove_circle:"))
    if s.evidence is not None and len(s.evidence):
        st.caption("evidence: " + ", ".join(map(str, s.evidence)))

    probes = q("probe_events", scenario)
    pr = probes[probes["probe_id"] == probe_id]
    upto = int(pr["event_index"].iloc[0]) if len(pr) else None
    expect = parse_expect(pr["expect"].iloc[0]) if len(pr) else {}
    cands = q("candidates", strategy, scenario, probe_id) if probe_id else pd.DataFrame()
    prow = q("probe_rows", scenario, probe_id, (strategy,)) if probe_id else pd.DataFrame()
    context = prow["context"].iloc[0] if len(prow) else ""

    left, right = st.columns([3, 2], gap="large")
    with left:
        st.markdown("#### Transcript" + (" up to the probe" if upto is not None else ""))
        transcript(q("events", scenario, upto), cands, expect, context)
    with right:
        st.markdown("#### Context against the gold")
        if not probe_id:
            st.caption("A scenario-level criterion: no single context to show.")
        elif len(prow) and prow["error"].iloc[0]:
            st.error(f"The strategy raised: {prow['error'].iloc[0]}")
        else:
            gold = gold_check(expect, cands, context)
            if gold.empty:
                st.caption("This probe has no item-level gold labels.")
            else:
                st.dataframe(gold[["mark", "kind", "ref", "detail"]], hide_index=True, width="stretch")
            n_inc = int(cands["included"].sum()) if len(cands) else 0
            st.caption(f"{n_inc} of {len(cands)} candidates included · {prow['tokens'].iloc[0] if len(prow) else '?'} "
                       f"tokens of a {pr['budget'].iloc[0] if len(pr) else '?'} budget")
            with st.expander("What the model would see", expanded=False):
                st.code(context or "(empty)", language=None, wrap_lines=True)
        if len(prow) and (prow["handoff"].iloc[0] or prow["handoff_error"].iloc[0]):
            st.markdown("#### Handoff brief")
            if prow["handoff_error"].iloc[0]:
                st.error(prow["handoff_error"].iloc[0])
            else:
                used = prow["handoff_used_ids"].iloc[0]
                used = list(used) if used is not None else []
                st.caption(f"{prow['handoff_tokens'].iloc[0]} tokens · built from {len(used)} items: {', '.join(used)}")
                with st.container(border=True):
                    # the brief's own headings, two levels down so they read as sections of this panel
                    st.markdown(re.sub(r"^(#{1,3}) ", lambda m: "#" * (len(m.group(1)) + 3) + " ", prow["handoff"].iloc[0], flags=re.M))


def transcript(ev: pd.DataFrame, cands: pd.DataFrame, expect: dict, context: str | None = None) -> None:
    """Turns as chat messages with session boundaries, resolutions, gaps, and context badges
    (what counts as in the context is the criteria's rule, `harness.analysis.queries.gold_view`)."""
    v = gold_view(cands, context)
    marks = gold_marks(expect)
    prev_at, prev_session = None, None
    for r in ev.itertuples(index=False):
        if prev_at is not None and r.at - prev_at >= GAP:
            st.markdown(f"<div style='text-align:center;color:#888;margin:.4em 0'>— {gap_label(r.at - prev_at)} —</div>",
                        unsafe_allow_html=True)
        prev_at = r.at
        if r.kind in ("turn", "resolve") and r.session != prev_session:
            who = f"{r.subject_name or r.subject}"
            st.markdown(f"**Session `{r.session}`** · {who} · {r.at:%Y-%m-%d %H:%M} UTC")
            prev_session = r.session
        badge = badges(r.item_id, v, marks)
        if r.kind == "turn":
            avatar = ":material/person:" if r.role == "customer" else ":material/support_agent:"
            with st.chat_message("user" if r.role == "customer" else "assistant", avatar=avatar):
                kind = " · _action_" if r.turn_kind == "action" else ""
                st.markdown(f"{r.text}\n\n:gray[`{r.item_id}` · {r.at:%H:%M}{kind}] {badge}")
        elif r.kind == "resolve":
            box = st.success if r.status == "resolved" else st.warning
            box(f"**Session {r.session} {r.status}**: {r.text or '(no summary)'}  \n:gray[`{r.item_id}`] {badge}",
                icon=":material/task_alt:")
        elif r.kind == "probe":
            st.info(f"**Probe `{r.item_id}`**: the agent is about to answer — _{r.text}_ (budget {r.budget} tokens)",
                    icon=":material/search:")
        elif r.kind == "forget":
            st.warning(f"**Forget {r.subject}**: nothing of this customer may appear from here on.", icon=":material/delete:")


def badges(item_id: str, v, marks: dict[str, str]) -> str:
    mark = marks.get(item_id, "")
    if mark.startswith("⚠"):
        bad = present(v, item_id)
        return ":orange-badge[⚠ must exclude, present]" if bad else ":gray-badge[must exclude, kept out]"
    inc = hit(v, item_id)
    if mark.startswith("✓"):
        return ":green-badge[✓ gold, in context]" if inc else ":red-badge[✗ gold, missing]"
    return ":blue-badge[in context]" if inc else ""


if __name__ == "__main__":  # Streamlit's pages/ folder discovery ran this file directly (see app.py)
    from pages._shared import hand_over

    hand_over()

"""Failures: every failing or errored case of a run, filtered, ordered and grouped over all of
them (in SQL, however many there are), exported whole as CSV or JSON; open one to read it.

A case is (strategy, scenario, probe, criterion). Opening it shows the transcript up to the
probe (earlier sessions collapsed, searchable), what the strategy put in the context against
the gold labels, the score explanation and the handoff brief when there is one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import pandas as pd
import streamlit as st

from harness.analysis.failures import GROUPS, ORDERS
from harness.analysis.queries import (FAILING, GOLD_MARK, OUT_MARK, Filter, gap_label, gold_check, gold_marks, gold_view,
                                      hit, memories_table, parse_expect, present, received_context, reply_view)
from harness.criteria import groups
from pages._expiry import case_turns, removed_panel
from pages._shared import (url_page, url_fragment, PAGE_SIZE, listed_runs, plain, code, param_get, drop_param, set_param, rerun, visit_key, start, go, STATUS_ICONS, case_key, clear_params, current_run, deferred_export, parse_case, wkey,
                           criterion_titles, q, url_keep, url_multiselect, url_pagination, url_seed, url_selectbox, url_text,
                           url_toggle)

GAP = pd.Timedelta(hours=1)
NO_GROUP = "none"
GROUP_LABELS = {NO_GROUP: "cases", "criterion": "criterion", "scenario": "scenario", "strategy": "strategy"}
PROBE_ANCHOR = "the-probe"  # the HTML id the transcript puts on the probe, for its "jump to the probe" link


@dataclass(frozen=True)
class Selection:
    """What the reader chose above the list: which cases, in which order, summed how."""

    filter: Filter
    """Strategies, criteria, scenarios, tags, and whether controls are in."""
    statuses: tuple[str, ...]
    """Verdicts listed: fail and error, plus unsupported when asked."""
    text: str
    """Search over explanations, tasks and scenario ids ('' for none)."""
    order: str
    """A key of `harness.analysis.failures.ORDERS`."""
    group: str
    """`NO_GROUP`, or a column of `harness.analysis.failures.GROUPS` to sum the cases by."""

    def args(self) -> tuple:
        """The selection as the `harness.analysis.failures` functions take it: (filter, statuses, text)."""
        return self.filter, self.statuses, self.text


@url_page
def render() -> None:
    if start("Failures") is None:
        return
    titles = criterion_titles()
    sel = selection(titles)
    total = q("failures.count", *sel.args())
    summary(sel, total)
    list_and_case(sel, total, titles)


@url_fragment
def list_and_case(sel: Selection, total: int, titles: dict[str, str]) -> None:
    """The list and the open case: a fragment, so a click on a row reruns only this part (the
    filters above are not redrawn and their queries not asked again)."""
    asked = param_get("case")  # before the list's case picker rewrites it
    listed = None
    if total and sel.group != NO_GROUP:
        group_list(sel, titles)
    elif total:
        listed = case_list(sel, total, titles)
    else:
        st.success("No failing cases match these filters.")
    opened = param_get("case")
    if asked and parse_case(asked) is None:
        not_a_case(asked)
    elif opened:
        if listed is not None:
            neighbours(sel, total, opened, *listed)
        if param_get("vs") and parse_case(opened) is not None:
            a_vs_b(parse_case(opened), param_get("vs"), param_get("vsstrat"))
        open_case(opened)
    else:
        drop_param("case")


def neighbours(sel: Selection, total: int, opened: str, keys: list[str], offset: int) -> None:
    """Previous and next case of the selection, in its order (across the list's pages)."""
    if opened not in keys:
        return
    at = offset + keys.index(opened)

    def key_at(i: int) -> str:
        if offset <= i < offset + len(keys):
            return keys[i - offset]
        r = q("failures.page", *sel.args(), limit=1, offset=i, order=sel.order).iloc[0]
        return case_key(r.strategy, r.scenario, r.probe_id, r.criterion)

    def open_at(i: int) -> None:  # a button's callback: before the rerun draws the list
        st.session_state[wkey("case")] = key_at(i)
        page = i // PAGE_SIZE + 1
        if page != offset // PAGE_SIZE + 1:
            st.session_state[wkey("page") + "__goto"] = page

    a, b, c = st.columns([1, 3, 1], vertical_alignment="center")
    a.button("← previous case", on_click=open_at, args=(at - 1,), disabled=at == 0, width="stretch", key="case_prev")
    b.caption(f"Case {at + 1:,} of {total:,} in this selection")
    c.button("next case →", on_click=open_at, args=(at + 1,), disabled=at + 1 >= total, width="stretch", key="case_next")


def selection(titles: dict[str, str]) -> Selection:
    """The filters, search, order and grouping, every one bound to the URL."""
    strat_df = q("strategies")
    strategies = list(strat_df["strategy"])
    controls_of = set(strat_df.loc[strat_df["control"], "strategy"])
    scenarios = list(q("scenarios")["scenario"])
    _suites, tags = q("suites_and_tags")
    with st.container(border=True):
        a, b, c, d = st.columns(4)
        f_strat = url_multiselect("Strategy", strategies, "strategy", where=a, placeholder="all strategies")
        f_crit = url_multiselect("Criterion", list(titles), "criterion", where=b, placeholder="all criteria",
                                 format_func=lambda k: titles.get(k, k))
        f_scen = url_multiselect("Scenario", scenarios, "scenario", where=c, placeholder="all scenarios")
        f_tag = url_multiselect("Tag", tags, "tag", where=d, placeholder="all tags")
        e, g, h = st.columns([4, 2, 2], vertical_alignment="bottom")
        text = url_text("Search explanations and tasks", "q", where=e, placeholder="e.g. missing, budget, timeout")
        unsup = url_toggle("Include unsupported", "unsupported", where=g)
        controls = url_toggle("Show controls (oracle, empty, shortcuts)", "controls", where=h,
                              help="The controls fail by design (empty remembers nothing); they are left out unless "
                                   "shown here or picked by name under Strategy.")
        i, j = st.columns([2, 3], vertical_alignment="bottom")
        order = url_selectbox("Order (over all cases)", list(ORDERS), "order", where=i, format_func=lambda k: ORDERS[k][0])
        key = url_seed("group", [NO_GROUP, *GROUPS], NO_GROUP)
        # short option words: the control does not wrap, and on a phone (390 px) longer ones were cut off
        group = j.segmented_control("List the cases one by one, or grouped by", [NO_GROUP, *GROUPS], key=key,
                                    format_func=lambda k: "one by one" if k == NO_GROUP else k) or NO_GROUP
        url_keep("group", group)
        if group == NO_GROUP:
            drop_param("group")  # the default: links stay short
    statuses = FAILING + (("unsupported",) if unsup else ())
    # a control picked by name is shown whatever the toggle says: the reader asked for it
    with_controls = controls or bool(set(f_strat) & controls_of)
    f = Filter(strategies=tuple(f_strat), criteria=tuple(f_crit), scenarios=tuple(f_scen), tags=tuple(f_tag),
               include_controls=with_controls)
    return Selection(f, statuses, text, order, group)


def summary(sel: Selection, total: int) -> None:
    """How many cases the selection holds, and the whole of it as CSV or JSON."""
    a, b, c = st.columns([6, 1, 1], vertical_alignment="center")
    hidden = "" if sel.filter.include_controls else " · controls hidden"
    a.caption(f"**{total:,}** case{'s' if total != 1 else ''} · {ORDERS[sel.order][0]}{hidden}")
    if not total:
        return
    run = current_run()
    for col, fmt, mime in ((b, "csv", "text/csv"), (c, "json", "application/json")):
        col.download_button(
            fmt.upper(), deferred_export("failures.export", fmt, *sel.args(), order=sel.order),
            file_name=f"failures-{run}.{fmt}", mime=mime, on_click="ignore", icon=":material/download:",
            key=f"export_{fmt}", help=f"All {total:,} cases of this selection, in this order, as {fmt.upper()}",
        )


def case_list(sel: Selection, total: int, titles: dict[str, str]) -> tuple[list[str], int]:
    """One page of the cases (ordered over all of them); a click on a row opens it below."""
    limit, offset = url_pagination(total, "page")
    page = q("failures.page", *sel.args(), limit=limit, offset=offset, order=sel.order)
    page = page.assign(
        icon=page["status"].map(STATUS_ICONS).fillna("") + " " + page["status"],
        crit=page["criterion"].map(lambda k: titles.get(k, k)),
        probe=page["probe_id"].replace("", "(whole scenario)"),
    )
    event = st.dataframe(
        page[["icon", "strategy", "scenario", "probe", "crit", "value", "explanation", "task"]],
        hide_index=True, width="stretch", on_select="rerun", selection_mode="single-row", key=visit_key("failures_table"),
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
    else:
        st.session_state["_picked_row"] = None  # a row clicked again after Back opens again
    url_case = param_get("case")
    if url_case and parse_case(url_case) is None:
        url_case = None  # a malformed link is named by `open_case`, not offered
    options = [""] + keys + ([url_case] if url_case and url_case not in keys else [])

    def label(k: str) -> str:
        if not k:
            return "— pick a case (or click a row) —"
        case = parse_case(k)
        if case is None:  # not among the options (malformed links are left out); shown as given
            return k
        s, sc, p, c = case
        return f"{sc} · {p or 'whole scenario'} · {titles.get(c, c)} · {s}"

    url_selectbox("Open a case", options, "case", format_func=label)
    return keys, offset


def group_list(sel: Selection, titles: dict[str, str]) -> None:
    """The selection summed by one column, most cases first; a click on a group lists its cases."""
    by = sel.group
    n = q("failures.group_count", by, *sel.args())
    limit, offset = url_pagination(n, "gpage")
    groups = q("failures.groups", by, *sel.args(), limit=limit, offset=offset)
    shown = groups.assign(group=groups["group"].map(lambda k: titles.get(k, k)) if by == "criterion" else groups["group"])
    st.caption(f"{n} {by} group{'s' if n != 1 else ''} · click one to list its cases")
    event = st.dataframe(
        shown, hide_index=True, width="stretch", on_select="rerun", selection_mode="single-row", key=visit_key(f"groups_{by}"),
        column_config={"group": by, "mean_value": st.column_config.NumberColumn("mean value", format="%.2f"),
                       "cases": st.column_config.ProgressColumn("cases", min_value=0, format="%d",
                                                                max_value=int(groups["cases"].max()))},
    )
    try:
        rows = list(event["selection"]["rows"])
    except (KeyError, TypeError):
        rows = []
    if rows:
        clear_params("group", by, "page", "gpage")
        set_param(by, str(groups["group"].iloc[rows[0]]))
        rerun()


# --- one case, two sides (a flip opened from Compare) ------------------------------------------------


def a_vs_b(case: tuple[str, str, str, str], run_a: str, strategy_a: str | None) -> None:
    """The case as run A (`?vs=`, strategy `?vsstrat=`) and as this run (B) saw it, side by side:
    verdict, what moved in the context, the context and the reply; the full B case follows."""
    strategy, scenario, probe_id, criterion = case
    run_b = current_run()
    strategy_a = strategy_a or strategy
    labels = listed_runs()  # the router's listing of this script run: no second scan of every manifest
    st.divider()
    st.subheader("A vs B: " + plain(f"{scenario} · {probe_id or 'whole scenario'} · {criterion_titles().get(criterion, criterion)}"))
    if run_a not in labels:
        st.warning(f"The link compares with run {code(run_a)}, which is not in the runs folder: only this run's side is "
                   "shown.", icon=":material/link_off:")
        return
    a, b = st.columns(2, gap="large")
    sides = ((a, "A", run_a, strategy_a), (b, "B", run_b, strategy))
    bundles = {}
    for col, side, run, strat in sides:
        with col:
            st.markdown(f"**{side}** · {plain(labels.get(run, run))} · strategy {code(strat)}")
            score = q("score_row", strat, scenario, probe_id, criterion, run=run)
            if score.empty:
                st.info(f"Run {side} has no verdict for this case.")
                continue
            verdict(score.iloc[0], evidence_links=False)
            if probe_id and groups.of(score.iloc[0].grp).axis != "policy":
                cands = q("candidates", strat, scenario, probe_id, run=run)
                prow = q("probe_rows", scenario, probe_id, (strat,), run=run)
                bundles[side] = (cands, prow)
    if len(bundles) == 2:
        moved_section(*bundles["A"], *bundles["B"], sides)
    st.caption("The case as run B saw it follows, in full.")


def moved_section(cands_a: pd.DataFrame, prow_a: pd.DataFrame, cands_b: pd.DataFrame, prow_b: pd.DataFrame, sides) -> None:
    """What moved between A's context and B's: the items only one of them included, then the two
    contexts and replies side by side."""
    inc_a = set(cands_a.loc[cands_a["included"], "item_id"]) if len(cands_a) else set()
    inc_b = set(cands_b.loc[cands_b["included"], "item_id"]) if len(cands_b) else set()
    only_a, only_b = sorted(inc_a - inc_b), sorted(inc_b - inc_a)
    if only_a or only_b:
        st.markdown("**What moved:** " + "; ".join(
            part for part in (f"in A's context only: {', '.join(code(i) for i in only_a)}" if only_a else "",
                              f"in B's context only: {', '.join(code(i) for i in only_b)}" if only_b else "") if part))
    else:
        st.markdown("**What moved:** nothing in the context; the same items were included on both sides.")
    for col, (side, prow) in zip(st.columns(2, gap="large"), (("A", prow_a), ("B", prow_b))):
        with col:
            if not len(prow):
                continue
            row = prow.iloc[0]
            st.caption(f"{side}: {row['tokens']} tokens")
            with st.expander(f"{side}'s context", expanded=False):
                st.code(row["context"] or "(empty)", language=None, wrap_lines=True)
            view = reply_view(row.get("reply"))
            if view is not None:
                with st.container(border=True):
                    st.markdown(f"**{side}'s reply:** {plain(view.reply.reply)}")


# --- one case ------------------------------------------------------------------------------------


def open_case(value: str) -> None:
    """Show the case a `?case=` value names, or say the link is not one."""
    case = parse_case(value)
    if case is None:
        not_a_case(value)
    else:
        render_case(*case)


def not_a_case(value: str) -> None:
    st.warning(f"The link's case {code(value[:80])} is not a case: a case reads strategy|scenario|probe|criterion. "
               "Pick one from the table instead.", icon=":material/link_off:")


def render_case(strategy: str, scenario: str, probe_id: str, criterion: str) -> None:
    """The case the URL names: its verdict, the transcript, the context against the gold, the handoff."""
    titles = criterion_titles()
    score = q("score_row", strategy, scenario, probe_id, criterion)
    st.divider()
    st.subheader(plain(f"{scenario} · {probe_id or 'whole scenario'} · {titles.get(criterion, criterion)} · {strategy}"))
    if score.empty:
        st.warning("This case is not in the selected run.")
        return
    s = score.iloc[0]
    verdict(s)
    judges = criterion_sentence(criterion)
    if judges:
        st.caption(f"**What {plain(titles.get(criterion, criterion))} judges:** {plain(judges)} "
                   "(every criterion is listed on the Glossary page)")
    if groups.of(s.grp).axis == "policy":  # a decision policy's turn, not a probe: its evidence is on the Decisions page
        st.caption(f"A decision case: {code(strategy)} decided customer turn {code(probe_id)}.")
        if st.button("Open the turn on the Decisions page", icon=":material/alt_route:"):
            go("decisions", scenario=scenario, policy=strategy, turn=probe_id)
        return
    probes = q("probe_events", scenario)
    pr = probes[probes["probe_id"] == probe_id]
    expect = parse_expect(pr["expect"].iloc[0]) if len(pr) else {}
    cands = q("candidates", strategy, scenario, probe_id) if probe_id else pd.DataFrame()
    prow = q("probe_rows", scenario, probe_id, (strategy,)) if probe_id else pd.DataFrame()
    context = prow["context"].iloc[0] if len(prow) else ""
    budget = int(pr["budget"].iloc[0]) if len(pr) else None

    left, right = st.columns([3, 2], gap="large")
    with left:
        evidence = frozenset(map(str, s.evidence)) if s.evidence is not None else frozenset()
        transcript_section(scenario, pr, cands, expect, context, budget, evidence)
    with right:
        context_section(probe_id, pr, prow, cands, expect, context, budget)
        if probe_id:
            removed_panel(cands)
        else:
            case_turns(score.iloc[0]["meta"])
        handoff_section(prow)


def criterion_sentence(key: str) -> str:
    """The first paragraph of the criterion's registered description, on one line ('' if unknown)."""
    from harness.criteria import registry
    from pages.glossary import sentence

    c = registry().get(key)
    return sentence(c.description) if c is not None else ""


def verdict(s, evidence_links: bool = True) -> None:
    msg = f"**{s.status}** (value {'–' if pd.isna(s.value) else f'{s.value:.2f}'}): {plain(s.explanation)}"
    icons = {"ok": ":material/check_circle:", "fail": ":material/cancel:", "error": ":material/error:"}
    {"ok": st.success, "fail": st.error, "error": st.error}.get(s.status, st.info)(msg, icon=icons.get(s.status, ":material/remove_circle:"))
    if s.evidence is not None and len(s.evidence) and evidence_links:
        st.caption("evidence (a click shows it in the transcript): " + ", ".join(
            f"[{plain(e)}](#{anchor(e)})" for e in map(str, s.evidence)))
    elif s.evidence is not None and len(s.evidence):
        st.caption("evidence: " + ", ".join(code(e) for e in map(str, s.evidence)))


def transcript_section(scenario: str, pr: pd.DataFrame, cands: pd.DataFrame, expect: dict, context: str,
                       budget: int | None = None, evidence: frozenset[str] = frozenset()) -> None:
    """The conversation up to the probe, with a search box and a link down to the probe."""
    upto = int(pr["event_index"].iloc[0]) if len(pr) else None
    st.markdown("#### Transcript" + (" up to the probe" if upto is not None else ""))
    a, b = st.columns([3, 2], vertical_alignment="bottom")
    search = url_text("Search the transcript", "tq", where=a, placeholder="a word or phrase")
    if upto is not None and not search:
        b.markdown(f"[↓ Jump to the probe](#{PROBE_ANCHOR})")
    session = str(pr["session"].iloc[0]) if len(pr) and pr["session"].iloc[0] else None
    transcript(q("events", scenario, upto), cands, expect, context, probe_session=session, search=search, budget=budget,
               evidence=evidence)


def context_section(probe_id: str, pr: pd.DataFrame, prow: pd.DataFrame, cands: pd.DataFrame, expect: dict,
                    context: str, budget: int | None = None) -> None:
    st.markdown("#### Context against the gold")
    if not probe_id:
        st.caption("A scenario-level criterion: no single context to show.")
    elif len(prow) and prow["error"].iloc[0]:
        st.error(f"The strategy raised: {plain(prow['error'].iloc[0])}")
    else:
        gold = gold_check(expect, cands, context, budget)
        if gold.empty:
            st.caption("This probe has no item-level gold labels.")
        else:
            st.dataframe(gold[["mark", "kind", "ref", "detail"]], hide_index=True, width="stretch")
        n_inc = int(cands["included"].sum()) if len(cands) else 0
        st.caption(f"{n_inc} of {len(cands)} candidates included · {prow['tokens'].iloc[0] if len(prow) else '?'} "
                   f"tokens of a {pr['budget'].iloc[0] if len(pr) else '?'} budget")
        seen = received_context(cands, context, budget) if budget is not None else context
        if seen != context:
            st.warning(f"Over budget: the criteria judge what the model would receive, the context cut at the "
                       f"{budget}-token budget (whole lines, lowest ranks dropped first): "
                       f"{(context or '').count(chr(10)) - seen.count(chr(10))} line(s) cut.", icon=":material/content_cut:")
        with st.expander("What the model would see", expanded=False):
            st.code(seen or "(empty)", language=None, wrap_lines=True)
            if seen != context:
                st.caption("The strategy returned, before the cut:")
                st.code(context or "(empty)", language=None, wrap_lines=True)
        if len(prow):
            reply_panel(prow.iloc[0])


def reply_panel(row: pd.Series) -> None:
    """The reply the one reply engine wrote from this context, its metadata, and the typed memories
    the strategy held (for a strategy that keeps them)."""
    view = reply_view(row.get("reply"))
    if view is None and not row.get("reply_error"):
        return
    st.markdown("#### The reply to this context")
    if view is None:
        st.error(plain(row["reply_error"]))
        return
    r = view.reply
    with st.container(border=True):
        st.markdown(plain(r.reply))
    facts = [f"engine: {plain(r.engine)}" + (f" ({plain(r.engine_note)})" if r.engine_note else ""),
             f"returning customer: {'yes' if r.is_returning_customer else 'no'}"]
    if r.escalate:
        facts.append("escalates")
    st.caption(" · ".join(facts))
    lines = []
    for title, items in (("Known fixes", r.known_fixes), ("Known failures (already tried)", r.known_failures),
                         ("Next step", r.next_steps)):
        if items:
            lines.append(f"**{title}:** " + "; ".join(
                f"{plain(t)} :gray[\\({plain(', '.join(r.sources.get(t, ())) or 'no source')}\\)]" for t in items))
    if lines:
        st.markdown("  \n".join(lines))
    if len(view.used):
        st.dataframe(view.used[["text", "outcome", "score", "reason"]], hide_index=True, width="stretch",
                     column_config={"score": st.column_config.NumberColumn("score", format="%.2f"),
                                    "reason": st.column_config.TextColumn("reason", width="medium")})
    mems = memories_table(row.get("memories"))
    if mems is not None:
        with st.expander(f"Typed memories the strategy held ({len(mems)})", expanded=False):
            st.dataframe(mems, hide_index=True, width="stretch")
    elif row.get("memories_error"):
        st.error(plain(row["memories_error"]))


def handoff_section(prow: pd.DataFrame) -> None:
    if not (len(prow) and (prow["handoff"].iloc[0] or prow["handoff_error"].iloc[0])):
        return
    st.markdown("#### Handoff brief")
    if prow["handoff_error"].iloc[0]:
        st.error(plain(prow["handoff_error"].iloc[0]))
        return
    used = prow["handoff_used_ids"].iloc[0]
    used = list(used) if used is not None else []
    st.caption(f"{prow['handoff_tokens'].iloc[0]} tokens · built from {len(used)} items: {plain(', '.join(used))}")
    with st.container(border=True):
        st.markdown(brief_markdown(prow["handoff"].iloc[0]))


def brief_markdown(brief: str) -> str:
    """The handoff brief's own structure (its headings two levels down, so they read as sections of
    the panel; its list items) with every piece of its text as text."""
    out = []
    for line in str(brief).split("\n"):
        head = re.match(r"^(#{1,3}) (.*)$", line)
        item = re.match(r"^(\s*)[-*] (.*)$", line)
        if head:
            out.append("#" * (len(head.group(1)) + 3) + " " + plain(head.group(2)))
        elif item:
            out.append(f"{item.group(1)}- {plain(item.group(2))}")
        else:
            out.append(plain(line))
    return "\n".join(out)


# --- the transcript --------------------------------------------------------------------------------


def transcript(ev: pd.DataFrame, cands: pd.DataFrame, expect: dict, context: str | None = None, *,
               probe_session: str | None = None, search: str = "", budget: int | None = None,
               evidence: frozenset[str] = frozenset()) -> None:
    """Turns as chat messages with session boundaries, resolutions, gaps, and context badges
    (what counts as in the context is the criteria's rule, `harness.analysis.queries.gold_view`,
    over the context cut at the probe's `budget`).

    Sessions before the probe's own are collapsed, one line per event (a 300-turn history opens
    at the probe, not 300 messages down), except a session holding an item of the verdict's
    `evidence`: it is open, and the item is marked and anchored (the verdict's evidence ids link
    to it). With `search`, only the events whose text has it are shown, in full, wherever they are."""
    v = gold_view(cands, context, budget)
    marks = gold_marks(expect)
    if search:
        hits = ev[ev["text"].fillna("").str.contains(re.escape(search), case=False, regex=True)]
        st.caption(f"{len(hits)} of {len(ev)} events mention “{plain(search)}”")
        for r in hits.itertuples(index=False):
            st.caption(f"Session {code(r.session or '–')} · {plain(r.subject_name or r.subject)} · {r.at:%Y-%m-%d %H:%M} UTC")
            event_full(r, v, marks, highlight=search, evidence=evidence)
        return
    rows = list(ev.itertuples(index=False))  # once: per-session frames cost more than the sessions' text
    start = len(rows)
    if probe_session is not None:
        start = next((i for i, r in enumerate(rows) if r.session == probe_session), len(rows) - 1)
    earlier, current = rows[:start], rows[start:]
    if earlier:
        sessions: dict[str, list] = {}
        for r in earlier:
            sessions.setdefault(r.session or "", []).append(r)
        held = sum(1 for grp in sessions.values() if any(r.item_id in evidence for r in grp))
        st.caption(f"{len(sessions)} earlier session{'s' if len(sessions) != 1 else ''} ({len(earlier)} events), "
                   "collapsed: open one to read it" + (f"; {held} holding the verdict's evidence, open" if held else ""))
        for grp in sessions.values():
            if any(r.item_id in evidence for r in grp):
                with st.expander(session_label(grp, v, marks), expanded=True, icon=":material/flag:"):
                    for r in grp:
                        event_full(r, v, marks, evidence=evidence)
            else:
                with st.expander(session_label(grp, v, marks)):
                    st.markdown(compact(grp, v, marks))
    prev_at, prev_session = (earlier[-1].at if earlier else None), None
    last = rows[-1].event_index if rows else None
    for r in current:
        if prev_at is not None and r.at - prev_at >= GAP:
            st.markdown(f"<div style='text-align:center;color:#888;margin:.4em 0'>— {gap_label(r.at - prev_at)} —</div>",
                        unsafe_allow_html=True)
        prev_at = r.at
        if r.kind in ("turn", "resolve") and r.session != prev_session:
            st.markdown(f"**Session {code(r.session)}** · {plain(r.subject_name or r.subject)} · {r.at:%Y-%m-%d %H:%M} UTC")
            prev_session = r.session
        if r.kind == "probe" and r.event_index == last:  # the case's probe ends the transcript
            st.markdown(f"<div id='{PROBE_ANCHOR}'></div>", unsafe_allow_html=True)
        event_full(r, v, marks, evidence=evidence)


def anchor(item_id: str) -> str:
    """The HTML id the transcript puts before an event (letters, digits, `-` and `_` only: whatever
    an item id holds, the anchor is never markup)."""
    return "ev-" + "".join(c if c.isascii() and (c.isalnum() or c in "-_") else f"_{ord(c):x}_" for c in str(item_id))


def event_text(r) -> str:
    """What an event row says: a turn's text, a summary, a task; a signal's name and what it closes
    (a signal or a forget has no text: the column reads back as NaN, not as a string)."""
    if r.kind == "signal":
        ref = getattr(r, "ref", None)
        return f"{getattr(r, 'signal', '') or ''}" + (f" ({ref})" if isinstance(ref, str) and ref else "")
    return r.text if isinstance(r.text, str) else ""


def marked(text: str, highlight: str = "") -> str:
    """`text` as Markdown text, with each occurrence of `highlight` in bold."""
    if not highlight:
        return plain(text)
    parts = re.split(f"({re.escape(highlight)})", text, flags=re.I)
    return "".join(f"**{plain(p)}**" if i % 2 else plain(p) for i, p in enumerate(parts) if p)


EVIDENCE_BADGE = ":violet-badge[:material/flag: evidence of this verdict]"


def event_full(r, v, marks: dict[str, str], highlight: str = "", evidence: frozenset[str] = frozenset()) -> None:
    """One event as the reader sees it in the open part of the transcript."""
    badge = badges(r.item_id, v, marks)
    if r.item_id in evidence:
        st.markdown(f"<div id='{anchor(r.item_id)}'></div>", unsafe_allow_html=True)
        badge = f"{EVIDENCE_BADGE} {badge}"
    text = marked(event_text(r), highlight)
    if r.kind == "turn":
        avatar = ":material/person:" if r.role == "customer" else ":material/support_agent:"
        with st.chat_message("user" if r.role == "customer" else "assistant", avatar=avatar):
            kind = " · _action_" if r.turn_kind == "action" else ""
            st.markdown(f"{text}\n\n:gray[{code(r.item_id)} · {r.at:%H:%M}{kind}] {badge}")
    elif r.kind == "resolve":
        box = st.success if r.status == "resolved" else st.warning
        box(f"**Session {plain(r.session)} {plain(r.status)}**: {text or '(no summary)'}  \n:gray[{code(r.item_id)}] {badge}",
            icon=":material/task_alt:")
    elif r.kind == "probe":
        st.info(f"**Probe {code(r.item_id)}**: the agent is about to answer — _{text}_ (budget {r.budget} tokens)",
                icon=":material/search:")
    elif r.kind == "forget":
        st.warning(f"**Forget {plain(r.subject)}**: nothing of this customer may appear from here on.", icon=":material/delete:")
    else:
        st.caption(f"{plain(r.kind)} {code(r.item_id)} · {text}")


def session_label(grp: list, v, marks: dict[str, str]) -> str:
    """A collapsed session's one-line summary: who, when, how long, how it ended, what it holds of the gold."""
    first = grp[0]
    turns = sum(1 for r in grp if r.kind == "turn")
    ended = [r.status for r in grp if r.kind == "resolve"]
    gold = [r.item_id for r in grp if marks.get(r.item_id, "").startswith(GOLD_MARK)]
    out = [r.item_id for r in grp if marks.get(r.item_id, "").startswith(OUT_MARK)]
    inc = sum(1 for r in grp if hit(v, r.item_id))
    parts = [f"Session {plain(first.session or '(no session)')}", plain(first.subject_name or first.subject or ""),
             f"{first.at:%Y-%m-%d}", f"{turns} turn{'s' if turns != 1 else ''}"]
    if ended:
        parts.append(plain(ended[-1]))
    if gold:
        parts.append(f"{GOLD_MARK} {len(gold)} gold ({sum(1 for i in gold if hit(v, i))} in context)")
    if out:
        parts.append(f"{OUT_MARK} {len(out)} must stay out")
    if inc:
        parts.append(f"{inc} in context")
    return " · ".join(p for p in parts if p)


def compact(grp: list, v, marks: dict[str, str]) -> str:
    """A collapsed session's events as one markdown list (one element, not one per turn)."""
    lines = []
    for r in grp:
        badge = badges(r.item_id, v, marks)
        text = plain(event_text(r).replace("\n", " "))
        if r.kind == "turn":
            who = "customer" if r.role == "customer" else ("agent action" if r.turn_kind == "action" else "agent")
            lines.append(f"- **{who}** {r.at:%m-%d %H:%M} · {text} :gray[{code(r.item_id)}] {badge}")
        elif r.kind == "resolve":
            lines.append(f"- **{plain(r.status)}** {r.at:%m-%d %H:%M} · {text or '(no summary)'} :gray[{code(r.item_id)}] {badge}")
        elif r.kind == "probe":
            lines.append(f"- *probe {code(r.item_id)}* {r.at:%m-%d %H:%M} · {text}")
        else:
            lines.append(f"- *{plain(r.kind)}* {r.at:%m-%d %H:%M} · {plain(r.subject or '')} {text}")
    return "\n".join(lines)


def badges(item_id: str, v, marks: dict[str, str]) -> str:
    mark = marks.get(item_id, "")
    if mark.startswith(OUT_MARK):
        bad = present(v, item_id)
        return f":orange-badge[{OUT_MARK} must stay out, present ⚠]" if bad else f":gray-badge[{OUT_MARK} must stay out, kept out]"
    inc = hit(v, item_id)
    if mark.startswith(GOLD_MARK):
        return f":green-badge[{GOLD_MARK} gold, in context]" if inc else f":red-badge[{GOLD_MARK} gold, missing]"
    return ":blue-badge[in context]" if inc else ""


if __name__ == "__main__":  # Streamlit's pages/ folder discovery ran this file directly (see pages/_router.py)
    from pages._router import hand_over

    hand_over()

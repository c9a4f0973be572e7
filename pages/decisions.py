"""Decisions: per turn, what each decision policy saw and decided, against the gold.

The policy leaderboard first; then one scenario's turns with, per policy, the plan against the
gold plan (mismatches amber, irreversible errors red); then one turn opened: the text, the
signals the producers reported (scripted ones marked), the locker before and after, the card, the
plan against the gold, the rule that decided and the executor's log. Every selection is in the URL
(`?scenario=`, `?policy=`, `?turn=`, `?mismatch=1`), so a link opens the same turn.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from harness.analysis.decisions import LOCKER_ACTS, fired, locker_table
from pages._shared import url_page, plain, code, visit_key, wkey, criterion_titles, pct, q, start, url_multiselect, url_selectbox, url_toggle
from pages.glossary import plain_label

# Session-state key: the turn whose overview row was last clicked (opened once, not on every rerun).
# A comment, not a docstring: Streamlit's magic would print a bare string of a page file.
PICKED = "_decisions_picked_row"
RED, AMBER = "background-color: #f8d7da", "background-color: #fff3cd"
IRREVERSIBLE_WORDS = {
    "false_transfer": "false transfer",
    "survey_mid_complaint": "survey mid-complaint",
    "missed_escalation": "missed escalation",
}


@url_page
def render() -> None:
    if start("Decisions") is None:
        return
    policies = q("decision_policies")
    if not policies:
        st.info("This run has no decision policies. Runs include them by default (`supportbench run ... --policies all`).")
        return
    st.subheader("Policy leaderboard")
    policy_table(policies)
    scen = q("decision_scenarios")
    if scen.empty:
        st.info("No scenario of this run has decision cases (customer turns with a gold `plan`).")
        return
    titles = dict(zip(scen["scenario"], scen["title"]))
    a, b, c = st.columns([3, 2, 1], vertical_alignment="bottom")
    scenario = url_selectbox("Scenario", list(scen["scenario"]), "scenario", where=a,
                             format_func=lambda s: f"{s} — {titles.get(s) or ''}")
    chosen = url_multiselect("Policies", policies, "policy", default=policies, where=b, placeholder="pick a policy")
    only = url_toggle("Only mismatches", "mismatch", where=c)
    if not chosen:
        st.info("Pick at least one policy.")
        return
    turns = q("decision_turns", scenario, tuple(chosen))
    _overview(turns, chosen, only)
    _turn(turns, chosen)


def policy_table(policies: list[str]) -> None:
    """The policy leaderboard: per policy, each decision criterion's mean over its cases, gates
    with their failing count (also drawn on the Leaderboard page)."""
    board = q("policy_board")
    if board.empty:
        st.caption("No decision case has been scored in this run.")
        return
    titles = criterion_titles()
    rows = []
    for p in policies:
        cells = board[board["policy"] == p]
        row = {"policy": p}
        for r in cells.itertuples(index=False):
            name = titles.get(r.criterion, r.criterion)
            note = f" ({r.failed} failing)" if r.failed else ""
            row[name] = f"{pct(r.mean)} of {r.n}{note}"
        rows.append(row)
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")


def _yes(v) -> bool:
    """A nullable boolean cell as a plain bool (null: False)."""
    return False if v is None or v is pd.NA or (isinstance(v, float) and pd.isna(v)) else bool(v)


def _text(v) -> str:
    """A nullable text cell as a string (null: empty)."""
    return v if isinstance(v, str) else ""


def _mark(r) -> str:
    """A policy's cell: its plan, with why it is wrong when it is."""
    if _text(r.error):
        return "‼ error"
    if not _text(r.plan):
        return ""
    if not _yes(r.decision_case):
        return r.plan
    if _text(r.irreversible):
        return f"✗ {r.plan} · {IRREVERSIBLE_WORDS.get(r.irreversible, r.irreversible)}"
    return f"✓ {r.plan}" if _yes(r.correct) else f"✗ {r.plan}"


def _overview(turns: pd.DataFrame, chosen: list[str], only: bool) -> None:
    """One row per event: who said what, the gold, and each policy's plan and rule."""
    rows: dict[int, dict] = {}
    styles: dict[int, dict] = {}
    for r in turns.itertuples(index=False):
        row = rows.setdefault(r.event_index, {
            "_turn": r.turn_id if r.kind == "turn" else None,
            "#": r.event_index,
            "turn": r.turn_id if r.kind == "turn" else f"fault: {r.fault}",
            "who": r.role if r.kind == "turn" else "system",
            "text": r.text if r.kind == "turn" else ("the locker goes down" if r.fault == "locker_down" else "the locker is back"),
            "gold plan": _text(r.gold_plan),
            "gold route": _text(r.gold_route),
        })
        row[r.policy] = _mark(r)
        row[f"{r.policy} · rule"] = _text(r.rule)
        row[f"{r.policy} · route"] = _text(r.route)
        if _text(r.irreversible) or _text(r.error):
            styles.setdefault(r.event_index, {})[r.policy] = RED
        elif _yes(r.decision_case) and not _yes(r.correct):
            styles.setdefault(r.event_index, {})[r.policy] = AMBER
        if _text(r.gold_route) and _text(r.route) and r.route != r.gold_route:
            styles.setdefault(r.event_index, {})[f"{r.policy} · route"] = AMBER
    keep = [i for i in rows if not only or i in styles]
    if not keep:
        st.success("Every policy shown matches the gold on every decision case of this scenario.")
        return
    # the plans side by side first, so the comparison fits the screen; then routes, then rules
    columns = ["#", "turn", "who", "text", "gold plan", *chosen, "gold route", *(f"{p} · route" for p in chosen),
               *(f"{p} · rule" for p in chosen)]
    df = pd.DataFrame([rows[i] for i in keep]).reindex(columns=columns).fillna("")  # `_turn` stays out of sight
    style = pd.DataFrame("", index=df.index, columns=df.columns)
    for pos, i in enumerate(keep):
        for col, css in styles.get(i, {}).items():
            style.loc[pos, col] = css
    st.caption("✓ matches the gold · ✗ differs (amber), red: an irreversible error · ‼ the policy raised · "
               "click a turn's row to open it below")
    event = st.dataframe(df.style.apply(lambda _: style, axis=None), hide_index=True, width="stretch",
                         on_select="rerun", selection_mode="single-row", key=visit_key("decision_rows"),
                         column_config={"text": st.column_config.TextColumn("text", width="medium")})
    picked = [rows[keep[i]].get("_turn") for i in (event.selection.rows if event is not None else [])]
    opened = picked[0] if picked else None
    if opened != st.session_state.get(PICKED):  # a new click (not the same selection on a later rerun)
        st.session_state[PICKED] = opened
        if opened:
            st.session_state[wkey("turn")] = opened


def _turn(turns: pd.DataFrame, chosen: list[str]) -> None:
    """One turn opened: per policy, what it saw and why it decided what it did."""
    ids = list(dict.fromkeys(t for t in turns.loc[turns["kind"] == "turn", "turn_id"]))
    cases = list(dict.fromkeys(t.turn_id for t in turns.itertuples(index=False) if _yes(t.decision_case)))
    first_wrong = next((t for t in turns.itertuples(index=False) if _yes(t.decision_case) and not _yes(t.correct)), None)
    default = first_wrong.turn_id if first_wrong is not None else (cases[0] if cases else (ids[0] if ids else None))
    texts = dict(zip(turns["turn_id"], turns["text"]))
    st.subheader("One turn")
    turn = url_selectbox("Turn", ids, "turn", default=default,
                         format_func=lambda t: f"{t} — {str(texts.get(t, ''))[:70]}")
    if turn is None:
        return
    rows = turns[turns["turn_id"] == turn]
    head = rows.iloc[0]
    st.markdown(f"**{plain(head['role'])}** · {str(head['at'])[:16]} · session {code(head['session'])}")
    st.markdown(f"> {plain(head['text'])}")
    if head["role"] == "customer" and _text(head["gold_plan"]):
        route = f", route {code(head['gold_route'])}" if _text(head["gold_route"]) else ""
        st.markdown(f"Gold: plan {code(head['gold_plan'])}{route}")
    if _yes(head["locker_down"]):
        st.warning("The locker is down at this turn (a `locker_down` fault is in force).")
    for col, (_, r) in zip(st.columns(len(chosen)), rows.set_index("policy").reindex(chosen).iterrows()):
        with col:
            _policy_turn(r)


def _policy_turn(r: pd.Series) -> None:
    st.markdown(f"#### {plain(r.name)}")
    if _text(r["error"]):
        st.error(f"The policy raised: {plain(r['error'])}")
        return
    if r["role"] == "customer":
        verdict = f"plan **{plain(plain_label(r['plan']))}** {code(r['plan'])} (rule {code(r['rule'])}): {plain(r['why'])}"
        if _text(r["proposed"]):
            verdict += f" — the resolver proposed {code(r['proposed'])}"
        if _text(r["irreversible"]):
            st.error(f"Irreversible error: {IRREVERSIBLE_WORDS.get(r['irreversible'], r['irreversible'])}. {verdict}; "
                     f"the gold plan is {code(r['gold_plan'])}.")
        elif _yes(r["decision_case"]) and not _yes(r["correct"]):
            st.warning(f"Mismatch: {verdict}; the gold plan is {code(r['gold_plan'])}.")
        elif _yes(r["decision_case"]):
            st.success(verdict)
        else:
            st.info(f"{verdict} (not a decision case: the turn has no gold plan)")
        if _yes(r["locker_down"]) and r["plan"] in LOCKER_ACTS:
            st.error(f"Fail open broken: {code(r['plan'])} needs session state and was taken while the locker was down.")
        route = f"route {code(r['route'])} (rule {code(r['route_rule'])})"
        if _text(r["gold_route"]):
            route += " ✓" if r["route"] == r["gold_route"] else f" ✗ gold {code(r['gold_route'])}"
        st.markdown(route)
        if _text(r["escalation"]) not in ("", "none"):
            st.markdown(f"escalation class: {code(r['escalation'])}")
    scripted = set(fired(r["scripted"]))
    signals = fired(r["signals"])
    st.markdown("**Signals** (⋆ scripted)")
    st.markdown(", ".join(f"{code(k)}{'=' + plain(v) if v is not True else ''}{' ⋆' if k in scripted else ''}"
                          for k, v in signals.items()) or "none")
    if r["role"] == "customer":
        card = fired(r["card"])
        state = r["locker_state"]
        st.markdown(f"**What the policy knew** (its card; the locker was {plain(state)})")
        st.markdown(", ".join(f"{code(k)}{'=' + plain(v) if v is not True else ''}" for k, v in card.items()) or "nothing set")
    before, after = locker_table(r["locker_before"]), locker_table(r["locker_after"])
    st.markdown("**Locker before → after**")
    if r["locker_state"] == "unused":
        st.caption("this policy keeps no session state")
    else:
        b, a = st.columns(2)
        b.dataframe(pd.DataFrame(before, columns=["key", "value", "expires"]), hide_index=True) if before else b.caption(
            "empty" if _text(r["locker_before"]) else "unreadable (down)")
        a.dataframe(pd.DataFrame(after, columns=["key", "value", "expires"]), hide_index=True) if after else a.caption(
            "empty" if _text(r["locker_after"]) else "not written (down)")
    log = r["log"]
    if log is not None and len(log):
        st.markdown("**Log**")
        for line in log:
            st.markdown(f"- {plain(line)}")


if __name__ == "__main__":  # Streamlit's pages/ folder discovery ran this file directly (see pages/_router.py)
    from pages._router import hand_over

    hand_over()

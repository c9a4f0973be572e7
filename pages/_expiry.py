"""What the expiry stage did, drawn for the pages that show a bundle or the leaderboard.

Self-contained render functions: `removed_panel` under a strategy's ranking (Rankings) or a
case's context (Failures) lists the items the stage took out before the strategy ranked, each
with its rule and the reason its receipt gives; `classes_panel` shows the classifier's accuracy
and confusion table over the labelled turns (Leaderboard), and `case_turns` the turns of one
case of the classifier's criterion (Failures). Everything is read from the run
(`harness.analysis.expiry`, `harness.analysis.queries.memory_classes`).
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from harness.analysis.expiry import accuracy, classified_turns, confusion, removed_items


def removed_panel(cands: pd.DataFrame) -> None:
    """The items the expiry stage removed from this bundle before ranking, and why (nothing is
    drawn for a strategy without the stage, or a bundle where nothing had expired)."""
    removed = removed_items(cands)
    if removed.empty:
        return
    rules = removed["rule"].value_counts()
    summary = ", ".join(f"{n} {rule}" for rule, n in rules.items())
    with st.expander(f"Removed by the expiry stage before ranking: {len(removed)} ({summary})"):
        st.caption("These never competed for the budget and did not shape the ranking; each receipt names its rule.")
        st.dataframe(removed[["item_id", "rule", "reason", "text"]], hide_index=True, width="stretch",
                     column_config={"reason": st.column_config.TextColumn("reason", width="large")})


def classes_panel(turns: pd.DataFrame) -> None:
    """Accuracy and confusion table of the expiry stage's classes against the turns' labels,
    for one strategy's rows of `queries.memory_classes` (nothing is drawn when there are none)."""
    if turns.empty:
        return
    right, n = accuracy(turns)
    st.markdown(f"**{right} of {n} labelled turns** got a class among their labels ({right / n:.0%}).")
    st.dataframe(confusion(turns), width="stretch")
    wrong = turns[~turns["correct"]]
    if len(wrong):
        with st.expander(f"The {len(wrong)} turn{'s' if len(wrong) != 1 else ''} classed otherwise"):
            st.dataframe(wrong[["scenario", "turn", "labels", "assigned", "rule"]], hide_index=True, width="stretch")


def case_turns(meta: str | dict | None) -> None:
    """The labelled turns one case of the classifier's criterion judged, right ones and wrong."""
    turns = classified_turns([meta])
    if turns.empty:
        return
    st.markdown("#### Labelled turns and their classes")
    st.dataframe(turns.assign(result=turns["correct"].map({True: "✓", False: "✗"}))[
        ["result", "turn", "labels", "assigned", "rule"]], hide_index=True, width="stretch")


if __name__ == "__main__":  # Streamlit's pages/ folder discovery ran this file directly (see pages/_router.py)
    from pages._router import hand_over

    hand_over()

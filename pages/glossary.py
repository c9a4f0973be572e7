"""Glossary: the words the app's pages use, in plain language, with the id each one has in the
run's tables and links (so a reader can match a label to the raw id a CSV or a CLI prints).

The criteria's sentences are their registered descriptions (`harness.criteria`), the same text
docs/criteria.md is written from; the totals are the criterion groups' (`harness.criteria.groups`).
"""

from __future__ import annotations

import re

import pandas as pd
import streamlit as st

from harness.criteria import groups, registry
from pages._shared import url_page

# Terms beyond the criteria (term, plain meaning); raw ids as they appear in the tables. A comment, not a
# docstring: Streamlit's magic would print a bare string of a page file.
TERMS = (
    ("case", "One judgement: a strategy (or decision policy), a scenario, a probe (or a customer turn) and a criterion."),
    ("probe", "A moment in a scenario where the agent is about to answer: the strategy is asked for the context it "
              "would give the model, within a token budget."),
    ("probe answer", "One strategy's answer to one probe; a run's count of probe answers is its probes times its "
                     "strategies."),
    ("shared total", "The equal-weight mean over the quality criteria every strategy compared supports: the one "
                     "number the Leaderboard orders by."),
    ("coverage", "How many of the quality criteria shown a strategy supports (a strategy without the health "
                 "capability cannot be judged on health: those cases are unsupported and count as 0)."),
    ("gate", "A pass/fail criterion: a strategy passes only when every case passes. Gates say whether it may ship, "
             "not how good it is, and are never averaged into a total."),
    ("unsupported", "A case the strategy lacks the capability to answer; counted as 0 and shown."),
    ("control", "A strategy that is there to bound the others: oracle (the gold context) and empty (nothing)."),
    ("decision policy", "What decides, on each customer turn, what the agent does next (keep talking, ask what they "
                        "need, offer live support, transfer, escalate, survey and close)."),
    ("locker", "The session state a decision policy keeps between turns (in memory or on Redis)."),
    ("fail open", "While the locker is down, a policy must take no act that needs session state (transfer, offer, "
                  "survey): it carries on talking instead."),
    ("card (locker up / down)", "What a policy knew about the session when it decided: read from the locker, or "
                                "nothing when the locker was down."),
    ("offer_live", "The plan of offering the customer live support."),
    ("resolved_session", "A part of session_aware's ranking score: the boost an item gets for coming from a session "
                         "that ended resolved."),
    ("sla_resolution_breach", "A health factor: -10 per session resolved more than 24 h after its first customer "
                              "turn, at most -20."),
)


# Raw ids the pages show, in plain words (the id stays on hover and in the tables): the health model's
# factors (stores/session/health.py) and the decision plans (stores/decisions/vocabulary.py).
PLAIN = {
    "unresolved_issues": "open sessions",
    "repeated_issue": "the issue came back",
    "urgency": "urgent turns",
    "idle_open_issue": "open issue idle 7 days",
    "sla_resolution_breach": "resolved after 24 h",
    "slow_first_response": "slow first response",
    "recent_resolution": "resolved in the last 7 days",
    "high_resolution_rate": "most sessions resolved",
    "continue": "keep talking",
    "clarify": "ask what they need",
    "offer_live": "offer live support",
    "transfer": "transfer",
    "escalate": "escalate",
    "csat": "survey and close",
}


def plain_label(raw: str) -> str:
    """A raw id in plain words (the id itself when there are none)."""
    return PLAIN.get(raw, raw)


def sentence(text: str) -> str:
    """A description's first paragraph on one line."""
    return re.sub(r"\s+", " ", (text or "").split("\n\n")[0]).strip()


@url_page
def render() -> None:
    st.title("Glossary")
    st.caption("The words the pages use. Ids are what the run's tables, exports and the CLI print.")
    st.subheader("Totals")
    totals = [{"total": g.total_title or g.title, "id": g.total, "what it averages":
               f"the {g.title} criteria, equal weight" + (" (decision policies' cases)" if g.axis == "policy" else "")}
              for g in groups.GROUPS.values() if g.total]
    st.dataframe(pd.DataFrame(totals), hide_index=True, width="stretch")
    st.subheader("Criteria")
    rows = [{"criterion": c.title, "id": c.key, "group": groups.GROUPS[c.group].title, "judges": sentence(c.description)}
            for c in registry().values()]
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch",
                 column_config={"judges": st.column_config.TextColumn("what it judges", width="large")})
    st.subheader("Other words")
    st.dataframe(pd.DataFrame(TERMS, columns=["term", "meaning"]), hide_index=True, width="stretch",
                 column_config={"meaning": st.column_config.TextColumn("meaning", width="large")})
    st.subheader("Ids shown in plain words")
    st.caption("Health factors and decision plans: the pages show the words; the id is on hover and in the tables.")
    st.dataframe(pd.DataFrame(list(PLAIN.items()), columns=["id", "shown as"]), hide_index=True, width="stretch")


if __name__ == "__main__":  # Streamlit's pages/ folder discovery ran this file directly (see pages/_router.py)
    from pages._router import hand_over

    hand_over()

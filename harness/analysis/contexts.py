"""Two strategies' contexts for one probe, side by side: which items each put in, and how the texts differ.

Pure functions over the rows `harness.analysis.queries.candidates` and `probe_rows` return, so
the Rankings page can diff any two of the strategies it shows without another query.
"""

from __future__ import annotations

import difflib

import pandas as pd

BOTH, ONLY_A, ONLY_B, NEITHER = "in both", "only A", "only B", "in neither"
"""Where an item ended up (`item_diff`'s `where`)."""

ITEM_COLUMNS = ["item_id", "where", "rank_a", "status_a", "rank_b", "status_b", "gold", "text"]


def item_diff(cands_a: pd.DataFrame, cands_b: pd.DataFrame, marks: dict[str, str] | None = None) -> pd.DataFrame:
    """Every item either strategy considered, with its rank and status on each side (`ITEM_COLUMNS`).

    `where` says which context it reached; the rows where the two differ come first (only A,
    only B), then what both included, then what neither did, each by the better of its two ranks.
    `gold` is the probe's mark for the item (`harness.analysis.queries.gold_marks`), '' if none.
    """
    marks = marks or {}
    side = ["item_id", "rank", "status", "included", "text"]
    a = cands_a[side] if len(cands_a) else pd.DataFrame(columns=side)
    b = cands_b[side] if len(cands_b) else pd.DataFrame(columns=side)
    m = a.merge(b, on="item_id", how="outer", suffixes=("_a", "_b"))
    if m.empty:
        return pd.DataFrame(columns=ITEM_COLUMNS)
    inc_a = m["included_a"].astype("boolean").fillna(False).astype(bool)
    inc_b = m["included_b"].astype("boolean").fillna(False).astype(bool)
    m["where"] = [BOTH if x and y else ONLY_A if x else ONLY_B if y else NEITHER for x, y in zip(inc_a, inc_b)]
    for c in ("status_a", "status_b"):  # an empty side merges in as float NaN: fill as objects
        m[c] = m[c].astype(object).where(m[c].notna(), "not considered")
    m["text"] = m["text_a"].where(m["text_a"].notna(), m["text_b"])
    m["gold"] = [marks.get(i, "") for i in m["item_id"]]
    order = {ONLY_A: 0, ONLY_B: 0, BOTH: 1, NEITHER: 2}
    m["_o"] = m["where"].map(order)
    m["_r"] = m[["rank_a", "rank_b"]].min(axis=1)
    m = m.sort_values(["_o", "_r", "item_id"], kind="stable")
    for c in ("rank_a", "rank_b"):
        m[c] = m[c].astype("Int64")
    return m[ITEM_COLUMNS].reset_index(drop=True)


SAME, CHANGED, ONLY_LEFT, ONLY_RIGHT = "same", "changed", "only A", "only B"
"""Kinds of row in `line_diff`."""


def line_diff(text_a: str | None, text_b: str | None) -> list[tuple[str, str, str]]:
    """The two context texts aligned line by line (`difflib`): rows of (kind, line of A, line of B),
    kind one of `SAME`, `CHANGED`, `ONLY_LEFT`, `ONLY_RIGHT`; a side without the line has ''."""
    la, lb = (text_a or "").splitlines(), (text_b or "").splitlines()
    rows: list[tuple[str, str, str]] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=la, b=lb, autojunk=False).get_opcodes():
        if tag == "equal":
            rows += [(SAME, x, y) for x, y in zip(la[i1:i2], lb[j1:j2])]
        elif tag == "delete":
            rows += [(ONLY_LEFT, x, "") for x in la[i1:i2]]
        elif tag == "insert":
            rows += [(ONLY_RIGHT, "", y) for y in lb[j1:j2]]
        else:  # replace: pair what lines up, the rest one-sided
            left, right = la[i1:i2], lb[j1:j2]
            for k in range(max(len(left), len(right))):
                x = left[k] if k < len(left) else ""
                y = right[k] if k < len(right) else ""
                rows.append((CHANGED if x and y else ONLY_LEFT if x else ONLY_RIGHT, x, y))
    return rows

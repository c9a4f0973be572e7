"""Reading what the expiry stage did from a run: the items it removed, and how its classifier did.

Pure functions over frames the app's queries already return (`candidates` rows of one bundle,
`scores` rows of the classifier's criterion), so the Rankings and Failures pages and the
README's figures read one implementation. A removed item is a candidate whose receipt reason
was written by an expiry rule (`stores.expiry.is_expiry_reason`).
"""

from __future__ import annotations

import json
from typing import Any, Iterable

import pandas as pd

from stores.expiry import CLASSES, EXPIRY_PREFIXES, GOLD_LABELS, is_expiry_reason


def rule_of(reason: str | None) -> str:
    """The rule family of an expiry reason, as the app shows it (its prefix without the colon or
    'by': 'superseded by ...' -> 'superseded'), '' for any other reason."""
    if not is_expiry_reason(reason):
        return ""
    prefix = next(p for p in EXPIRY_PREFIXES if reason.startswith(p))
    return prefix.strip().rstrip(":").removesuffix(" by")


def removed_items(cands: pd.DataFrame) -> pd.DataFrame:
    """The candidates the expiry stage removed, in receipt order, with the rule family and the
    reason: columns `item_id`, `session`, `rule`, `reason`, `text` (empty frame when none)."""
    cols = ["item_id", "session", "rule", "reason", "text"]
    if cands is None or cands.empty or "reason" not in cands:
        return pd.DataFrame(columns=cols)
    mask = cands["reason"].map(is_expiry_reason).astype(bool)
    out = cands.loc[mask, ["item_id", "session", "reason", "text"]].copy()
    out.insert(2, "rule", out["reason"].map(rule_of))
    return out[cols].reset_index(drop=True)


def classified_turns(metas: Iterable[str | dict | None]) -> pd.DataFrame:
    """The labelled turns the classifier's criterion judged, one row each: `turn`, `labels`
    (the gold, joined), `gold` (the label it is counted under), `assigned`, `rule`, `correct`.

    `metas` are the criterion's `Score.meta` (JSON text or dicts), whose `turns` list holds
    `{"id", "labels", "assigned", "rule"}`; a turn is counted under the label it matched, or
    under its first label when it matched none."""
    rows: list[dict[str, Any]] = []
    for m in metas:
        if not m:
            continue
        d = json.loads(m) if isinstance(m, str) else m
        for t in d.get("turns", ()):
            labels = list(t.get("labels") or ())
            assigned = t.get("assigned", "")
            ok = assigned in labels
            rows.append({"turn": t.get("id", ""), "labels": ", ".join(labels),
                         "gold": assigned if ok else (labels[0] if labels else ""), "assigned": assigned,
                         "rule": t.get("rule", ""), "correct": ok})
    return pd.DataFrame(rows, columns=["turn", "labels", "gold", "assigned", "rule", "correct"])


def confusion(turns: pd.DataFrame) -> pd.DataFrame:
    """Gold label (rows) by assigned class (columns), counts, every label and class shown."""
    table = pd.crosstab(turns["gold"], turns["assigned"]) if len(turns) else pd.DataFrame()
    return table.reindex(index=list(GOLD_LABELS), columns=list(CLASSES), fill_value=0).rename_axis(
        index="gold label", columns="assigned class")


def accuracy(turns: pd.DataFrame) -> tuple[int, int]:
    """(correct, labelled) over the judged turns."""
    return int(turns["correct"].sum()) if len(turns) else 0, len(turns)

"""Label a probe from its transcript (the Rankings page's case view).

The reviewer ticks the history items that must be in the context (and may set the resolved
session this one repeats, or a health band), sees the YAML that will be written, and saves. The
page reads the scenario file and writes it only through `harness.format.label` (the app's one
write action beside running the canonical suite): the file keeps its comments and order, the gold
is validated before it is written, and a file changed on disk since it was read is refused.
"""

from __future__ import annotations

from pathlib import Path
from typing import get_args

import pandas as pd
import streamlit as st

from harness.format.label import LabelError, label_kinds, preview, read_target, write_gold
from harness.format.schema import Band


def _short(text: str, width: int = 90) -> str:
    t = " ".join(str(text or "").split())
    return t if len(t) <= width else t[: width - 1] + "…"


def label_section(run: str, scenario: str, probe: str, prow: pd.Series, ev: pd.DataFrame) -> None:
    """The labelling form of one probe, in an expander (open when the probe has no gold yet)."""
    unlabelled = bool(prow.get("unlabelled")) if "unlabelled" in prow.index else False
    with st.expander("Label this probe from the transcript" + (" · unlabelled: in no score yet" if unlabelled else ""),
                     expanded=unlabelled, icon=":material/edit_note:"):
        path = str(ev["path"].iloc[0] or "") if len(ev) else ""
        if not path or not Path(path).is_file():
            st.info(f"The scenario file `{path or '?'}` is not on this machine (paths are as the run was started), "
                    "so this probe cannot be labelled here.")
            return
        try:
            target = read_target(path, probe)
        except (LabelError, OSError, ValueError) as e:
            st.warning(f"`{path}` cannot be labelled: {e}")
            return
        at = int(prow["event_index"])
        hist = ev[(ev["event_index"] < at) & (ev["subject"] == prow["subject"]) & ev["kind"].isin(["turn", "resolve"])]
        hist = hist.drop_duplicates("item_id", keep="last")
        texts = dict(zip(hist["item_id"], hist["text"]))
        items = list(texts)
        resolved = list(dict.fromkeys(hist.loc[(hist["kind"] == "resolve") & (hist["status"] == "resolved"), "session"]))
        st.caption(f"Writes into `{path}`: the probe's gold, with the file's comments and order kept; checked like "
                   "`supportbench validate` before it is written. Then re-run, or "
                   f"`supportbench rescore {run} --gold`, to score it.")
        gold: dict = {}
        for key, ref in label_kinds().items():
            current = target.expect.get(key)
            wkey = f"label:{scenario}:{probe}:{key}"
            if ref in ("ids", "needles"):
                kept = [x for x in current or [] if not isinstance(x, str)]  # text needles stay as written
                chosen = st.multiselect(f"{key}: the items that must be in the context", items,
                                        default=[x for x in current or [] if isinstance(x, str) and x in texts],
                                        format_func=lambda i: f"{i} — {_short(texts.get(i, ''))}", key=wkey)
                gold[key] = chosen + kept
            elif ref == "session":
                options = [None] + resolved
                gold[key] = st.selectbox(f"{key}: the resolved session this one repeats (optional)", options,
                                         index=options.index(current) if current in options else 0, key=wkey)
            elif ref == "band":
                options = [None, *get_args(Band)]
                gold[key] = st.selectbox(f"{key}: the customer's health band now (optional)", options,
                                         index=options.index(current) if current in options else 0, key=wkey)
        st.code(preview(probe, target.expect, gold), language="yaml")
        if st.button("Save the gold into the scenario file", key=f"label:{scenario}:{probe}:save", type="primary"):
            try:
                write_gold(target, probe, gold)
            except (LabelError, OSError) as e:
                st.error(str(e))
                return
            st.success(f"Saved into `{path}`. Re-run the suite, or `supportbench rescore {run} --gold`, to score it.")


if __name__ == "__main__":  # Streamlit's pages/ folder discovery ran this file directly (see app.py)
    from pages._router import hand_over

    hand_over()

"""Handoff brief: what the human who takes over a session needs, within a hard token ceiling (docs/reference.md).

`build_handoff` is shared by every strategy with the `handoff` capability; the strategy
supplies its ranking scores (which decide "related history") and the resolved sessions it
matched as repeats of the current issue. The brief answers, in this order:

1. who the customer is; 2. which profile facts matter; 3. the active issue; 4. what has
already been tried; 5. related history; 6. what is resolved and should be deprioritized;
7. what the next agent needs now.

Budget: a hard ceiling on the whole text, counted with `stores.tokens.count_tokens`. Lines
are kept whole or cut whole, never mid-word: headings first, then lines by section priority
(active issue, needs-now, tried, who, profile, related, resolved), skipping a line that does
not fit (smaller ones below it can still fit). A section whose heading is cut is cut whole.

Receipt: every line that quotes or cites a history item names it as `[id]`, and `used_ids`
is exactly the ids of the lines that survived the cut, in order of appearance. Aggregate
lines (counts, health band) cite nothing and add nothing to the receipt.
"""

from __future__ import annotations

import re
from datetime import datetime, timezone

import numpy as np

from stores.memory import RESOLUTION_ROLE, SubjectHistory
from stores.protocol import ContextRequest, Handoff, HealthReport
from stores.text import is_urgent
from stores.tokens import count_tokens

HEADINGS = (
    "Who the customer is",
    "Profile facts that matter",
    "The active issue",
    "What has already been tried",
    "Related history",
    "Resolved: deprioritize",
    "What the next agent needs now",
)
_PRIORITY = (2, 6, 3, 0, 1, 4, 5)
"""Section indexes in the order their lines claim the budget."""
_PER_SECTION = 8
_PROFILE = re.compile(
    r"\b(i am|i'm|my name|we are|we're|our|my|prefer|always|never|call me|email me|"
    r"contact me|account|plan|subscription|timezone|language)\b",
    re.IGNORECASE,
)
NONE_LINE = "- none on record"

Line = tuple[str, tuple[str, ...]]


def _stamp(t: float) -> str:
    return datetime.fromtimestamp(t, tz=timezone.utc).strftime("%Y-%m-%d %H:%M")


def _item_line(h: SubjectHistory, i: int, prefix: str = "") -> Line:
    role, kind = h.roles[i], h.kinds[i]
    if role == RESOLUTION_ROLE:
        who = f"resolution ({h.status.get(h.sessions[i], '')})"
    else:
        who = "agent action" if kind == "action" else role
    text = " ".join(h.texts[i].split()) or "(no summary)"
    return (f"- {prefix}[{h.ids[i]}] {_stamp(h.times[i])} {h.sessions[i]} {who}: {text}", (h.ids[i],))


def _chrono(h: SubjectHistory, idx) -> list[int]:
    return sorted(idx, key=lambda i: (h.times[i], i))


def _sections(h, request, scores, repeat_sessions, health) -> list[list[Line]]:
    cutoff = request.now.timestamp()
    visible = [i for i in range(len(h)) if h.times[i] <= cutoff]
    active = [i for i in visible if h.sessions[i] == request.session]
    active_turns = [i for i in _chrono(h, active) if h.roles[i] != RESOLUTION_ROLE]
    other = [i for i in visible if h.sessions[i] != request.session]
    sessions = list(dict.fromkeys(h.sessions[i] for i in _chrono(h, visible)))
    open_sessions = [s for s in sessions if not h.is_resolved(s)]
    used: set[int] = set()

    def take(idx, limit=_PER_SECTION, prefix="") -> list[Line]:
        out = []
        for i in idx:
            if i in used or len(out) >= limit:
                continue
            used.add(i)
            out.append(_item_line(h, i, prefix))
        return out

    who: list[Line] = [
        (
            f"- Customer {h.subject}: {len(sessions)} session(s) on record"
            + (f", first seen {_stamp(min(h.times[i] for i in visible))}" if visible else "")
            + f"; live session {request.session}.",
            (),
        )
    ]
    if health is not None:
        who.append((f"- Health: {health.band} ({health.score:.0f}/100).", ()))

    profile_idx = [
        i
        for i in sorted(other, key=lambda i: (-h.times[i], i))
        if h.roles[i] == "customer" and _PROFILE.search(h.texts[i])
    ]
    seen_text: set[str] = set()
    profile_idx = [i for i in profile_idx if not (h.texts[i] in seen_text or seen_text.add(h.texts[i]))]
    profile = take(profile_idx)

    customer = [i for i in active_turns if h.roles[i] == "customer"]
    issue = take(customer[:1] + customer[1:][-(_PER_SECTION - 1):])

    actions = [i for i in active_turns if h.kinds[i] == "action"]
    tried = take(actions if actions else [i for i in active_turns if h.roles[i] == "agent"][-5:])

    known_fix = [
        i for i in _chrono(h, other) if h.roles[i] == RESOLUTION_ROLE and h.sessions[i] in repeat_sessions
    ]
    related = take(known_fix, prefix="known fix, same issue: ")
    ranked = sorted(
        (i for i in other if h.roles[i] != RESOLUTION_ROLE or h.sessions[i] in repeat_sessions),
        key=lambda i: (-scores[i], i),
    )
    related += take(ranked, limit=_PER_SECTION - len(related))

    resolved_idx = [
        i
        for i in sorted(other, key=lambda i: (-h.times[i], i))
        if h.roles[i] == RESOLUTION_ROLE and h.is_resolved(h.sessions[i]) and h.sessions[i] not in repeat_sessions
    ]
    resolved = take(resolved_idx)

    needs: list[Line] = [(f"- Latest request: {' '.join(request.task.split())}", ())]
    urgent = [i for i in active_turns if is_urgent(h.texts[i])]
    needs += take(urgent, limit=3, prefix="urgent: ")
    if known_fix:
        r = known_fix[-1]
        needs.append((f"- Check first: the fix recorded for {h.sessions[r]} [{h.ids[r]}].", (h.ids[r],)))
        used.add(r)
    others_open = [s for s in open_sessions if s != request.session]
    if others_open:
        needs.append((f"- Other open sessions: {', '.join(others_open)}.", ()))
    return [who, profile, issue, tried, related, resolved, needs]


def build_handoff(
    h: SubjectHistory,
    request: ContextRequest,
    *,
    scores: np.ndarray,
    repeat_sessions: frozenset[str] = frozenset(),
    budget_tokens: int = 4000,
    health: HealthReport | None = None,
) -> Handoff:
    """The seven-section brief for `request.session`, never above `budget_tokens` tokens."""
    body = [sec or [(NONE_LINE, ())] for sec in _sections(h, request, scores, repeat_sessions, health)]
    headings = [f"## {n}. {title}" for n, title in enumerate(HEADINGS, 1)]

    remaining = budget_tokens
    head_kept = [False] * 7
    for s, head in enumerate(headings):
        t = count_tokens(head)
        if t <= remaining:
            head_kept[s], remaining = True, remaining - t
    kept = [[False] * len(sec) for sec in body]
    order: list[tuple[int, int]] = []
    for s in _PRIORITY:
        if not head_kept[s]:
            continue
        for j, (line, _) in enumerate(body[s]):
            t = count_tokens(line)
            if t <= remaining:
                kept[s][j], remaining = True, remaining - t
                order.append((s, j))

    while True:
        text, sections, used = _render(headings, body, head_kept, kept)
        tokens = count_tokens(text)
        if tokens <= budget_tokens:
            break
        # the tokenizer should make this unreachable (newlines are free); stay safe anyway
        if order:
            s, j = order.pop()
            kept[s][j] = False
        else:
            last = max(s for s in range(7) if head_kept[s])
            head_kept[last] = False
    return Handoff(
        subject=h.subject,
        session=request.session,
        sections=sections,
        text=text,
        tokens=tokens,
        used_ids=used,
    )


def _render(headings, body, head_kept, kept):
    lines: list[str] = []
    sections = []
    used: dict[str, None] = {}
    for s, title in enumerate(HEADINGS):
        sec_lines = [line for (line, ids), k in zip(body[s], kept[s]) if k and head_kept[s]]
        if head_kept[s]:
            lines.append(headings[s])
            lines += sec_lines
            for (line, ids), k in zip(body[s], kept[s]):
                if k:
                    used.update(dict.fromkeys(ids))
        sections.append((title, "\n".join(sec_lines)))
    return "\n".join(lines), tuple(sections), tuple(used)

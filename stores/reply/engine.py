"""The scripted reply engine: one deterministic engine for every strategy, like one tokenizer.

It turns what a strategy put in the context into the seed's `SupportReply`, and nothing else:
it sees the context request and the bundle (plus, for a strategy with typed memories, those of
its memories that are in the context), never a gold label. So the reply criteria compare what
each context lets an agent do, not engines.

How it answers (seed 002, "Reasoning Engine" and "Deterministic Fallback"):
- relevance of a memory = share of the message's content words it matches (an attempt also
  through its incident's words); an attempt no incident holds (its ticket's report was not read as
  one) counts when a memory of its session matches, since a ticket is about one problem; when
  nothing matches, everything in the context counts, since the strategy chose to show it;
- known fixes: relevant attempts that worked, best match first; known failures: relevant attempts
  that failed (including a fix that stopped working), in the order they were tried;
- returning customer: relevant history from a session other than the live one;
- next step: the first known fix; with none left and a fix that stopped working or two failures,
  escalate with the history; a known failure is never proposed.

The steps, outcomes and incidents are read by the extractor's lexicon (`stores/structured/lexicon.py`),
the same reading for every strategy: a step said as customers and agents say it (a verb the lexicon does
not list, read from its place in the sentence: `please format the card`, `formatting the card did not
help`; `turn Bluetooth off and on`; `log out of X and back in`; `an ethernet cable fixed it`), see
docs/frontends.md, "Sixth round".
"""

from __future__ import annotations

from typing import Sequence

from stores.protocol import Bundle, ContextRequest
from stores.reply.derive import ContextMemory, memories_in_context
from stores.reply.model import SupportReply, UsedMemory
from stores.structured.lexicon import WORD, content_words, normalize, stem
from stores.structured.model import Memory, same_ticket

ESCALATE = "Escalate to the next support tier with the full history"
"""The next step when no known fix is left."""
ESCALATE_AFTER_FAILURES = 2
"""Known failures (with no fix) after which the reply escalates."""


def _query_words(task: str) -> dict[str, str]:
    """The message's content words: stem -> the word as written (for readable reasons)."""
    out: dict[str, str] = {}
    for w in WORD.findall(normalize(task)):
        s = stem(w)
        if s in content_words(w):
            out.setdefault(s, w)
    return out


class ScriptedEngine:
    """Deterministic replies from the context (see the module docstring)."""

    name = "scripted"

    def reply(self, request: ContextRequest, bundle: Bundle, memories: Sequence[Memory] | None = None) -> SupportReply:
        """The reply to `request.task` given the context `bundle` (and the strategy's typed memories, if any)."""
        return compose(request, memories_in_context(request, bundle, memories))


def compose(request: ContextRequest, ctx: list[ContextMemory], *, engine: str = "scripted", note: str = "") -> SupportReply:
    """The reply and its metadata for memories in context `ctx`."""
    q = _query_words(request.task)
    by_id = {c.memory.id: c.memory for c in ctx}
    scored: list[tuple[ContextMemory, float, list[str]]] = []
    for c in ctx:
        words = content_words(c.memory.text)
        inc = by_id.get(c.memory.incident_id or "")
        if inc is not None:
            words |= content_words(inc.text)
        hit = [q[s] for s in q if s in words]
        scored.append((c, len(hit) / len(q) if q else 0.0, hit))
    relevant_ids = {c.memory.id for c, s, _ in scored if s > 0 and c.memory.type != "PROFILE"}
    # an attempt no incident holds is about its ticket's problem: relevant when a memory of its session is
    flags = same_ticket([c.memory for c, _, _ in scored], [c.session or "" for c, _, _ in scored], [s for _, s, _ in scored])
    ticket_ids = {c.memory.id for (c, _, _), f in zip(scored, flags) if f}
    relevant_ids |= ticket_ids
    use = [x for x in scored if x[0].memory.id in relevant_ids] or [x for x in scored if x[0].memory.type != "PROFILE"]
    use_ids = {c.memory.id for c, _, _ in use}
    attempts = [(c, s) for c, s, _ in use if c.memory.type == "ATTEMPT"]
    fixes = sorted((x for x in attempts if x[0].memory.outcome == "worked"),
                   key=lambda x: (-x[1], -x[0].memory.updated_at.timestamp(), x[0].memory.id))
    failures = sorted((x for x in attempts if x[0].memory.outcome == "failed"),
                      key=lambda x: (x[0].memory.created_at, x[0].memory.id))
    fix_texts = _unique(c.memory.text for c, _ in fixes)
    failure_texts = [t for t in _unique(c.memory.text for c, _ in failures) if t not in fix_texts]
    is_returning = any(c.session and c.session != request.session for c, _, _ in use if c.memory.type != "PROFILE")
    broke = [c.memory.text for c, _ in failures if "worked" in c.memory.previous_outcomes]
    escalate = not fix_texts and (bool(broke) or len(failure_texts) >= ESCALATE_AFTER_FAILURES)
    next_steps = fix_texts[:1] if fix_texts else ([ESCALATE] if escalate else [])
    product = next((c.memory.product for c, _, _ in scored if c.memory.product), None)
    used = []
    order = {"worked": 0, "failed": 1}
    for c, s, hit in sorted((x for x in scored if x[0].memory.id in use_ids or x[0].memory.type == "PROFILE"),
                            key=lambda x: (_rank(x[0].memory, order), -x[1], x[0].memory.id)):
        m = c.memory
        reason = ", ".join(r for r in (
            "same product" if product and m.product == product and m.type != "PROFILE" else "",
            f"matched on {', '.join(hit)}" if hit else "",
            "same ticket as a matched memory" if m.id in ticket_ids else "",
            "customer profile" if m.type == "PROFILE" else "",
            "earlier session" if c.session and c.session != request.session else "",
        ) if r) or "in the context"
        used.append(UsedMemory(m.text, m.type, m.outcome or m.status, round(s, 4), reason, m.id, m.source_ids,
                               m.previous_outcomes))
    sources: dict[str, tuple[str, ...]] = {}
    for c, _, _ in scored:
        sources[c.memory.text] = tuple(dict.fromkeys((*sources.get(c.memory.text, ()), *c.memory.source_ids)))
    return SupportReply(
        reply=_text(is_returning, fix_texts, failure_texts, broke, escalate, use),
        is_returning_customer=is_returning, known_fixes=tuple(fix_texts), known_failures=tuple(failure_texts),
        used_memories=tuple(used), next_steps=tuple(next_steps), escalate=escalate, engine=engine, engine_note=note,
        sources={t: sources.get(t, ()) for t in (*fix_texts, *failure_texts, *next_steps)},
    )


def _rank(m: Memory, order: dict[str, int]) -> int:
    if m.type == "ATTEMPT":
        return order.get(m.outcome or "", 2)
    return 3 if m.type == "INCIDENT" else 4


def _unique(texts) -> list[str]:
    return list(dict.fromkeys(texts))


def _join(items: list[str]) -> str:
    items = [f"\u201c{i}\u201d" for i in items]  # quoted: the steps' own canonical texts
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _text(is_returning, fixes, failures, broke, escalate, use) -> str:
    opening = "Welcome back. " if is_returning else ""
    if fixes:
        s = f"{opening}From your previous sessions, {_join(fixes[:1])} worked, so let's start there."
        if failures:
            s += f" {_join(failures)} already failed, so I will skip {'that step' if len(failures) == 1 else 'those steps'}."
        return s
    if escalate:
        parts = [opening.strip()] if opening else []
        if broke:
            parts.append(f"{_join(broke)} fixed this before but no longer helps.")
        rest = [f for f in failures if f not in broke]
        if rest:
            parts.append(f"{_join(rest)} already failed as well.")
        parts.append("I'm escalating your case to the next support tier with the full history, so nobody asks you to repeat these steps.")
        return " ".join(parts)
    incident = next((c.memory.text for c, _, _ in use if c.memory.type == "INCIDENT"), None)
    s = opening
    if failures:
        s += f"{_join(failures)} already failed, so I will skip {'that step' if len(failures) == 1 else 'those steps'}. "
    if incident:
        s += f"I'll help troubleshoot this: {incident[:1].lower() + incident[1:]}."
    else:
        s += "I will review the available troubleshooting information and continue from there."
    return s.strip()


__all__ = ["ScriptedEngine", "compose", "ESCALATE"]

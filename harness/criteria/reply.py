"""Criteria of seed 002: the typed memories a strategy holds (group `reply`), and the reply its context leads to
(group `reply_engine`, reported apart from the memory headline: see below).

`memory_extraction` judges a typed-memory store against `expect.memories` (strategies without
typed memories are `unsupported`). The three reply criteria judge the `SupportReply` the one
scripted reply engine (`stores.reply`) wrote from each strategy's context, so they compare what
each context lets an agent do, not engines. A gold fix or failure given as an id is covered by a
step of the reply whose memory traces to that id (`SupportReply.sources`) or that is the step the
id's own text names (read by the same extractor the reply engine uses); given as a text needle, by
a step whose text contains it (case-insensitive). Because a step counts only when the engine's rule-based
reading of the context's words finds it, these three judge the engine's reading as much as the context (the
oracle's gold context can fail them on text the engine's rules were not written for), so they are in the
`reply_engine` group: their own total, never the shared headline. See docs/criteria.md.
"""

from __future__ import annotations

from typing import Any

from harness.criteria import criterion, errored, ok_or_fail
from harness.criteria.metrics import prf
from harness.criteria.typed_memory import match_memories
from harness.format.model import Probe, TextNeedle
from harness.replay.probes import ProbeOutcome
from stores.reply.derive import steps_named


def _ref(g: Any) -> str:
    return f'"{g.text}"' if isinstance(g, TextNeedle) else str(g)


def covered_by(o: ProbeOutcome, text: str, g: Any) -> bool:
    """Whether the reply's step `text` covers the gold item `g`: a needle in its text; or an id among the
    sources of its memory, or whose own text names the same canonical step (the fix is known, whichever
    turn of the context told the reply so)."""
    if isinstance(g, TextNeedle):
        return g.text.lower() in text.lower()
    if g in o.reply.sources.get(text, ()):
        return True
    item = o.seen.get(g)
    return item is not None and text in steps_named(item.text)


def _first(o: ProbeOutcome, steps, g: Any) -> str | None:
    return next((t for t in steps if covered_by(o, t, g)), None)


def _no_reply(o: ProbeOutcome, key: str):
    return errored(key, o.reply_error or "the reply engine gave no reply")


def _memory_cases(p: Probe) -> tuple[int, int]:
    """(positives, negatives) of a probe: each gold memory must be found; nothing is a negative."""
    return len(p.expect.memories or ()), 0


def _describe(m: Any) -> str:
    state = getattr(m, "outcome", None) or getattr(m, "status", None)
    return f"{m.type} '{m.text}'" + (f" ({state})" if state else "")


def _describe_gold(g: Any) -> str:
    parts = [g.type, f"'{g.text}'"]
    if g.outcome or g.status:
        parts.append(f"({g.outcome or g.status})")
    if g.source:
        parts.append(f"from {g.source}")
    return " ".join(parts)


@criterion("memory_extraction", title="typed memory extraction", group="reply", requires="memories",
           applies=lambda p: p.expect.memories is not None, metric=prf(_memory_cases))
def memory_extraction(o: ProbeOutcome):
    """Precision, recall and F1 of the strategy's typed memories of the customer at the probe
    against `expect.memories` (the complete set it should hold): a gold memory matches one memory
    whose type, outcome or status, text needle and source all agree, each memory answering at most
    one (`harness.criteria.typed_memory`). Passes at F1 = 1; `tp`/`fp`/`fn` feed the run's F1."""
    if o.memories_error:
        return errored("memory_extraction", o.memories_error)
    gold = list(o.probe.expect.memories or ())
    mems = list(o.memories or ())
    r = match_memories(gold, mems)
    tp, fp, fn = len(r.pairs), len(r.extra), len(r.missed)
    why = f"matched {tp} of {len(gold)} gold memories with {len(mems)} held (precision {r.precision:.2f}, recall {r.recall:.2f})"
    if r.missed:
        why += "; missed: " + ", ".join(_describe_gold(gold[i]) for i in r.missed)
    if r.extra:
        why += "; not in the gold: " + ", ".join(_describe(mems[j]) for j in r.extra)
    evidence = [i for j in r.extra for i in mems[j].source_ids[:1]]
    return ok_or_fail("memory_extraction", r.f1, tp == len(gold) and fp == 0, why, evidence, tp=tp, fp=fp, fn=fn)


@criterion("returning_customer", title="returning-customer detection", group="reply_engine",
           applies=lambda p: p.expect.returning is not None)
def returning_customer(o: ProbeOutcome):
    """1 if the reply's `is_returning_customer` equals the gold (relevant history from an earlier
    session was in the context, or rightly was not)."""
    if o.reply is None:
        return _no_reply(o, "returning_customer")
    gold, got = bool(o.probe.expect.returning), o.reply.is_returning_customer
    prior = [u for u in o.reply.used_memories if u.type != "PROFILE" and "earlier session" in u.reason]
    if got == gold:
        why = (f"the reply knows the customer is returning ({len(prior)} memories from earlier sessions, e.g. "
               f"'{prior[0].text}')" if got and prior else
               "the reply knows the customer is returning" if got else "the reply rightly treats this as a first contact")
        return ok_or_fail("returning_customer", 1.0, True, why)
    why = ("the customer is returning, but the context held no relevant history from an earlier session, so the reply "
           "treats this as a first contact") if gold else (
           f"the reply calls a first-time customer returning (from '{prior[0].text}')" if prior
           else "the reply calls a first-time customer returning")
    return ok_or_fail("returning_customer", 0.0, False, why, [i for u in prior for i in u.source_ids[:1]])


@criterion("reply_known_fix", title="reply leads with the known fix", group="reply_engine",
           applies=lambda p: bool(p.expect.known_fixes))
def reply_known_fix(o: ProbeOutcome):
    """Share of the gold fixes among the reply's `known_fixes`, halved when the first gold fix is not
    the reply's first; passes when all are there and the first leads."""
    if o.reply is None:
        return _no_reply(o, "reply_known_fix")
    gold = list(o.probe.expect.known_fixes)
    fixes = list(o.reply.known_fixes)
    found = {_ref(g): _first(o, fixes, g) for g in gold}
    missing = [g for g in gold if found[_ref(g)] is None]
    share = (len(gold) - len(missing)) / len(gold)
    leads = bool(fixes) and covered_by(o, fixes[0], gold[0])
    value = share if leads else share / 2
    parts = []
    if found[_ref(gold[0])] is not None:
        parts.append(f"leads with '{fixes[0]}'" + ("" if leads else f", not with the gold first fix {_ref(gold[0])} "
                                                    f"('{found[_ref(gold[0])]}')"))
    if missing:
        parts.append(f"missing from the known fixes: {', '.join(_ref(g) for g in missing)}"
                     + (f" (the reply knows {', '.join(repr(f) for f in fixes)})" if fixes else " (the reply knows no fix)"))
    else:
        parts.append(f"all {len(gold)} gold fix{'es' if len(gold) > 1 else ''} among the known fixes")
    ok = not missing and leads
    return ok_or_fail("reply_known_fix", value, ok, "; ".join(parts), [_ref(g) for g in missing if not isinstance(g, TextNeedle)])


@criterion("reply_skips_failures", title="reply skips known failures", group="reply_engine",
           applies=lambda p: bool(p.expect.known_failures))
def reply_skips_failures(o: ProbeOutcome):
    """Share of the gold failures the reply lists as already tried (`known_failures`); 0 if the reply
    proposes any of them as a next step. Passes when all are listed and none is proposed."""
    if o.reply is None:
        return _no_reply(o, "reply_skips_failures")
    gold = list(o.probe.expect.known_failures)
    listed = {_ref(g): _first(o, o.reply.known_failures, g) for g in gold}
    proposed = [(g, t) for g in gold for t in o.reply.next_steps if covered_by(o, t, g)]
    missing = [g for g in gold if listed[_ref(g)] is None]
    if proposed:
        g, t = proposed[0]
        return ok_or_fail("reply_skips_failures", 0.0, False,
                          f"the reply proposes '{t}' as the next step, but it already failed ({_ref(g)})",
                          [_ref(x) for x, _ in proposed if not isinstance(x, TextNeedle)])
    share = (len(gold) - len(missing)) / len(gold)
    nxt = f"; next step: '{o.reply.next_steps[0]}'" if o.reply.next_steps else "; no step proposed"
    if missing:
        why = (f"listed {len(gold) - len(missing)} of {len(gold)} known failures as already tried; not listed: "
               f"{', '.join(_ref(g) for g in missing)}{nxt}")
    else:
        why = f"all {len(gold)} known failures listed as already tried and none proposed{nxt}"
    return ok_or_fail("reply_skips_failures", share, not missing, why, [_ref(g) for g in missing if not isinstance(g, TextNeedle)])

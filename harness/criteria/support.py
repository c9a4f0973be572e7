"""The eight support criteria of docs/criteria.md, each one registered function, in its order.

Five are quality criteria (group `core`); token budget, provenance and idempotency are pass/fail
gates (group `gate`: every case must pass, kept out of every total). Every verdict is computed from the bundle and the gold labels alone (see `bundle` for how a
bundle is read); nothing here knows which strategy produced the bundle.
"""

from __future__ import annotations

import math

from stores.tokens import count_lines_tokens

from harness.criteria import criterion, errored, ok_or_fail
from harness.criteria.metrics import prf
from harness.format.model import Probe
from harness.replay.probes import ProbeOutcome
from harness.criteria.bundle import (
    REPEAT_TOP, foreign_items, hidden_note, hit, in_context, lie, pair_ids, plural, present, quote, quote_all, repeat_flagged,
    full_view, marked_included, rows, shown_rank, unmarked_note, view, wrong_pairs,
)

HEALTH_TOLERANCE = 1e-6
"""How close base + impacts (clamped) must come to the reported score."""


def _coverage(o: ProbeOutcome, ids, what: str) -> tuple[list[str], str]:
    """Missing ids and the 'covered k of n <what>' sentence."""
    v = view(o)
    missing = [g for g in ids if not hit(v, g)]
    why = f"covered {len(ids) - len(missing)} of {len(ids)} {what}"
    if missing:
        why += f"; missing {quote_all(o, missing)}" + hidden_note(v, missing)
    return missing, why


@criterion("identity_persistence", title="identity persistence", applies=lambda p: bool(p.expect.identity))
def identity_persistence(o: ProbeOutcome):
    """Share of the probe's identity facts covered by included items; passes when all are and no
    item of another customer is anywhere in the bundle (included or only considered)."""
    ids = o.probe.expect.identity
    missing, why = _coverage(o, ids, "identity facts")
    foreign = foreign_items(o)
    if foreign:
        item, subj, where = foreign[0]
        why += f"; but the bundle holds {plural(len(foreign), 'item')} of another customer, e.g. {item} of {subj} ({where})"
    value = (len(ids) - len(missing)) / len(ids)
    return ok_or_fail("identity_persistence", value, not missing and not foreign, why,
                      missing + [f[0] for f in foreign])


@criterion("preference_surfacing", title="preference surfacing", applies=lambda p: bool(p.expect.preferences))
def preference_surfacing(o: ProbeOutcome):
    """Share of stated preferences covered; 0 if any preference they superseded is included."""
    ids = o.probe.expect.preferences
    missing, why = _coverage(o, ids, "stated preferences")
    v = view(o)
    stale = [g for g in o.probe.expect.superseded if present(v, g)]
    value = (len(ids) - len(missing)) / len(ids)
    if stale:
        value = 0.0
        why += f"; scored 0 because a superseded preference is included: {quote_all(o, stale)}" + unmarked_note(v, stale)
    return ok_or_fail("preference_surfacing", value, not missing and not stale, why, stale + missing)


@criterion("token_budget", title="token budget compliance", group="gate")
def token_budget(o: ProbeOutcome):
    """1 if the whole context text, headers included, fits the probe's budget (counted here,
    with the project tokenizer, not taken from the strategy's own count: line by line, each
    distinct line tokenized once per process, which is the whole text's count when lines add up)."""
    n = count_lines_tokens(o.bundle.text or "")
    ok = n <= o.probe.budget
    why = f"context is {n} tokens against a budget of {o.probe.budget}" + ("" if ok else f": {n - o.probe.budget} over")
    return ok_or_fail("token_budget", 1.0 if ok else 0.0, ok, why)


@criterion("provenance", title="provenance tracing", group="gate")
def provenance(o: ProbeOutcome):
    """Share of included items whose text is in the context, whose `source_ids` are non-empty,
    were replayed before the probe, and belong to the probe's customer (an item the bundle marks
    included but whose text is not in the context traces nothing the model sees). No case for a
    context with nothing marked included."""
    included = [c for _, c in marked_included(rows(o))]
    if not included:
        return None
    v = full_view(o)  # a gate: the whole bundle as returned, not the cut the model receives
    bad: list[tuple[str, str]] = []
    for c in included:
        if not in_context(c.text, v.context, v.lines):
            bad.append((c.item_id, lie(c.item_id)))
            continue
        if not c.source_ids:
            bad.append((c.item_id, f"{c.item_id} names no source"))
            continue
        unknown = [s for s in c.source_ids if not o.exists(s)]
        if unknown:
            bad.append((c.item_id, f"{c.item_id} cites {', '.join(unknown)}, which had not happened before this probe"))
            continue
        other = [s for s in c.source_ids if o.seen[s].subject != o.probe.subject]
        if other:
            bad.append((c.item_id, f"{c.item_id} cites {quote(o, other[0])}, which belongs to {o.seen[other[0]].subject}"))
    n = len(included)
    why = f"{n - len(bad)} of {plural(n, 'included item')} trace back to this customer's history"
    if bad:
        why += "; " + "; ".join(r for _, r in bad[:3]) + (f"; and {len(bad) - 3} more" if len(bad) > 3 else "")
    return ok_or_fail("provenance", (n - len(bad)) / n, not bad, why, [b[0] for b in bad])


def _raised(sig) -> bool:
    """Whether a replay signature stands for a probe the strategy did not answer."""
    return isinstance(sig, tuple) and len(sig) == 2 and sig[0] == "error"


@criterion("idempotency", title="idempotent compilation", group="gate", level="scenario")
def idempotency(scenario, outcomes, extra):
    """1 if replaying with every event delivered twice, and again after reset, gives bundles
    identical to the plain replay (same item ids, order, inclusion and text). A strategy that
    raises anywhere in the check (in `reset()`, or in `observe`/`context` during either replay)
    gets `error`, with the exception, not `fail`: it did not answer, so nothing was compared."""
    idem = extra["idempotency"]
    if not idem["plain"]:
        return None  # no probe, nothing compiled to compare
    failed = [pid for pid, sig in idem["plain"].items() if _raised(sig)]
    if extra.get("observe_error") or failed:
        why = extra.get("observe_error") or idem["plain"][failed[0]][1]
        return errored("idempotency", f"the plain replay itself failed ({why})")
    if idem.get("error"):
        return errored("idempotency", f"the check replays failed: {idem['error']}")
    for kind, where in (("reset", "the replay after reset"), ("twice", "the replay with every event delivered twice")):
        for pid, sig in idem[kind].items():
            if _raised(sig):
                return errored("idempotency", f"{where} failed at {pid}: {sig[1]}")
    diffs = []
    for pid, sig in idem["plain"].items():
        for kind in ("reset", "twice"):
            if idem[kind].get(pid) != sig:
                diffs.append((pid, "after reset" if kind == "reset" else "with every event delivered twice"))
    ok = not diffs
    why = (f"all {plural(len(idem['plain']), 'probe')} gave identical bundles on replay after reset and with every event delivered twice"
           if ok else "bundles differed at " + ", ".join(f"{p} ({k})" for p, k in diffs))
    return ok_or_fail("idempotency", 1.0 if ok else 0.0, ok, why, list(dict.fromkeys(p for p, _ in diffs)))


@criterion("session_ranking", title="session-aware ranking", applies=lambda p: bool(p.expect.above))
def session_ranking(o: ProbeOutcome):
    """Share of `above` pairs ordered correctly: the first included and ranked above the
    second, or the second not included while the first is."""
    wrong = wrong_pairs(view(o), o.probe.expect.above)
    n = len(o.probe.expect.above)
    why = f"{n - len(wrong)} of {plural(n, 'ordering')} right"
    if wrong:
        a, b, reason = wrong[0]
        why += f"; {quote(o, a)} should come before {quote(o, b)}, but {reason}"
        if len(wrong) > 1:
            why += f"; also wrong: {', '.join(f'{x} over {y}' for x, y, _ in wrong[1:])}"
    return ok_or_fail("session_ranking", (n - len(wrong)) / n, not wrong, why, pair_ids(wrong))


def _repeat_cases(p: Probe) -> tuple[int, int]:
    """(positives, negatives) of a probe: its repeat (one, if any) and each look-alike session."""
    return (1 if p.expect.repeat_of else 0), len(p.expect.not_repeat_of)


@criterion("repeat_issue", title="repeat-issue detection",
           applies=lambda p: bool(p.expect.repeat_of or p.expect.not_repeat_of), metric=prf(_repeat_cases))
def repeat_issue(o: ProbeOutcome):
    """Per case: a positive (`repeat_of`) is a true positive when all its evidence is in the
    context, else a false negative; a negative (each `not_repeat_of` session) is a true negative
    unless an item covering that session's resolution, marked included or with its text in the
    context, sits in the top 3 ranks (a false positive).
    The probe's value is 1 when every case is right; its `prf` metric reports precision, recall
    and F1 over the `tp`/`fp`/`fn` counts in `meta` (a probe without a verdict: its repeat missed,
    each look-alike wrongly flagged)."""
    e = o.probe.expect
    v = view(o)
    cases, notes, evidence = [], [], []
    if e.repeat_of:
        proof = list(e.evidence) or [f"{e.repeat_of}#resolution"]
        missing = [g for g in proof if not hit(v, g)]
        if missing:
            cases.append("fn")
            notes.append(f"missed the repeat of {e.repeat_of}: {quote_all(o, missing)} not in the context" + hidden_note(v, missing))
            evidence += missing
        else:
            cases.append("tp")
            notes.append(f"recalled the repeat of {e.repeat_of} ({', '.join(f'{g} at rank {v.rank[g]}' for g in proof)})")
    for s in e.not_repeat_of:
        rid = f"{s}#resolution"
        r = shown_rank(v, rid)
        if repeat_flagged(v, s) is not None:
            cases.append("fp")
            notes.append(f"treated {s} as the same issue: {quote(o, rid)} is at rank {r}")
            evidence.append(rid)
        else:
            cases.append("tn")
            notes.append(f"kept unrelated {s} out of the top {REPEAT_TOP}" + (f" (rank {r})" if r else ""))
    counts = {k: cases.count(k) for k in ("tp", "fn", "fp", "tn")}
    kinds = (["positive"] if e.repeat_of else []) + (["negative"] if e.not_repeat_of else [])
    ok = counts["fn"] == 0 and counts["fp"] == 0
    return ok_or_fail("repeat_issue", 1.0 if ok else 0.0, ok, "; ".join(notes), evidence,
                      kind="+".join(kinds), outcome=",".join(cases), **counts)


def _clamp(x: float) -> float:
    return min(100.0, max(0.0, x))


@criterion("health", title="explainable health scoring", requires="health", applies=lambda p: p.expect.health is not None)
def health(o: ProbeOutcome):
    """1 if the health band equals the gold band, the itemized factors (signal, impact, detail)
    plus the base reproduce the score after clamping to 0..100, and a second computation
    returns the identical report."""
    if o.health_error:
        return errored("health", o.health_error)
    r, again, gold = o.health, o.health_again, o.probe.expect.health
    if r is None:
        return errored("health", "no health report was returned")
    problems = []
    if r.band != gold:
        problems.append(f"band is {r.band} (score {r.score:g}), expected {gold}")
    incomplete = [f.signal or "(unnamed)" for f in r.factors
                  if not f.signal or not f.detail or not isinstance(f.impact, (int, float)) or not math.isfinite(f.impact)]
    if incomplete:
        problems.append(f"factors without a signal, a finite impact and a detail: {', '.join(incomplete)}")
    else:
        total = _clamp(r.base + sum(f.impact for f in r.factors))
        if abs(total - r.score) > HEALTH_TOLERANCE:
            problems.append(f"base {r.base:g} plus the itemized impacts gives {total:g}, not the reported {r.score:g}")
    if again != r:
        problems.append("a second computation for the same moment returned a different report"
                        + (f" (score {again.score:g}, band {again.band})" if again is not None else ""))
    if problems:
        return ok_or_fail("health", 0.0, False, "; ".join(problems), [f.signal for f in r.factors])
    parts = ", ".join(f"{f.signal} {f.impact:+g}" for f in r.factors) or "no factors"
    why = f"band {r.band} as expected: {r.base:g} with {parts} gives {r.score:g}; recomputed identically"
    return ok_or_fail("health", 1.0, True, why)

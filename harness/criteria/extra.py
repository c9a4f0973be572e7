"""The criteria beyond the eight, same rules, in the order of docs/criteria.md: isolation and
self-recall are pass/fail gates (group `gate`), the others quality criteria (group `extra`)."""

from __future__ import annotations

from harness.criteria import criterion, ok_or_fail
from harness.replay.probes import ProbeOutcome
from harness.criteria.bundle import (
    foreign_items, forgotten_items, hidden_note, hit, how, last_forgets, leaked_text, name, pair_ids, plural, present, quote,
    quote_all, rows, unmarked_note, view, wrong_pairs,
)


@criterion("isolation", title="customer isolation", group="gate")
def isolation(o: ProbeOutcome):
    """1 if no candidate (included or only considered) comes from another customer and, after a
    `forget`, nothing of the forgotten history appears, neither as an item nor as its words."""
    foreign = foreign_items(o)
    deleted = forgotten_items(o)
    off_limits = {s: o.event_index for s in o.scenario.subjects if s != o.probe.subject}
    off_limits.update({s: i for s, i in last_forgets(o).items() if s == o.probe.subject})
    flagged = {i for i, _, _ in foreign + deleted}
    words = [i for i in leaked_text(o, off_limits) if i not in flagged]
    problems = []
    if foreign:
        item, subj, where = foreign[0]
        problems.append(f"{plural(len(foreign), 'candidate')} of another customer, e.g. {item} of {subj} ({where})")
    if deleted:
        item, subj, where = deleted[0]
        problems.append(f"{plural(len(deleted), 'candidate')} from {subj}'s deleted history, e.g. {quote(o, item)} ({where})")
    if words:
        problems.append(f"the context repeats words of items it must not show: {quote_all(o, words)}")
    if problems:
        return ok_or_fail("isolation", 0.0, False, "; ".join(problems), [i for i, _, _ in foreign + deleted] + words)
    n = len(o.bundle.candidates)
    why = (f"all {plural(n, 'candidate')} belong to {o.probe.subject}" if n else "no candidates, so nothing of anyone else") + (
        " and nothing deleted came back" if last_forgets(o) else "")
    return ok_or_fail("isolation", 1.0, True, why)


@criterion("self_recall", title="no self-recall", group="gate", applies=lambda p: p.on is not None)
def self_recall(o: ProbeOutcome):
    """1 if the turn the probe is attached to (not yet said) is not among the candidates, in
    the plain replay and in each replay of the idempotency check.

    The probe runs before its `on` turn is observed, so on the plain replay no strategy can
    return it: that bundle alone cannot fail. The teeth are in the replays
    (`ProbeOutcome.replays`): the same instance replays the scenario after `reset()`, so a
    strategy whose reset keeps memory has seen the turn in the first pass and brings it back;
    and a fresh instance replays it with every event delivered twice. The case fails when the
    turn (as an item or a source) is among the candidates of the plain bundle or of any replay,
    naming which. A rescore has no replays and judges the plain bundle only.
    """
    on = o.probe.on
    for r, c in enumerate(rows(o), start=1):
        if c.item_id == on or on in c.source_ids:
            return ok_or_fail("self_recall", 0.0, False,
                              f"the turn being answered, {on}, came back as history ({how(o, c)}, rank {r}, item {c.item_id})", [on])
    for kind, ids in o.replays.items():
        if on in ids:
            where = {"reset": "in the replay after reset() (the same instance, which had observed it in the first pass: "
                              "reset() kept memory)",
                     "twice": "in the replay with every event delivered twice"}.get(kind, f"in the {kind} replay")
            return ok_or_fail("self_recall", 0.0, False,
                              f"the turn being answered, {on}, came back among the candidates {where}", [on], replay=kind)
    return ok_or_fail("self_recall", 1.0, True, f"the turn being answered, {on}, is not among the candidates")


@criterion("stale_suppression", title="stale-memory suppression", group="extra", applies=lambda p: bool(p.expect.exclude))
def stale_suppression(o: ProbeOutcome):
    """Share of `exclude` items kept out of the context; passes when none is in it."""
    v = view(o)
    ex = o.probe.expect.exclude
    bad = [g for g in ex if present(v, g)]
    why = f"kept {len(ex) - len(bad)} of {plural(len(ex), 'stale or unwanted item')} out"
    if bad:
        why += f"; included {quote_all(o, bad)}" + unmarked_note(v, bad)
    return ok_or_fail("stale_suppression", (len(ex) - len(bad)) / len(ex), not bad, why, [name(g) for g in bad])


@criterion("known_fix_first", title="known fix first", group="extra", applies=lambda p: bool(p.expect.fix_before))
def known_fix_first(o: ProbeOutcome):
    """Share of (fix, failure) pairs where the fix is included and ranked above the failure
    (or the failure is left out)."""
    pairs = o.probe.expect.fix_before
    wrong = wrong_pairs(view(o), pairs)
    why = f"{len(pairs) - len(wrong)} of {len(pairs)} known fix{'es' if len(pairs) != 1 else ''} ranked above the failed attempt"
    if wrong:
        fix, failure, reason = wrong[0]
        why += f"; the fix {quote(o, fix)} should come before {failure}, but {reason}"
    return ok_or_fail("known_fix_first", (len(pairs) - len(wrong)) / len(pairs), not wrong, why, pair_ids(wrong))


@criterion("recall", title="recall", group="extra", applies=lambda p: bool(p.expect.include))
def recall(o: ProbeOutcome):
    """Share of `include` gold items in the context (an id covered by an included item, or a
    text needle found in the context text)."""
    v = view(o)
    inc = o.probe.expect.include
    missing = [g for g in inc if not hit(v, g)]
    why = f"included {len(inc) - len(missing)} of {plural(len(inc), 'must-include item')}"
    if missing:
        why += f"; missing {quote_all(o, missing)}" + hidden_note(v, missing)
    return ok_or_fail("recall", (len(inc) - len(missing)) / len(inc), not missing, why, [name(g) for g in missing])


@criterion("session_recall", title="session recall", group="extra", applies=lambda p: bool(p.expect.evidence_sessions))
def session_recall(o: ProbeOutcome):
    """Share of the `evidence_sessions` gold (the sessions the answer lives in) with at least one item
    in the context: the session-level recall LongMemEval reports beside turn recall."""
    v = view(o)
    drawn = {o.seen[i].session for i in v.rank if i in o.seen}
    gold = o.probe.expect.evidence_sessions
    missing = [g for g in gold if g not in drawn]
    why = f"the context draws on {len(gold) - len(missing)} of {plural(len(gold), 'evidence session')}"
    if missing:
        why += f"; nothing from {', '.join(missing[:5])}" + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
    return ok_or_fail("session_recall", (len(gold) - len(missing)) / len(gold), not missing, why, missing)

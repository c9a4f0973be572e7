"""The expiry criteria (group `expiry`, seed 004): what the expiry stage kept out of the context
and why, and whether its classes agree with the turns' gold labels.

- `expiry` (probes with `expect.expired`): each such id must be out of the context (not marked
  included, its line not in the text: the reading for what must stay out,
  `harness.criteria.bundle.present`) AND its receipt row must carry a reason that names an
  expiry rule (`stores.expiry.is_expiry_reason`, e.g. "expired: sentiment older than 7 days,
  said 2026-03-04") AND that rule must be the one of the item's gold class (its turn `label:`;
  `stores.expiry.reason_class` reads which class's rule wrote a reason). Removal of a labelled
  item by the catch-all for unclassified items is a classification miss, shown as such; an item
  without a gold label (the gold names no class: what fits none is the catch-all's) passes with
  any expiry rule. An item that is out only because the budget
  or a rank cut-off left it out does not count: nothing decided it had expired. Strategies
  without the `expiry` capability (without the stage) are `unsupported`.
- `expiry_classes` (scenarios with labelled turns, strategies with the `expiry` capability): the
  share of labelled turns whose class, as the strategy gave it when it observed the turn
  (`ExpiryCapability.memory_class`, recorded by the replay), is one of the turn's labels. The
  case keeps every judged turn (labels, class, deciding rule) in its meta for the app's
  confusion table, and its `correct`/`judged` counts, so the headline is the accuracy over all
  labelled turns (`metrics.accuracy`). A case passes at the threshold in `config.toml`.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from stores.controls import ORACLE_EXPIRED

from harness.criteria import Score, criterion, ok_or_fail
from harness.criteria.bundle import plural, present, quote, shown_rank, view
from harness.criteria.metrics import accuracy
from harness.format.model import Scenario
from harness.replay.probes import ProbeOutcome

CONFIG = Path(__file__).with_name("config.toml")
"""Where the pass bars of rate criteria are set."""

CLASSES_KEY = "expiry_classes"
"""The classifier's criterion, as the app's queries look its cases up."""

THRESHOLD = float(tomllib.loads(CONFIG.read_text(encoding="utf-8"))["expiry_classes"]["threshold"])
"""`expiry_classes` passes a scenario at this accuracy (from `config.toml`)."""


def labelled_turns(scenario: Scenario) -> list[tuple[str, tuple[str, ...]]]:
    """(turn id, its gold labels) of the scenario's labelled turns, in event order."""
    return [(t.id, tuple(scenario.gold_of(t.id).label)) for t in scenario.turns if scenario.gold_of(t.id).label]


def _reasons(o: ProbeOutcome) -> dict[str, str]:
    """Item id -> its receipt reason (the first row of that id)."""
    c = o.bundle.candidates
    ids, reasons = getattr(c, "item_ids", None), getattr(c, "reasons", None)
    pairs = zip(ids, reasons) if ids is not None and reasons is not None else ((x.item_id, x.reason) for x in c)
    out: dict[str, str] = {}
    for i, r in pairs:
        out.setdefault(i, r or "")
    return out


CATCH_ALL = "unclassified"
"""The class whose rule is the catch-all: an item removed by it was not classified at all."""


def _wrong_rule(o: ProbeOutcome, item_id: str, reason: str) -> str | None:
    """Why the rule that removed `item_id` is not the one its gold class names, or None when it
    is (the oracle's receipt names the gold itself: it is the gold's rule by definition)."""
    if reason == ORACLE_EXPIRED:
        return None
    gold = tuple(o.scenario.gold_of(item_id).label or ())
    if not gold:  # the gold names no class (what fits none is the catch-all's): any expiry rule is its rule
        return None
    from stores.expiry import reason_class  # here: a run whose probes ask for no expiry never loads the stage

    got = reason_class(reason)
    if got == CATCH_ALL:
        return (f"{item_id} was removed by the catch-all for unclassified items ({reason!r}): a classification miss "
                f"(its gold class is {'/'.join(gold)})")
    if got not in gold:
        return f"{item_id} was removed by the {got or 'unknown'} rule ({reason!r}), but its gold class is {'/'.join(gold)}"
    return None


@criterion("expiry", title="memory expiry", group="expiry", requires="expiry",
           applies=lambda p: bool(p.expect.expired))
def expiry(o: ProbeOutcome) -> Score:
    """Share of the probe's `expired` ids that are out of the context and whose receipt row
    names the expiry rule of their gold class (for a labelled item, not the catch-all); passes when all are."""
    from stores.expiry import is_expiry_reason  # here: a run whose probes ask for no expiry never loads the stage

    v = view(o)
    reasons = _reasons(o)
    ids = list(o.probe.expect.expired)
    problems, ok = [], []
    for g in ids:
        reason = reasons.get(g)
        if present(v, g):
            problems.append(f"{quote(o, g)} is in the context (rank {shown_rank(v, g)})")
        elif reason is None:
            problems.append(f"{g} is not in the receipt at all: it left without a reason")
        elif not is_expiry_reason(reason):
            problems.append(f"{g} is out, but its receipt says {reason or 'nothing'!r}, not an expiry rule")
        elif (miss := _wrong_rule(o, g, reason)) is not None:
            problems.append(miss)
        else:
            ok.append(f"{g}: {reason}")
    value = len(ok) / len(ids)
    if problems:
        return ok_or_fail("expiry", value, False, f"{len(ok)} of {len(ids)} expired items kept out with their rule; "
                          + "; ".join(problems[:3]) + (f"; and {len(problems) - 3} more" if len(problems) > 3 else ""),
                          [g for g in ids if not any(x.startswith(f"{g}: ") for x in ok)])
    return ok_or_fail("expiry", 1.0, True, f"all {plural(len(ids), 'expired item')} kept out, each with its rule: "
                      + "; ".join(ok[:3]) + (f"; and {len(ok) - 3} more" if len(ok) > 3 else ""))


@criterion(CLASSES_KEY, title="memory classes", group="expiry", level="scenario", requires="expiry",
           applies=lambda s: bool(labelled_turns(s)), metric=accuracy(lambda s: len(labelled_turns(s))))
def expiry_classes(scenario: Scenario, outcomes: list[ProbeOutcome], extra: dict[str, Any]) -> Score:
    """Share of the scenario's labelled turns whose assigned class is one of their labels;
    passes at the configured threshold. The meta lists every judged turn."""
    classes = extra.get("memory_classes") or {}
    turns = []
    for tid, labels in labelled_turns(scenario):
        c = classes.get(tid)
        turns.append({"id": tid, "labels": list(labels), "assigned": getattr(c, "cls", "") or "",
                      "rule": getattr(c, "rule", "") or ("no class recorded" if c is None else "")})
    if turns and all(not t["assigned"] for t in turns):
        return Score(CLASSES_KEY, None, False, "unsupported",
                     "the strategy has the expiry capability but gives its items no memory class (a control reading "
                     "its receipts from the gold); counted as 0",
                     meta={"correct": 0, "judged": len(turns), "turns": turns})
    right = [t for t in turns if t["assigned"] in t["labels"]]
    wrong = [t for t in turns if t["assigned"] not in t["labels"]]
    value = len(right) / len(turns)
    passed = value >= THRESHOLD
    head = f"{len(right)} of {plural(len(turns), 'labelled turn')} classed as labelled ({value:.0%}, bar {THRESHOLD:.0%})"
    misses = "; ".join(f"{t['id']} labelled {'/'.join(t['labels'])} but classed {t['assigned'] or 'nothing'} "
                       f"({t['rule']})" for t in wrong[:3]) + (f"; and {len(wrong) - 3} more" if len(wrong) > 3 else "")
    return ok_or_fail(CLASSES_KEY, value, passed, head + (f"; {misses}" if misses else ""),
                      [t["id"] for t in wrong], correct=len(right), judged=len(turns), turns=turns)

"""The support criteria of the criteria doc, each one registered function."""

from __future__ import annotations

from stores.tokens import count_tokens

from . import criterion, ok_or_fail
from ..replay import ProbeOutcome
from ..scenario import TextNeedle


@criterion("token_budget", title="token budget compliance")
def token_budget(o: ProbeOutcome):
    """1 if the whole context text, headers included, fits the probe's budget."""
    n = count_tokens(o.bundle.text)
    ok = n <= o.probe.budget
    return ok_or_fail("token_budget", 1.0 if ok else 0.0, ok,
                      f"context is {n} tokens against a budget of {o.probe.budget}" + ("" if ok else f": {n - o.probe.budget} over"))


@criterion("recall", title="recall", group="extra", applies=lambda p: bool(p.expect.include))
def recall(o: ProbeOutcome):
    """Share of `include` gold items present in the context."""
    included = {sid for c in o.bundle.candidates if c.included for sid in c.source_ids}
    text = o.bundle.text.lower()
    missing = []
    for g in o.probe.expect.include:
        hit = g.text.lower() in text if isinstance(g, TextNeedle) else g in included
        if not hit:
            missing.append(g.text if isinstance(g, TextNeedle) else g)
    n = len(o.probe.expect.include)
    got = n - len(missing)
    why = f"included {got} of {n} must-include items" + (f"; missing {', '.join(missing)}" if missing else "")
    return ok_or_fail("recall", got / n, not missing, why, missing)


@criterion("idempotency", title="idempotent compilation", level="scenario")
def idempotency(scenario, outcomes, extra):
    """Replaying with every event delivered twice, and again after reset, gives identical bundles."""
    idem = extra["idempotency"]
    if idem.get("error"):
        return ok_or_fail("idempotency", 0.0, False, f"the check replay failed: {idem['error']}")
    diffs = []
    for pid, sig in idem["plain"].items():
        for kind in ("reset", "twice"):
            if idem[kind].get(pid) != sig:
                diffs.append(f"{pid} ({'after reset' if kind == 'reset' else 'events delivered twice'})")
    ok = not diffs
    why = (f"all {len(idem['plain'])} probes gave identical bundles on replay after reset and with every event delivered twice"
           if ok else f"bundles differed at {', '.join(diffs)}")
    return ok_or_fail("idempotency", 1.0 if ok else 0.0, ok, why, [d.split(' ')[0] for d in diffs])

"""Small runs for the app tests: a handful of scenarios through the cheap strategies.

Two runs are written: `tight` (the same scenarios with small budgets, so some strategies
regress) and then `main` (the newest, which the app opens by default).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from helpers import forget, outage_story, probe, resolve, scenario, turn

from harness.run.runner import execute
from stores.decisions.registry import parse_policies
from stores.registry import parse_specs

DAY = 60 * 24


def billing_repeat():
    return scenario([
        turn("b-1", "Hi, I'm Priya Shah, finance lead at Acme; we are on the Pro annual plan.", 0, session="jan"),
        turn("b-2", "Please email me about billing, I never pick up calls.", 2, session="jan"),
        turn("b-3", "Our January invoice shows the platform fee charged twice.", 3, session="jan"),
        turn("b-4", "Refunded the duplicate platform fee; it will show in 5-7 days.", 10, session="jan", role="agent", kind="action"),
        resolve("jan", "Duplicate January platform fee refunded to the card on file.", 20),
        turn("b-5", "Update: from now on please call me instead of emailing, my inbox is a mess.", 30 * DAY, session="feb"),
        turn("b-6", "We were charged the platform fee twice AGAIN this month. This is urgent, finance closes Friday.", 30 * DAY + 1, session="feb"),
        probe("p-bill", "customer reports the platform fee charged twice again", 30 * DAY + 2, session="feb",
              include=("b-6",), identity=("b-1",), preferences=("b-5",), superseded=("b-2",), exclude=("b-2",),
              repeat_of="jan", health="watch", handoff=True),
        turn("b-7", "Are you still there?", 30 * DAY + 30, session="feb"),
        probe("p-bill-2", "customer is waiting for an answer", 30 * DAY + 31, session="feb", budget=120,
              include=("b-6",), above=(("b-6", "b-3"),), health="at_risk"),
    ], id="billing-repeat", subjects=("c1",), tags=("billing", "repeat-issue"))


def long_history():
    events = []
    for i in range(36):
        sess = f"w{i // 6}"
        role = "customer" if i % 2 == 0 else "agent"
        events.append(turn(f"h-{i}", f"Week {i // 6} message {i}: the export job to S3 is slow again, batch {i}.", i * DAY // 2,
                           session=sess, role=role))
        if i % 6 == 5:
            events.append(resolve(sess, f"Export slowness in week {i // 6} resolved by resizing the worker.", i * DAY // 2 + 5))
    events.append(turn("h-live", "The S3 export has been stuck for 3 hours now.", 20 * DAY, session="live"))
    events.append(probe("p-long", "export stuck", 20 * DAY + 1, session="live", budget=300,
                        include=("h-live", "w5#resolution"), above=(("h-live", "h-0"),), health="watch"))
    return scenario(events, id="long-history", subjects=("c1",), tags=("exports",))


def two_customers():
    return scenario([
        turn("a-1", "I'm Lee from Brightline. Our SSO login loops back to the sign-in page.", 0, subject="c1", session="a"),
        turn("z-1", "Hi, Zoe here: my SSO login loops too, is it the same bug?", 5, subject="c2", session="z"),
        turn("a-2", "Cleared the stale SAML session cookie for Brightline.", 10, subject="c1", session="a", role="agent", kind="action"),
        resolve("a", "SSO loop fixed by clearing a stale SAML session cookie.", 15, subject="c1"),
        forget("c2", 3 * DAY),
        turn("a-3", "The login loop is back after the weekend.", 4 * DAY, subject="c1", session="b"),
        probe("p-sso", "SSO login loop again", 4 * DAY + 1, subject="c1", session="b",
              include=("a-3", "a-2"), exclude=("z-1",), repeat_of="a"),
    ], id="two-customers", subjects=("c1", "c2"), tags=("sso", "repeat-issue"))


DECISION_SCENARIOS = ("decision-yes-three-meanings", "decision-locker-down-mid-chat", "decision-routing")
"""Canonical decision scenarios the fixture runs replay through the decision policies."""


def decision_scenarios():
    from harness.format.loader import load_scenario

    canonical = Path(__file__).resolve().parents[2] / "datasets" / "canonical"
    # in the fixture runs' one suite, like the other fixture scenarios (the run pickers name the suites)
    return [replace(load_scenario(canonical / f"{name}.yaml"), suite="test") for name in DECISION_SCENARIOS]


def fixture_scenarios():
    return [outage_story(), billing_repeat(), long_history(), two_customers(), *decision_scenarios()]


def strategy_names() -> str:
    names = ["history_stuffing", "oracle", "empty"]
    if (Path(__file__).resolve().parents[2] / "stores" / "structured" / "strategy.py").exists():
        names.append("structured")
    if (Path(__file__).resolve().parents[2] / "stores" / "session" / "session_aware.py").exists():
        names.append("session_aware")
    return ",".join(names)


def tighten(s, budget: int = 60):
    """The same scenario with every probe's budget cut, so packing strategies drop more."""
    from harness.format.model import Probe

    return replace(s, events=tuple(replace(e, budget=min(e.budget, budget)) if isinstance(e, Probe) else e for e in s.events))


def build_runs(root: str | Path) -> dict[str, Path]:
    """Write the `tight` run, then the `main` run (newest), under `root`."""
    specs = parse_specs(strategy_names())
    policies = parse_policies("session_state,per_message")
    scs = fixture_scenarios()
    tight = execute([tighten(s) for s in scs], specs, root, run_id="20260101-000000-tight", command="fixture tight",
                    policies=policies)
    main = execute(scs, specs, root, run_id="20260102-000000-main", command="fixture main", policies=policies)
    return {"tight": tight.path, "main": main.path}


BASE, VARIANT, OTHER = "20260201-000000-base", "20260202-000000-variant", "20260203-000000-other"
"""Runs of `build_pair_runs`: the fixture scenarios, the same with a session_aware variant, another suite."""


def build_pair_runs(root: str | Path) -> dict[str, Path]:
    """Three runs for comparing: `base` (session_aware, history_stuffing), `variant` (the same scenarios,
    session_aware with another repeat threshold, history_stuffing) and `other` (a canonical scenario: no
    case in common with the other two)."""
    from harness.format.loader import load_suite

    scs = fixture_scenarios()
    base = execute(scs, parse_specs("session_aware,history_stuffing"), root, run_id=BASE, command="fixture base")
    variant = execute(scs, parse_specs("session_aware:repeat_threshold=0.15,history_stuffing"), root, run_id=VARIANT,
                      name="threshold 0.15", command="fixture variant")
    canonical = Path(__file__).resolve().parents[2] / "datasets" / "canonical" / "health-bands.yaml"
    other = execute(load_suite([str(canonical)]), parse_specs("session_aware"), root, run_id=OTHER, command="fixture other")
    return {"base": base.path, "variant": variant.path, "other": other.path}

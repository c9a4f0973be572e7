"""Plans: who the customers are and which stories their sessions tell, before any text is written.

A plan is drawn from a `random.Random` only, so the same seed always gives the same plan.
Profiles set the sizes: `small` (a handful of sessions), `realistic`, and `long-history`
(dozens of sessions, so budgets bite and ranking matters).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from harness.generate import catalog as C


@dataclass(frozen=True)
class Profile:
    """Sizes and odds of one generation profile."""

    originals: tuple[int, int]
    """How many distinct issues (of distinct areas) a customer reports, min and max."""
    howtos: tuple[int, int]
    """Quick how-to sessions between the stories."""
    repeat_p: float
    """Chance that an issue comes back later (told in other words)."""
    lookalike_p: float
    """Chance that an issue is followed by a look-alike (same words, other problem)."""
    outage_p: float
    """Chance of a platform outage during the customer's history."""
    split_p: float
    """Chance that an issue ticket stays open across the outage (outage during an open ticket)."""
    abandoned: tuple[int, int]
    """Tickets the customer never comes back to (they stay open: health)."""
    pref_change_p: float
    """Chance, per stated preference, that it changes later."""
    howto_probe_p: float
    """Chance that a how-to session is probed."""
    quiet_months_p: float
    """Chance that the gap before a session is months rather than days."""


PRIMARY_ISSUES = ("conn-timeout", "bill-double", "mobile-crash", "sso-cert", "export-truncated", "webhook-signature")
"""One issue per area that can be an original; its look-alike is the area's other issue."""

PROFILES: dict[str, Profile] = {
    "small": Profile((1, 2), (0, 1), 0.75, 0.55, 0.5, 0.5, (0, 1), 0.4, 0.3, 0.15),
    "realistic": Profile((2, 3), (1, 4), 0.75, 0.6, 0.6, 0.5, (0, 2), 0.45, 0.3, 0.2),
    "long-history": Profile((3, 5), (15, 30), 0.8, 0.6, 0.7, 0.5, (1, 3), 0.5, 0.15, 0.1),
}


@dataclass
class SessionPlan:
    """One session to write (or one part of a session interrupted by another)."""

    kind: str
    """intro | issue | issue_a | issue_b | repeat | lookalike | outage | howto | pref_change | abandoned | forget_request | comeback"""
    issue: str = ""
    """Issue key (catalog) for issue kinds; area for an outage."""
    target: int = -1
    """Index (in the customer's story list) of the session this one refers to (repeat, look-alike, issue_b)."""
    opts: dict = field(default_factory=dict)
    """Drawn choices: variants, summary or not, probes, timing."""


FACT_SESSIONS = frozenset({"intro", "howto", "issue", "issue_a", "repeat", "lookalike", "abandoned", "pref_change"})
"""Session kinds in which a customer may state a profile fact."""
RESTATE_P, CORRECT_P = 0.2, 0.15
"""Chances that a fact is later restated with more detail, or corrected."""
OPENS_P = 0.3
"""Chance that a restatement or correction is the first thing said in its session."""
ACCOUNT_FIRST_P = 0.5
"""Chance that the customer's introduction is their very first turn."""


def area_of(sp: SessionPlan) -> str:
    """The product area a session is about ('' for sessions about none)."""
    if sp.kind == "outage":
        return sp.issue
    if sp.kind in ("issue", "issue_a", "issue_b", "repeat", "lookalike", "abandoned") and sp.issue in C.ISSUES:
        return C.ISSUES[sp.issue].area
    return ""


def plan_facts(rng: random.Random, sessions: list["SessionPlan"]) -> None:
    """Decide where each profile fact is said (`opts["facts"]`: (topic, mode, opens) per session).

    A fact matters in the sessions of its areas; it is stated in some session before the last of
    them (the intro, the first of its area, or any other), so that later sessions of its area
    need it and the session it is told in does not. It may be restated or corrected in a later
    session before the last that needs it. Only the introduction (`account`) is ever the very
    first thing a customer says, and only half the time.
    """
    for topic, fact in C.FACTS.items():
        needs = [i for i, sp in enumerate(sessions) if area_of(sp) in fact.areas]
        if not needs:
            continue
        last = needs[-1]
        where = [i for i in range(last) if sessions[i].kind in FACT_SESSIONS]
        if not where:
            continue
        if topic == "account" and rng.random() < ACCOUNT_FIRST_P:
            say, opens = 0, True
        else:
            say, opens = _pick(rng, where), False
        sessions[say].opts.setdefault("facts", []).append((topic, "says", opens))
        later = [i for i in where if i > say]
        r = rng.random()
        mode = "restates" if r < RESTATE_P else "corrects" if r < RESTATE_P + CORRECT_P else ""
        if mode and later:
            sessions[_pick(rng, later)].opts.setdefault("facts", []).append((topic, mode, rng.random() < OPENS_P))


@dataclass
class CustomerPlan:
    """A customer: profile facts, preferences and the ordered sessions of their history."""

    subject: str
    name: str
    slots: dict[str, str]
    pref_topics: list[str]
    sessions: list[SessionPlan]
    slow_responder: bool


def _pick(rng: random.Random, seq):
    return seq[rng.randrange(len(seq))]


def plan_customer(rng: random.Random, index: int, profile: Profile, *, first_issue: str | None = None,
                  forgets: bool = False) -> CustomerPlan:
    """Draw one customer's facts and stories, and interleave the stories into sessions."""
    first, last = _pick(rng, C.FIRST_NAMES), _pick(rng, C.LAST_NAMES)
    slots = {
        "name": f"{first} {last}", "first": first, "company": _pick(rng, C.COMPANIES), "title": _pick(rng, C.JOB_TITLES),
        "account": f"WS-{rng.randrange(10000, 99999)}", "wh": _pick(rng, C.WAREHOUSES), "idp": _pick(rng, C.IDPS),
        "os": _pick(rng, C.PHONES), "card": _pick(rng, C.CARDS), "month": _pick(rng, C.MONTHS),
    }
    # the other value a corrected fact moves to
    slots.update(account2=f"WS-{rng.randrange(10000, 99999)}", wh2=_pick(rng, [w for w in C.WAREHOUSES if w != slots["wh"]]),
                 idp2=_pick(rng, [i for i in C.IDPS if i != slots["idp"]]), os2=_pick(rng, [o for o in C.PHONES if o != slots["os"]]))
    topics = sorted(C.PREFERENCES)
    n_topics = 0 if rng.random() < 0.12 else 1 if rng.random() < 0.6 else 2
    pref_topics = sorted(rng.sample(topics, n_topics))

    areas = list(C.AREAS)
    rng.shuffle(areas)
    n_orig = rng.randint(*profile.originals)
    primaries = list(PRIMARY_ISSUES)
    by_area = {C.ISSUES[k].area: k for k in primaries}
    originals = [by_area[a] for a in areas[:n_orig]]
    if first_issue is not None:
        originals = [first_issue] + [k for k in originals if C.ISSUES[k].area != C.ISSUES[first_issue].area][: n_orig - 1]
    used_areas = {C.ISSUES[k].area for k in originals}

    stories: list[list[SessionPlan]] = []
    outage_area = None
    want_outage = rng.random() < profile.outage_p
    lookalikes = [rng.random() < profile.lookalike_p for _ in originals]
    if not want_outage and not any(lookalikes):  # every customer tests session ranking somehow
        if rng.random() < 0.5:
            want_outage = True
        else:
            lookalikes[0] = True
    if want_outage:
        outage_area = C.ISSUES[originals[0]].area if rng.random() < 0.7 else _pick(rng, C.AREAS)
    split_done = False
    for i, key in enumerate(originals):
        story: list[SessionPlan] = []
        if want_outage and not split_done and rng.random() < profile.split_p:
            story += [SessionPlan("issue_a", key), SessionPlan("outage", outage_area), SessionPlan("issue_b", key)]
            split_done = True
        else:
            story.append(SessionPlan("issue", key))
        if lookalikes[i]:
            story.append(SessionPlan("lookalike", C.ISSUES[key].lookalike))
        if rng.random() < profile.repeat_p:
            story.append(SessionPlan("repeat", key))
        stories.append(story)
    if want_outage and not split_done:
        stories.append([SessionPlan("outage", outage_area)])
    others = [k for k in primaries if C.ISSUES[k].area not in used_areas]
    for _ in range(rng.randint(*profile.abandoned)):
        if others:
            stories.append([SessionPlan("abandoned", others.pop(rng.randrange(len(others))))])
    for topic in pref_topics:
        if rng.random() < profile.pref_change_p:
            stories.append([SessionPlan("pref_change", topic)])
    for _ in range(rng.randint(*profile.howtos)):
        stories.append([SessionPlan("howto")])

    # a random interleaving that keeps each story's order; the first issue story goes first
    # in an isolation group so that the customers share it
    sessions = [SessionPlan("intro")]
    if first_issue is not None:
        sessions += [stories[0].pop(0)]
    queues = [s for s in stories if s]
    while queues:
        q = queues[rng.randrange(len(queues))]
        sessions.append(q.pop(0))
        queues = [s for s in queues if s]
    if forgets:
        sessions += [SessionPlan("forget_request"), SessionPlan("comeback")]
    plan_facts(rng, sessions)
    name = slots["name"]
    return CustomerPlan(f"cust_{index:04d}", name, slots, pref_topics, sessions, rng.random() < 0.2)

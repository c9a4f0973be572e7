"""Generated scenario corpora: many customers, written as valid scenario YAML, gold from the plan.

`generate_suite(customers, seed, profile)` returns `{file name: YAML text}`; `write_suite`
writes it into a folder. One file per customer, except isolation cases: a few customers in one
file (sharing an issue, one of them asking to be forgotten). The same seed always gives the
same bytes: every choice comes from `random.Random` seeded by (seed, profile, file), keys are
sorted, and no wall time is read.
"""

from __future__ import annotations

import random
from collections import Counter
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import yaml

from harness.generate.catalog import SPLITS
from harness.generate.compose import ScenarioWriter, State
from harness.generate.plan import PROFILES, CustomerPlan, plan_customer

__all__ = ["PROFILES", "generate_suite", "write_suite", "label_counts", "shortcut_shares", "shares_sentence", "REPORTED"]

REPORTED = ("identity", "preferences", "superseded", "include", "exclude", "above",
            "repeat_of", "not_repeat_of", "fix_before", "health", "expired", "on", "forget")
"""What `supportbench generate` reports counts of (the gold keys it writes, `on`, `forget`), in order."""

EPOCH = datetime(2025, 1, 6, 9, 0, tzinfo=timezone.utc)
ISOLATION_P = 0.12
"""Share of files that hold several customers (isolation and deletion cases)."""


def _groups(customers: int, rng: random.Random) -> list[list[int]]:
    groups, k = [], 1
    while k <= customers:
        size = 1
        if rng.random() < ISOLATION_P and k + 1 <= customers:
            size = min(rng.choice((2, 3)), customers - k + 1)
        groups.append(list(range(k, k + size)))
        k += size
    return groups


def _scenario(seed: int, profile_name: str, group: list[int], stats: Counter | None = None,
              split: str = "test") -> dict[str, Any]:
    profile = PROFILES[profile_name]
    rng = random.Random(f"supportbench:{seed}:{profile_name}:{group[0]}")
    shared = rng.choice(("conn-timeout", "bill-double", "mobile-crash", "sso-cert", "export-truncated", "webhook-signature")) if len(group) > 1 else None
    forgetter = group[-1] if len(group) > 1 and rng.random() < 0.7 else None
    plans: list[CustomerPlan] = [
        plan_customer(rng, k, profile, first_issue=shared, forgets=(k == forgetter)) for k in group
    ]
    start = EPOCH + timedelta(days=rng.randrange(0, 90))
    w = ScenarioWriter(rng, profile, start, split)
    queues = []
    for p in plans:
        st = State(p)
        w.states[p.subject] = st
        queues.append((st, list(p.sessions)))
    for st, q in queues:  # everyone introduces themselves first
        w.write_session(st, q.pop(0), q)
    live = [x for x in queues if x[1]]
    while live:
        st, q = live[rng.randrange(len(live))]
        w.write_session(st, q.pop(0), q)
        live = [x for x in queues if x[1]]
    if stats is not None:
        stats["health_labelled"] += w.health_labelled
        stats["health_skipped"] += w.health_skipped
        stats["repeat_max_overlap"] += w.repeats_max_overlap[0]
        stats["repeat_probes"] += w.repeats_max_overlap[1]
    return _document(seed, profile_name, plans, w, split)


def _when(prev: datetime | None, at: datetime, absolute: bool) -> str:
    if prev is None or absolute:
        return at.strftime("%Y-%m-%dT%H:%M:%SZ")
    secs = int((at - prev).total_seconds())
    out = "+"
    for unit, size in (("w", 604800), ("d", 86400), ("h", 3600), ("m", 60), ("s", 1)):
        if secs >= size:
            out += f"{secs // size}{unit}"
            secs %= size
    return out if out != "+" else "+0s"


def _document(seed: int, profile_name: str, plans: list[CustomerPlan], w: ScenarioWriter, split: str = "test") -> dict[str, Any]:
    events, prev_at, prev_subject, prev_session = [], None, None, None
    for ev in w.events:
        out = {k: v for k, v in ev.items() if not k.startswith("_")}
        out["at"] = _when(prev_at, ev["_at"], ev["_block"])
        if ev["_subject"] != prev_subject:
            out["subject"] = ev["_subject"]
        if ev["_session"] != prev_session and "forget" not in out and "resolve" not in out:
            out["session"] = ev["_session"]
        prev_at, prev_subject = ev["_at"], ev["_subject"]
        if "forget" not in out and "resolve" not in out:
            prev_session = ev["_session"]
        events.append(out)
    kinds = Counter(sp.kind for p in plans for sp in p.sessions)
    tags = ["generated", profile_name, "held-back" if split == "test" else "development"]
    for kind, tag in (("repeat", "repeat-issue"), ("lookalike", "look-alike"), ("outage", "outage"),
                      ("issue_a", "outage-during-open-ticket"), ("pref_change", "preference-change"),
                      ("forget_request", "forget"), ("abandoned", "open-tickets")):
        if kinds[kind]:
            tags.append(tag)
    if len(plans) > 1:
        tags.append("isolation")
    ids = "-".join(p.subject.removeprefix("cust_") for p in plans)
    who = ", ".join(f"{p.name} ({p.slots['title']} at {p.slots['company']})" for p in plans)
    story = "; ".join(f"{p.subject}: " + ", ".join(sp.kind + (f" {sp.issue}" if sp.issue else "") for sp in p.sessions) for p in plans)
    return {
        "id": f"gen-{profile_name}{'-dev' if split == 'dev' else ''}-s{seed}-c{ids}",
        "version": 1,
        "title": f"Generated history of {who}",
        "description": f"Generated by `supportbench generate --seed {seed} --profile {profile_name} --split {split}`. "
                       f"Sessions in plan order: {story}.",
        "tags": sorted(set(tags)),
        "start": events[0]["at"],
        "subjects": {p.subject: {"name": p.name} for p in plans},
        "events": events,
    }


def dump(doc: dict[str, Any]) -> str:
    """YAML text of a scenario document (sorted keys, no line wrapping: stable bytes)."""
    # libyaml's emitter writes the same bytes as the pure-Python one here, ten times faster
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    return "# generated by supportbench generate; edit the generator, not this file\n" + yaml.dump(
        doc, Dumper=dumper, sort_keys=True, allow_unicode=True, width=100000, default_flow_style=False
    )


def generate_suite(customers: int, seed: int = 0, profile: str = "realistic", stats: Counter | None = None,
                   split: str = "test") -> dict[str, str]:
    """`{file name: YAML text}` for `customers` generated customers. `stats`, when given, is
    incremented with `health_labelled` (probes given a health band) and `health_skipped` (probes
    that could have carried one but were left without: near a band edge, or readings disagree),
    `repeat_probes` and `repeat_max_overlap` (those whose repeated session is the resolved session
    sharing the most keywords with the probe's turn). `split` picks the catalog half the texts come
    from (`harness.generate.catalog.half`): `test`, the held-back half (the default: suites a
    leaderboard is read on), or `dev`, the development half (tune lexicons and rules on it)."""
    if profile not in PROFILES:
        raise ValueError(f"unknown profile {profile!r} (known: {', '.join(PROFILES)})")
    if customers < 1:
        raise ValueError("customers must be at least 1")
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r} (known: {', '.join(SPLITS)})")
    rng = random.Random(f"supportbench-groups:{seed}:{profile}")
    files = {}
    for group in _groups(customers, rng):
        doc = _scenario(seed, profile, group, stats, split)
        files[f"{doc['id']}.yaml"] = dump(doc)
    return files


def write_suite(out: str | Path, customers: int, seed: int = 0, profile: str = "realistic", split: str = "test") -> list[Path]:
    """Write the suite into `out` (created if needed); returns the written paths, sorted."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, text in sorted(generate_suite(customers, seed, profile, split=split).items()):
        path = out / name
        path.write_text(text, encoding="utf-8")
        paths.append(path)
    return paths


def label_counts(texts: dict[str, str] | list[str]) -> Counter:
    """How many probes carry each gold key (and scenarios, probes, subjects), from the YAML alone."""
    c: Counter = Counter()
    for text in (texts.values() if isinstance(texts, dict) else texts):
        doc = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
        c["scenarios"] += 1
        c["subjects"] += len(doc["subjects"])
        for ev in doc["events"]:
            if "probe" in ev:
                c["probes"] += 1
                if ev.get("on"):
                    c["on"] += 1
                for k, v in ev.get("expect", {}).items():
                    c[k] += 1
                    if k == "health":
                        c[f"health={v}"] += 1
            elif "forget" in ev:
                c["forget"] += 1
    return c


def shortcut_shares(texts: dict[str, str] | list[str]) -> dict[str, int]:
    """What a trivial rule could exploit, counted from the YAML alone: ordering pairs (`above`
    and `fix_before`) and those whose top item is a customer turn (`pairs`, `pairs_customer_top`);
    identity gold (distinct ids) said as its session's first customer turn, as its 2nd or 3rd, or
    later (`facts`, `facts_first`, `facts_2nd_3rd`, `facts_later`); the same of preference gold
    (`prefs`, `prefs_first`, ...)."""
    c: Counter = Counter()
    for text in (texts.values() if isinstance(texts, dict) else texts):
        doc = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
        role: dict[str, str] = {}
        place: dict[str, int] = {}
        spoken: Counter = Counter()
        turns: Counter = Counter()
        session, gold, prefs = None, set(), set()
        for ev in doc["events"]:
            session = ev.get("session", session)
            if "turn" in ev:
                turns[session] += 1  # a turn without an id is `<session>#<its place among the session's turns>`
                tid, who = ev.get("id") or f"{session}#{turns[session]}", ev.get("role", "customer")
                role[tid] = who
                if who == "customer":
                    spoken[session] += 1
                    place[tid] = spoken[session]
            elif "probe" in ev:
                exp = ev.get("expect", {})
                for first, _ in (*exp.get("above", ()), *exp.get("fix_before", ())):
                    c["pairs"] += 1
                    c["pairs_customer_top"] += role.get(first, "resolution") == "customer"
                gold.update(exp.get("identity", ()))
                prefs.update(exp.get("preferences", ()))
        for key, ids in (("facts", gold), ("prefs", prefs)):
            for g in ids:
                c[key] += 1
                k = place.get(g, 0)
                c[f"{key}_first" if k == 1 else f"{key}_2nd_3rd" if k in (2, 3) else f"{key}_later"] += 1
    return dict(c)


def shares_sentence(sh: dict[str, int]) -> str:
    """`shortcut_shares` in words: `ordering pairs with a customer turn on top 9 of 18 (50%); ...`."""
    def pct(k: str, n: str) -> str:
        return f"{sh.get(k, 0)} of {sh[n]} ({sh.get(k, 0) / sh[n]:.0%})" if sh.get(n) else "none"

    return ("ordering pairs with a customer turn on top " + pct("pairs_customer_top", "pairs")
            + "; identity facts said as their session's first customer turn " + pct("facts_first", "facts")
            + ", as its 2nd or 3rd " + pct("facts_2nd_3rd", "facts") + ", later " + pct("facts_later", "facts")
            + "; preferences said as their session's first customer turn " + pct("prefs_first", "prefs")
            + ", as its 2nd or 3rd " + pct("prefs_2nd_3rd", "prefs") + ", later " + pct("prefs_later", "prefs"))

"""The role a criterion plays in a comparison: the group it registers in.

A criterion's `group` is declared at registration and must be one of `GROUPS`. The group, not
the criterion's key, decides where its numbers go: which total its mean feeds (or none), how
its row is labelled in reports, and in which order groups are shown, whether it is a quality
criterion (compared on the shared headline total) or a pass/fail gate. Consumers read these
fields; none of them lists criterion keys. A new role (a separate family with its own total) is
one more `Group` here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Axis = Literal["strategy", "policy"]
"""What a group's criteria judge: memory strategies, or decision policies (`stores.decisions`)."""


@dataclass(frozen=True)
class Group:
    """A role criteria register in."""

    key: str
    """What a criterion's `group=` names, and the `grp` column of the scores table."""
    title: str
    """How readers call the group (`core`, `extras`)."""
    total: str | None
    """The totals column the group's criterion means feed (equal weights), or None to keep the
    group out of every total."""
    total_title: str = ""
    """The row label of that total in reports (e.g. `total (core, equal weight)`)."""
    marker: str = ""
    """Appended to a criterion's row label in reports (e.g. ` ·extra`); empty for none."""
    axis: Axis = "strategy"
    """Whose cases its criteria score: the score rows of a `policy` group are a decision policy's
    (the `strategy` column holds the policy's label), shown on the policy leaderboard, never in a
    strategy's totals."""
    headline: bool = True
    """Its criteria may enter the shared headline total. False for a family that judges
    something besides the memory (the reply engine's reading of a context): reported with its own
    total, apart from the memory headline."""
    gate: bool = False
    """Its criteria are pass/fail gates: every case must pass, shown as pass or fail with the
    failing cases, never averaged into a total (they say whether a strategy may ship at all, not
    how good it is). Criteria of every other group are quality criteria: the shared headline
    total compares strategies on those that every strategy in the comparison supports."""
    shared: bool = True
    """Its quality criteria may decide the shared headline total. False for a group that
    re-reads gold another group already counts (the rank metrics re-read `recall`'s gold): shown
    in every table, never in a total."""


GROUPS: dict[str, Group] = {
    "core": Group("core", "core", total="total", total_title="total (core, equal weight)"),
    "extra": Group("extra", "extras", total="extra", total_title="total (extras)", marker=" ·extra"),
    # seed 002: the typed memories a strategy holds, kept out of the core total so the core comparison means
    # what it meant before
    "reply": Group("reply", "typed memory", total="reply", total_title="total (typed memory)", marker=" ·reply"),
    # the reply the one scripted engine writes from a context: what it judges depends on the engine's rule-based
    # reading of the context's words, not on the context alone, so it is reported apart from the memory headline
    "reply_engine": Group("reply_engine", "reply engine", total="reply_engine",
                          total_title="total (reply engine, not in the headline)", marker=" ·reply-engine", headline=False),
    # judged only for strategies behind the expiry stage (the rest are unsupported), so no total
    "expiry": Group("expiry", "expiry", total=None, marker=" ·expiry"),
    # recall@k and nDCG@10 as the public memory benchmarks report them: the same gold as `recall`, so no total
    "rank": Group("rank", "rank (as the benchmarks report)", total=None, marker=" ·rank", shared=False),
    "gate": Group("gate", "gates", total=None, marker=" ·gate", gate=True),
    "decisions": Group("decisions", "decisions", total="decisions", total_title="total (decisions, equal weight)",
                       axis="policy"),
    "decision_gates": Group("decision_gates", "decision gates", total=None, marker=" ·gate", axis="policy", gate=True),
}
"""Every group, in the order reports and the app show them (the headline is the shared total over
every quality group's criteria, `harness.analysis.aggregate.totals`; the group totals follow it)."""

DEFAULT = "core"
"""The group of a criterion that names none, and of score rows whose group is unknown."""


def group(key: str) -> Group:
    """The group registered as `key`; a `ValueError` naming the known ones otherwise."""
    try:
        return GROUPS[key]
    except KeyError:
        raise ValueError(f"unknown criterion group {key!r} (known: {', '.join(GROUPS)})") from None


def of(key: str | None) -> Group:
    """The group of a score row (`grp`), falling back to the default for unknown or missing ones."""
    return GROUPS.get(key or DEFAULT, GROUPS[DEFAULT])


def order(key: str | None) -> int:
    """Sort position of a group (unknown ones last)."""
    known = list(GROUPS)
    return known.index(key) if key in GROUPS else len(known)


def totals(axis: Axis = "strategy") -> list[Group]:
    """The groups of `axis` that feed a total, in order."""
    return [g for g in GROUPS.values() if g.total and g.axis == axis]


def keys(axis: Axis = "strategy") -> list[str]:
    """The keys of the groups of `axis`, in order."""
    return [g.key for g in GROUPS.values() if g.axis == axis]


def is_gate(key: str | None) -> bool:
    """Whether a score row's group (`grp`) is a pass/fail gate."""
    return of(key).gate


def quality(axis: Axis = "strategy") -> list[Group]:
    """The groups of quality criteria of `axis` (every group but the gates), in order."""
    return [g for g in GROUPS.values() if not g.gate and g.axis == axis]


def in_headline(key: str | None) -> bool:
    """Whether a score row's group (`grp`) may feed the shared headline total (a quality group
    whose `headline` is set)."""
    g = of(key)
    return not g.gate and g.headline

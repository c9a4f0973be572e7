"""Write plans out as events, with gold labels taken from the plan.

`ScenarioWriter` renders the sessions of one file (one customer, or a few for isolation
cases) on one simulated clock. Each probe's gold is what the plan says the agent needs at
that moment: the profile facts of the probe's product area that the customer stated in an
earlier session (wherever they said them: first turn, mid-session, restated or corrected;
the corrected statement is stale), the current preferences, the original session a repeat
repeats and its working fix (above the newer failed workaround tried today and above newer
closed look-alikes), the look-alike session that is *not* the same issue, the live session's
items above stale closed-ticket items during an outage, and the health band when
`health.clear_band` finds it unambiguous under every documented reading. A probe's budget is
what the oracle needs for that gold (`harness.format.feasible.oracle_cost`) plus slack.
Nothing here looks at a strategy.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from stores.memory import RESOLUTION_ROLE, render_line
from stores.protocol import ContextRequest
from stores.text import keywords

from harness.format.feasible import RenderedHistory, oracle_cost
from harness.generate import catalog as C
from harness.generate.health import Item, clear_band
from harness.generate.plan import CustomerPlan, Profile, SessionPlan

MIN = timedelta(minutes=1)

SPAN = {"intro": 4, "howto": 3, "issue": 6, "issue_a": 3, "repeat": 5, "lookalike": 6, "abandoned": 2, "pref_change": 1}
"""About how many customer turns a session of each kind has (the introduction: after its
greeting), plus one for its end: a profile fact (or, in the introduction, a preference) said in
it comes after a number of the session's other customer turns drawn uniformly from 0 to this, so it can sit anywhere in
the session (a rule that pins a position cannot find it); what is still unsaid when the session
ends is said last."""
ASK_LATER_P = 0.5
"""Chance that the question of what to try first if a fixed problem comes back is asked in a later
how-to session rather than right after the fix (then the fix is a memory, not the last lines)."""
OWN_FIX_P = 0.5
"""Chance that the step that worked is one the customer took on their side and tells (a customer
turn of kind `action`), so that the item an ordering pair puts on top is a customer turn about
as often as not."""
REPEAT_MAX_OVERLAP_P = 0.5
"""Share of repeat probes drawn so that the repeated session is the resolved session sharing the
most task keywords with the probe's turn (where the texts allow it); in the others it is not, so
ranking by keyword overlap alone finds the repeat only about half the time."""


@dataclass
class Record:
    """What a written issue session left behind, for later gold."""

    session: str
    key: str
    report: str
    report_variant: int
    detail_variant: int
    fail1: str = ""
    fail2: str = ""
    fix: str = ""
    status_turn: str = ""
    summary: bool = False
    resolved: bool = False

    def evidence(self) -> str:
        """What proves the session was recalled: its summary if it has one, else its fix."""
        return f"{self.session}#resolution" if self.summary else self.fix


@dataclass
class State:
    """What the plan knows about a customer so far."""

    plan: CustomerPlan
    facts: dict[str, list[tuple[str, str, str]]] = field(default_factory=dict)
    """Profile fact topic -> every statement so far: (turn id, session, `says`/`restates`/`corrects`)."""
    prefs: dict[str, list[str]] = field(default_factory=dict)
    issues: dict[str, Record] = field(default_factory=dict)
    said: list[str] = field(default_factory=list)
    """Turn ids of everything said so far (for post-deletion checks)."""
    forgotten: list[str] = field(default_factory=list)
    """Ids from before a deletion request."""
    closed: list[Record] = field(default_factory=list)
    """Resolved sessions in order (issue-like records)."""
    intro_session: str = ""
    deferred: list[Record] = field(default_factory=list)
    """Resolved issues whose "what do we try first next time?" question is asked in a later session."""
    incident: tuple[str, ...] = ()
    """(report, agent acknowledgement) of the latest platform outage session, once one was written."""


class ScenarioWriter:
    """Renders one scenario file's sessions as event dicts with absolute times."""

    def __init__(self, rng: random.Random, profile: Profile, start: datetime, split: str = "test") -> None:
        self.rng = rng
        self.C = C.half(split)
        """The catalog half this file is written from (`catalog.half`: `test` is the held-back one)."""
        self.profile = profile
        self.clock = start
        self.events: list[dict[str, Any]] = []
        self.meta: dict[str, tuple] = {}  # id -> (role, kind, session, at, text, status)
        self.items: dict[str, list[Item]] = {}
        self.states: dict[str, State] = {}
        self.ticket = rng.randrange(1000, 8000)
        self.probe_count = 0
        self.rendered: dict[str, RenderedHistory] = {}
        """Per subject: the lines a strategy would render, for the oracle's cost of each probe's gold."""
        self._pending: dict[str, list[tuple[int, Any]]] = {}
        """Per session: (slot, say) of what is still to be said there, `say` a callable."""
        self._spoken: dict[str, int] = {}
        """Per session: customer turns written so far."""
        self._saying = False
        self.repeats_max_overlap = [0, 0]
        """Repeat probes whose repeated session is the unique max-overlap resolved session, and all repeat probes."""
        self.health_labelled = 0
        self.health_skipped = 0
        """Probes that could carry a health band, with one and without (near an edge, or readings disagree)."""

    # --- low level -------------------------------------------------------------------------

    def _fill(self, st: State, text: str) -> str:
        return text.format(**st.plan.slots)

    def _pick(self, seq):
        return seq[self.rng.randrange(len(seq))]

    def _emit(self, ev: dict[str, Any], st: State, session: str, at: datetime, new_block: bool = False) -> None:
        self.events.append({"_at": at, "_subject": st.plan.subject, "_session": session, "_block": new_block, **ev})

    def _advance(self, minutes: tuple[float, float]) -> datetime:
        self.clock += timedelta(seconds=int(self.rng.uniform(*minutes) * 60))
        return self.clock

    def new_session(self, st: State, gap: timedelta | None = None) -> str:
        self.ticket += self.rng.randrange(3, 40)
        if gap is None:
            gap = self._gap()
        self._start_block(gap)
        return f"zd-{self.ticket}"

    def resume(self) -> None:
        """Continue a session after a pause (its next event starts a new block with an absolute time)."""
        self._start_block(self._gap())

    def _start_block(self, gap: timedelta) -> None:
        at = (self.clock + gap).replace(hour=self.rng.randrange(7, 17), minute=self.rng.randrange(60), second=0)
        if at <= self.clock:  # same day as the previous block (several customers in one file)
            at = (self.clock + timedelta(minutes=self.rng.randrange(10, 120))).replace(second=0)
        self.clock = at
        self._new_block = True

    def _gap(self) -> timedelta:
        if self.rng.random() < self.profile.quiet_months_p:
            return timedelta(days=self.rng.randint(30, 120))
        return timedelta(days=self.rng.randint(1, 14))

    def turn(self, st: State, session: str, text: str, tag: str, *, role: str = "customer", kind: str = "message",
             label: tuple[str, ...] = (), after: tuple[float, float] | None = None, at: datetime | None = None) -> str:
        if at is None:
            if role == "customer":
                self.say_due(session)
            if self._new_block:
                at = self.clock
            else:
                at = self._advance(after or ((1, 6) if role == "agent" else (2, 15)))
        self.clock = at
        if role == "customer":
            self._spoken[session] = self._spoken.get(session, 0) + 1
        tid = f"{session}-{tag}"
        ev: dict[str, Any] = {"turn": text, "id": tid}
        if role != "customer":
            ev["role"] = role
        if kind != "message":
            ev["kind"] = kind
        if label:
            ev["label"] = list(label)
        self._emit(ev, st, session, at, self._new_block)
        self._new_block = False
        self.meta[tid] = (role, kind, session, at, text, "")
        self.items.setdefault(st.plan.subject, []).append(Item(session, role, text, at))
        self.rendered.setdefault(st.plan.subject, RenderedHistory()).put(tid, render_line(role, kind, session, at, text), session)
        st.said.append(tid)
        return tid

    def first_response(self, st: State) -> tuple[float, float]:
        return (15, 40) if st.plan.slow_responder else (1, 6)

    def say_later(self, session: str, kind: str, say) -> None:
        """Say something (`say()` writes it) in `session` after a drawn number of its other
        customer turns (`SPAN`)."""
        slot = self._spoken.get(session, 0) + self.rng.randint(0, SPAN.get(kind, 2))
        self._pending.setdefault(session, []).append((slot, say))

    def say_due(self, session: str, *, flush: bool = False) -> None:
        """Write what is due in `session` before its next customer turn (everything with `flush`)."""
        q = self._pending.get(session)
        if self._saying or not q:
            return
        spoken = self._spoken.get(session, 0)
        due = [x for x in q if flush or x[0] <= spoken]
        self._pending[session] = [x for x in q if not (flush or x[0] <= spoken)]
        self._saying = True
        try:
            for _, say in due:
                say()
        finally:
            self._saying = False

    def resolve(self, st: State, session: str, summary: str, *, slow: bool = False) -> None:
        self.say_due(session, flush=True)
        at = self._advance((26 * 60, 72 * 60) if slow else (5, 40))
        ev: dict[str, Any] = {"resolve": session, "status": "resolved"}
        if summary:
            ev["summary"] = summary
        self._emit(ev, st, session, at)
        rid = f"{session}#resolution"
        self.meta[rid] = ("resolution", "message", session, at, summary, "resolved")
        self.items.setdefault(st.plan.subject, []).append(Item(session, "resolution", summary, at, "resolved"))
        line = render_line(RESOLUTION_ROLE, "message", session, at, summary, "resolved")
        self.rendered.setdefault(st.plan.subject, RenderedHistory()).put(rid, line, session)

    def probe_on(self, st: State, session: str, text: str, tag: str, expect: dict[str, Any], *,
                 key: str = "", area: str = "", health: bool = True, label: tuple[str, ...] = ()) -> str:
        """A probe attached to the customer turn that follows it; returns that turn's id. `key` is
        the issue it is about (for isolation), `area` the product area (from `key` when not given)."""
        self.say_due(session)
        on_at = self.clock if self._new_block else self._advance((2, 15))
        probe_at = on_at - MIN if not self._new_block else on_at
        tid = f"{session}-{tag}"
        self.probe_count += 1
        pid = f"p-{session}-{tag}"
        exp = self._common(st, session, expect, key, area or (self.C.ISSUES[key].area if key in self.C.ISSUES else ""))
        if health and not st.forgotten:
            band = clear_band(self.items.get(st.plan.subject, []), probe_at)
            if band:
                exp["health"] = band
                self.health_labelled += 1
            else:
                self.health_skipped += 1
        exp = {k: v for k, v in exp.items() if v not in (None, [], "")}
        ev = {"probe": pid, "on": tid, "budget": self._budget(st, exp, session, text, probe_at), "expect": exp}
        self._emit(ev, st, session, probe_at, self._new_block)
        self._new_block = False
        self.clock = on_at
        self.turn(st, session, text, tag, label=label, at=on_at + (MIN if probe_at == on_at else timedelta(0)))
        return tid

    def _common(self, st: State, session: str, expect: dict[str, Any], key: str, area: str) -> dict[str, Any]:
        exp = {k: list(v) if isinstance(v, (list, tuple)) else v for k, v in expect.items()}
        if not st.forgotten:
            for topic, fact in self.C.FACTS.items():
                said = st.facts.get(topic)
                if not area or area not in fact.areas or not said:
                    continue
                latest, where, mode = said[-1]
                if where != session:  # a fact said in this session is no memory of an earlier one
                    exp.setdefault("identity", []).append(latest)
                if mode == "corrects":  # what the correction replaced is stale
                    exp["exclude"] = exp.get("exclude", []) + [t for t, _, _ in said[:-1]]
            current = [ids[-1] for _, ids in sorted(st.prefs.items()) if self.meta[ids[-1]][2] != session]
            old = [i for _, ids in sorted(st.prefs.items()) for i in ids[:-1]]
            if current:
                exp["preferences"] = current
            if old:
                exp["superseded"] = old
                exp["exclude"] = exp.get("exclude", []) + old
                exp["expired"] = old  # a preference the customer replaced: an expiry stage must say so
        # isolation: another customer of this file with the same issue must not leak in
        for other in sorted(self.states):
            o = self.states[other]
            if o is st or not key or key not in o.issues:
                continue
            rec = o.issues[key]
            exp["exclude"] = exp.get("exclude", []) + [i for i in (rec.report, rec.fix) if i]
        if "exclude" in exp:
            exp["exclude"] = list(dict.fromkeys(exp["exclude"]))
        return exp

    def _budget(self, st: State, exp: dict[str, Any], session: str, task: str, now: datetime) -> int:
        """Room for what the oracle needs to meet the gold (header included, counted the way the
        validator counts it), plus slack; tight enough that stuffing must choose."""
        h = self.rendered.get(st.plan.subject) or RenderedHistory()
        need, _, _ = oracle_cost(exp, h, ContextRequest(st.plan.subject, session, task, 0, now))
        total = need + max(120, need // 2)
        return -(-total // 50) * 50

    def max_overlap(self, st: State, task: str) -> str:
        """The customer's resolved session whose words share the most keywords with `task` (''
        when none shares any, or two share the most)."""
        words = keywords(task)
        items = self.items.get(st.plan.subject, [])
        resolved = {i.session for i in items if i.role == RESOLUTION_ROLE}
        shared: dict[str, set[str]] = {}
        for i in items:
            if i.session in resolved:
                shared.setdefault(i.session, set()).update(words & keywords(i.text))
        counts = sorted(((len(v), k) for k, v in shared.items()), reverse=True)
        if not counts or counts[0][0] == 0 or (len(counts) > 1 and counts[1][0] == counts[0][0]):
            return ""
        return counts[0][1]

    def forget(self, st: State) -> None:
        at = self._advance((1, 5))
        self._emit({"forget": st.plan.subject}, st, self.events[-1]["_session"], at)
        st.forgotten = list(st.said)
        st.facts, st.prefs, st.issues, st.closed, st.deferred = {}, {}, {}, [], []
        self.items[st.plan.subject] = []
        self.rendered.pop(st.plan.subject, None)

    # --- sessions ----------------------------------------------------------------------------

    def write_session(self, st: State, sp: SessionPlan, later: list[SessionPlan]) -> None:
        getattr(self, "_" + sp.kind)(st, sp, later)

    def facts(self, st: State, session: str, sp: SessionPlan) -> None:
        """Queue the profile facts the plan puts in this session, each at a drawn place in it
        (`say_later`)."""
        for topic, mode, _ in sp.opts.get("facts", ()):
            fact = self.C.FACTS[topic]
            text = self._fill(st, self._pick(getattr(fact, mode)))
            tag = f"fact-{topic}" + ("" if mode == "says" else f"-{mode}")

            def say(text=text, tag=tag, topic=topic, mode=mode) -> None:
                tid = self.turn(st, session, text, tag, label=("profile",), after=(1, 4))
                st.facts.setdefault(topic, []).append((tid, session, mode))

            self.say_later(session, sp.kind, say)

    def _intro(self, st, sp, later):
        s = self.new_session(st, timedelta(0))
        st.intro_session = s
        self.turn(st, s, self._pick(self.C.GREETINGS), "hello")  # a first contact opens with a greeting
        self.facts(st, s, sp)
        for topic in st.plan.pref_topics:
            def say(topic=topic) -> None:
                st.prefs[topic] = [self.turn(st, s, self.C.PREFERENCES[topic][0], f"pref-{topic}", label=("preference",), after=(1, 3))]

            self.say_later(s, "intro", say)
        # the couple of questions the greeting announces, so what the customer also says has room anywhere
        (q, a, summary), (q2, a2, _) = self.rng.sample(self.C.HOWTO, 2)
        self.turn(st, s, q, "ask", after=(1, 3))
        self.turn(st, s, a, "answer", role="agent", after=self.first_response(st))
        self.turn(st, s, q2, "ask2", after=(1, 3))
        self.turn(st, s, a2, "answer2", role="agent")
        self.turn(st, s, self._pick(self.C.ACKS), "thanks")
        self.resolve(st, s, summary)

    def _howto(self, st, sp, later):
        if st.deferred:
            return self._ask_later(st, sp, st.deferred.pop(0))
        s = self.new_session(st)
        self.facts(st, s, sp)
        q, a, summary = self._pick(self.C.HOWTO)
        if self.rng.random() < self.profile.howto_probe_p:
            self.probe_on(st, s, q, "ask", {})
        else:
            self.turn(st, s, q, "ask")
        self.turn(st, s, a, "answer", role="agent", after=self.first_response(st))
        self.turn(st, s, self._pick(self.C.ACKS), "thanks")
        self.resolve(st, s, summary if self.rng.random() < 0.7 else "")

    def _ask_later(self, st, sp, rec: Record):
        """A how-to session that asks what to try first if an earlier, fixed problem comes back."""
        issue = self.C.ISSUES[rec.key]
        s = self.new_session(st)
        self.facts(st, s, sp)
        ask = self._pick(self.C.ASK_LATER).replace("{topic}", issue.topic)
        self.probe_on(st, s, self._fill(st, ask), "ask",
                      {"include": [rec.fix], "fix_before": [[rec.fix, rec.fail1], [rec.fix, rec.fail2]]}, key=rec.key)
        self.turn(st, s, "Start with the step that fixed it last time; the other things we tried then did not help.", "answer",
                  role="agent", after=self.first_response(st))
        self.turn(st, s, self._pick(self.C.ACKS), "thanks")
        self.resolve(st, s, f"Explained what to try first if {self._fill(st, issue.topic)} comes back.")

    def _report(self, st, s, issue: C.Issue, avoid: int = -1) -> tuple[str, int]:
        choices = [i for i in range(len(issue.reports)) if i != avoid]
        v = self._pick(choices)
        text = self._fill(st, issue.reports[v])
        if self.rng.random() < 0.2:
            text = self._pick(("Urgent: ", "This is critical for us: ")) + text
        return self.turn(st, s, text, "report"), v

    def _open_issue(self, st, sp) -> Record:
        issue = self.C.ISSUES[sp.issue]
        s = self.new_session(st)
        self.facts(st, s, sp)
        report, v = self._report(st, s, issue)
        rec = Record(s, issue.key, report, v, self.rng.randrange(len(issue.details)))
        if self.rng.random() < 0.5:
            rec.status_turn = self.turn(st, s, "I checked our status page and internal dashboards: there is no incident on our side, so this looks specific to your setup.",
                                        "status", role="agent", after=self.first_response(st))
        self.turn(st, s, self._fill(st, self._pick(issue.diagnosis)), "diag", role="agent",
                  after=(1, 4) if rec.status_turn else self.first_response(st))
        self.turn(st, s, self._fill(st, issue.details[rec.detail_variant]), "detail")
        rec.fail1 = self.turn(st, s, self._fill(st, self._pick(issue.fail1)), "fail1", role="agent", kind="action", after=(5, 20))
        st.issues[issue.key] = rec
        return rec

    def _finish_issue(self, st, rec: Record, later, *, slow: bool = False) -> None:
        issue = self.C.ISSUES[rec.key]
        s = rec.session
        rec.fail2 = self.turn(st, s, self._fill(st, self._pick(issue.fail2)), "fail2", role="agent", kind="action", after=(5, 20))
        self.turn(st, s, self._pick(self.C.STILL_FAILING), "still2")
        if issue.own_fix and self.rng.random() < OWN_FIX_P:  # the customer took the step that worked and says so
            rec.fix = self.turn(st, s, self._fill(st, self._pick(issue.own_fix)), "fix", kind="action", after=(20, 90))
            self.turn(st, s, "Thanks for letting us know what worked; I've noted it on the ticket.", "noted", role="agent")
        else:
            rec.fix = self.turn(st, s, self._fill(st, self._pick(issue.fix)), "fix", role="agent", kind="action", after=(5, 20))
            self.turn(st, s, self._pick(self.C.WORKS_NOW), "works")
        repeats_later = any(p.kind == "repeat" and p.issue == rec.key for p in later)
        asked = self.rng.random() < (0.35 if repeats_later else 0.7)
        if asked and any(p.kind == "howto" for p in later) and self.rng.random() < ASK_LATER_P:
            st.deferred.append(rec)
        elif asked:
            self.probe_on(st, s, self._pick((
                "One more thing: if this happens again, what should we try first?",
                "Good to know. If it comes back on another setup, which step should we start with?",
                "Before you go: what should my colleague do first if we see this again?",
            )), "followup", {"include": [rec.fix], "fix_before": [[rec.fix, rec.fail1], [rec.fix, rec.fail2]]}, key=rec.key)
            self.turn(st, s, "Start with the step that fixed it today; the other things we tried did not help.", "advice", role="agent")
        rec.summary = self.rng.random() < 0.65
        self.resolve(st, s, self._fill(st, self._pick(issue.summary)) if rec.summary else "", slow=slow or self.rng.random() < 0.15)
        rec.resolved = True
        st.closed.append(rec)

    def _issue(self, st, sp, later):
        rec = self._open_issue(st, sp)
        if self.rng.random() < 0.8:
            self.probe_on(st, rec.session, self._pick(self.C.STILL_FAILING), "still1",
                          {"include": [rec.report, rec.fail1]}, key=rec.key)
        else:
            self.turn(st, rec.session, self._pick(self.C.STILL_FAILING), "still1")
        self._finish_issue(st, rec, later)

    def _issue_a(self, st, sp, later):
        rec = self._open_issue(st, sp)
        self.turn(st, rec.session, self._pick(self.C.STILL_FAILING), "still1")
        self.turn(st, rec.session, "I've passed this to our engineering team with your logs and will update you here.", "handover", role="agent")

    def _issue_b(self, st, sp, later):
        rec = st.issues[sp.issue]
        self.resume()
        # the platform incident closed since this ticket opened is newer, but the ticket's own
        # report and failed step are what the agent needs now (orderings against recency)
        above = [[rec.report, st.incident[1]], [rec.fail1, st.incident[0]]] if st.incident else []
        self.probe_on(st, rec.session, self._pick((
            "Any update on this? It's still happening every night.",
            "Checking in on this ticket, the problem is still there.",
        )), "nudge", {"include": [rec.report, rec.fail1], "above": above}, key=rec.key)
        self._finish_issue(st, rec, later, slow=True)

    def _repeat(self, st, sp, later):
        issue = self.C.ISSUES[sp.issue]
        orig = st.issues.get(sp.issue)
        if orig is None or not orig.resolved:
            return self._issue(st, sp, later)
        s = self.new_session(st)
        self.facts(st, s, sp)
        report, _ = self._report(st, s, issue, avoid=orig.report_variant)
        self.turn(st, s, self._pick(self.C.REPEAT_ACKS), "ack", role="agent", after=self.first_response(st))
        # today's agent first tries a workaround that fails again: the older documented fix must
        # still outrank this newer failed step (an ordering against recency)
        tried = {self.meta[i][4] for i in (orig.fail1, orig.fail2) if i}
        steps = [t for t in (*issue.fail1, *issue.fail2) if self._fill(st, t) not in tried] or list(issue.fail1)
        live = [self.turn(st, s, self._fill(st, self._pick(steps)), "workaround", role="agent", kind="action", after=(3, 10))]
        self.turn(st, s, self._pick(self.C.STILL_FAILING), "still1")
        if self.rng.random() < 0.5:
            live.append(self.turn(st, s, self._fill(st, self._pick(steps)), "workaround2", role="agent", kind="action", after=(3, 10)))
            self.turn(st, s, self._pick(self.C.STILL_FAILING), "still2")
        others = [r for r in st.closed if r.key != sp.issue and r.resolved]
        others.sort(key=lambda r: (r.key != issue.lookalike, -st.closed.index(r)))
        # closed tickets newer than the original (the look-alike first) must not outrank it
        newer = [r for r in others if st.closed.index(r) > st.closed.index(orig)]
        expect = {
            "include": [report, orig.fix],
            "repeat_of": orig.session,
            "evidence": [orig.evidence()],
            "fix_before": [[orig.fix, orig.fail1], [orig.fix, orig.fail2]] + [[orig.fix, w] for w in live],
            "not_repeat_of": [r.session for r in others[:2]],
            "above": [pair for r in newer[:2] for pair in ([orig.evidence(), r.evidence()], [orig.fix, r.fix])
                      if pair[1] and pair[0] != pair[1] and (pair[0] == orig.evidence() or pair[1] != r.evidence())],
        }
        detail = [i for i in range(len(issue.details)) if i != orig.detail_variant] or [0]
        told = [self._fill(st, issue.details[i]) for i in detail]
        want = self.rng.random() < REPEAT_MAX_OVERLAP_P
        fits = [t for t in told if self.max_overlap(st, t) == orig.session] if want else \
            [t for t in told + list(self.C.REPEAT_GENERIC) if self.max_overlap(st, t) != orig.session]
        task = self._pick(fits or told)
        self.repeats_max_overlap[0] += self.max_overlap(st, task) == orig.session
        self.repeats_max_overlap[1] += 1
        self.probe_on(st, s, task, "detail", expect, key=sp.issue)
        fix = self.turn(st, s, self._fill(st, self._pick(issue.fix)), "fix", role="agent", kind="action", after=(3, 10))
        self.turn(st, s, self._pick(self.C.WORKS_NOW), "works")
        has_summary = self.rng.random() < 0.7
        self.resolve(st, s, f"Repeat of {orig.session}. " + self._fill(st, self._pick(issue.summary)) if has_summary else "")
        rec = Record(s, sp.issue, report, -1, -1, fix=fix, summary=has_summary, resolved=True)
        st.closed.append(rec)

    def _lookalike(self, st, sp, later):
        issue = self.C.ISSUES[sp.issue]
        orig = st.issues.get(issue.lookalike)
        if orig is None or not orig.resolved:
            return
        s = self.new_session(st)
        self.facts(st, s, sp)
        report, v = self._report(st, s, issue)
        self.turn(st, s, self._fill(st, self._pick(issue.diagnosis)), "diag", role="agent", after=self.first_response(st))
        expect = {
            "include": [report],
            "not_repeat_of": [orig.session],
            "above": [[report, orig.evidence()]],
        }
        dv = self.rng.randrange(len(issue.details))
        self.probe_on(st, s, self._fill(st, issue.details[dv]), "detail", expect, key=sp.issue)
        rec = Record(s, issue.key, report, v, dv)
        rec.fail1 = self.turn(st, s, self._fill(st, self._pick(issue.fail1)), "fail1", role="agent", kind="action", after=(5, 20))
        self.turn(st, s, self._pick(self.C.STILL_FAILING), "still1")
        st.issues[issue.key] = rec
        self._finish_issue(st, rec, later)

    def _outage(self, st, sp, later):
        area = sp.issue
        out = self.C.OUTAGES[area]
        s = self.new_session(st)
        inc = f"INC-{self.rng.randrange(1000, 9999)}"
        report = self.turn(st, s, self._fill(st, self._pick(out["report"])), "report")
        hhmm = (self.clock - timedelta(minutes=self.rng.randrange(15, 40))).strftime("%H:%M")
        ack_text = self._pick(out["ack"]).replace("{inc}", inc).replace("{hhmm}", hhmm)
        ack = self.turn(st, s, self._fill(st, ack_text), "ack", role="agent", after=(1, 4))
        closed = sorted(st.closed, key=lambda r: (self.C.ISSUES[r.key].area != area, -st.closed.index(r)))
        expect: dict[str, Any] = {"include": [ack], "above": [], "exclude": []}
        if closed:
            c1 = closed[0]
            expect["above"].append([ack, c1.evidence()])
            if c1.fix:
                expect["above"].append([report, c1.fix])
            if self.C.ISSUES[c1.key].area == area:
                expect["not_repeat_of"] = [c1.session]
        else:
            expect["above"].append([ack, f"{st.intro_session}#resolution"])
        expect["exclude"] = [r.status_turn for r in st.closed if r.status_turn][-2:]
        self.probe_on(st, s, self._fill(st, self._pick(out["follow"])), "follow", expect, area=area)
        self.turn(st, s, f"Please don't change anything on your side; we'll post updates here until {inc} is closed.", "advice", role="agent", after=(1, 4))
        self.turn(st, s, "All working again, thanks for the updates.", "thanks", after=(30, 90))
        self.resolve(st, s, self._pick(out["summary"]).replace("{inc}", inc))
        st.incident = (report, ack)

    def _abandoned(self, st, sp, later):
        issue = self.C.ISSUES[sp.issue]
        s = self.new_session(st)
        self.facts(st, s, sp)
        self._report(st, s, issue)
        self.turn(st, s, self._fill(st, self._pick(issue.diagnosis)), "diag", role="agent", after=self.first_response(st))
        self.turn(st, s, self._fill(st, self._pick(issue.details)), "detail")
        self.say_due(s, flush=True)
        self.turn(st, s, "Could you send us the logs from the last failed attempt so we can dig deeper?", "logs", role="agent")

    def _pref_change(self, st, sp, later):
        topic = sp.issue
        history = st.prefs.setdefault(topic, [])
        variants = self.C.PREFERENCES[topic]
        if len(history) >= len(variants):
            return
        s = self.new_session(st)
        self.facts(st, s, sp)
        history.append(self.turn(st, s, variants[len(history)], f"pref-{topic}", label=("preference",)))
        self.turn(st, s, "Noted, I've updated your preferences on the account.", "noted", role="agent", after=self.first_response(st))
        self.resolve(st, s, f"Customer changed their {topic} preference.")

    def _forget_request(self, st, sp, later):
        s = self.new_session(st)
        self.turn(st, s, "We're closing our account. Please delete all the data you hold about me and my team.", "delete")
        self.turn(st, s, "Understood. Your deletion request is confirmed and is being processed now.", "confirm", role="agent", after=self.first_response(st))
        self.resolve(st, s, "Customer asked for deletion of all their data.")
        self.forget(st)

    def _comeback(self, st, sp, later):
        s = self.new_session(st)
        old = st.forgotten
        sample = [i for i in old if i.endswith(("-fact-account", "-fix", "-report"))][:4] or old[:2]
        q, a, summary = self._pick(self.C.HOWTO)
        self.probe_on(st, s, "Hi, we're back with a new team. " + q, "ask", {"exclude": sample}, health=False)
        self.turn(st, s, a, "answer", role="agent", after=self.first_response(st))
        self.resolve(st, s, summary)

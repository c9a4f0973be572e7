"""session_aware: the reference design's session-aware ranking, every constant a parameter (docs/reference.md)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import ClassVar, Literal

import numpy as np

from stores.bounds import NonNegative, NonNegativeInt, Positive, PositiveInt, Share
from stores.session.handoff import build_handoff
from stores.session.health import HealthParams
from stores.session.health_state import HealthState, health_report
from stores.memory import RESOLUTION_ROLE, IndexedMemory, SubjectHistory
from stores.packing import pack, total_score
from stores.protocol import Bundle, ContextRequest, Handoff, HealthReport
from stores.text import is_urgent, keywords, overlap_ratio, words


@dataclass(frozen=True)
class SessionAwareParams:
    """Parameters of `session_aware` (defaults: the reference design's constants)."""

    base: float = 3.0
    """Base priority of every candidate (turns and resolution records)."""
    recency: Literal["minmax", "half_life"] = "minmax"
    """`minmax` over the subject's pool (faithful) or `half_life` on the absolute age at `now`."""
    recency_max: NonNegative = 5.0
    """Largest recency component."""
    half_life_days: Positive = 14.0
    """Age at which half-life recency halves (only with `recency="half_life"`)."""
    overlap_max: NonNegative = 5.0
    """Largest relevance component: `min(max, max * |T ∩ C| / |T|)`."""
    overlap_words: Literal["words", "keywords"] = "words"
    """Which words count for overlap: all words (faithful) or issue keywords (stopwords out)."""
    active_session: float = 6.0
    """Bonus for items of the request's session."""
    open_issue: float = 4.0
    """Bonus for items of a session that is not resolved."""
    resolved_session: float = -5.0
    """Penalty for items of a resolved session."""
    repeat_issue: float = 4.0
    """Bonus for items of a resolved session that matches the current issue."""
    repeat_issue_with_summary: float = 6.0
    """The repeat bonus instead, when that session's resolution has a non-empty summary."""
    repeat_threshold: Share = 0.30
    """Match when |current ∩ prior| / |current| >= this (issue keywords)."""
    repeat_current: Literal["session", "customer"] = "session"
    """Where the current issue's keywords come from: the task plus every turn of the live session
    (`session`, the reference design) or the task plus the live session's customer turns only
    (`customer`: the agent's greetings and sign-offs, shared by every ticket, cannot make an
    unrelated resolved session look like a repeat)."""
    action_step: float = 2.0
    """Bonus for agent turns and `kind: action` turns."""
    urgency: float = 2.0
    """Bonus for items whose text carries an urgency marker."""
    idle_chatter: float = -2.0
    """Penalty for items whose text is shorter than `idle_chars`."""
    idle_chars: NonNegativeInt = 20
    """Length (characters of the item's own text) below which it is idle chatter."""
    render: Literal["rank", "chronological"] = "rank"
    """Order of the packed lines in the context text."""
    health: HealthParams = field(default_factory=HealthParams)
    """Constants of the health model (`stores.session.health`)."""
    handoff_budget: PositiveInt = 4000
    """Hard token ceiling of a handoff brief."""


class SessionIndex:
    """One customer's ranking features, kept in step with a `SubjectHistory` incrementally
    (what `SessionAware` and its subclasses, e.g. `hybrid`, rank from).

    Everything a probe needs that does not depend on the task is computed once per item
    here (word sets, urgency, length, role flags, session index) plus an inverted index
    word -> positions, so a probe costs array operations plus one pass over the task's words.
    """

    def __init__(self) -> None:
        self.version = -1
        self.replaced_seen = 0  # cursor into `SubjectHistory.replaced`
        self.texts: list[str] = []
        self.words: list[frozenset[str]] = []
        self.kwords: list[frozenset[str]] = []
        self.cols = {
            "sess": np.zeros(64, dtype=np.int64),
            "action": np.zeros(64, dtype=bool),
            "urgent": np.zeros(64, dtype=bool),
            "lengths": np.zeros(64, dtype=np.int64),
        }
        self.sessions: dict[str, int] = {}
        self.session_names: list[str] = []
        # per session, kept in step with the history's resolution records (never recomputed by
        # looping over every session at a probe)
        self.scols = {"resolved": np.zeros(16, dtype=bool), "summary": np.zeros(16, dtype=bool)}
        self.turn_kw: list[set[str]] = []  # per session: keywords of its turns
        self.customer_kw: list[set[str]] = []  # per session: keywords of its customer turns
        self.summary_kw: list[frozenset[str]] = []  # per session: keywords of its resolution summary
        self._prior: list[frozenset[str] | None] = []  # per session: turns | summary, built on demand
        self.postings: dict[str, dict[str, list[int]]] = {"words": {}, "keywords": {}}
        self._post_arrays: dict[str, dict[str, tuple[int, np.ndarray]]] = {}  # kind -> word -> array
        # issue keyword -> sessions whose prior keywords hold it (for the repeat test)
        self.session_post: dict[str, list[int]] = {}
        self._session_post_arrays: dict[str, tuple[int, np.ndarray]] = {}

    def sync(self, h: SubjectHistory) -> None:
        if self.version == h.version:
            return
        n = len(self.texts)
        for i in dict.fromkeys(h.replaced[self.replaced_seen :]):
            if i < n and h.texts[i] != self.texts[i]:
                self._replace(i, h.texts[i])
            if i < n:
                self._session_flags(int(self.cols["sess"][i]), h)
        self.replaced_seen = len(h.replaced)
        for i in range(n, len(h)):
            self._add(i, h)
        self.version = h.version

    def _session_flags(self, s: int, h: SubjectHistory) -> None:
        name = self.session_names[s]
        self.scols["resolved"][s] = h.is_resolved(name)
        self.scols["summary"][s] = bool(h.summaries.get(name, "").strip())

    def _add(self, i: int, h: SubjectHistory) -> None:
        text, role = h.texts[i], h.roles[i]
        s = self.sessions.setdefault(h.sessions[i], len(self.sessions))
        if s == len(self.turn_kw):
            self.session_names.append(h.sessions[i])
            self.turn_kw.append(set())
            self.customer_kw.append(set())
            self.summary_kw.append(frozenset())
            self._prior.append(None)
            if s >= len(self.scols["resolved"]):
                self.scols = {k: np.concatenate([v, np.zeros_like(v)]) for k, v in self.scols.items()}
        self._prior[s] = None
        self.texts.append(text)
        if i >= len(self.cols["sess"]):  # grow the columns geometrically
            self.cols = {k: np.concatenate([v, np.zeros_like(v)]) for k, v in self.cols.items()}
        self.cols["sess"][i] = s
        self.cols["action"][i] = role == "agent" or h.kinds[i] == "action"
        self.cols["urgent"][i] = is_urgent(text)
        self.cols["lengths"][i] = len(text)
        self._index_text(i, text)
        if role == RESOLUTION_ROLE:
            self._set_summary(s, self.kwords[i])
            self._session_flags(s, h)
        else:
            new = self.kwords[i] - self.turn_kw[s]
            for w in new:
                if w not in self.summary_kw[s]:
                    self.session_post.setdefault(w, []).append(s)
            self.turn_kw[s] |= new
            if role == "customer":
                self.customer_kw[s] |= self.kwords[i]

    def _set_summary(self, s: int, kw: frozenset[str]) -> None:
        old = self.summary_kw[s]
        for w in old - kw:
            if w not in self.turn_kw[s]:
                self.session_post[w].remove(s)
        for w in kw - old:
            if w not in self.turn_kw[s]:
                self.session_post.setdefault(w, []).append(s)  # order is free: counts add up
        self.summary_kw[s], self._prior[s] = kw, None
        for w in old ^ kw:
            self._session_post_arrays.pop(w, None)

    def _index_text(self, i: int, text: str) -> None:
        w, k = words(text), keywords(text)
        if i == len(self.words):
            self.words.append(w)
            self.kwords.append(k)
        else:
            self.words[i], self.kwords[i] = w, k
        for post, vocab in ((self.postings["words"], w), (self.postings["keywords"], k)):
            for word in vocab:
                lst = post.get(word)
                if lst is None:
                    post[word] = [i]
                else:
                    lst.append(i)

    def _replace(self, i: int, text: str) -> None:
        # a resolution record re-observed with a new summary: rare, so plain list surgery
        for kind, vocab in (("words", self.words[i]), ("keywords", self.kwords[i])):
            for word in vocab:
                lst = self.postings[kind][word]
                lst.remove(i)
                self._post_arrays.get(kind, {}).pop(word, None)
        self.texts[i] = text
        self.cols["urgent"][i] = is_urgent(text)
        self.cols["lengths"][i] = len(text)
        self._index_text(i, text)
        for kind, vocab in (("words", self.words[i]), ("keywords", self.kwords[i])):
            for word in vocab:  # keep each posting list sorted after re-insertion
                self.postings[kind][word].sort()
        self._set_summary(int(self.cols["sess"][i]), self.kwords[i])

    def array(self, name: str) -> np.ndarray:
        """A per-item column (`sess`, `action`, `urgent`, `lengths`) aligned with the history."""
        return self.cols[name][: len(self.texts)]

    def session_array(self, name: str) -> np.ndarray:
        """A per-session column (`resolved`, `summary`: its resolution has a non-empty summary),
        aligned with `sessions`."""
        return self.scols[name][: len(self.session_names)]

    def repeat_hits(self, current: frozenset[str]) -> np.ndarray:
        """|current ∩ prior keywords of s| for every session s, from the inverted index."""
        return _count_postings(self.session_post, self._session_post_arrays, current, len(self.session_names))

    def prior_keywords(self, s: int) -> frozenset[str]:
        """Issue keywords of session `s`: its turns plus its resolution summary."""
        kw = self._prior[s]
        if kw is None:
            kw = self._prior[s] = frozenset(self.turn_kw[s] | self.summary_kw[s])
        return kw

    def hits(self, task_words: frozenset[str], kind: str) -> np.ndarray:
        """|T ∩ C| for every item, from the inverted index."""
        return _count_postings(self.postings[kind], self._post_arrays.setdefault(kind, {}), task_words, len(self.texts))


def _count_postings(post: dict[str, list[int]], arrays: dict[str, tuple[int, np.ndarray]], keys, n: int) -> np.ndarray:
    """For each of `n` positions, how many of `keys` list it in `post` (each list names a
    position at most once); posting lists are turned into arrays once per length."""
    found = []
    for w in keys:
        lst = post.get(w)
        if not lst:
            continue
        cached = arrays.get(w)
        if cached is None or cached[0] != len(lst):
            cached = arrays[w] = (len(lst), np.asarray(lst, dtype=np.int64))
        found.append(cached[1])
    if not found:
        return np.zeros(n, dtype=np.float64)
    return np.bincount(np.concatenate(found), minlength=n).astype(np.float64)


class SessionAware(IndexedMemory):
    """Session-aware ranking after the published Statewave design, with its defects fixed.

    Every candidate (each turn and each resolution record of the customer) scores
    `base + recency + overlap + active_session + open_issue + resolved_session +
    repeat_issue + action_step + urgency + idle_chatter` (the table of docs/reference.md; every
    constant is a field of `SessionAwareParams`), and the bundle carries each component.
    A resolution record counts as an item like a turn: it gets `base`, and its role is not
    `agent`, so no `action_step`.

    Fixes over the published implementation:

    - every item of the subject is ranked, not only the oldest 30 episodes;
    - words come from `stores.text` (lower-cased, punctuation stripped) and always from an
      item's own text, never from its rendered line, so "issue?" matches "issue" and role
      prefixes or timestamps cannot become issue keywords;
    - `recency="half_life"` offers an absolute time scale (`half_life_days`) beside the
      faithful min-max default;
    - the budget is a hard ceiling on the whole rendered text, header included (packing
      checks the final text with the project tokenizer), not an estimate with a reserve;
    - every candidate is returned with its components and, when dropped, the reason;
    - urgency markers match as word prefixes ("urgently", "outages", "escalated"), not as raw
      substrings, so "sla" is not found in "Slack" nor "p1" in "p10" (`stores.text.is_urgent`).

    Interpretations: the request's own session is never a "repeat" of itself (a resolved
    session that is re-contacted gets `active_session` and `resolved_session`, not a repeat
    bonus); a session is resolved when its latest record says `resolved` (open and
    unresolved records, and no record, count as open).
    """

    name: ClassVar[str] = "session_aware"
    Params = SessionAwareParams
    capabilities: ClassVar[frozenset[str]] = frozenset({"health", "handoff"})
    derived: ClassVar[tuple[str, ...]] = ("_index", "_health")

    def __init__(self, params: SessionAwareParams | None = None) -> None:
        self.params = params or self.Params()
        super().__init__()
        self._index: dict[str, SessionIndex] = {}
        self._health: dict[str, HealthState] = {}

    def _synced(self, h: SubjectHistory) -> SessionIndex:
        ix = self._index.get(h.subject)
        if ix is None:
            ix = SessionIndex()
            if len(h):
                self._index[h.subject] = ix
        ix.sync(h)
        return ix

    # -- ranking ---------------------------------------------------------------------------

    def _relevance(self, h: SubjectHistory, ix: SessionIndex, request: ContextRequest) -> tuple[str, np.ndarray]:
        """The relevance component: word overlap with the task (hybrid swaps in embeddings)."""
        p = self.params
        kind = p.overlap_words
        task = words(request.task) if kind == "words" else keywords(request.task)
        if not task:
            return "overlap", np.zeros(len(h))
        hits = ix.hits(task, kind)
        return "overlap", np.minimum(p.overlap_max, p.overlap_max * hits / len(task))

    def _repeat_sessions(self, h: SubjectHistory, ix: SessionIndex, request: ContextRequest) -> dict[int, float]:
        """Resolved sessions (by index) that match the current issue, with their bonus.

        `overlap_ratio(current, prior keywords of s)` for every resolved session but the
        active one, counted through the keyword -> sessions index instead of a loop over the
        sessions (the same quotient: the same integers divided the same way)."""
        p = self.params
        active = ix.sessions.get(request.session)
        current = set(keywords(request.task))
        if active is not None:
            current |= ix.customer_kw[active] if p.repeat_current == "customer" else ix.turn_kw[active]
        if not current:
            return {}
        ratio = ix.repeat_hits(frozenset(current)) / len(current)
        match = ix.session_array("resolved") & (ratio >= p.repeat_threshold)
        if active is not None:
            match[active] = False
        summary = ix.session_array("summary")
        return {int(s): (p.repeat_issue_with_summary if summary[s] else p.repeat_issue) for s in np.flatnonzero(match)}

    def _components(self, h: SubjectHistory, request: ContextRequest) -> tuple[dict[str, np.ndarray], frozenset[str]]:
        """Every score component per item, and the names of the sessions matched as repeats."""
        p = self.params
        ix = self._synced(h)
        n = len(h)
        times = h.array("times").astype(np.float64)
        if p.recency == "half_life":
            age = np.maximum(0.0, request.now.timestamp() - times)
            recency = p.recency_max * np.power(0.5, age / (p.half_life_days * 86400.0))
        else:
            span = float(times.max() - times.min()) if n else 0.0
            recency = (
                p.recency_max * (times - times.min()) / span if span > 0 else np.full(n, p.recency_max)
            )
        rel_name, relevance = self._relevance(h, ix, request)

        names = ix.session_names
        resolved = ix.session_array("resolved")
        repeats = self._repeat_sessions(h, ix, request)
        repeat_by_session = np.zeros(len(names))
        for s, bonus in repeats.items():
            repeat_by_session[s] = bonus
        sess = ix.array("sess")
        item_resolved = resolved[sess] if n else np.zeros(0, dtype=bool)
        active = ix.sessions.get(request.session, -1)

        comps = {
            "base": np.full(n, p.base),
            "recency": recency,
            rel_name: relevance,
            "active_session": np.where(sess == active, p.active_session, 0.0),
            "open_issue": np.where(item_resolved, 0.0, p.open_issue),
            "resolved_session": np.where(item_resolved, p.resolved_session, 0.0),
            "repeat_issue": repeat_by_session[sess] if n else np.zeros(0),
            "action_step": np.where(ix.array("action"), p.action_step, 0.0),
            "urgency": np.where(ix.array("urgent"), p.urgency, 0.0),
            "idle_chatter": np.where(ix.array("lengths") < p.idle_chars, p.idle_chatter, 0.0),
        }
        return comps, frozenset(names[s] for s in repeats)

    def context(self, request: ContextRequest) -> Bundle:
        h = self.memory.history(request.subject)
        comps, _ = self._components(h, request)
        return pack(h, request, comps, render=self.params.render)

    # -- capabilities ----------------------------------------------------------------------

    def health(self, subject: str, now: datetime) -> HealthReport:
        """The reference health model over the subject's history (see `stores.session.health`),
        from a `HealthState` kept in step with the history, so the report after each event costs
        what that event changed, not the whole history."""
        h = self.memory.history(subject)
        if not len(h):  # no state kept for a customer never seen
            return health_report(h, now, self.params.health)
        state = self._health.get(subject)
        if state is None:
            state = self._health[subject] = HealthState(self.params.health)
        return state.report(h, now)

    def handoff(self, request: ContextRequest, budget_tokens: int | None = None) -> Handoff:
        """A brief for the next human agent, within `budget_tokens` (default `handoff_budget`).

        The request's own `budget_tokens` is the context budget and does not bound the brief.
        """
        h = self.memory.history(request.subject)
        comps, repeats = self._components(h, request)
        return build_handoff(
            h,
            request,
            scores=total_score(comps, len(h)),
            repeat_sessions=repeats,
            budget_tokens=self.params.handoff_budget if budget_tokens is None else budget_tokens,
            health=self.health(request.subject, request.now),
        )

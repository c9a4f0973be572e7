"""session_aware: the reference design's session-aware ranking, every constant a parameter (docs/reference.md)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import ClassVar, Literal

import numpy as np

from stores.bounds import NonNegative, NonNegativeInt, NonPositive, Positive, PositiveInt, Share
from stores.session.handoff import build_handoff
from stores.session.health import HealthParams
from stores.session.health_state import HealthState, health_report
from stores.memory import RESOLUTION_ROLE, IndexedMemory, SubjectHistory
from stores.packing import pack, total_score
from stores.protocol import Bundle, ContextRequest, Handoff, HealthReport
from stores.retrieval.tfidf import TfidfIndex, term_counts, tfidf_cosine
from stores.text import is_urgent, keywords, overlap_ratio, words


PUBLISHED: dict[str, object] = {
    "relevance": "overlap", "recency": "minmax", "recency_max": 5.0, "overlap_max": 5.0, "boost_cap": None,
    "active_session": 6.0, "open_issue": 4.0, "resolved_session": -5.0, "repeat_issue": 4.0,
    "repeat_issue_with_summary": 6.0, "action_step": 2.0, "step_order": 0.0, "known_fix": False, "urgency": 2.0,
    "idle_chatter": -2.0,
}
"""The reference design's constants: the `session_aware[published]` variant (its arithmetic exactly:
raw word overlap 0-5, recency min-max over the pool 0-5, unbounded session bonuses)."""

SESSION_SIGNALS = ("active_session", "open_issue", "resolved_session", "repeat_issue", "action_step", "step_order",
                   "urgency", "idle_chatter")
"""The session components, whose sum `boost_cap` bounds."""


@dataclass(frozen=True)
class SessionAwareParams:
    """Parameters of `session_aware`. The defaults rank by relevance first: the project's TF-IDF
    cosine normalised per probe (0..`relevance_max`), recency on an absolute half-life, and the
    session signals as boosts whose sum `boost_cap` bounds (docs/session-ranking.md); the
    `published` variant (`PUBLISHED`) keeps the reference design's arithmetic."""

    base: float = 3.0
    """Base priority of every candidate (turns and resolution records)."""
    relevance: Literal["overlap", "tfidf"] = "tfidf"
    """`tfidf`: the project's TF-IDF cosine of the item to the task (as `tfidf` ranks), divided by
    the probe's best, times `relevance_max` (component `relevance`); `overlap`: the published raw
    word overlap, `min(overlap_max, overlap_max * |T ∩ C| / |T|)` (component `overlap`)."""
    relevance_max: NonNegative = 10.0
    """Largest relevance component (with `relevance` other than `overlap`)."""
    recency: Literal["minmax", "half_life"] = "half_life"
    """`half_life` on the absolute age at `now`, or `minmax` over the subject's pool (published)."""
    recency_max: NonNegative = 1.0
    """Largest recency component."""
    half_life_days: Positive = 30.0
    """Age at which half-life recency halves (only with `recency="half_life"`)."""
    overlap_max: NonNegative = 5.0
    """Largest overlap component (only with `relevance="overlap"`)."""
    overlap_words: Literal["words", "keywords"] = "words"
    """Which words count for overlap: all words (faithful) or issue keywords (stopwords out)."""
    boost_cap: NonNegative | None = 4.5
    """The sum of the session signals (`SESSION_SIGNALS`) of an item is clipped to
    [-boost_cap, +boost_cap]; the clip is its own component (`boost_cap`), so the components still
    sum to the score. With `2 * boost_cap + recency_max <= relevance_max` no boost and no age can
    lift an unrelated item over the probe's most relevant one. None: unbounded (published)."""
    active_session: NonNegative = 3.0
    """Bonus for items of the request's session."""
    open_issue: NonNegative = 1.0
    """Bonus for items of a session that is not resolved."""
    resolved_session: NonPositive = -2.0
    """Penalty for items of a resolved session."""
    repeat_issue: NonNegative = 2.0
    """Bonus for items of a resolved session that matches the current issue."""
    repeat_issue_with_summary: NonNegative = 3.0
    """The repeat bonus instead, when that session's resolution has a non-empty summary."""
    repeat_threshold: Share = 0.30
    """Match when |current ∩ prior| / |current| >= this (issue keywords)."""
    repeat_current: Literal["session", "customer"] = "session"
    """Where the current issue's keywords come from: the task plus every turn of the live session
    (`session`, the reference design) or the task plus the live session's customer turns only
    (`customer`: the agent's greetings and sign-offs, shared by every ticket, cannot make an
    unrelated resolved session look like a repeat)."""
    action_step: NonNegative = 0.5
    """Bonus for agent turns and `kind: action` turns."""
    step_order: NonNegative = 3.5
    """Largest bonus for an action step of a resolved session by its place among that session's
    steps: `step_order * k / (m - 1)` for the k-th of m (0 first; a session's only step gets all
    of it), so the step that came last, the one that resolved the session, outranks the attempts
    before it (published: 0, no component)."""
    known_fix: bool = True
    """In each resolved session matched as a repeat of the current issue, the known fix takes the
    places of the attempts that failed before it (component `known_fix`). The known fix is the
    session's last turn of `kind: action` (its last agent turn when it has none) and the
    customer turns after it: the step that resolved the session, and the customer's word that
    it worked. The attempts are the customer turns and action steps between the session's
    first turn (the problem as first told) and the fix: what was tried and did not help. The scores the fix and the attempts hold are dealt out again, the highest to the fix,
    each group keeping its own order: no item leaves or enters the places its session holds in
    the ranking, and no item of the session rises above the session's best attempt or fix
    (published: off, no component)."""
    urgency: NonNegative = 1.0
    """Bonus for items whose text carries an urgency marker."""
    idle_chatter: NonPositive = -1.0
    """Penalty for items whose text is shorter than `idle_chars`."""
    idle_chars: NonNegativeInt = 20
    """Length (characters of the item's own text) below which it is idle chatter."""
    render: Literal["rank", "chronological"] = "rank"
    """Order of the packed lines in the context text."""
    health: HealthParams = field(default_factory=HealthParams)
    """Constants of the health model (`stores.session.health`)."""
    handoff_budget: PositiveInt = 4000
    """Hard token ceiling of a handoff brief."""

    def __post_init__(self) -> None:
        if self.relevance != "overlap" and self.boost_cap is not None and \
                2 * self.boost_cap + self.recency_max > self.relevance_max:
            raise ValueError(f"2 * boost_cap + recency_max ({2 * self.boost_cap + self.recency_max:g}) must be at most "
                             f"relevance_max ({self.relevance_max:g}): boosts and age must not outweigh relevance")


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
            "step": np.zeros(64, dtype=np.int64),  # position among its session's action steps (0 first)
            "customer": np.zeros(64, dtype=bool),
        }
        self.sessions: dict[str, int] = {}
        self.session_names: list[str] = []
        # per session, kept in step with the history's resolution records (never recomputed by
        # looping over every session at a probe)
        self.scols = {"resolved": np.zeros(16, dtype=bool), "summary": np.zeros(16, dtype=bool),
                      "steps": np.zeros(16, dtype=np.int64), "last_step": np.full(16, -1, dtype=np.int64),
                      "last_action": np.full(16, -1, dtype=np.int64)}
        self.turn_kw: list[set[str]] = []  # per session: keywords of its turns
        self.customer_kw: list[set[str]] = []  # per session: keywords of its customer turns
        self.summary_kw: list[frozenset[str]] = []  # per session: keywords of its resolution summary
        self._prior: list[frozenset[str] | None] = []  # per session: turns | summary, built on demand
        # word -> positions, per kind; built on the first `hits` of that kind (only the published
        # word overlap asks) and then kept up to date: `posted` items of each kind are in
        self.postings: dict[str, dict[str, list[int]]] = {"words": {}, "keywords": {}}
        self.posted = {"words": 0, "keywords": 0}
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
                self.scols = {k: np.concatenate([v, np.full_like(v, -1 if k.startswith("last_") else 0)])
                              for k, v in self.scols.items()}
        self._prior[s] = None
        self.texts.append(text)
        if i >= len(self.cols["sess"]):  # grow the columns geometrically
            self.cols = {k: np.concatenate([v, np.zeros_like(v)]) for k, v in self.cols.items()}
        self.cols["sess"][i] = s
        self.cols["action"][i] = role == "agent" or h.kinds[i] == "action"
        self.cols["customer"][i] = role == "customer" and not self.cols["action"][i]
        if self.cols["action"][i]:
            self.cols["step"][i] = self.scols["steps"][s]
            self.scols["steps"][s] += 1
            self.scols["last_step"][s] = i
            if h.kinds[i] == "action":
                self.scols["last_action"][s] = i
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

    def _vocab(self, kind: str) -> list[frozenset[str]]:
        return self.words if kind == "words" else self.kwords

    def _post(self, kind: str) -> dict[str, list[int]]:
        """The postings of `kind`, with every item in (those not posted yet are added in order)."""
        post, vocab = self.postings[kind], self._vocab(kind)
        for i in range(self.posted[kind], len(self.texts)):
            for word in vocab[i]:
                lst = post.get(word)
                if lst is None:
                    post[word] = [i]
                else:
                    lst.append(i)
        self.posted[kind] = len(self.texts)
        return post

    def _replace(self, i: int, text: str) -> None:
        # a resolution record re-observed with a new summary: rare, so plain list surgery
        posted = [kind for kind in ("words", "keywords") if i < self.posted[kind]]
        for kind in posted:
            for word in self._vocab(kind)[i]:
                lst = self.postings[kind][word]
                lst.remove(i)
                self._post_arrays.get(kind, {}).pop(word, None)
        self.texts[i] = text
        self.cols["urgent"][i] = is_urgent(text)
        self.cols["lengths"][i] = len(text)
        self._index_text(i, text)
        for kind in posted:
            for word in self._vocab(kind)[i]:  # re-insert, keeping each posting list sorted
                self.postings[kind].setdefault(word, []).append(i)
                self.postings[kind][word].sort()
        self._set_summary(int(self.cols["sess"][i]), self.kwords[i])

    def array(self, name: str) -> np.ndarray:
        """A per-item column (`sess`, `action`, `customer`, `urgent`, `lengths`, `step`) aligned with the history."""
        return self.cols[name][: len(self.texts)]

    def session_array(self, name: str) -> np.ndarray:
        """A per-session column (`resolved`, `summary`: its resolution has a non-empty summary,
        `steps`: how many action steps it has, `last_step`: the position of the last one,
        `last_action`: of its last turn of `kind: action`; -1 for none), aligned with `sessions`."""
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
        return _count_postings(self._post(kind), self._post_arrays.setdefault(kind, {}), task_words, len(self.texts))


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


def _step_order(ix: SessionIndex, sess: np.ndarray, top: float) -> np.ndarray:
    """`top * k / (m - 1)` for the k-th of the m action steps of an item's session (`top` when m is 1), 0 for other items."""
    if not len(sess):
        return np.zeros(0)
    m = ix.session_array("steps")[sess].astype(np.float64)
    share = np.where(m > 1, ix.array("step") / np.maximum(m - 1, 1), 1.0)
    return np.where(ix.array("action"), top * share, 0.0)


def known_fix_places(ix: SessionIndex, sessions: list[int], score: np.ndarray) -> np.ndarray:
    """What `known_fix` adds to each item (`SessionAwareParams.known_fix`): in each of `sessions`
    (the resolved sessions matched as repeats) that has a step, the scores its known fix and its
    attempts hold are dealt out again, the highest to the fix (in the fix's own order), the rest
    to the attempts (in theirs). The additions of a session sum to 0."""
    out = np.zeros(len(score))
    sess, customer, action = ix.array("sess"), ix.array("customer"), ix.array("action")
    last_action, last_step = ix.session_array("last_action"), ix.session_array("last_step")
    for s in sessions:
        last = last_action[s] if last_action[s] >= 0 else last_step[s]
        if last < 0:
            continue  # no step: no fix
        items = np.flatnonzero(sess == s)
        fix = items[(items == last) | (customer[items] & (items > last))]
        attempts = items[(items > items[0]) & (items < last) & (customer[items] | action[items])]
        both = np.concatenate([fix, attempts])
        levels = np.sort(score[both])[::-1]  # the places the fix and the attempts hold
        for group, places in ((fix, levels[: len(fix)]), (attempts, levels[len(fix):])):
            order = group[np.lexsort((group, -score[group]))]  # by score, ties in history order
            out[order] = places - score[order]
    return out


def per_probe(x: np.ndarray) -> np.ndarray:
    """`x` (scores >= 0) divided by its largest value at this probe: 0..1, the best item 1 (all 0
    when nothing scores)."""
    top = float(x.max()) if len(x) else 0.0
    return x / top if top > 0 else np.zeros(len(x))


class SessionAware(IndexedMemory):
    """Session-aware ranking after the published Statewave design, with its defects fixed.

    Every candidate (each turn and each resolution record of the customer) scores
    `base + recency + relevance + active_session + open_issue + resolved_session +
    repeat_issue + action_step + step_order + urgency + idle_chatter + boost_cap + known_fix`
    (docs/session-ranking.md; every constant is a field of `SessionAwareParams`), and the bundle
    carries each component. By default relevance leads: the TF-IDF cosine divided by the probe's
    best (0..10), recency on a 30-day half-life (0..1), the session signals' sum bounded to +-4.5,
    and in a repeat of a resolved session the known fix takes the places of the attempts that
    failed before it. The
    `published` variant keeps the reference design's table exactly (docs/reference.md: raw word
    `overlap` 0..5, min-max recency 0..5, unbounded bonuses up to +6).
    A resolution record counts as an item like a turn: it gets `base`, and its role is not
    `agent`, so no `action_step`.

    Fixes over the published implementation:

    - every item of the subject is ranked, not only the oldest 30 episodes;
    - words come from `stores.text` (lower-cased, punctuation stripped) and always from an
      item's own text, never from its rendered line, so "issue?" matches "issue" and role
      prefixes or timestamps cannot become issue keywords;
    - recency is on an absolute time scale (`half_life_days`), the faithful min-max over the
      pool being the published variant's;
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
    derived: ClassVar[tuple[str, ...]] = ("_index", "_health", "_lex", "_kept")
    presets: ClassVar[dict[str, dict[str, object]]] = {"published": PUBLISHED}
    """Named variants (`session_aware[published]`): the params they start from (`stores.registry`)."""

    def __init__(self, params: SessionAwareParams | None = None) -> None:
        self.params = params or self.Params()
        super().__init__()
        self._index: dict[str, SessionIndex] = {}
        self._health: dict[str, HealthState] = {}
        self._lex: dict[str, TfidfIndex] = {}
        self._kept: dict[str, tuple] = {}  # subject -> the last probe's `_session_signals`
        self._analyzer = term_counts(1, 1, True)  # `tfidf`'s own defaults: the same words, the same weights

    def _synced(self, h: SubjectHistory) -> SessionIndex:
        ix = self._index.get(h.subject)
        if ix is None:
            ix = SessionIndex()
            if len(h):
                self._index[h.subject] = ix
        ix.sync(h)
        return ix

    # -- ranking ---------------------------------------------------------------------------

    def _lexical(self, h: SubjectHistory, request: ContextRequest) -> np.ndarray:
        """The project's TF-IDF cosine of every item to the task (what `tfidf` ranks by)."""
        return tfidf_cosine(self._lex, h, request.task, self._analyzer, True)

    def _relevance(self, h: SubjectHistory, ix: SessionIndex, request: ContextRequest) -> tuple[str, np.ndarray]:
        """The relevance component: TF-IDF cosine normalised per probe, or the published word
        overlap with the task (hybrid adds embeddings)."""
        p = self.params
        if p.relevance == "tfidf":
            return "relevance", p.relevance_max * per_probe(self._lexical(h, request))
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
        resolved = ix.session_array("resolved")
        if not resolved.any():  # no resolved session, no repeat (a long conversation has none)
            return {}
        active = ix.sessions.get(request.session)
        current = set(keywords(request.task))
        if active is not None:
            current |= ix.customer_kw[active] if p.repeat_current == "customer" else ix.turn_kw[active]
        if not current:
            return {}
        ratio = ix.repeat_hits(frozenset(current)) / len(current)
        match = resolved & (ratio >= p.repeat_threshold)
        if active is not None:
            match[active] = False
        summary = ix.session_array("summary")
        return {int(s): (p.repeat_issue_with_summary if summary[s] else p.repeat_issue) for s in np.flatnonzero(match)}

    def _components(self, h: SubjectHistory, request: ContextRequest) -> tuple[dict[str, np.ndarray], frozenset[str]]:
        """Every score component per item, and the names of the sessions matched as repeats."""
        p = self.params
        ix = self._synced(h)
        n = len(h)
        rel_name, relevance = self._relevance(h, ix, request)
        repeats = self._repeat_sessions(h, ix, request)
        base, signals = self._session_signals(h, ix, request, repeats)
        comps = {"base": base, "recency": self._recency(h, request), rel_name: relevance, **signals}
        if p.known_fix:  # last: it deals out the places the scores so far give
            comps["known_fix"] = (known_fix_places(ix, sorted(repeats), total_score(comps, n)) if repeats
                                  else np.zeros(n))  # no repeat, nothing moves
        return comps, frozenset(ix.session_names[s] for s in repeats)

    def _recency(self, h: SubjectHistory, request: ContextRequest) -> np.ndarray:
        """The recency component: half-life on the age at `now`, or min-max over the pool."""
        p = self.params
        n = len(h)
        times = h.array("times").astype(np.float64)
        if p.recency == "half_life":
            age = np.maximum(0.0, request.now.timestamp() - times)
            return p.recency_max * np.power(0.5, age / (p.half_life_days * 86400.0))
        span = float(times.max() - times.min()) if n else 0.0
        return p.recency_max * (times - times.min()) / span if span > 0 else np.full(n, p.recency_max)

    def _session_signals(self, h: SubjectHistory, ix: SessionIndex, request: ContextRequest,
                         repeats: dict[int, float]) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """`base`, and the session signals with their `boost_cap` (in the receipt's order): what
        depends neither on the task's words nor on `now`, only on the history's version, the
        request's session and the repeats matched. Kept for the next probe with the same ones (a
        long conversation's questions come in a row after its last turn); the arrays are
        read-only, as `pack` requires of what it is handed."""
        key = (h.version, request.session, tuple(repeats.items()))
        kept = self._kept.get(h.subject)
        if kept is not None and kept[0] is ix and kept[1] == key:
            return kept[2], kept[3]
        p = self.params
        n = len(h)
        resolved = ix.session_array("resolved")
        repeat_by_session = np.zeros(len(ix.session_names))
        for s, bonus in repeats.items():
            repeat_by_session[s] = bonus
        sess = ix.array("sess")
        item_resolved = resolved[sess] if n else np.zeros(0, dtype=bool)
        active = ix.sessions.get(request.session, -1)

        base = np.full(n, p.base)
        signals = {
            "active_session": np.where(sess == active, p.active_session, 0.0),
            "open_issue": np.where(item_resolved, 0.0, p.open_issue),
            "resolved_session": np.where(item_resolved, p.resolved_session, 0.0),
            "repeat_issue": repeat_by_session[sess] if n else np.zeros(0),
            "action_step": np.where(ix.array("action"), p.action_step, 0.0),
            **({"step_order": np.where(item_resolved, _step_order(ix, sess, p.step_order), 0.0)} if p.step_order else {}),
            "urgency": np.where(ix.array("urgent"), p.urgency, 0.0),
            "idle_chatter": np.where(ix.array("lengths") < p.idle_chars, p.idle_chatter, 0.0),
        }
        if p.boost_cap is not None:  # the session signals' sum, bounded; the clip is a component of its own
            total = total_score({k: signals[k] for k in SESSION_SIGNALS if k in signals}, n)
            signals["boost_cap"] = np.clip(total, -p.boost_cap, p.boost_cap) - total
        for a in (base, *signals.values()):
            a.flags.writeable = False
        if len(h):
            self._kept[h.subject] = (ix, key, base, signals)
        return base, signals

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

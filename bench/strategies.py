"""Strategy benchmarks, side by side in one run: latency against history, packing against ranking,
peers, health per event, embedding costs. Every figure is a ratio of two things timed together.

    .venv/bin/python -m bench.strategies                      # everything, default sizes
    .venv/bin/python -m bench.strategies --sizes 100,1000 --probes 20 --skip embedding-costs

Sections (each measured on one customer's synthetic history: varied text, sessions of ~25
turns, most resolved; every probe comes after one new turn, so it pays the incremental indexing
a replay pays; timings are medians over `--probes` probes):

1. `latency`: context() p50/p95 per strategy at 100, 1,000 and 10,000 turns, and for each step
   up in history whether the p50 grew by no more than the history did (no worse than linear).
   The embedding strategies use a fresh, empty embedding cache made for this run, so their
   first probe pays every encode (nothing is warm by accident).
2. `packing`: context() against the ranking it packs, on two instances fed the same events,
   timed probe by probe: session_aware's `_components` and tfidf's `scores`. Goals:
   session_aware <= 2.5x at 100 turns, tfidf <= 2x at 10,000 turns.
3. `peers`: the incremental tfidf against a TF-IDF refitted per query (scikit-learn's
   `TfidfVectorizer` on the customer's items at every probe: scoring, and the whole context
   packed from those scores; the contexts must be identical), and the ranking of
   `session_aware[published]` (the variant that keeps the reference design's arithmetic; the
   default ranks by other components) against a per-probe recomputation of that arithmetic (every
   component of every item computed from the texts at each probe, with no index and no memo; the
   scores must be equal).
4. `health`: the cost of the health report the harness asks for after every event, at each
   history size: session_aware's `health()` over the whole timeline of one customer (every event
   observed, then its report), timed in `--repeat` rounds over the sizes in turn (a short timeline
   replayed 5 to 20 times per round); each event keeps the least of its timings (a busy spell of a
   shared machine lands on some timelines, not on all) and the cost per event is their
   mean over the last 100 events (the history at its full length, session openings and
   resolutions included) and over the whole timeline; beside it `health_report` (a fresh
   `HealthState` reading the whole history, the cost from scratch) on the same histories (the reports must be equal). Goal (issue 18): flat, the cost per event at each
   size at most 1.5x the cost at the smallest (3,000 turns against 100). Two histories: one whose
   old sessions were all resolved, and section 1's, where 28% of sessions are never resolved and
   stay open, so every report lists more open, idle sessions with their days idle (a detail that
   changes with `now`, so it is written again at every report): what a report says grows there,
   and its cost with it.
5. `embedding-costs`: a 1,000-turn suite through `embedding` as the harness runs it (`prepare`,
   then the replay) with an empty cache, against encoding the same unique texts raw with the same
   model. Baselines are named: the raw encode is `encode_unpadded` (equal-length groups, no
   padding: what the strategy does) at one thread, and, for reference, the model's padded
   batches of 64. The cold run is timed at this process's default threads (cores / workers with
   one worker: every core) and at one thread; the warm rerun reads the disk cache with the
   in-process encoders dropped, as a new process would. Goals: cold at default threads <= 0.8x
   the one-thread raw encode; cold at one thread <= 1.15x the one-thread raw encode (like with
   like); warm >= 20x faster than cold.

The load average is printed at the start and at the end: on a shared machine absolute times
move, the ratios much less.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

if __package__ in (None, ""):  # `python bench/strategies.py`
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

from stores.protocol import ContextRequest, Resolution, Turn  # noqa: E402
from stores.registry import strategy_class  # noqa: E402

T0 = datetime(2025, 1, 6, 9, 0, tzinfo=timezone.utc)
TOPICS = {
    "billing": "invoice charge refund card payment plan upgrade receipt tax vat discount annual".split(),
    "login": "password sso saml login mfa token session locked reset email okta".split(),
    "export": "csv export report download timeout 502 spreadsheet columns filter schedule".split(),
    "api": "api key rate limit webhook 429 endpoint latency sdk pagination retries".split(),
    "mobile": "ios android app crash notification push sync offline update screen".split(),
    "data": "import duplicate records merge field mapping sync salesforce hubspot delete".split(),
}
FILLER = "the a it we our my is was still again since after when after today yesterday now please".split()
OPENERS = ["Hi,", "Hello team,", "Quick question:", "Following up:", "URGENT:", "", "", "Hey,"]
AGENT = ["I checked", "I have reset", "Could you confirm", "We rolled back", "I escalated", "Please try", "I cleared"]
SECTIONS = ("latency", "packing", "peers", "health", "embedding-costs")


def synth_events(n_turns: int, subject: str = "bench", seed: int = 7, tag: str = "") -> list:
    """`n_turns` turns in sessions of ~25 (varied words per topic), most sessions resolved."""
    rng = random.Random(seed)
    events: list = []
    t = T0
    i = s = 0
    while i < n_turns:
        session = f"{tag}s{s}"
        topic = rng.choice(list(TOPICS))
        vocab = TOPICS[topic]
        length = min(rng.randint(15, 35), n_turns - i)
        for k in range(length):
            role = "customer" if k % 2 == 0 else "agent"
            words = rng.sample(vocab, rng.randint(2, 5)) + rng.sample(FILLER, rng.randint(2, 6))
            rng.shuffle(words)
            lead = rng.choice(OPENERS) if role == "customer" else rng.choice(AGENT)
            text = f"{lead} {' '.join(words)} (ref {tag}{i})".strip()
            kind = "action" if role == "agent" and rng.random() < 0.3 else "message"
            events.append(Turn(f"{session}#{k}", subject, session, role, kind, text, t))
            t += timedelta(minutes=rng.randint(1, 90))
            i += 1
        if rng.random() < 0.85:
            summary = f"Fixed {topic}: {' '.join(rng.sample(vocab, 3))} (case {tag}{s})" if rng.random() < 0.7 else ""
            status = "resolved" if rng.random() < 0.85 else "unresolved"
            events.append(Resolution(subject, session, status, summary, t))
        t += timedelta(hours=rng.randint(2, 200))
        s += 1
    return events


def settled_events(n_turns: int, subject: str = "bench") -> list:
    """`synth_events`, with every session but the live one ended resolved: a customer whose
    old tickets were all closed, so the sessions a health report lists stay few."""
    out: list = []
    events = synth_events(n_turns, subject)
    for k, e in enumerate(events):
        if isinstance(e, Resolution):
            out.append(Resolution(e.subject, e.session, "resolved", e.summary, e.at))
            continue
        out.append(e)
        nxt = events[k + 1] if k + 1 < len(events) else None
        if nxt is not None and not isinstance(nxt, Resolution) and nxt.session != e.session:
            out.append(Resolution(subject, e.session, "resolved", "", e.at + timedelta(minutes=1)))
    return out


def load_average() -> str:
    """The 1-, 5- and 15-minute load averages, as `uptime` prints them."""
    try:
        return ", ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "unknown"


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))]


def verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def probe_stream(events: list, probes: int, seed: int):
    """(new turn, request) pairs after the history: one new customer turn before each probe."""
    live = events[-1].session if isinstance(events[-1], Turn) else "live"
    rng = random.Random(seed)
    now = events[-1].at + timedelta(minutes=5)
    for p in range(probes):
        now += timedelta(minutes=3)
        vocab = TOPICS[rng.choice(list(TOPICS))]
        text = f"still {' '.join(rng.sample(vocab, 4))} (probe {p})"
        yield (Turn(f"{live}#p{p}", "bench", live, "customer", "message", text, now),
               ContextRequest("bench", live, text, 1500, now + timedelta(seconds=30)))


def side_by_side(events: list, probes: int, seed: int, contenders: dict, budget: int) -> dict[str, list[float]]:
    """Each contender (name -> (instance, call(instance, request))) fed the same events, then
    timed probe by probe, in turn, on the same requests; milliseconds per contender."""
    for inst, _ in contenders.values():
        for e in events:
            inst.observe(e)
    times: dict[str, list[float]] = {k: [] for k in contenders}
    for new, req in probe_stream(events, probes, seed):
        req = ContextRequest(req.subject, req.session, req.task, budget, req.now)
        for name, (inst, call) in contenders.items():
            inst.observe(new)
            t = time.perf_counter()
            call(inst, req)
            times[name].append((time.perf_counter() - t) * 1000)
    return times


# -- 1. latency ----------------------------------------------------------------------------


def latency(names: list[str], sizes: list[int], probes: int, budget: int) -> None:
    rows = []
    for size in sizes:
        events = synth_events(size)
        for name in names:
            s = strategy_class(name)()
            for e in events:
                s.observe(e)
            first_req = ContextRequest("bench", events[-1].session, "csv export times out with 502 again", budget,
                                       events[-1].at + timedelta(minutes=5))
            t = time.perf_counter()
            s.context(first_req)
            first = (time.perf_counter() - t) * 1000
            times = []
            for new, req in probe_stream(events, probes, size):
                s.observe(new)
                req = ContextRequest(req.subject, req.session, req.task, budget, req.now)
                t = time.perf_counter()
                s.context(req)
                times.append((time.perf_counter() - t) * 1000)
            rows.append((name, size, first, statistics.median(times), pct(times, 0.95)))
            print(f"  measured {name:<16} at {size:>6} turns", file=sys.stderr, flush=True)
    print(f"\n1. context() latency per probe, ms (budget {budget} tokens, {probes} probes, one new turn before each; "
          "embedding cache: fresh and empty)")
    print(f"{'strategy':<18}{'turns':>8}{'first':>10}{'p50':>10}{'p95':>10}")
    for name, size, first, p50, p95 in rows:
        print(f"{name:<18}{size:>8}{first:>10.2f}{p50:>10.2f}{p95:>10.2f}")
    by = {(n, s): p50 for n, s, _, p50, _ in rows}
    if len(sizes) > 1:
        print("growth of p50 against growth of history (no worse than linear: the p50 grows by no more than the history)")
        for name in dict.fromkeys(n for n, *_ in rows):
            parts = []
            for lo, hi in zip(sizes, sizes[1:]):
                g = by[(name, hi)] / by[(name, lo)]
                parts.append(f"{lo}->{hi}: x{g:.1f} for x{hi / lo:.0f} turns {verdict(g <= hi / lo)}")
            print(f"  {name:<16} " + "; ".join(parts))
    if ("session_aware", max(sizes)) in by and ("tfidf", max(sizes)) in by:
        big = max(sizes)
        print(f"  session_aware p50 / tfidf p50 at {big} turns: x{by[('session_aware', big)] / by[('tfidf', big)]:.2f}")


# -- 2. packing against ranking ---------------------------------------------------------------


def packing(sizes: list[int], probes: int, budget: int) -> None:
    from stores.retrieval.tfidf import TfidfRetrieval
    from stores.session.session_aware import SessionAware

    goals = {("session_aware", 100): 2.5, ("tfidf", 10000): 2.0}
    print(f"\n2. context() against the ranking it packs (two instances, same events and requests, budget {budget})")
    print(f"{'strategy':<16}{'turns':>8}{'ranking p50':>14}{'context p50':>14}{'ratio':>8}  goal")
    for size in sizes:
        events = synth_events(size)
        for name, cls, rank in (
            ("session_aware", SessionAware, lambda s, r: s._components(s.memory.history(r.subject), r)),
            ("tfidf", TfidfRetrieval, lambda s, r: s.scores(s.memory.history(r.subject), r.task)),
        ):
            t = side_by_side(events, probes, size, {"rank": (cls(), rank), "context": (cls(), lambda s, r: s.context(r))}, budget)
            r, c = statistics.median(t["rank"]), statistics.median(t["context"])
            goal = goals.get((name, size))
            note = f"<= {goal}x: {verdict(c / r <= goal)}" if goal else ""
            print(f"{name:<16}{size:>8}{r:>14.3f}{c:>14.3f}{c / r:>8.2f}  {note}")


# -- 3. peers ----------------------------------------------------------------------------------


def refit_tfidf_scores(s, h, task: str) -> np.ndarray:
    """The peer: scikit-learn's TfidfVectorizer fitted on the customer's items at this probe."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    from stores.retrieval.tfidf import TOKEN_PATTERN
    from stores.text import STOPWORDS

    p = s.params
    vec = TfidfVectorizer(lowercase=True, token_pattern=TOKEN_PATTERN, ngram_range=(p.ngram_min, p.ngram_max),
                          stop_words=sorted(STOPWORDS) if p.stop_words else None, sublinear_tf=p.sublinear_tf,
                          smooth_idf=True, norm="l2")
    try:
        x = vec.fit_transform(h.texts)
    except ValueError:  # an empty vocabulary: every cosine is 0
        return np.zeros(len(h))
    q = vec.transform([task])
    return np.asarray((x @ q.T).todense()).ravel()


def published_session_scores(s, h, request) -> np.ndarray:
    """The peer: every component of every item recomputed from the texts at this probe, the
    published arithmetic with this project's readings (docs/reference.md), no index, no memo."""
    from stores.memory import RESOLUTION_ROLE
    from stores.text import is_urgent, keywords, overlap_ratio, words

    words, keywords, is_urgent = words.__wrapped__, keywords.__wrapped__, is_urgent.__wrapped__  # no memo
    p = s.params
    n = len(h)
    times = [float(t) for t in h.times]
    lo, hi = (min(times), max(times)) if n else (0.0, 0.0)
    task = words(request.task) if p.overlap_words == "words" else keywords(request.task)
    sessions: dict[str, list[int]] = {}
    for i in range(n):
        sessions.setdefault(h.sessions[i], []).append(i)
    turn_kw = {name: set().union(*(keywords(h.texts[i]) for i in idx if h.roles[i] != RESOLUTION_ROLE))
               for name, idx in sessions.items()}
    prior = {name: frozenset(turn_kw[name] | set().union(*(keywords(h.texts[i]) for i in idx if h.roles[i] == RESOLUTION_ROLE)))
             for name, idx in sessions.items()}
    current = set(keywords(request.task)) | turn_kw.get(request.session, set())
    repeat = {}
    for name in sessions:
        if name != request.session and h.is_resolved(name) and current and \
                overlap_ratio(frozenset(current), prior[name]) >= p.repeat_threshold:
            repeat[name] = p.repeat_issue_with_summary if h.summaries.get(name, "").strip() else p.repeat_issue
    out = np.zeros(n)
    for i in range(n):
        text, name = h.texts[i], h.sessions[i]
        resolved = h.is_resolved(name)
        vocab = words(text) if p.overlap_words == "words" else keywords(text)
        comps = [
            p.base,
            p.recency_max * (times[i] - lo) / (hi - lo) if hi > lo else p.recency_max,
            min(p.overlap_max, p.overlap_max * len(task & vocab) / len(task)) if task else 0.0,
            p.active_session if name == request.session else 0.0,
            0.0 if resolved else p.open_issue,
            p.resolved_session if resolved else 0.0,
            repeat.get(name, 0.0),
            p.action_step if h.roles[i] == "agent" or h.kinds[i] == "action" else 0.0,
            p.urgency if is_urgent(text) else 0.0,
            p.idle_chatter if len(text) < p.idle_chars else 0.0,
        ]
        total = 0.0
        for c in comps:
            total = total + c
        out[i] = total
    return out


def peers(sizes: list[int], probes: int, budget: int) -> None:
    from stores.packing import pack, total_score
    from stores.retrieval.tfidf import TfidfRetrieval
    from stores.session.session_aware import PUBLISHED, SessionAware

    def published() -> SessionAware:
        return SessionAware(SessionAware.Params(**PUBLISHED))

    print(f"\n3. against peers (same events and requests, timed in turn; budget {budget})")
    print(f"{'comparison':<58}{'turns':>8}{'ours p50':>11}{'peer p50':>11}{'ours/peer':>11}  same output")
    for size in sizes:
        events = synth_events(size)
        same = {"scores": True, "contexts": True, "ranking": True}

        def refit_scores(s, r):
            return refit_tfidf_scores(s, s.memory.history(r.subject), r.task)

        def refit_context(s, r):
            h = s.memory.history(r.subject)
            cos = refit_tfidf_scores(s, h, r.task)
            return pack(h, r, {"cosine": cos}, eligible=cos > s.params.min_score, cap=s.params.top_k, render=s.params.render)

        checks = {"ours": TfidfRetrieval(), "peer": TfidfRetrieval()}
        for e in events:
            for inst in checks.values():
                inst.observe(e)
        for new, req in list(probe_stream(events, min(probes, 10), size + 1)):
            for inst in checks.values():
                inst.observe(new)
            a = checks["ours"].context(req)
            b = refit_context(checks["peer"], req)
            h = checks["ours"].memory.history(req.subject)
            same["scores"] &= bool(np.allclose(checks["ours"].scores(h, req.task), refit_scores(checks["peer"], req), atol=1e-12))
            same["contexts"] &= a.text == b.text
        t = side_by_side(events, probes, size, {
            "ours": (TfidfRetrieval(), lambda s, r: s.scores(s.memory.history(r.subject), r.task)),
            "peer": (TfidfRetrieval(), refit_scores)}, budget)
        o, q = statistics.median(t["ours"]), statistics.median(t["peer"])
        print(f"{'tfidf scoring: incremental vs refit per query':<58}{size:>8}{o:>11.3f}{q:>11.3f}{o / q:>11.3f}  "
              f"{'yes' if same['scores'] else 'NO'}")
        t = side_by_side(events, probes, size, {
            "ours": (TfidfRetrieval(), lambda s, r: s.context(r)), "peer": (TfidfRetrieval(), refit_context)}, budget)
        o, q = statistics.median(t["ours"]), statistics.median(t["peer"])
        print(f"{'tfidf context(): incremental vs refit per query':<58}{size:>8}{o:>11.3f}{q:>11.3f}{o / q:>11.3f}  "
              f"{'yes' if same['contexts'] else 'NO'}")

        def ours_rank(s, r):
            return total_score(s._components(s.memory.history(r.subject), r)[0], len(s.memory.history(r.subject)))

        def peer_rank(s, r):
            return published_session_scores(s, s.memory.history(r.subject), r)

        # the peer recomputes the published arithmetic, so it is held to the variant that keeps it
        # (`session_aware[published]`): the default's relevance, recency and bounded boosts differ
        check = published()
        for e in events:
            check.observe(e)
        for new, req in list(probe_stream(events, min(probes, 10), size + 2)):
            check.observe(new)
            same["ranking"] &= bool(np.array_equal(ours_rank(check, req), peer_rank(check, req)))
        t = side_by_side(events, probes, size, {"ours": (published(), ours_rank), "peer": (published(), peer_rank)}, budget)
        o, q = statistics.median(t["ours"]), statistics.median(t["peer"])
        print(f"{'session_aware[published] ranking vs published recomputed':<58}{size:>8}{o:>11.3f}{q:>11.3f}{o / q:>11.3f}  "
              f"{'yes' if same['ranking'] else 'NO'}")


# -- 4. health per event -----------------------------------------------------------------------


HEALTH_WINDOW = 100
"""Events at the end of each timeline whose mean cost is the cost per event at that history size."""


def health_timeline(events: list, least: list[float]):
    """One replay's health timeline (each event observed, then its report), each report's time
    kept in `least` when it is the least so far; the last report."""
    from stores.session.session_aware import SessionAware

    s = SessionAware()
    for k, e in enumerate(events):
        s.observe(e)
        t = time.perf_counter()
        last = s.health(e.subject, e.at)
        least[k] = min(least[k], time.perf_counter() - t)
    return last


def health(sizes: list[int], checks: int, repeat: int) -> None:
    from stores.session.health_state import health_report
    from stores.session.session_aware import SessionAware

    big = max(sizes)
    print(f"\n4. the health report after every event: session_aware.health() over one customer's whole timeline, "
          f"us per event (each event's least of {repeat} rounds, the sizes in turn in each round, a short timeline "
          f"replayed 5 to 20 times per round; mean over the last {HEALTH_WINDOW} events and over the whole timeline), "
          f"vs health_report from scratch (median of the last {checks} events); `listed` = source ids the last report names")
    print(f"{'history':<40}{'turns':>7}{'events':>8}{'listed':>8}{'last us':>10}{'timeline us':>13}"
          f"{'scratch us':>12}{'scratch/ours':>14}")
    for label, make in (("every past session resolved", settled_events),
                        ("28% of sessions never resolved (section 1)", synth_events)):
        histories = {size: make(size) for size in sizes}
        least = {size: [float("inf")] * len(ev) for size, ev in histories.items()}
        last = {}
        # rounds over the sizes in turn, so that a busy spell of a shared machine cannot fall on
        # one size's timings only; a short timeline is replayed more often, for as many reports
        for _ in range(max(1, repeat)):
            for size, events in histories.items():
                for _ in range(max(5, min(20, big // size))):
                    last[size] = health_timeline(events, least[size])
        per_event, idle = {}, {}
        for size, events in histories.items():
            tail = least[size][-HEALTH_WINDOW:]
            best = per_event[size] = sum(tail) / len(tail) * 1e6
            whole = sum(least[size]) / len(events) * 1e6
            # the same reports from scratch on the last `checks` events (equal, and what they cost)
            s, scratch = SessionAware(), []
            for k, e in enumerate(events):
                s.observe(e)
                if k >= len(events) - checks:
                    a = s.health(e.subject, e.at)
                    t = time.perf_counter()
                    b = health_report(s.memory.history(e.subject), e.at, s.params.health)
                    scratch.append((time.perf_counter() - t) * 1e6)
                    if a != b:
                        raise AssertionError(f"health() and health_report differ at {size} turns, event {k}")
            sc = statistics.median(scratch)
            factors = last[size].factors
            listed = sum(len(f.source_ids) for f in factors)
            idle[size] = sum(len(f.source_ids) for f in factors if f.signal == "idle_open_issue")
            print(f"{label:<40}{size:>7}{len(events):>8}{listed:>8}{best:>10.1f}{whole:>13.1f}{sc:>12.1f}{sc / best:>14.1f}")
        lo = min(sizes)
        steps = "; ".join(f"{n}: x{per_event[n] / per_event[lo]:.2f} {verdict(per_event[n] <= 1.5 * per_event[lo])}"
                          for n in sizes if n != lo)
        print(f"  {label}: health() per event against {lo} turns (goal: flat, <= 1.5x): {steps}; "
              f"idle open sessions the last report names with their days idle (written anew at every report, "
              f"since they depend on `now`): {', '.join(f'{n}: {idle[n]}' for n in sizes)}")


# -- 5. embedding costs ------------------------------------------------------------------------


def suite(n_turns: int, every: int) -> tuple[list, list[tuple[int, ContextRequest]]]:
    """Events of a small suite and probes after every `every` turns (each with its own task)."""
    events = synth_events(n_turns, subject="suite", seed=11, tag="x")
    probes = []
    rng = random.Random(3)
    turns_seen = 0
    for k, e in enumerate(events):
        if isinstance(e, Turn):
            turns_seen += 1
            if turns_seen % every == 0:
                vocab = TOPICS[rng.choice(list(TOPICS))]
                task = f"what about {' '.join(rng.sample(vocab, 3))} (task {k})"
                probes.append((k, ContextRequest("suite", e.session, task, 500, e.at + timedelta(seconds=20))))
    return events, probes


def run_suite(events, probes) -> float:
    """The suite through `embedding` as the harness runs it: `prepare` with the scenario's texts
    (turns, resolution summaries and probe tasks in event order), then the replay; timed whole."""
    from stores.retrieval.embedding import EmbeddingRetrieval

    s = EmbeddingRetrieval()
    at = dict(probes)
    texts = []
    for k, e in enumerate(events):
        texts.append(e.text if isinstance(e, Turn) else e.summary)
        if k in at:
            texts.append(at[k].task)
    t = time.perf_counter()
    s.prepare(texts)
    for k, e in enumerate(events):
        s.observe(e)
        if k in at:
            s.context(at[k])
    return time.perf_counter() - t


def embedding_costs(n_turns: int, every: int, repeat: int) -> None:
    """Raw, cold and warm times, alternated `repeat` times; each keeps its minimum, so a busy
    machine slowing one side does not decide the ratio."""
    import torch

    from stores.retrieval import encoder as enc

    events, probes = suite(n_turns, every)
    texts = [e.text if isinstance(e, Turn) else e.summary for e in events] + [r.task for _, r in probes]
    unique = list(dict.fromkeys(t for t in texts if t.strip()))
    model = enc.load_model()
    default = enc.torch_threads(1)
    model.encode(["warm up the thread pool"] * 8, batch_size=64)  # neither side pays first-call costs
    m: dict[str, list[float]] = {k: [] for k in ("raw1", "padded1", "raw_default", "cold_default", "cold1", "warm")}
    encoded = {}
    for _ in range(max(1, repeat)):
        torch.set_num_threads(1)
        t = time.perf_counter()
        enc.encode_unpadded(model, unique)
        m["raw1"].append(time.perf_counter() - t)
        t = time.perf_counter()
        model.encode(unique, batch_size=enc.BATCH_SIZE, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False)
        m["padded1"].append(time.perf_counter() - t)
        torch.set_num_threads(default)
        t = time.perf_counter()
        enc.encode_unpadded(model, unique)
        m["raw_default"].append(time.perf_counter() - t)
        for key, threads in (("cold_default", default), ("cold1", 1)):
            torch.set_num_threads(threads)
            with tempfile.TemporaryDirectory() as tmp:
                os.environ["SUPPORTBENCH_CACHE"], saved = tmp, os.environ.get("SUPPORTBENCH_CACHE")
                enc.forget_encoders()
                m[key].append(run_suite(events, probes))
                encoded[key] = enc.encoder().encoded
                if key == "cold_default":
                    enc.forget_encoders()  # a new process: only the disk cache survives
                    m["warm"].append(run_suite(events, probes))
                    encoded["warm"] = enc.encoder().encoded
                enc.forget_encoders()
                os.environ["SUPPORTBENCH_CACHE"] = saved if saved is not None else os.environ.pop("SUPPORTBENCH_CACHE")
    torch.set_num_threads(default)
    best = {k: min(v) for k, v in m.items()}
    print(f"\n5. embedding costs: suite of {n_turns} turns, {len(probes)} probes, {len(unique)} unique texts, "
          f"best of {max(1, repeat)}; default threads for one process here: {default}")
    print(f"  raw encode, unpadded groups (encode_unpadded), 1 thread:  {best['raw1']:8.2f} s   (the baseline)")
    print(f"  raw encode, padded batches of 64, 1 thread (reference):    {best['padded1']:8.2f} s   "
          f"x{best['padded1'] / best['raw1']:.2f}")
    print(f"  raw encode, unpadded groups, {default} thread(s) (what the threads alone give): {best['raw_default']:6.2f} s   "
          f"x{best['raw_default'] / best['raw1']:.2f}")
    r = best["cold_default"] / best["raw1"]
    print(f"  cold run, {default} thread(s), {encoded['cold_default']} encoded:               {best['cold_default']:8.2f} s   "
          f"x{r:.2f} of the baseline (goal <= 0.8): {verdict(r <= 0.8)}")
    r1 = best["cold1"] / best["raw1"]
    print(f"  cold run, 1 thread, {encoded['cold1']} encoded:                    {best['cold1']:8.2f} s   "
          f"x{r1:.2f} of the baseline, like with like (goal <= 1.15): {verdict(r1 <= 1.15)}")
    speed = best["cold_default"] / best["warm"]
    print(f"  warm run, disk cache, {encoded['warm']} encoded:                   {best['warm']:8.2f} s   "
          f"{speed:.0f}x faster than cold (goal >= 20x): {verdict(speed >= 20)}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="100,1000,10000", help="history sizes in turns (comma-separated)")
    ap.add_argument("--health-sizes", default="100,1000,3000,10000", help="history sizes for the health section")
    ap.add_argument("--probes", type=int, default=40, help="timed probes per strategy and size")
    ap.add_argument("--budget", type=int, default=1500, help="context budget in tokens")
    ap.add_argument("--strategies", default="history_stuffing,tfidf,session_aware,embedding,hybrid",
                    help="strategies to time in the latency section")
    ap.add_argument("--suite-turns", type=int, default=1000, help="turns of the suite for the embedding cost runs")
    ap.add_argument("--probe-every", type=int, default=10, help="a probe after every N turns of the suite")
    ap.add_argument("--repeat", type=int, default=3, help="alternate the embedding cost runs N times, keep each one's minimum; time each health timeline N times, keep the best")
    ap.add_argument("--skip", default="", help=f"comma-separated sections to skip: {', '.join(SECTIONS)}")
    a = ap.parse_args(argv)
    skip = set(filter(None, a.skip.split(",")))
    unknown = skip - set(SECTIONS)
    if unknown:
        ap.error(f"unknown section(s) {', '.join(sorted(unknown))} (known: {', '.join(SECTIONS)})")
    sizes = [int(x) for x in a.sizes.split(",")]
    print(f"load average at start: {load_average()}; {os.cpu_count()} CPUs; python {sys.version.split()[0]}")
    with tempfile.TemporaryDirectory(prefix="supportbench-bench-cache-") as cache:
        # a fresh embedding cache for this run: nothing is warm from an earlier one
        os.environ["SUPPORTBENCH_CACHE"] = cache
        from stores.retrieval.encoder import forget_encoders

        forget_encoders()
        if "latency" not in skip:
            latency(a.strategies.split(","), sizes, a.probes, a.budget)
        if "packing" not in skip:
            packing(sizes, a.probes, a.budget)
        if "peers" not in skip:
            peers(sizes, a.probes, a.budget)
        if "health" not in skip:
            health([int(x) for x in a.health_sizes.split(",")], min(a.probes, 20), a.repeat)
        if "embedding-costs" not in skip:
            embedding_costs(a.suite_turns, a.probe_every, a.repeat)
    print(f"\nload average at end: {load_average()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

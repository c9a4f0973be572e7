"""Strategy benchmarks: per-probe latency by history size, embedding overhead and cache speed-up.

    .venv/bin/python -m bench.strategies                 # all measurements, default sizes
    .venv/bin/python -m bench.strategies --sizes 100,1000 --probes 20 --skip-overhead

Three measurements, printed as tables:

1. context() latency per probe (p50 / p95 over `--probes` probes, each after one new turn,
   so every probe pays the incremental indexing a replay pays) at 100, 1,000 and 10,000
   turns of one subject's history (synthetic, varied text, sessions of ~25 turns, most
   resolved). Targets: session_aware and tfidf p50 < 10 ms at 10,000 turns, and cost no
   worse than linear in history size. The first probe (full index build) is shown apart.
2. The embedding strategy's cold run of a suite, as the harness runs it (its `prepare` hook
   first, then the replay), vs the raw time to encode the same unique texts with the same
   model in batches of 64 (target overhead ratio <= 1.15).
3. The same suite cold vs warm on-disk cache, in-process state dropped in between as a new
   process would (target: warm >= 20x faster).
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


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))]


def latency(names: list[str], sizes: list[int], probes: int, budget: int) -> list[tuple]:
    rows = []
    for size in sizes:
        events = synth_events(size)
        live = events[-1].session if isinstance(events[-1], Turn) else "live"
        rng = random.Random(size)
        for name in names:
            s = strategy_class(name)()
            for e in events:
                s.observe(e)
            now = events[-1].at + timedelta(minutes=5)
            t = time.perf_counter()
            s.context(ContextRequest("bench", live, "csv export times out with 502 again", budget, now))
            first = (time.perf_counter() - t) * 1000
            times = []
            for p in range(probes):
                now += timedelta(minutes=3)
                vocab = TOPICS[rng.choice(list(TOPICS))]
                text = f"still {' '.join(rng.sample(vocab, 4))} (probe {p})"
                s.observe(Turn(f"{live}#p{p}", "bench", live, "customer", "message", text, now))
                req = ContextRequest("bench", live, text, budget, now + timedelta(seconds=30))
                t = time.perf_counter()
                s.context(req)
                times.append((time.perf_counter() - t) * 1000)
            rows.append((name, size, first, statistics.median(times), pct(times, 0.95)))
            print(f"  measured {name:<16} at {size:>6} turns", file=sys.stderr, flush=True)
    return rows


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


def embedding_costs(n_turns: int, every: int, repeat: int = 1) -> dict:
    """Raw, cold and warm times; with `repeat` > 1 the three alternate and each keeps its
    minimum, so a busy machine slowing one side does not decide the ratio."""
    from stores import encoder as enc

    events, probes = suite(n_turns, every)
    texts = [e.text if isinstance(e, Turn) else e.summary for e in events] + [r.task for _, r in probes]
    unique = list(dict.fromkeys(t for t in texts if t.strip()))
    model = enc.load_model()
    model.encode(["warm up the thread pool"] * 8, batch_size=64)  # neither side pays first-call costs
    raws, colds, warms = [], [], []
    for _ in range(max(1, repeat)):
        t = time.perf_counter()
        model.encode(unique, batch_size=enc.BATCH_SIZE, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False)
        raws.append(time.perf_counter() - t)
        with tempfile.TemporaryDirectory() as tmp:
            os.environ["SUPPORTBENCH_CACHE"] = tmp
            enc.forget_encoders()
            colds.append(run_suite(events, probes))
            cold_encoded = enc.encoder().encoded
            enc.forget_encoders()  # a new process: only the disk cache survives
            warms.append(run_suite(events, probes))
            warm_encoded = enc.encoder().encoded
            os.environ.pop("SUPPORTBENCH_CACHE")
            enc.forget_encoders()
    return dict(
        turns=n_turns, probes=len(probes), unique=len(unique), raw=min(raws), cold=min(colds), warm=min(warms),
        cold_encoded=cold_encoded, warm_encoded=warm_encoded, repeat=max(1, repeat),
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="100,1000,10000", help="history sizes in turns (comma-separated)")
    ap.add_argument("--probes", type=int, default=40, help="timed probes per strategy and size")
    ap.add_argument("--budget", type=int, default=1500, help="context budget in tokens")
    ap.add_argument(
        "--strategies", default="history_stuffing,tfidf,session_aware,embedding,hybrid", help="strategies to time"
    )
    ap.add_argument("--suite-turns", type=int, default=1000, help="turns of the suite for the embedding cost runs")
    ap.add_argument("--probe-every", type=int, default=10, help="a probe after every N turns of the suite")
    ap.add_argument("--repeat", type=int, default=1, help="alternate the embedding cost runs N times, keep each one's minimum")
    ap.add_argument("--skip-latency", action="store_true")
    ap.add_argument("--skip-overhead", action="store_true")
    a = ap.parse_args(argv)

    if not a.skip_latency:
        sizes = [int(x) for x in a.sizes.split(",")]
        rows = latency(a.strategies.split(","), sizes, a.probes, a.budget)
        print(f"\ncontext() latency per probe, ms (budget {a.budget} tokens, {a.probes} probes, one new turn before each)")
        print(f"{'strategy':<18}{'turns':>8}{'first':>10}{'p50':>10}{'p95':>10}{'p50 / turn (us)':>18}")
        for name, size, first, p50, p95 in rows:
            print(f"{name:<18}{size:>8}{first:>10.2f}{p50:>10.2f}{p95:>10.2f}{1000 * p50 / size:>18.3f}")
        by = {(n, s): p50 for n, s, _, p50, _ in rows}
        if len(sizes) > 1:
            print("\ngrowth of p50 against growth of history (a p50 growing by less than the history does is no worse than linear)")
            for name in dict.fromkeys(n for n, *_ in rows):
                parts = []
                for lo, hi in zip(sizes, sizes[1:]):
                    parts.append(f"{lo}->{hi}: x{by[(name, hi)] / by[(name, lo)]:.1f} for x{hi / lo:.0f} turns")
                print(f"  {name:<16} " + "; ".join(parts))
        big = max(sizes)
        for name in ("session_aware", "tfidf"):
            if (name, big) in by:
                ok = "PASS" if by[(name, big)] < 10 else "FAIL"
                print(f"  target {name} p50 < 10 ms at {big} turns: {by[(name, big)]:.2f} ms {ok}")

    if not a.skip_overhead:
        r = embedding_costs(a.suite_turns, a.probe_every, a.repeat)
        best = f", best of {r['repeat']}" if r["repeat"] > 1 else ""
        print(f"\nembedding costs: suite of {r['turns']} turns, {r['probes']} probes, {r['unique']} unique texts{best}")
        print(f"  raw encode of the unique texts (batch 64): {r['raw']:8.2f} s")
        ratio = r["cold"] / r["raw"]
        print(f"  cold run (empty cache, {r['cold_encoded']} encoded):    {r['cold']:8.2f} s   overhead x{ratio:.2f} (target <= 1.15) {'PASS' if ratio <= 1.15 else 'FAIL'}")
        speed = r["cold"] / r["warm"]
        print(f"  warm run (disk cache, {r['warm_encoded']} encoded):      {r['warm']:8.2f} s   {speed:.0f}x faster than cold (target >= 20x) {'PASS' if speed >= 20 else 'FAIL'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""What the expiry stage costs: a long history replayed with and without it, side by side in one run.

    .venv/bin/python bench/expiry_stage.py                       # 1,000 turns, a probe every 10 turns
    .venv/bin/python bench/expiry_stage.py --turns 3000 --every 25 --strategies tfidf,session_aware

One subject's synthetic history (`bench.strategies.synth_events`: sessions of ~25 turns over
months, most resolved) is replayed through each strategy plain and behind the stage, with a
probe in the live session every `--every` turns, as a scenario replays. Because the simulated
clock moves between probes, items keep running out of their lifespans and sessions keep
closing, so the stage has to retract and replay the customer's live memory in the inner
strategy again and again: this is the stage's worst realistic case, not its common one.

Printed per strategy: median and p95 context() latency (ms) plain and staged, their ratio, the
whole replay's wall time (observe + context) both ways, how many probes made the stage
rebuild, and the live share of the history at the last probe. The stage's memory classifier
reads each text once per process and keeps its answer: every text is read before the timings (that
first reading is printed on its own), and each strategy replays the first 100 events both ways
untimed (imports, the tokenizer), so the figures are the stage's retractions and replays, the same
for each strategy whichever runs first. Quote `uptime` with the figures.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from datetime import timedelta
from pathlib import Path

if __package__ in (None, ""):  # `python bench/expiry_stage.py`
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.strategies import TOPICS, pct, synth_events  # noqa: E402
from stores.expiry import ExpiryStage  # noqa: E402
from stores.protocol import ContextRequest, Turn  # noqa: E402
from stores.registry import strategy_class  # noqa: E402


def replay(make, events, every: int, budget: int) -> tuple[list[float], float, object]:
    """Observe every event; after every `every` turns ask for context in that turn's session."""
    s = make()
    times: list[float] = []
    turns = 0
    t_all = time.perf_counter()
    for e in events:
        s.observe(e)
        if isinstance(e, Turn):
            turns += 1
            if turns % every == 0:
                vocab = TOPICS[sorted(TOPICS)[turns % len(TOPICS)]]
                req = ContextRequest(e.subject, e.session, f"still {' '.join(vocab[:4])}", budget,
                                     e.at + timedelta(seconds=30))
                t = time.perf_counter()
                s.context(req)
                times.append((time.perf_counter() - t) * 1000)
    return times, time.perf_counter() - t_all, s


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--turns", type=int, default=1000)
    ap.add_argument("--every", type=int, default=10, help="a probe after every this many turns")
    ap.add_argument("--budget", type=int, default=1000)
    ap.add_argument("--strategies", default="history_stuffing,tfidf,session_aware")
    args = ap.parse_args(argv)
    events = synth_events(args.turns)
    # the stage's classifier reads each text once per process (its answers are cached): read them
    # all before timing, so no strategy's staged replay pays for the others, and say what it cost
    t = time.perf_counter()
    warm = ExpiryStage.wrap(strategy_class("empty"))
    for e in events:
        warm.observe(e)
    classified = time.perf_counter() - t
    rows = []
    for name in args.strategies.split(","):
        cls = strategy_class(name)
        for make in (cls, lambda: ExpiryStage.wrap(cls)):  # untimed: imports, the tokenizer, first-use caches
            replay(make, events[:100], args.every, args.budget)
        plain_t, plain_wall, _ = replay(cls, events, args.every, args.budget)
        stage_t, stage_wall, stage = replay(lambda: ExpiryStage.wrap(cls), events, args.every, args.budget)
        last = events[-1].at + timedelta(seconds=30)
        session = next(e.session for e in reversed(events) if isinstance(e, Turn))
        removed = stage.verdicts("bench", last, session)
        live = 1 - len(removed) / max(1, len(stage.items("bench")))
        rows.append((name, statistics.median(plain_t), pct(plain_t, 0.95), statistics.median(stage_t),
                     pct(stage_t, 0.95), plain_wall, stage_wall, stage.rebuilds, len(stage_t), live))
        print(f"  measured {name}", file=sys.stderr, flush=True)
    print(f"{args.turns} turns, a probe every {args.every} turns, budget {args.budget}; the classifier's first reading "
          f"of the history ({warm.expiry.classifier}, once per process, before the timings): {classified:.2f} s")
    print(f"{'strategy':<18}{'plain p50':>10}{'p95':>8}{'stage p50':>10}{'p95':>8}{'ratio':>7}"
          f"{'plain s':>9}{'stage s':>9}{'rebuilds':>10}{'live':>6}")
    for name, p50, p95, s50, s95, pw, sw, rb, n, live in rows:
        print(f"{name:<18}{p50:>10.2f}{p95:>8.2f}{s50:>10.2f}{s95:>8.2f}{s50 / p50:>7.1f}"
              f"{pw:>9.2f}{sw:>9.2f}{rb:>6}/{n:<3}{live:>6.0%}")


if __name__ == "__main__":
    main()

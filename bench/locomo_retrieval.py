"""Evidence recall on imported LoCoMo conversations: the project's strategies beside a plain BM25
and a plain MiniLM ranking over the same turns, at the same budgets, packed by the same tokenizer.

    python bench/locomo_retrieval.py LOCOMO_SCENARIOS [--budgets 550,1320] [--strategies ...] [--canonical] [--out docs/results/session-ranking.md]

LOCOMO_SCENARIOS is a folder of scenarios written by `supportbench import locomo` (the release
itself stays outside the project). Each scenario is replayed once per strategy: every turn is
observed, then each probe (one LoCoMo question) asks for a context at each budget. Per probe:

- evidence recall: the share of the question's evidence turns (its `include` gold) in the context;
- recall@k: the share of them among the first k candidates of the strategy's ranking (k = 5, 10, 25).

A candidate covers its own id and its source ids, as the criteria read it: a turn covers itself, a
typed memory of `structured` the turns it was read from.

The two plain loops see exactly the strategies' items (the subject's turns) and fill the budget
the way every strategy does (`stores.packing.pack`: the same header, the same greedy fill, the
same project tokenizer); they differ from the strategies only in how they rank:

- `plain_bm25`: `rank_bm25.BM25Okapi` (k1 1.5, b 0.75) over the project's words (`stores.text.words`
  order-preserving tokens, lower-cased), the question as the query;
- `plain_minilm`: cosine of the packaged all-MiniLM-L6-v2 embeddings (the project's cached encoder).

With `--canonical`, the same strategies also run the canonical suite (`supportbench run`, in a
temporary folder, no decision policies) and the table gains their canonical shared total with its
interval and the criteria the session-aware design is for (session ranking, known fix first,
repeat-issue detection), so both kinds of text stand side by side for every strategy.

Nothing is tuned here: the figures are whatever the ranking gives. The printout names the
command, the scenarios, the run id, the load average and the wall time of each strategy.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.results import command_line  # noqa: E402
from harness.format.loader import load_suite  # noqa: E402
from harness.format.model import Probe  # noqa: E402
from harness.replay.probes import request_for  # noqa: E402
from stores.memory import IndexedMemory  # noqa: E402
from stores.packing import pack  # noqa: E402
from stores.protocol import Bundle, ContextRequest  # noqa: E402
from stores.registry import parse_specs  # noqa: E402

KS = (5, 10, 25)
DEFAULT = "tfidf,embedding,session_aware,session_aware[published],hybrid,hybrid[published],history_stuffing,structured"
_TOKEN = re.compile(r"[a-z0-9]+(?:['_.-][a-z0-9]+)*")


def tokens(text: str) -> list[str]:
    """Lower-cased words in order (the project's word pattern), what the plain BM25 indexes."""
    return _TOKEN.findall(text.lower())


class PlainBM25(IndexedMemory):
    """A plain BM25 loop: rank the subject's items by `rank_bm25.BM25Okapi`, pack as every strategy does."""

    name = "plain_bm25"

    def __init__(self) -> None:
        super().__init__()
        self._fitted: tuple[int, object] | None = None

    def context(self, request: ContextRequest) -> Bundle:
        from rank_bm25 import BM25Okapi

        h = self.memory.history(request.subject)
        if self._fitted is None or self._fitted[0] != h.version:
            self._fitted = (h.version, BM25Okapi([tokens(t) or [""] for t in h.texts]))
        scores = np.asarray(self._fitted[1].get_scores(tokens(request.task)), dtype=np.float64)
        return pack(h, request, {"bm25": scores})


class PlainMiniLM(IndexedMemory):
    """A plain dense loop: cosine of MiniLM embeddings of each item's text to the question."""

    name = "plain_minilm"

    def __init__(self) -> None:
        super().__init__()
        self._vecs: dict[int, np.ndarray] = {}

    def context(self, request: ContextRequest) -> Bundle:
        from stores.retrieval.encoder import DEFAULT_MODEL, encoder

        h = self.memory.history(request.subject)
        enc = encoder(DEFAULT_MODEL)
        vecs = self._vecs.get(h.version)
        if vecs is None:
            vecs = self._vecs[h.version] = enc.encode(list(h.texts))
        q = enc.encode([request.task])[0]
        return pack(h, request, {"cosine": (vecs @ q).astype(np.float64)})


def covered(bundle: Bundle, *, included_only: bool = False, first: int | None = None) -> set[str]:
    """The ids the bundle's candidates cover (each its own id and its source ids: a typed memory
    covers the turns it was read from), of the included ones or of the first `first` ranked."""
    c = bundle.candidates
    ids, sources = getattr(c, "item_ids", None), getattr(c, "source_ids", None)
    if ids is None or sources is None:
        ids, sources = [x.item_id for x in c], [x.source_ids for x in c]
    if included_only:
        mask = getattr(c, "included_mask", None)
        rows = np.flatnonzero(mask) if mask is not None else [i for i, x in enumerate(c) if x.included]
    else:
        rows = range(min(first or len(ids), len(ids)))
    out: set[str] = set()
    for i in rows:
        out.add(ids[i])
        out.update(sources[i])
    return out


def evaluate(build, scenarios, budgets: list[int]) -> dict:
    """Replay every scenario through a fresh instance; per budget, evidence recall per probe, and
    recall@k (the ranking does not depend on the budget: taken at the first budget)."""
    recall = {b: [] for b in budgets}
    at_k = {k: [] for k in KS}
    for sc in scenarios:
        strategy = build()
        for ev in sc.events:
            if not isinstance(ev, Probe):
                strategy.observe(ev)
                continue
            gold = {str(g) for g in ev.expect.include}
            if not gold:
                continue
            for j, b in enumerate(budgets):
                req = request_for(ev)
                bundle = strategy.context(ContextRequest(req.subject, req.session, req.task, b, req.now))
                recall[b].append(len(gold & covered(bundle, included_only=True)) / len(gold))
                if j == 0:
                    for k in KS:
                        at_k[k].append(len(gold & covered(bundle, first=k)) / len(gold))
    return {"recall": {b: float(np.mean(v)) for b, v in recall.items()}, "at_k": {k: float(np.mean(v)) for k, v in at_k.items()},
            "probes": len(recall[budgets[0]])}


CANONICAL_CRITERIA = ("session_ranking", "known_fix_first", "repeat_issue")


def canonical(labels: list[str], specs) -> tuple[str, dict[str, dict[str, str]]]:
    """Run the canonical suite through `specs` (a temporary run folder) and read, per strategy label,
    the shared total with its interval and `CANONICAL_CRITERIA`, each as `mean [lo–hi]`."""
    import tempfile

    from harness.analysis.aggregate import aggregate, comparison_of, shared_criteria, shared_spread, totals
    from harness.analysis.results import Results
    from harness.run.runner import execute

    root = Path(__file__).resolve().parents[1]
    with tempfile.TemporaryDirectory() as tmp:
        run = execute(load_suite(root / "datasets" / "canonical"), specs, tmp, run_id="canonical-side-by-side")
        with Results(run.path) as res:
            df = aggregate(res, seed=0, axis="strategy")
            comparison = comparison_of(list(dict.fromkeys(df["strategy"])), set())
            shared = shared_criteria(df, comparison)
            tot = totals(df, comparison).set_index("strategy")
            spread = shared_spread(res, comparison, shared, seed=0, axis="strategy")
    cells: dict[str, dict[str, str]] = {}
    for label in labels:
        row = {"shared total": f"{tot.loc[label, 'shared']:.2f} [{spread.lo[label]:.2f}–{spread.hi[label]:.2f}]"}
        for c in CANONICAL_CRITERIA:
            r = df[(df["strategy"] == label) & (df["criterion"] == c)].iloc[0]
            row[c] = f"{r['mean']:.2f} [{r['lo']:.2f}–{r['hi']:.2f}]"
        cells[label] = row
    return f"{len(shared)} shared criteria", cells


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("scenarios", help="folder of scenarios written by `supportbench import locomo`")
    ap.add_argument("--budgets", default="550,1320")
    ap.add_argument("--strategies", default=DEFAULT, help=f"strategy specs (default {DEFAULT})")
    ap.add_argument("--plain", choices=("both", "bm25", "minilm", "none"), default="both",
                    help="which plain loops run beside the strategies (default both)")
    ap.add_argument("--out", help="also write the table as markdown to this file")
    ap.add_argument("--label", default="", help="what the scenarios are, for the printout (e.g. 'test split')")
    ap.add_argument("--canonical", action="store_true", help="also run the canonical suite through the same strategies")
    args = ap.parse_args(argv)
    budgets = [int(x) for x in args.budgets.split(",")]
    scenarios = load_suite(args.scenarios)
    rows = []
    specs = parse_specs(args.strategies)
    builders = [(s.label, s.build) for s in specs]
    builders += [(name, cls) for name, cls in (("plain_bm25", PlainBM25), ("plain_minilm", PlainMiniLM))
                 if args.plain in ("both", name.removeprefix("plain_"))]
    for label, build in builders:
        t0 = time.perf_counter()
        r = evaluate(build, scenarios, budgets)
        r["label"], r["seconds"] = label, time.perf_counter() - t0
        rows.append(r)
        print(f"{label:<28} " + "  ".join(f"{b}: {r['recall'][b]:.3f}" for b in budgets) + "  "
              + "  ".join(f"@{k}: {r['at_k'][k]:.3f}" for k in KS) + f"  ({r['seconds']:.1f} s)", flush=True)
    extra: list[str] = []
    side: dict[str, dict[str, str]] = {}
    note = ""
    if args.canonical:
        t0 = time.perf_counter()
        shared_note, side = canonical([s.label for s in specs], specs)
        extra = ["canonical shared total", *(f"canonical {c}" for c in CANONICAL_CRITERIA)]
        note = (f" The canonical columns come from one `supportbench run` of datasets/canonical through the same strategies "
                f"(run id canonical-side-by-side, seed 0, {shared_note}, {time.perf_counter() - t0:.0f} s): mean "
                "[95 % bootstrap interval over scenarios].")
    load = open("/proc/loadavg").read().split()[:3] if os.path.exists("/proc/loadavg") else ["?"] * 3
    names = sorted(sc.id for sc in scenarios)
    head = ["| strategy | " + " | ".join(f"evidence recall @ {b} tokens" for b in budgets) + " | "
            + " | ".join(f"recall@{k}" for k in KS) + "".join(f" | {e}" for e in extra) + " |",
            "| --- |" + " --- |" * (len(budgets) + len(KS) + len(extra))]
    body = [f"| {r['label']} | " + " | ".join(f"{r['recall'][b]:.3f}" for b in budgets) + " | "
            + " | ".join(f"{r['at_k'][k]:.3f}" for k in KS)
            + "".join(f" | {v}" for v in (side.get(r["label"]) or {e: "–" for e in extra}).values()) + " |" for r in rows]
    cmd = command_line("locomo_retrieval.py", [a if a != args.scenarios else "LOCOMO_SCENARIOS" for a in (argv or sys.argv[1:])])
    md = [f"# Evidence recall on LoCoMo{': ' + args.label if args.label else ''}", "",
          f"Written by `{cmd}` (LOCOMO_SCENARIOS: the output of `supportbench import locomo` for the conversations "
          f"{', '.join(names)}; {rows[0]['probes'] if rows else 0} questions with evidence). Load average at the end: "
          f"{' '.join(load)}.", "",
          "Evidence recall: the share of each question's evidence turns in the context, at each token budget; recall@k: "
          "their share among the first k of the ranking. The plain loops rank the same turns and fill the budget the way "
          "every strategy does (same header, same greedy fill, same tokenizer). Seconds per strategy (replay and "
          "ranking only, in this process): " + ", ".join(f"{r['label']} {r['seconds']:.1f}" for r in rows) + "." + note,
          "", *head, *body, ""]
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text("\n".join(md))
    print("\n".join(md[:3]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""How many `session_state` decisions move on the development suites when one bank phrase is dropped.

    python bench/threshold_steadiness.py                      # best F1 on one shuffle (the project's rule)
    python bench/threshold_steadiness.py --rule steady        # smoothed F1 on pooled shuffles (the non-floor decision heads)
    python bench/threshold_steadiness.py --drops 6 --suite canonical --suite holdout3

For the chosen threshold rule it trains the front end on the bank as it is and on `--drops` copies of it with
one phrase dropped (the `yes`-side phrase of a decision head other than the floor, drawn with a fixed seed, one
head after another), runs every named development suite's decision files with `session_state` on each, and counts
the decision cases and routed turns whose plan or route differs from the unperturbed bank's, per drop, with every
threshold that moved. The bank's texts are embedded once and every training reads those vectors, so what moves is
the phrase and the threshold rule, not the encoder's batching. `--rule steady` sets `STEADY_HEADS` to the decision heads other
than the floor (`stores.decisions.learned.HEADS` without `sensitive`) for the process (measured in the ninth round, not kept). The artefacts go to a scratch folder, never the project's cache.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the project, when run as `python bench/threshold_steadiness.py`
from bench.suites import DEVELOPMENT, folder as suite_folder  # noqa: E402

SEED = 0
DROP_HEADS = ("hostile", "human_request", "intent", "resolved", "time_critical")
"""The heads a phrase is dropped from, in turn: the decision heads other than the floor whose yes moves a plan
or a route on its own."""


def _drops(bank_file: Path, heads: tuple[str, ...], n: int) -> list[tuple[str, str, str]]:
    """`n` (head, label, phrase) to drop, one head after another, drawn with `SEED`."""
    data = yaml.safe_load(bank_file.read_text())
    rng = np.random.default_rng(SEED)
    out = []
    for i in range(n):
        head = heads[i % len(heads)]
        labels = sorted(k for k, v in data[head].items() if k not in ("none", "no") and isinstance(v, list))
        label = labels[int(rng.integers(len(labels)))]
        phrases = data[head][label]
        out.append((head, label, phrases[int(rng.integers(len(phrases)))]))
    return out


def _scalar(line: str) -> object:
    try:
        return yaml.safe_load(line.strip()[2:])
    except yaml.YAMLError:
        return None


def _without(src: Path, dst: Path, head: str, phrase: str) -> None:
    """A copy of the bank folder with the line holding `phrase` in `head`'s section removed (the same phrase
    may be another head's too: the floor's everyday messages)."""
    shutil.copytree(src, dst)
    path = dst / "decisions.yaml"
    lines = path.read_text().splitlines(keepends=True)
    start = lines.index(f"{head}:\n")
    hits = [i for i, line in enumerate(lines) if i > start and line.strip().startswith("- ") and _scalar(line) == phrase]
    if not hits:
        raise SystemExit(f"phrase not found as a line of {head}: {phrase!r}")
    del lines[hits[0]]
    path.write_text("".join(lines))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rule", choices=("steady", "one-shuffle"), default="one-shuffle")
    ap.add_argument("--drops", type=int, default=5)
    ap.add_argument("--suite", action="append", default=[], help="development suite short names (default: all)")
    args = ap.parse_args(argv)

    from harness.cli import main as cli
    import stores.decisions.learned as learned
    import stores.frontend.model as model
    import stores.retrieval.encoder as encoder
    from stores.frontend.bank import PHRASES, all_phrases

    model.STEADY_HEADS = frozenset(learned.HEADS) - {"sensitive"} if args.rule == "steady" else frozenset()
    heads = DROP_HEADS
    texts = sorted(set(all_phrases()))
    vecs = dict(zip(texts, encoder.encode_unpadded(encoder.load_model(encoder.DEFAULT_MODEL), texts)))
    encode = encoder.encode_unpadded

    def bank_vectors(model_, items, *a, **k):  # the bank's texts from the one pass; any other text as before
        return np.stack([vecs[t] for t in items]) if all(t in vecs for t in items) else encode(model_, items, *a, **k)

    encoder.encode_unpadded = bank_vectors
    suites = args.suite or [n for n in DEVELOPMENT]
    files = sorted(str(p) for n in suites for p in suite_folder(n).glob("decision-*.yaml"))
    scratch = Path(tempfile.mkdtemp(prefix="steadiness-"))
    try:
        def run(tag: str, folder: Path) -> tuple[pd.DataFrame, dict]:
            model.artefact_path = lambda _m, _f=None, tag=tag: scratch / f"{tag}.npz"
            front = model.train(folder=str(folder))[0]
            learned.front_end = lambda: front
            out = scratch / f"run-{tag}"
            cli(["run", *files, "--strategies", "empty", "--policies", "session_state", "--out", str(out), "--quiet"])
            run_dir = next(p for p in out.iterdir() if (p / "decisions").exists())
            d = pd.read_parquet(run_dir / "decisions")
            d = d[d["policy"] == "session_state"].set_index(["suite", "scenario", "session", "event_index"])
            return d, {h: front.heads[h].thresholds for h in heads}

        base, base_t = run("base", PHRASES)
        cases = base["decision_case"].fillna(False).astype(bool)
        routed = base["gold_route"].notna()
        moved_total = 0
        for i, (head, label, phrase) in enumerate(_drops(PHRASES / "decisions.yaml", heads, args.drops)):
            folder = scratch / f"bank-{i}"
            _without(PHRASES, folder, head, phrase)
            d, t = run(f"drop-{i}", folder)
            d = d.reindex(base.index)
            plans = int((d.loc[cases, "plan"] != base.loc[cases, "plan"]).sum())
            routes = int((d.loc[routed, "route"] != base.loc[routed, "route"]).sum())
            right = int(d.loc[cases, "correct"].astype(bool).sum()) - int(base.loc[cases, "correct"].astype(bool).sum())
            moved = {h: (base_t[h], t[h]) for h in heads if t[h] != base_t[h]}
            moved_total += plans + routes
            print(f"drop {i}: {head}.{label} {phrase!r}: {plans} decisions and {routes} routes moved "
                  f"(right {right:+d}); thresholds moved: {moved or 'none'}", flush=True)
        print(f"rule {args.rule}: {moved_total} decisions and routes moved over {args.drops} drops "
              f"({int(cases.sum())} decision cases, {int(routed.sum())} routed turns per run)")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

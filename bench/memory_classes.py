"""Memory classes alone, per suite: the expiry classifier's accuracy on labelled turns, and every miss with its reader.

    .venv/bin/python bench/memory_classes.py
    .venv/bin/python bench/memory_classes.py --suite holdout3 --misses
    .venv/bin/python bench/memory_classes.py --suite canonical --dump before.tsv   # every turn's class
    .venv/bin/python bench/memory_classes.py --suite canonical --dump after.tsv --against before.tsv

Reads, without a harness run, what the expiry stage's classifier (`stores.expiry.learned.classifier`,
the function the stage's ledger calls with each turn's text, role and kind) says on every turn of a
suite, and scores it as the `expiry_classes` criterion does (`harness.criteria.expiry`): a labelled turn
is right when its class is one of its labels, and a suite's figure is the share of its labelled turns
that are right (what bench/frontends.py pools as "memory classes accuracy").

Suites: `canonical`, `challenge`, `holdout` .. `holdout11` (the folders of `datasets/`); by default every
one. `--classifier rules` reads with the rules alone. `--misses` lists each wrong turn: gold, class,
who decided (the receipt's `rule`) and the head's two most probable classes. `--dump FILE` writes every
turn's class (labelled or not) as TSV, and `--against FILE` lists the turns whose class differs from an
earlier dump: the turns a bank or threshold change moves, labelled or not (an unlabelled turn's class
still decides what the expiry stage keeps, so it moves the canonical ranking figures). `--head` adds the
`memory_class` head's own figure (its most probable class alone, rules and thresholds aside) on the labelled
turns it reads, and on those the rules read nothing in, where its best guess decides: how strong the head is,
whatever the rules already cover (eighth round).
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the project, when run as `python bench/memory_classes.py`
from bench.suites import DEVELOPMENT  # noqa: E402
SUITES = DEVELOPMENT
"""Short name -> folder under `datasets/` (bench/suites.py)."""


def read_suite(name: str, classifier: str) -> list[dict]:
    """Every turn of a suite with its labels, class and reader, in the suite loader's order."""
    from harness.format.loader import load_suite
    from stores.expiry.learned import classifier as pick

    classify = pick(classifier)
    rows = []
    for scenario in load_suite([ROOT / "datasets" / SUITES[name]]):
        for turn in scenario.turns:
            c = classify(turn.text, turn.role, turn.kind)
            rows.append({"scenario": scenario.id, "id": turn.id, "role": turn.role, "kind": turn.kind,
                         "labels": tuple(scenario.gold_of(turn.id).label), "cls": c.cls, "rule": c.rule,
                         "text": turn.text})
    return rows


def top_two(text: str, role: str) -> str:
    """The memory head's two most probable classes (`preference 0.41, profile 0.22`)."""
    from stores.expiry.learned import head_text
    from stores.frontend.model import front_end

    p = front_end().proba("memory_class", head_text(text, role))
    best = sorted(p.items(), key=lambda kv: -kv[1])[:2]
    return ", ".join(f"{k} {v:.2f}" for k, v in best)


def head_alone(rows: list[dict]) -> tuple[int, int, int, int]:
    """The head's most probable class against the labels: (right, judged) on the labelled turns it reads (not
    resolution records, not agent actions) and (right, judged) on those the rules read nothing in."""
    from stores.expiry.classifier import classify
    from stores.expiry.learned import CATCH_ALL, head_text
    from stores.frontend.model import front_end

    fe = front_end()
    right = judged = right_open = judged_open = 0
    for r in rows:
        if not r["labels"] or r["role"] == "resolution" or r["kind"] == "action" or not r["text"].strip():
            continue
        ok = fe.top("memory_class", head_text(r["text"], r["role"])).label in r["labels"]
        right, judged = right + ok, judged + 1
        if classify(r["text"], r["role"], r["kind"]).rule in CATCH_ALL:
            right_open, judged_open = right_open + ok, judged_open + 1
    return right, judged, right_open, judged_open


def reader(rule: str) -> str:
    """Who decided, from the receipt's rule: rules, learned (sure), best guess, default."""
    if "best guess" in rule:
        return "best guess"
    if "default for" in rule:
        return "role default"
    if rule.startswith("learned"):
        return "learned"
    return "rules"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--suite", action="append", choices=sorted(SUITES), help="suite to read (repeatable; default all)")
    ap.add_argument("--classifier", default="learned", choices=("learned", "rules"))
    ap.add_argument("--misses", action="store_true", help="list every wrong labelled turn with its reader")
    ap.add_argument("--head", action="store_true", help="also the memory_class head's own accuracy, rules aside")
    ap.add_argument("--dump", type=Path, help="write every turn's class to this TSV")
    ap.add_argument("--against", type=Path, help="list the turns whose class differs from this earlier dump")
    args = ap.parse_args(argv)
    names = args.suite or list(SUITES)
    dump = []
    print(f"| suite | memory classes accuracy ({args.classifier}) | judged | wrong by reader |")
    print("| --- | --- | --- | --- |")
    misses: dict[str, list[dict]] = {}
    heads: dict[str, tuple[int, int, int, int]] = {}
    for name in names:
        rows = read_suite(name, args.classifier)
        dump += [{"suite": name, **r} for r in rows]
        judged = [r for r in rows if r["labels"]]
        wrong = [r for r in judged if r["cls"] not in r["labels"]]
        by: dict[str, int] = {}
        for r in wrong:
            by[reader(r["rule"])] = by.get(reader(r["rule"]), 0) + 1
        acc = (len(judged) - len(wrong)) / len(judged) if judged else float("nan")
        print(f"| {name} | {acc:.3f} | {len(judged)} | {', '.join(f'{k} {v}' for k, v in sorted(by.items())) or '-'} |")
        misses[name] = wrong
        if args.head:
            heads[name] = head_alone(rows)
    if args.head:
        print("\n| suite | the head alone | on the turns the rules read nothing in |\n| --- | --- | --- |")
        for name, (a, n, ao, no) in heads.items():
            print(f"| {name} | {a / n if n else float('nan'):.3f} ({a} of {n}) | "
                  f"{ao / no if no else float('nan'):.3f} ({ao} of {no}) |")
    if args.misses:
        for name in names:
            print(f"\n## {name}: {len(misses[name])} wrong")
            for r in misses[name]:
                print(f"- {r['id']} ({r['role']}) gold {'/'.join(r['labels'])}, read {r['cls']} [{reader(r['rule'])}] "
                      f"{r['rule']} | head: {top_two(r['text'], r['role'])}\n    {r['text']!r}")
    if args.dump:
        with args.dump.open("w", newline="", encoding="utf-8") as f:
            w = csv.writer(f, delimiter="\t")
            for r in dump:
                w.writerow([r["suite"], r["scenario"], r["id"], r["role"], "/".join(r["labels"]), r["cls"], r["rule"]])
    if args.against:
        with args.against.open(encoding="utf-8") as f:
            before = {(row[0], row[1], row[2]): row for row in csv.reader(f, delimiter="\t")}
        moved = [r for r in dump if (k := (r["suite"], r["scenario"], r["id"])) in before and before[k][5] != r["cls"]]
        print(f"\n{len(moved)} turns changed class against {args.against.name}")
        for r in moved:
            b = before[(r["suite"], r["scenario"], r["id"])]
            print(f"- {r['suite']} {r['id']} ({r['role']}) {b[5]} -> {r['cls']} [{'/'.join(r['labels']) or 'unlabelled'}] "
                  f"{r['rule']}\n    was: {b[6]}\n    {r['text'][:110]!r}")


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    main()

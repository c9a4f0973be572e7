"""`supportbench generate`: write a generated scenario suite (one file per customer)."""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

from harness.cli.common import console, say


def register(sub) -> None:
    from harness.generate.plan import PROFILES

    p = sub.add_parser("generate", help="write a generated suite of scenario files with gold labels from the plan")
    p.add_argument("--customers", type=int, required=True, help="how many customers to generate")
    p.add_argument("--seed", type=int, default=0, help="same seed, same files byte for byte (default 0)")
    p.add_argument("--out", required=True, help="folder to write the suite into (created; existing generated files replaced)")
    p.add_argument("--profile", choices=sorted(PROFILES), default="realistic",
                   help="small: a few sessions each; realistic (default); long-history: dozens of sessions each")
    p.add_argument("--split", choices=["test", "dev"], default="test",
                   help="test (default): texts from the catalog's held-back half, for leaderboards; dev: the development "
                        "half, the only one lexicons and rules may be tuned on")
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    from harness.generate import REPORTED, generate_suite, label_counts, shares_sentence, shortcut_shares
    from harness.format.loader import validate_paths

    if args.customers < 1:
        console.print("error: --customers must be at least 1")
        return 2
    out = Path(args.out)
    if out.exists() and any(p.suffix != ".yaml" for p in out.iterdir()):
        console.print(f"error: {out} holds files that are not scenarios; choose an empty or generated folder")
        return 2
    from collections import Counter

    stats: Counter = Counter()
    files = generate_suite(args.customers, args.seed, args.profile, stats, split=args.split)
    tmp = out.with_name(f".{out.name}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    for name in sorted(files):
        (tmp / name).write_text(files[name], encoding="utf-8")
    issues = validate_paths([str(tmp)])
    if issues:  # a generator bug: show it and leave nothing half-valid behind
        for i in issues[:50]:
            console.print(f"error: {i}")
        console.print(f"{len(issues)} problem(s) in generated files; nothing was written to {out}")
        shutil.rmtree(tmp, ignore_errors=True)
        return 1
    if out.exists():
        shutil.rmtree(out)
    tmp.rename(out)
    c = label_counts(files)
    console.print(
        f"wrote {c['scenarios']} scenario files ({c['subjects']} customers, {c['probes']} probes, "
        f"{'held-back' if args.split == 'test' else 'development'} half of the catalog) to {out}: "
        + ", ".join(f"{k} {c[k]}" for k in REPORTED)
        + f"; health bands on {stats['health_labelled']} probes, {stats['health_skipped']} left without one "
        "(near a band edge, or the documented readings disagree)"
    )
    reps = stats["repeat_probes"]
    console.print(
        "against shortcuts: " + shares_sentence(shortcut_shares(files))
        + "; repeats whose session is the one sharing the most keywords with the probe's turn "
        + (f"{stats['repeat_max_overlap']} of {reps} ({stats['repeat_max_overlap'] / reps:.0%})" if reps else "none")
    )
    say(f"{out}\n")
    return 0

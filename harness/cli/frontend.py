"""`supportbench frontend train`: train the learned front ends on the phrase bank.

The trained artefact is built into the cache at first use anyway; this command builds it ahead
(after an install, before a timed run) and prints, per head, its phrases, its thresholds and
what they gave on the validation split. Seeded: the same bank and model give the same artefact.
"""

from __future__ import annotations

import time

from harness.cli.common import console, out


def register(sub) -> None:
    p = sub.add_parser("frontend", help="the learned front ends: train them on the phrase bank")
    fsub = p.add_subparsers(dest="frontend_command", metavar="ACTION")
    fsub.required = True
    t = fsub.add_parser("train", help="train every head of the phrase bank into the cache (seeded; seconds on 2 cores)")
    t.add_argument("--bank", default=None, help="folder of phrase bank files (default: the packaged bank)")
    t.set_defaults(func=main)


def main(args) -> int:
    from rich.table import Table

    from stores.frontend.bank import PHRASES, BankError, load_bank
    from stores.frontend.model import h_bank, train

    folder = args.bank or str(PHRASES)
    try:
        bank = load_bank(folder)
    except (BankError, OSError) as e:
        console.print(f"error: phrase bank {folder}: {e}", markup=False)
        return 2
    start = time.perf_counter()
    front, path = train(folder=folder)
    took = time.perf_counter() - start
    table = Table("head", "phrases", "label", "threshold", "validation P", "validation R", "validation F1", "support")
    for name, head in front.heads.items():
        for label in head.thresholds:  # every label but the default, and the summed readings (the floor)
            v = head.validation.get(label, {})
            table.add_row(name, str(len(h_bank(bank, name).texts)), label, f"{head.thresholds[label]:.2f}",
                          f"{v.get('precision', 0):.2f}", f"{v.get('recall', 0):.2f}", f"{v.get('f1', 0):.2f}",
                          str(v.get("support", 0)))
    out.print(table)
    console.print(f"trained {len(front.heads)} heads in {took:.1f}s -> {path}", markup=False)
    return 0

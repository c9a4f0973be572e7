"""`supportbench failures`: the Failures page's export for scripts and CI.

The same selection as the app's Failures page (strategies, criteria, scenarios, suites, tags,
controls in or out, verdicts, a search text, an order), the same query
(`harness.analysis.failures.export`, streamed by DuckDB), the same two formats: CSV with every
cell a spreadsheet would read as a formula neutralised by a leading `'`, or JSON with the text
exact. To stdout, or to `--out FILE` (written whole or not at all).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

from harness.cli.common import console


def _list(text: str | None) -> tuple[str, ...]:
    return tuple(x.strip() for x in (text or "").split(",") if x.strip())


def register(sub) -> None:
    from harness.analysis.failures import FORMATS, ORDERS

    p = sub.add_parser("failures", help="export a run's failing cases as CSV or JSON (the Failures page's selection)")
    p.add_argument("run", nargs="?", default="latest", help="run folder, run id under the runs folder, or 'latest' (default)")
    p.add_argument("--format", choices=sorted(FORMATS), default="csv",
                   help="csv (cells that would be formulas get a leading ') or json (exact text); default csv")
    p.add_argument("--out", default=None, help="write to this file instead of stdout")
    p.add_argument("--strategies", "-s", default=None, help="comma-separated strategy labels (default: all)")
    p.add_argument("--criteria", "-c", default=None, help="comma-separated criteria (default: all)")
    p.add_argument("--scenarios", default=None, help="comma-separated scenario ids (default: all)")
    p.add_argument("--suites", default=None, help="comma-separated suites (default: all)")
    p.add_argument("--tags", default=None, help="comma-separated scenario tags: a case with any of them (default: all)")
    p.add_argument("--no-controls", action="store_true", help="leave out the control strategies (oracle, empty)")
    p.add_argument("--status", default="fail,error",
                   help="comma-separated verdicts to list: fail, error, unsupported (default: fail,error)")
    p.add_argument("--search", default="", help="only cases whose explanation, task or scenario holds this text")
    p.add_argument("--order", choices=list(ORDERS), default="worst",
                   help="; ".join(f"{k}: {v[0]}" for k, v in ORDERS.items()))
    p.add_argument("--runs", default=None, help="folder runs live in, for run ids and 'latest' (default: $SUPPORTBENCH_RUNS or runs/)")
    p.set_defaults(func=main)


STATUSES = ("fail", "error", "unsupported")


def main(args: argparse.Namespace) -> int:
    from harness.analysis.failures import export
    from harness.analysis.queries import Filter
    from harness.analysis.results import Results, resolve_run

    statuses = _list(args.status)
    unknown = [s for s in statuses if s not in STATUSES]
    if not statuses or unknown:
        console.print(f"error: --status {args.status!r}: expected a comma-separated list of {', '.join(STATUSES)}")
        return 2
    selection = Filter(strategies=_list(args.strategies), criteria=_list(args.criteria), scenarios=_list(args.scenarios),
                       suites=_list(args.suites), tags=_list(args.tags), include_controls=not args.no_controls)
    path = resolve_run(args.run, args.runs)
    if args.out:
        # into a temporary file beside the target, renamed when complete: nothing half-written
        target = Path(args.out)
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
        os.close(fd)
        try:
            with Results(path) as res:
                n = export(res, tmp, args.format, selection, statuses, args.search, args.order)
            os.replace(tmp, target)
        finally:
            Path(tmp).unlink(missing_ok=True)
        console.print(f"wrote {n:,} case(s) of run {path.name} to {args.out}")
        return 0
    with tempfile.TemporaryDirectory(prefix="sb-failures-") as d:
        tmp = Path(d) / f"failures.{args.format}"
        with Results(path) as res:
            export(res, tmp, args.format, selection, statuses, args.search, args.order)
        with open(tmp, encoding="utf-8", newline="") as f:
            shutil.copyfileobj(f, sys.stdout, 1 << 20)  # in chunks: memory stays flat however many cases
    sys.stdout.flush()
    return 0


__all__ = ["register", "main"]

"""`supportbench run`: replay suites through strategies and write a run."""

from __future__ import annotations

import argparse
import re
import shlex
import sys
from pathlib import Path

from stores.decisions.registry import DEFAULT_POLICIES, PolicySpecError, load_policy_config, parse_policies
from stores.registry import DEFAULT_STRATEGIES, SpecError, load_config, parse_specs

from harness.cli.common import console, load_or_exit, say


def register(sub) -> None:
    p = sub.add_parser("run", help="replay scenarios through strategies and write a run")
    p.add_argument("paths", nargs="*", help="scenario files or suite folders (default: datasets/canonical)")
    p.add_argument("--strategies", "-s", default=None,
                   help=f"comma-separated strategies, each optionally with :key=value overrides; 'default' names the "
                        f"default set (default: {','.join(DEFAULT_STRATEGIES)}); a name may be an installed package's "
                        f"(supportbench ls strategies) or a class, package.module.Class (docs/extending.md)")
    p.add_argument("--config", help="TOML file of [[strategy]] tables (name, class, variant, params); added to --strategies "
                                    "(with --config alone, only its strategies run: add '-s default' to keep the default set)")
    p.add_argument("--policies", "-p", default=None,
                   help="comma-separated decision policies, each optionally with :key=value overrides "
                        f"(default: {','.join(DEFAULT_POLICIES)}; 'none' for no decision axis)")
    p.add_argument("--policy-config", default=None,
                   help="TOML file of [[policy]] tables (name, class, variant, params); added to --policies")
    p.add_argument("--out", default=None, help="folder to write runs into (default: $SUPPORTBENCH_RUNS or runs/)")
    p.add_argument("--seed", type=int, default=0, help="seed for anything random (bootstrap intervals); default 0")
    p.add_argument("--run-id", default=None,
                   help="name of the run folder: letters, digits, '.', '_' and '-' (default: timestamp + random suffix)")
    p.add_argument("--name", default="",
                   help="a name for people, e.g. 'baseline' or 'threshold 0.15': kept in the manifest, shown in the app's run pickers")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress display")
    p.add_argument("--workers", "-w", type=int, default=1,
                   help="processes to shard scenarios over (default 1: in this process); results are identical")
    p.add_argument("--executor", choices=("process", "dask"), default="process",
                   help="process: a local process pool; dask: a dask.distributed cluster (needs the [dask] extra; see docs/scale.md)")
    p.add_argument("--scheduler", default=None,
                   help="with --executor dask: address of an existing scheduler, e.g. tcp://10.0.0.5:8786 "
                        "(default: a LocalCluster with --workers workers); --out must then be storage every worker can write")
    p.add_argument("--junit", default=None, help="after the run is written, write JUnit XML of its raw verdicts to this file")
    p.add_argument("--strict", action="store_true",
                   help="exit 1 when any strategy raised on any case (the run is still written; default: warn only)")
    p.set_defaults(func=main)


def expand_default(text: str) -> str:
    """`text` with each bare `default` item replaced by the default strategies."""
    return re.sub(r"(?:(?<=^)|(?<=,))default(?=,|$)", ",".join(DEFAULT_STRATEGIES), text)


def specs_from(args) -> list:
    try:
        specs = parse_specs(expand_default(args.strategies)) if args.strategies else []
        if getattr(args, "config", None):
            specs += load_config(args.config)
        if not specs:
            specs = parse_specs(",".join(DEFAULT_STRATEGIES))
    except SpecError as e:
        console.print(f"error: {e}")
        sys.exit(2)
    labels = [s.label for s in specs]
    dupes = sorted({x for x in labels if labels.count(x) > 1})
    if dupes:
        console.print(f"error: strategy {', '.join(dupes)} given twice")
        sys.exit(2)
    return specs


def policies_from(args, strategies: list) -> list:
    """The decision policies of `--policies` and `--policy-config` (all by default, none with
    `--policies none`); exit 2 on a bad spec or a label a strategy already has."""
    try:
        text = args.policies if getattr(args, "policies", None) is not None else ",".join(DEFAULT_POLICIES)
        policies = parse_policies(text)
        if getattr(args, "policy_config", None):
            policies += load_policy_config(args.policy_config)
    except PolicySpecError as e:
        console.print(f"error: {e}")
        sys.exit(2)
    labels = [p.label for p in policies]
    dupes = sorted({x for x in labels if labels.count(x) > 1})
    clash = sorted(set(labels) & {s.label for s in strategies})
    if dupes or clash:
        console.print(f"error: policy {', '.join(dupes or clash)} " + ("given twice" if dupes else "has a strategy's label"))
        sys.exit(2)
    return policies


def strategy_errors(path) -> list[tuple[str, int, int, str]]:
    """(label, cases that raised, cases that could have a verdict, first error) for every
    strategy that raised on some case of the run at `path`, in label order; the first error is
    the least of their explanations. Read from the run's `scores` parts with pyarrow, which wrote
    them (a run has no other use for DuckDB)."""
    import pyarrow.parquet as pq

    seen: dict[str, list] = {}  # label -> [errors, cases with a verdict possible, least error explanation]
    for part in sorted((Path(path) / "scores").glob("*.parquet")):
        with pq.ParquetFile(part) as f:  # not `read_table`: its dataset layer imports pandas, which a run never needs
            t = f.read(columns=["strategy", "status", "explanation"])
        for label, status, why in zip(*(t.column(k).to_pylist() for k in ("strategy", "status", "explanation"))):
            row = seen.setdefault(label, [0, 0, None])
            if status is not None and status != "unsupported":
                row[1] += 1
            if status == "error":
                row[0] += 1
                if why is not None and (row[2] is None or why < row[2]):
                    row[2] = why
    return [(label, errors, n, first or "") for label, (errors, n, first) in sorted(seen.items()) if errors > 0]


def warn_errors(errors: list[tuple[str, int, int, str]]) -> None:
    """Say loudly which strategies raised: a strategy that raised on every case measured nothing."""
    for label, n_err, n, first in errors:
        if n_err == n:
            console.print(f"WARNING: strategy {label} raised on every case ({n_err} of {n}): its scores are all errors. "
                          f"First error: {first}")
        else:
            console.print(f"warning: strategy {label} raised on {n_err} of {n} cases. First error: {first}")


def outages(path) -> list[tuple[str, dict]]:
    """(policy label, its `outage` entry) for each policy whose locker could not be reached during
    the run without a scripted fault (the manifest's record)."""
    from harness.run.runstore import read_manifest

    return [(p["label"], p["outage"]) for p in read_manifest(path).get("policies", []) if p.get("outage")]


def warn_outages(path) -> None:
    """Say loudly which policies ran through a real locker outage: their decisions on those turns
    measured the outage (fail open), not the policy."""
    for label, o in outages(path):
        console.print(f"WARNING: policy {label}: the session locker was unreachable on {o['events']} event(s) in "
                      f"{o['scenarios']} scenario(s), with no fault scripted; those decisions failed open. First: {o['first']}")


def main(args: argparse.Namespace) -> int:
    from harness.run.destination import check_destination
    from harness.run.runstore import runs_root
    from harness.run.workers import run_pool
    from stores.cpu import env_threads, start_busy_window

    specs = specs_from(args)
    policies = policies_from(args, specs)
    from harness.criteria import problems

    for line in problems():  # an installed criteria module that cannot be used: its criteria are not in this run
        console.print(f"warning: {line}; its criteria are left out of this run")
    out_dir = runs_root(args.out)
    check_destination(out_dir, args.run_id)  # exit 2 now, not after the work: run id taken, folder read-only...
    workers = max(1, args.workers)
    try:
        env_threads()
    except ValueError as e:
        console.print(f"error: {e}")
        return 2
    start_busy_window()  # the cores' first look reads the time the suite takes to load, instead of a sleep
    if workers > 1 and args.executor == "process":
        # the workers check and load the files, then run them: the same pool for both
        with run_pool(workers) as pool:
            return _run(args, specs, policies, out_dir, load_or_exit(args.paths, pool, workers), workers, pool)
    return _run(args, specs, policies, out_dir, load_or_exit(args.paths), workers, None)


def _say_encodes(path) -> None:
    """What the run's sentence encodes cost, when it made any (read back from its manifest)."""
    import json

    from harness.run.costs import embedding_line

    try:
        line = embedding_line(json.loads((path / "manifest.json").read_text()))
    except (OSError, ValueError):
        return
    if line:
        console.print(line)


def _progress(quiet: bool):
    """The progress bar (rich's, imported only when it is shown), or one that shows nothing."""
    if quiet:
        return _NoProgress()
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    return Progress(
        TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
        TextColumn("{task.fields[rate]} probes/s"), TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
        console=console, transient=False,
    )


class _NoProgress:
    """What `--quiet` shows: nothing (the run's progress is not even counted)."""

    class _Task:
        completed, elapsed = 0, None

    tasks = {0: _Task()}

    def __enter__(self) -> "_NoProgress":
        return self

    def __exit__(self, *exc) -> None:
        return None

    def add_task(self, *args, **kwargs) -> int:
        return 0

    def advance(self, *args, **kwargs) -> None:
        return None

    def update(self, *args, **kwargs) -> None:
        return None


def _run(args, specs, policies, out_dir, scenarios, workers: int, pool) -> int:
    from harness.run.intake import n_probes
    from harness.run.runner import execute

    total_probes = sum(n_probes(s) for s in scenarios) * len(specs)
    console.print(f"running {len(scenarios)} scenarios x {len(specs)} strategies ({', '.join(s.label for s in specs)})"
                  + (f" and {len(policies)} decision policies ({', '.join(p.label for p in policies)})" if policies else ""))
    with _progress(args.quiet) as bar:
        done = 0
        task = bar.add_task(f"scenarios 0/{len(scenarios)}, probes", total=total_probes, rate="-")

        def progress(probes: int, scenarios_done: int) -> None:
            nonlocal done
            done += scenarios_done
            bar.advance(task, probes)
            t = bar.tasks[task]
            rate = f"{t.completed / t.elapsed:.0f}" if t.elapsed else "-"
            bar.update(task, rate=rate, description=f"scenarios {done}/{len(scenarios)}, probes")

        result = execute(scenarios, specs, out_dir, seed=args.seed, progress=progress, run_id=args.run_id, name=args.name,
                         workers=workers, executor=args.executor, scheduler=args.scheduler, pool=pool, policies=policies,
                         command="supportbench run " + " ".join(shlex.quote(a) for a in sys.argv[2:]))
    console.print(f"{result.scenarios} scenarios, {result.probes} probes in {result.seconds:.1f}s")
    _say_encodes(result.path)
    errors = strategy_errors(result.path)
    warn_errors(errors)
    warn_outages(result.path)
    if args.junit:
        from harness.ci.junit import run_junit, write_junit
        from harness.analysis.results import Results

        with Results(result.path) as res:
            write_junit(run_junit(res), args.junit)
        console.print(f"wrote JUnit to {args.junit}")
    say(f"{result.path}\n")
    if errors and args.strict:
        console.print(f"--strict: {len(errors)} strategy(ies) raised; exit 1")
        return 1
    return 0

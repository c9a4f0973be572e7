"""Run scenarios through strategies, score them, and write the run.

`run_shard` is the unit of work: a list of scenarios through every strategy spec, returning
Arrow tables. It is a pure function of its inputs, the run id included (no wall time reaches a
strategy; the run id only names each strategy instance's scope), so shards can run in any
process or on any engine and merge deterministically.
"""

from __future__ import annotations

import gc
import hashlib
import itertools
import json
import sys
import threading
import time
import uuid
from contextlib import ExitStack, contextmanager, nullcontext
from dataclasses import asdict, dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import pyarrow as pa

from stores.decisions.registry import PolicySpec
from stores.params import public_params
from stores.redaction import register_all, register_url, scrub
from stores.registry import StrategySpec, strategy_class
from stores.tokens import TOKENIZER_ID

from harness.criteria import describe as describe_criteria
from harness.criteria import registry as criteria_registry
from harness.criteria import Score, score_decision, score_probe, score_scenario
from harness.run import costs as run_costs
from harness.run.lifecycle import LOCAL_RUN, Instances, namespace
from harness.run.manifest import FORMAT_VERSION
from harness.replay.probes import SeenItem, attach_replays, build_seen, idempotency_signatures, replay, scenario_texts
from harness.run.runstore import PartStream, RunWriter, environment, new_run_id, write_parts
from harness.format.model import Scenario
from harness.run.tables import STREAMED, TableBuffer, strings_in
from harness.run.intake import ScenarioHandle, n_decision_cases, n_events, scenario_of
from harness.run.workers import open_pool, stop_workers
from stores.cpu import plan_threads
from stores.protocol import PrepareHook, Turn
from stores.retrieval.encoder import encoder_stats, expect, set_worker_share

Progress = Callable[[int, int], None]
"""Called as `progress(probes_just_done, scenarios_just_done)`."""
FRESH_PLAN_S = 60.0
"""A run measures the busy cores again when this process last did so longer ago (`stores.cpu`)."""


def run_scenario(scenario: Scenario, spec: StrategySpec, buf: TableBuffer, seen: dict[str, SeenItem] | None = None,
                 *, run_id: str = LOCAL_RUN, costs: run_costs.Costs | None = None) -> int:
    """Replay, check idempotency, score; add everything to `buf`. Returns the number of probes.

    `seen` (the scenario's items, from `build_seen`) is shared by every strategy and replay of
    the scenario; it is built here when not given. The strategy instances live in
    `harness.run.lifecycle.Instances`: each opened in its own scope (namespaced by `run_id`),
    all closed once the replays are done, whatever raised. With `costs`, the replays' wall time
    and the instances' service calls are added to it (`harness.run.costs`).
    """
    groups = {k: c.group for k, c in criteria_registry().items()}
    seen = build_seen(scenario) if seen is None else seen
    t0 = time.perf_counter()
    encodes = encoder_stats()
    with Instances(spec, scenario, run_id) as instances:
        strategy = instances.new("plain")
        # the timeline goes to the tables as it is made: a long history's is never all in memory
        result = replay(scenario, strategy, seen=seen, timeline_to=lambda p: buf.add_point(spec.label, scenario.id, p))
        idem = idempotency_signatures(scenario, lambda: instances.new("twice"), result, strategy, seen=seen)
        calls = run_costs.service_calls(s for s, _ in instances.built)
    if costs is not None:
        run_costs.add(costs, spec.label, time.perf_counter() - t0, calls)
        run_costs.add_embedding(costs, spec.label, encodes, encoder_stats())
    attach_replays(result.outcomes, idem)  # self_recall also judges the reset and twice bundles
    hide = _redactor(spec)
    for o in result.outcomes:
        o.error, o.health_error, o.handoff_error = hide(o.error), hide(o.health_error), hide(o.handoff_error)
        scores = [_hidden(s, hide) for s in score_probe(o)]  # first: a shortened receipt keeps what they name
        buf.add_outcome(spec.label, spec.name, o, frozenset(e for s in scores for e in s.evidence))
        buf.add_scores(spec.label, spec.name, scenario, o.probe.id, scores, groups)
    extra = {"idempotency": idem, "observe_error": result.observe_error, "capabilities": frozenset(strategy.capabilities),
             "memory_classes": result.memory_classes}
    scored = [_hidden(s, hide) for s in score_scenario(scenario, result.outcomes, extra)]
    buf.add_scores(spec.label, spec.name, scenario, "", scored, groups)
    return len(result.outcomes)


def run_policy(scenario: Scenario, spec: PolicySpec, buf: TableBuffer, *, run_id: str = LOCAL_RUN) -> int:
    """Every turn of `scenario` through one decision policy, scored; rows added to `buf`.
    Returns the number of decision cases (customer turns with a gold plan).

    The policy is built fresh for the scenario, its session state namespaced like a strategy's
    scope (run id, label, suite, scenario), and always closed. One that cannot be built stands in
    as `UnavailablePolicy`, so each of its cases is an `error` row naming why.
    """
    # imported here: a run without decision policies never loads the decision layer
    from harness.replay.decide import UnavailablePolicy, replay_policy, rows as decision_rows

    groups = {k: c.group for k, c in criteria_registry().items()}
    # unique to this attempt: a rerun under the same run id (a CI retry) shares no state with the
    # first attempt's, whose keys a shared Redis would otherwise keep for a day
    ns = namespace(run_id, spec.label, scenario.suite, scenario.id, f"policy-{uuid.uuid4().hex}")
    try:
        policy = spec.build(namespace=ns)
    except Exception as exc:
        policy = UnavailablePolicy(f"could not build policy {spec.label!r}: {type(exc).__name__}: {exc}")
    _clear(policy)  # cleared at the start and at the end: nothing of the attempt outlives it
    try:
        outcomes = replay_policy(scenario, policy)
    finally:
        _clear(policy)
        try:
            policy.close()
        except Exception:
            pass  # a close that fails changes no decision already made
    buf.add_decisions(decision_rows(spec.label, spec.name, outcomes))
    cases = 0
    for o in outcomes:
        scored = score_decision(o)
        if scored:
            buf.add_scores(spec.label, spec.name, scenario, o.turn.id, scored, groups)
        cases += int(o.is_case)
    return cases


def _clear(policy: Any) -> None:
    """Drop the policy's session state (its locker's namespace); a locker that cannot be reached
    is left alone here, its outage shows on the turns that need it."""
    try:
        policy.reset()
    except Exception:
        pass


def _redactor(spec: StrategySpec) -> Callable[[str | None], str | None]:
    """What hides secrets in text the run writes (an error message quoting a request, say): the
    project's one scrubber (`stores.redaction`), with the spec's secret values registered (once per
    spec in this process: `run_shard` has registered its specs already, a direct caller of
    `run_scenario` has not)."""
    _register_once(spec)
    return _scrub


def _scrub(text: str | None) -> str | None:
    return scrub(text) if text else text


_REGISTERED: set[StrategySpec] = set()
"""Specs whose secrets this process has registered (registration only ever adds)."""


def _register_once(spec: StrategySpec) -> None:
    try:
        if spec in _REGISTERED:
            return
    except TypeError:  # a parameter value that cannot be hashed: register again, as it costs nothing wrong
        pass
    register_specs([spec])


def register_specs(specs: Sequence[StrategySpec] = (), policies: Sequence[PolicySpec] = ()) -> None:
    """Register every secret the specs run with (their secret params, the credentials of any URL
    among their params) with `stores.redaction`, in this process: a worker process calls it
    for the specs it was sent."""
    for s in specs:
        register_all(s.secret_values())
        for value in strings_in(public_params(s.params())):
            register_url(value)
        try:
            _REGISTERED.add(s)
        except TypeError:  # unhashable parameters: `_redactor` registers it again each time
            pass
    for p in policies:
        for value in strings_in(asdict(p.params())):
            register_url(value)


def _hidden(s: Score, hide: Callable[[str | None], str | None]) -> Score:
    text = hide(s.explanation)
    return s if text == s.explanation else replace(s, explanation=text or "")


def run_shard(
    scenarios: Sequence[Scenario | ScenarioHandle], specs: Sequence[StrategySpec], progress: Progress | None = None,
    *, run_id: str = LOCAL_RUN, costs: run_costs.Costs | None = None, policies: Sequence[PolicySpec] = (),
    sinks: Mapping[str, Callable[[pa.Table], None]] | None = None,
) -> dict[str, pa.Table]:
    """Every scenario through every strategy spec and every decision policy; the tables of the
    shard (scenarios given loaded or as handles from `harness.run.intake`, loaded here one at a
    time). `run_id` names the run in every strategy instance's scope (`stores.protocol.Scope`);
    `costs`, when given, gathers what each strategy cost (`harness.run.costs`). With `sinks`,
    the candidates and health rows go there as they are produced instead (`TableBuffer`)."""
    register_specs(specs, policies)
    with shard_collector():
        buf = TableBuffer(sinks)
        prefetch(scenarios, specs, costs)
        for s in scenarios:
            s = scenario_of(s)
            buf.add_events(s)
            seen = build_seen(s)
            probes = 0
            for spec in specs:
                probes += run_scenario(s, spec, buf, seen, run_id=run_id, costs=costs)
            for policy in policies:
                run_policy(s, policy, buf, run_id=run_id)
            if progress:
                progress(probes, 1)
        return buf.tables()


SHARD_GC_THRESHOLD = (50_000, 20, 10)
"""The cycle collector's thresholds while a shard runs (Python's default: 700, 10, 10)."""
_collector_lock = threading.Lock()
_collector_depth = [0, None]  # shards running in this process, the thresholds to restore


@contextmanager
def shard_collector():
    """While a shard runs, the cycle collector leaves alone what existed before it (`gc.freeze`:
    the imported modules, the loaded scenarios) and runs less often (`SHARD_GC_THRESHOLD`).

    A shard keeps what it makes (rows, outcomes, the per-process caches of lines and sentences) and
    makes few reference cycles, so with the default thresholds the collector went through the
    same live objects again and again, a whole pass over everything whenever they had grown by a
    quarter: about a tenth of a long conversation's run, finding next to nothing. Garbage without
    cycles is freed as before (reference counting); cycles are still collected, less often. Results
    cannot change: the collector only frees what nothing can reach. Restored (thresholds, and the
    frozen objects back in the oldest generation) when the last shard running in the process ends.
    """
    with _collector_lock:
        if _collector_depth[0] == 0:
            _collector_depth[1] = gc.get_threshold()
            gc.freeze()
            gc.set_threshold(*SHARD_GC_THRESHOLD)
        _collector_depth[0] += 1
    try:
        yield
    finally:
        with _collector_lock:
            _collector_depth[0] -= 1
            if _collector_depth[0] == 0:
                gc.set_threshold(*_collector_depth[1])
                gc.unfreeze()


def prefetch(scenarios: Sequence[Scenario | ScenarioHandle], specs: Sequence[StrategySpec],
             costs: run_costs.Costs | None = None) -> None:
    """Warm the caches of the specs that have a `prepare` hook with every text of the shard at
    once (its turns, resolution summaries and probe tasks, deduplicated), so an embedding cache is
    filled in one model call per model, in few large batches, and every replay of the shard is
    served from it. The vectors are the ones a per-scenario or per-probe encode would give
    (`stores.retrieval.encoder`: no padding and strict numerics, or one text per model call where strict
    numerics do not take), so results do not follow the sharding.

    Speed only, like the hook itself: each such spec gets an instance built for this and nothing
    else (never opened, never shown an event), and a failure is ignored (the per-scenario replays
    meet the same texts and surface whatever broke). Specs without the hook cost nothing here,
    and the shard's scenarios are not read for them. The texts the learned front ends read one at a
    time (`front_texts`) are named to the encoder, to be read and encoded in one call at the first
    front-end read of the shard (`stores.retrieval.encoder.expect`), or never when none reads.
    """
    expect(lambda: front_texts(scenarios))  # read and encoded only if a learned front end reads in the shard
    wanted = [spec for spec in specs if _has_prepare(spec)]
    if not wanted:
        return
    texts = list(dict.fromkeys(t for s in scenarios for t in scenario_texts(scenario_of(s)) if t.strip()))
    for spec in wanted:
        before = encoder_stats()
        try:
            strategy = spec.build()
            if isinstance(strategy, PrepareHook):
                strategy.prepare(texts)
        except Exception:
            pass
        if costs is not None:
            run_costs.add_embedding(costs, spec.label, before, encoder_stats())


def front_texts(scenarios: Sequence[Scenario | ScenarioHandle]) -> list[str]:
    """The texts the learned front ends read whole, one at a time, during a shard's replays: every customer
    message (the decision signals, the memory classes) and every agent message as the memory classifier
    reads it (`agent: <text>`); texts only, never gold. `prefetch` names them to the encoder
    (`stores.retrieval.encoder.expect`), so the first read encodes them all in one model call."""
    out: list[str] = []
    for s in scenarios:
        for ev in scenario_of(s).events:
            if isinstance(ev, Turn) and ev.text.strip():
                if ev.role == "customer":
                    out.append(ev.text)
                elif ev.kind == "message":  # an agent's action is classified by the rules alone
                    out.append(f"agent: {ev.text}")
    return list(dict.fromkeys(out))


def _has_prepare(spec: StrategySpec) -> bool:
    try:
        return callable(getattr(strategy_class(spec.name), "prepare", None))
    except Exception:
        return False


Shard = tuple[int, list[Scenario | ScenarioHandle]]
"""A shard's index (it names the shard's Parquet parts) and its scenarios."""


def make_shards(scenarios: Sequence[Scenario | ScenarioHandle], shard_size: int = 25, workers: int = 1) -> list[Shard]:
    """Consecutive slices of the scenarios, numbered in order.

    With several workers shards get smaller (about eight per worker, at most `shard_size`), so
    progress moves smoothly and a slow shard at the end does not leave the others idle.
    """
    size = max(1, shard_size)
    if workers > 1:
        size = max(1, min(size, -(-len(scenarios) // (workers * 8))))
    return [(n, list(scenarios[i : i + size])) for n, i in enumerate(range(0, len(scenarios), size))]


def run_shard_to_folder(index: int, scenarios: Sequence[Scenario | ScenarioHandle], specs: Sequence[StrategySpec],
                        folder: str, run_id: str = LOCAL_RUN, share: int | None = None,
                        policies: Sequence[PolicySpec] = ()) -> tuple[int, int]:
    """A worker's job: run one shard, write its parts into the run's temporary folder.

    Returns (probes, scenarios) for progress; the tables themselves never travel back, so the
    parent's memory stays flat however large the run. `share`: how many processes run shards
    at once, when the worker was not started by `open_pool` (dask), for torch's thread count.
    """
    if share is not None:
        set_worker_share(share)
    probes = 0

    def count(p: int, s: int) -> None:
        nonlocal probes
        probes += p

    costs: run_costs.Costs = {}
    write_shard(folder, index, scenarios, specs, count, run_id, costs, policies)
    return probes, len(scenarios)


def write_shard(folder: str | Path, index: int, scenarios: Sequence[Scenario | ScenarioHandle],
                specs: Sequence[StrategySpec], progress: Progress | None, run_id: str, costs: run_costs.Costs,
                policies: Sequence[PolicySpec]) -> None:
    """Run one shard and write its parts into `folder`: the candidates and health reports
    streamed to their parts as they are produced (so a long history's millions of rows are
    never all in memory), the other tables and the costs when the shard is done."""
    with ExitStack() as stack:
        streams = {t: stack.enter_context(PartStream(folder, t, index)) for t in STREAMED}
        tables = run_shard(scenarios, specs, progress, run_id=run_id, costs=costs, policies=policies,
                           sinks={t: s.write for t, s in streams.items()})
    write_parts(folder, index, tables)
    run_costs.write_shard(folder, index, costs)


def _cost(shard: Shard) -> int:
    return sum(n_events(s) for s in shard[1])


def _run_in_processes(shards: list[Shard], specs, folder: Path, progress: Progress, workers: int, run_id: str,
                      pool=None, policies: Sequence[PolicySpec] = ()) -> None:
    """Shards over a process pool (`open_pool`, or the run's own `pool`); biggest shards first."""
    from concurrent.futures import FIRST_COMPLETED, wait

    order = sorted(shards, key=lambda sh: (-_cost(sh), sh[0]))
    # workers exit when this process is gone, and are stopped (not awaited) when it stops early
    with (nullcontext(pool) if pool is not None else open_pool(workers)) as pool:
        pending = set()
        try:
            # keep a few shards queued per worker, not the whole suite, so memory stays bounded
            it = iter(order)
            for index, shard in it:
                pending.add(pool.submit(run_shard_to_folder, index, shard, specs, str(folder), run_id, None, policies))
                if len(pending) >= workers * 3:
                    break
            while pending:
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                for f in done:
                    p, n = f.result()
                    progress(p, n)
                    nxt = next(it, None)
                    if nxt is not None:
                        pending.add(pool.submit(run_shard_to_folder, nxt[0], nxt[1], specs, str(folder), run_id, None,
                                                policies))
        except BaseException:
            # Stop the workers before anything else: cancelling a future here while the pool's
            # manager thread later fails it as broken crashed that thread (InvalidStateError)
            # and hung the exit. The pool fails what was in flight; shutdown drops the rest.
            stop_workers(pool)
            pool.shutdown(wait=True, cancel_futures=True)
            raise


def _run_on_dask(shards: list[Shard], specs, folder: Path, progress: Progress, workers: int, scheduler: str | None,
                 run_id: str, policies: Sequence[PolicySpec] = ()) -> None:
    """The same shard function on a dask.distributed cluster (an existing one at `scheduler`, else a LocalCluster).

    Workers write their parts straight into `folder`, so it must be on storage every worker
    sees (the same machine, or a shared filesystem for a real cluster).
    """
    try:
        from distributed import Client, LocalCluster, as_completed
    except ImportError:
        raise RuntimeError("--executor dask needs the optional extra: pip install 'supportbench[dask]'") from None
    cluster = None
    if scheduler:
        client = Client(scheduler)
    else:
        cluster = LocalCluster(n_workers=max(1, workers), threads_per_worker=1, processes=True,
                               dashboard_address=None, silence_logs=40)
        client = Client(cluster)
    try:
        order = iter(sorted(shards, key=lambda sh: (-_cost(sh), sh[0])))
        target = str(Path(folder).resolve())
        n_workers = max(1, len(client.scheduler_info().get("workers", {})) or workers)

        def submit(shard: Shard):
            # keys name the shard for the dashboard; pure=False so a rerun really runs
            return client.submit(run_shard_to_folder, shard[0], shard[1], specs, target, run_id, n_workers, policies,
                                 key=f"shard-{shard[0]:06d}-{Path(folder).name}", pure=False)

        # a few shards in flight per worker, not the whole suite at once
        futures = [submit(sh) for sh in itertools.islice(order, n_workers * 3)]
        queue = as_completed(futures)
        try:
            for f in queue:
                p, n = f.result()
                progress(p, n)
                nxt = next(order, None)
                if nxt is not None:
                    queue.add(submit(nxt))
        except BaseException:
            client.cancel(futures + list(queue.futures))
            raise
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def suite_identity(scenarios: Sequence[Scenario | ScenarioHandle]) -> list[dict[str, Any]]:
    """Per suite: its files with their content hashes and one hash over them (order-independent)."""
    suites: dict[str, list] = {}
    for s in scenarios:
        suites.setdefault(s.suite, []).append(s)
    out = []
    for name in sorted(suites):
        files = sorted(({"id": s.id, "path": s.path, "version": s.version, "sha256": s.content_hash} for s in suites[name]), key=lambda f: f["id"])
        h = hashlib.sha256("".join(f"{f['id']}:{f['sha256']}\n" for f in files).encode()).hexdigest()
        out.append({"suite": name, "hash": h, "scenarios": len(files), "files": files})
    return out


@dataclass
class RunResult:
    run_id: str
    path: Path
    probes: int
    scenarios: int
    seconds: float


def execute(
    scenarios: Sequence[Scenario | ScenarioHandle],
    specs: Sequence[StrategySpec],
    out_dir: str | Path = "runs",
    *,
    seed: int = 0,
    progress: Progress | None = None,
    run_id: str | None = None,
    name: str = "",
    command: str | None = None,
    shard_size: int = 25,
    workers: int = 1,
    executor: str = "process",
    scheduler: str | None = None,
    policies: Sequence[PolicySpec] = (),
    pool=None,
) -> RunResult:
    """Run and write atomically; on any exception or interrupt nothing visible is left behind.

    With `workers > 1` (or `executor="dask"`) the shards run in other processes, each writing
    its own Parquet parts into the run's temporary folder; `progress` is called per finished
    shard. Part names come from the shard index, so the run is the same whatever finishes first.
    `name` is a reader's name for the run ("baseline", "threshold 0.15"), kept in the manifest
    for the app's run pickers; it changes nothing else.
    `scenarios` may be handles loaded by the workers (`harness.run.intake.load_in_workers`),
    and `pool` the pool that loaded them (`open_pool`), which then runs the shards too.
    """
    # the cores measured again when the last look is a minute old (the app starting another run);
    # a pool made by the caller was given the plan as it stands, so the run records that one
    plan = plan_threads(workers if executor == "process" else max(workers, 1),
                        fresh_within=None if pool is not None else FRESH_PLAN_S)
    threads = plan.threads  # what each worker's torch_threads() gives (the pool hands it down)
    if executor == "process" and workers <= 1:
        set_worker_share(1, threads)  # this process runs the shards: its encoder takes the run's plan
    started = datetime.now(timezone.utc)
    run_id = run_id or new_run_id(started)
    register_specs(specs, policies)  # what no file of the run may hold (the manifest's command line included)
    writer = RunWriter(out_dir, run_id)
    run_id = writer.run_id  # the id the run is written under is the one every strategy scope is named by
    t0 = time.perf_counter()
    probes = 0
    try:
        def counting(p: int, s: int) -> None:
            nonlocal probes
            probes += p
            if progress:
                progress(p, s)

        shards = make_shards(scenarios, shard_size, workers if executor == "process" else max(workers, 2))
        if executor == "dask":
            _run_on_dask(shards, specs, writer.tmp, counting, workers, scheduler, run_id, policies)
        elif executor != "process":
            raise ValueError(f"unknown executor {executor!r} (known: process, dask)")
        elif workers > 1:
            _run_in_processes(shards, specs, writer.tmp, counting, workers, run_id, pool, policies)
        else:
            for index, shard in shards:
                write_shard(writer.tmp, index, shard, specs, counting, run_id, {}, policies)
        spent = run_costs.collect(writer.tmp)
        down = locker_outages(writer.tmp)
        manifest = {
            "format_version": FORMAT_VERSION,
            "run_id": run_id,
            "name": name.strip(),
            "started": started.isoformat(),
            "finished": datetime.now(timezone.utc).isoformat(),
            "package": "supportbench",
            "command": scrub(command or " ".join(sys.argv)),
            "seed": seed,
            "tokenizer": TOKENIZER_ID,
            "strategies": [
                {"label": s.label, "name": s.name, "variant": s.variant, "overrides": s.public_overrides(),
                 "params": public_params(s.params()), "params_hash": s.params_hash(), "capabilities": _capabilities(s),
                 "source": s.entry().manifest(),
                 **({"expiry": public_params(s.expiry_params())} if s.expiry is not None else {}),
                 **({"secrets": s.secret_paths()} if s.secret_paths() else {}),
                 "cost": run_costs.manifest_entry(spent, s.label)}
                for s in specs
            ],
            "policies": [
                {"label": p.label, "name": p.name, "variant": p.variant, "overrides": [list(o) for o in p.overrides],
                 "params": _plain(p.params()), "params_hash": p.params_hash(), "source": p.entry().manifest(),
                 **({"outage": down[p.label]} if p.label in down else {})}
                for p in policies
            ],
            "datasets": suite_identity(scenarios),
            "criteria": describe_criteria(),
            "counts": {"scenarios": len(scenarios), "probes": probes, "strategies": len(specs), "policies": len(policies),
                       "decision_cases": sum(n_decision_cases(s) for s in scenarios) * len(policies)},
            "execution": {"executor": executor, "workers": workers, "shards": len(shards), "scheduler": scheduler,
                          "torch_threads": threads, "threads": plan.as_manifest()},
            **environment(),
        }
        path = writer.commit(manifest)
    except BaseException:
        writer.abort()
        raise
    return RunResult(run_id, path, probes, len(scenarios), time.perf_counter() - t0)


def locker_outages(folder: str | Path) -> dict[str, dict[str, Any]]:
    """Per policy label, the events on which its locker could not be reached without a scripted
    fault (`decisions.outage`): how many, in how many scenarios, and the first thing it said. Read
    from the run's decisions parts (in its temporary folder, before the manifest is written)."""
    parts = sorted(str(p) for p in (Path(folder) / "decisions").glob("*.parquet"))
    if not parts:
        return {}
    import duckdb  # only for a run with decision policies

    con = duckdb.connect()
    try:
        rows = con.execute(
            "SELECT policy, count(*), count(DISTINCT scenario), arg_min(outage, scenario || ':' || lpad(event_index::VARCHAR, 9, '0')) "
            "FROM read_parquet(?, union_by_name=true) WHERE outage IS NOT NULL GROUP BY policy ORDER BY policy",
            [parts]).fetchall()
    finally:
        con.close()
    return {label: {"events": int(n), "scenarios": int(s), "first": first} for label, n, s, first in rows}


def _plain(params: Any) -> dict[str, Any]:
    """A policy's params as plain JSON data."""
    return json.loads(json.dumps(asdict(params), sort_keys=True, default=str))


def _capabilities(spec: StrategySpec) -> list[str]:
    """What the strategy can answer beyond context (a rescore needs it to tell `unsupported`),
    `expiry` included when the spec runs behind the expiry stage."""
    try:
        return sorted(spec.capabilities())
    except Exception:
        return []


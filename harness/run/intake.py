"""Check and load a run's scenario files in its worker processes, not one by one in the run.

A run with `--workers N` used to parse and validate every file in the run process before any
worker started (about a seventh of the wall time of a 1,000-customer run on 2 cores). Here the
run only lists the files (`harness.format.loader.expand_paths`) and hands them, in chunks, to
the pool that will run them; each worker validates and loads its chunk (`check_file`, every
problem of every file) and sends back, per file, its problems or the loaded scenario pickled.
The run then applies the checks across files (`merge_checked`: unique ids) and refuses the
suite, with every problem of every file, before any strategy has seen an event, exactly as
`load_suite` would. A valid suite travels on as `ScenarioHandle`s: the run keeps only what the
manifest and the scheduler need (id, path, hash, counts) plus the pickled bytes, which it
forwards unopened to whichever worker runs the shard; that worker unpickles them (about 40x
cheaper than parsing the file again).
"""

from __future__ import annotations

import pickle
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from harness.format.issues import ScenarioError, ValidationIssue
from harness.format.loader import check_file, expand_paths, merge_checked
from harness.format.model import Scenario

CHUNKS_PER_WORKER = 8
"""Files are checked in about this many chunks per worker, so both stay busy to the end."""


@dataclass(frozen=True)
class ScenarioHandle:
    """A scenario validated and loaded in a worker, as the run process holds it."""

    id: str
    """The scenario id."""
    path: str
    """Its file."""
    version: int
    """Its `version` key."""
    suite: str
    """The suite (the file's folder name)."""
    content_hash: str
    """sha256 of the file's bytes."""
    n_events: int
    """How many events it has (the scheduler's measure of its cost)."""
    n_probes: int
    """How many probes it has."""
    n_decision_cases: int
    """How many decision cases it has (customer turns with a gold plan)."""
    payload: bytes
    """The loaded `Scenario`, pickled by the worker that checked it."""

    def load(self) -> Scenario:
        """The scenario itself (in the worker that runs it)."""
        return pickle.loads(self.payload)

    @classmethod
    def of(cls, s: Scenario) -> "ScenarioHandle":
        """The handle of a loaded scenario."""
        return cls(s.id, s.path, s.version, s.suite, s.content_hash, len(s.events), len(s.probes), decision_cases(s),
                   pickle.dumps(s, protocol=pickle.HIGHEST_PROTOCOL))


def scenario_of(s: Scenario | ScenarioHandle) -> Scenario:
    """A scenario, whether given loaded or as a handle."""
    return s.load() if isinstance(s, ScenarioHandle) else s


def n_events(s: Scenario | ScenarioHandle) -> int:
    """Events of a scenario or a handle."""
    return s.n_events if isinstance(s, ScenarioHandle) else len(s.events)


def decision_cases(s: Scenario) -> int:
    """Customer turns with a gold plan: the cases a decision policy is judged on."""
    return sum(1 for t in s.turns if t.role == "customer" and s.gold_of(t.id).plan is not None)


def n_decision_cases(s: Scenario | ScenarioHandle) -> int:
    """Decision cases of a scenario or a handle."""
    return s.n_decision_cases if isinstance(s, ScenarioHandle) else decision_cases(s)


def n_probes(s: Scenario | ScenarioHandle) -> int:
    """Probes of a scenario or a handle."""
    return s.n_probes if isinstance(s, ScenarioHandle) else len(s.probes)


def check_chunk(files: list[str]) -> list[tuple[ScenarioHandle | None, list[ValidationIssue]]]:
    """A worker's job: `check_file` on each file; the loaded ones as handles."""
    out = []
    for f in files:
        scenario, issues = check_file(f)
        out.append((ScenarioHandle.of(scenario) if scenario is not None else None, issues))
    return out


def load_in_workers(paths: Sequence[str | Path], pool, workers: int) -> list[ScenarioHandle]:
    """Check and load every file under `paths` in `pool`'s workers; `ScenarioError` with every
    problem (the same list, in the same order, as `load_suite` gives) when any file is invalid."""
    files, issues = expand_paths(paths)
    size = max(1, -(-len(files) // (max(1, workers) * CHUNKS_PER_WORKER)))
    chunks = [files[i : i + size] for i in range(0, len(files), size)]
    checked: list = []
    for part in pool.map(check_chunk, chunks):  # in order: problems are listed file by file
        checked.extend(part)
    handles, issues = merge_checked(files, checked, issues)
    if issues:
        raise ScenarioError(issues)
    return handles

"""The shape of a run's `manifest.json`, as its readers rely on it (docs/run-format.md).

Readers (the app, `report`, `check`, `compare`, `rescore`) index the manifest as plain JSON:
`strategies[i]["label"]`, `datasets[i]["hash"]`, ... A manifest whose fields have the wrong
type (`"strategies": "oops"`) would crash each of them somewhere else; `manifest_problem`
names the first such field once, so the run is reported as damaged instead. Every field is
optional (older and hand-written runs hold fewer); unknown fields are kept.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError


FORMAT_VERSION = 1
"""The run format this code writes and reads (docs/run-format.md): the tables' schemas
(`harness.run.tables.SCHEMAS`) and the manifest's fields. A change a reader of an older run could
not follow (a column renamed or retyped, a field's meaning changed) raises it; a run written in a
newer format than this code knows is refused on read, naming both versions. A column or field
added with a default for older runs does not."""


class _Entry(BaseModel):
    model_config = ConfigDict(extra="allow", strict=True)


class StrategyEntry(_Entry):
    """One strategy of the run."""

    label: str
    """The row name everywhere (`name`, `name[variant]`)."""
    name: str
    """Registry key."""
    params_hash: str = ""
    """Hash of the effective params; the CI check compares it with the baseline's (empty: unknown)."""
    variant: str = ""
    """Variant name, empty for none."""
    overrides: dict[str, Any] = {}
    """The overrides given on the command line or in the config."""
    params: dict[str, Any] = {}
    """Every effective parameter."""
    capabilities: list[str] = []
    """What the strategy answers beyond context (`health`, `handoff`, `gold`)."""
    source: dict[str, str] = {}
    """Where its class came from (`stores.plugins.Entry.manifest`): origin (`built-in`, `plugin`,
    `target`), the resolved `module:Class`, the package and its version."""


class DatasetFile(_Entry):
    """One scenario file of a suite."""

    id: str
    """Scenario id."""
    sha256: str
    """Content hash of the file."""
    version: int = 1
    """The scenario's version."""
    path: str = ""
    """The file as it was given."""


class Dataset(_Entry):
    """One suite of the run."""

    suite: str
    """Suite name (the folder)."""
    hash: str
    """One hash over the suite's files."""
    files: list[DatasetFile] = []
    """Its files."""


class CriterionEntry(_Entry):
    """One criterion the run was scored on."""

    key: str
    """Registry key."""
    title: str = ""
    """Human title."""
    group: str = "core"
    """Its group (`harness.criteria.groups`): `core`, `extra` or `gate`."""
    level: str = ""
    """`probe` or `scenario`."""


class Manifest(_Entry):
    """The fields readers index; anything else is carried along untouched."""

    format_version: int = FORMAT_VERSION
    """The run format it was written in (runs from before the field existed are version 1)."""
    run_id: str = ""
    """The run's folder name when it was written."""
    started: str = ""
    """ISO time the run started (runs are listed newest first by it)."""
    finished: str = ""
    """ISO time the run was committed."""
    seed: int = 0
    """Seed of the bootstrap intervals."""
    strategies: list[StrategyEntry] = []
    """Every strategy of the run."""
    datasets: list[Dataset] = []
    """Every suite of the run."""
    criteria: list[CriterionEntry] = []
    """Every criterion, in registry order."""
    counts: dict[str, int] = {}
    """Scenarios, probes and strategies."""


def manifest_problem(data: Any) -> str | None:
    """The first field of a manifest that readers cannot use, as `field: what was expected`."""
    if not isinstance(data, dict):
        return f"expected a JSON object, got {type(data).__name__}"
    try:
        Manifest.model_validate(data)
    except ValidationError as e:
        err = e.errors(include_url=False)[0]
        where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in err["loc"]).lstrip(".")
        got = repr(err.get("input"))
        got = got if len(got) <= 40 else got[:37] + "..."
        return f"{where}: {err['msg'][:1].lower()}{err['msg'][1:]}, got {got}"
    version = data.get("format_version", FORMAT_VERSION)
    if version > FORMAT_VERSION:
        return (f"format_version: written in run format {version}, newer than this supportbench reads "
                f"(up to {FORMAT_VERSION}); read it with the version that wrote it")
    if version < 1:
        return f"format_version: expected a run format of at least 1, got {version}"
    return None

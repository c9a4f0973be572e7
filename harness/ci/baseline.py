"""The approved baseline: what a run scored, frozen into a reviewable JSON file.

The file (format `supportbench-baseline/1`, documented in docs/ci.md) holds the suite
hashes the numbers belong to, each strategy's params (secret ones left out) and params hash, per strategy x
criterion the mean, pass rate, n and the sorted lists of passing and failing case ids, and
the tolerances the check applies. Keys are sorted and lists are sorted, so the same run
always gives the same bytes whatever order scenarios or strategies ran in, and a re-approval
shows up as a readable diff.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Sequence

from harness.analysis.results import Results
from stores.files import BASELINE_BYTES, read_text_capped

from harness.analysis.cases import case_rows, criterion_stats, judged_specs

FORMAT = "supportbench-baseline/1"
DIGITS = 6
"""Means and pass rates are rounded so float summation order never changes the file."""

NewFailure = Literal["fail", "warn"]


class BaselineError(ValueError):
    """A baseline file or a run that cannot be used (exit code 2)."""


@dataclass
class CaseRule:
    """What a newly failing case means for one strategy / criterion / case (any field may be `*`)."""

    strategy: str = "*"
    criterion: str = "*"
    case: str = "*"
    new_failure: NewFailure = "warn"

    def matches(self, strategy: str, criterion: str, case: str) -> bool:
        return all(rule in ("*", value) for rule, value in
                   ((self.strategy, strategy), (self.criterion, criterion), (self.case, case)))


@dataclass
class Tolerances:
    """How far a run may fall below the baseline before the check fails."""

    default: float = 0.0
    """Absolute drop allowed in a criterion's mean and in its pass rate."""
    criteria: dict[str, float] = field(default_factory=dict)
    """Per-criterion overrides of `default`."""
    new_failures: NewFailure = "fail"
    """Whether a case that passed in the baseline and fails now fails the check (`fail`) or is only reported (`warn`)."""
    new_failures_criteria: dict[str, NewFailure] = field(default_factory=dict)
    """Per-criterion overrides of `new_failures`."""
    cases: list[CaseRule] = field(default_factory=list)
    """Per-case overrides (the most specific rule wins; later rules win ties)."""

    def for_criterion(self, criterion: str) -> float:
        return float(self.criteria.get(criterion, self.default))

    def new_failure(self, strategy: str, criterion: str, case: str) -> NewFailure:
        best, rank = self.new_failures_criteria.get(criterion, self.new_failures), -1
        for rule in self.cases:
            if rule.matches(strategy, criterion, case):
                r = sum(x != "*" for x in (rule.strategy, rule.criterion, rule.case))
                if r >= rank:
                    best, rank = rule.new_failure, r
        return best

    def to_json(self) -> dict[str, Any]:
        return {
            "default": self.default,
            "criteria": dict(sorted(self.criteria.items())),
            "new_failures": self.new_failures,
            "new_failures_criteria": dict(sorted(self.new_failures_criteria.items())),
            "cases": sorted(
                ({"strategy": r.strategy, "criterion": r.criterion, "case": r.case, "new_failure": r.new_failure} for r in self.cases),
                key=lambda d: (d["strategy"], d["criterion"], d["case"]),
            ),
        }

    @classmethod
    def from_json(cls, d: dict[str, Any], where: str = "tolerances") -> "Tolerances":
        if not isinstance(d, dict):
            raise BaselineError(f"{where}: expected an object")
        unknown = set(d) - {"default", "criteria", "new_failures", "new_failures_criteria", "cases"}
        if unknown:
            raise BaselineError(f"{where}: unknown keys {sorted(unknown)}")
        try:
            t = cls(
                default=_tol(d.get("default", 0.0), f"{where}.default"),
                criteria={k: _tol(v, f"{where}.criteria.{k}") for k, v in (d.get("criteria") or {}).items()},
                new_failures=_nf(d.get("new_failures", "fail"), f"{where}.new_failures"),
                new_failures_criteria={k: _nf(v, f"{where}.new_failures_criteria.{k}")
                                       for k, v in (d.get("new_failures_criteria") or {}).items()},
                cases=[_rule(r, f"{where}.cases[{i}]") for i, r in enumerate(d.get("cases") or [])],
            )
        except (TypeError, AttributeError) as e:
            raise BaselineError(f"{where}: {e}") from None
        return t


def _tol(v: Any, where: str) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 <= v <= 1:
        raise BaselineError(f"{where}: expected a number between 0 and 1, got {v!r}")
    return float(v)


def _nf(v: Any, where: str) -> NewFailure:
    if v not in ("fail", "warn"):
        raise BaselineError(f"{where}: expected 'fail' or 'warn', got {v!r}")
    return v


def _rule(d: Any, where: str) -> CaseRule:
    if not isinstance(d, dict) or set(d) - {"strategy", "criterion", "case", "new_failure"}:
        raise BaselineError(f"{where}: expected an object with strategy, criterion, case, new_failure")
    return CaseRule(str(d.get("strategy", "*")), str(d.get("criterion", "*")), str(d.get("case", "*")),
                    _nf(d.get("new_failure", "warn"), f"{where}.new_failure"))


@dataclass
class CriterionBaseline:
    mean: float
    pass_rate: float
    n: int
    passing: list[str]
    failing: list[str]

    @property
    def cases(self) -> set[str]:
        return set(self.passing) | set(self.failing)


@dataclass
class StrategyBaseline:
    name: str
    params: dict[str, Any]
    params_hash: str
    criteria: dict[str, CriterionBaseline]


@dataclass
class Baseline:
    """An approved baseline, as read from or written to its JSON file."""

    suites: dict[str, dict[str, Any]]
    """Suite name -> {"hash": suite hash, "scenarios": {scenario id: file sha256}}."""
    strategies: dict[str, StrategyBaseline]
    tolerances: Tolerances = field(default_factory=Tolerances)
    source: dict[str, Any] = field(default_factory=dict)
    """The run it was approved from: run id, git commit, finished (informational)."""

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "source": self.source,
            "suites": self.suites,
            "strategies": {
                label: {
                    "name": s.name, "params": s.params, "params_hash": s.params_hash,
                    "criteria": {
                        k: {"mean": c.mean, "pass_rate": c.pass_rate, "n": c.n,
                            "passing": sorted(c.passing), "failing": sorted(c.failing)}
                        for k, c in s.criteria.items()
                    },
                }
                for label, s in self.strategies.items()
            },
            "tolerances": self.tolerances.to_json(),
        }

    def dumps(self) -> str:
        return json.dumps(self.to_json(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"

    def write(self, path: str | Path) -> Path:
        from harness.run.runstore import write_text_atomic

        return write_text_atomic(path, self.dumps())


def load_baseline(path: str | Path) -> Baseline:
    """Read and validate a baseline file; any problem is a `BaselineError` naming the file."""
    path = Path(path)
    try:
        d = json.loads(read_text_capped(path, BASELINE_BYTES))
    except FileNotFoundError:
        raise BaselineError(f"{path}: no such baseline file (write one with `supportbench baseline RUN --out {path}`)") from None
    except UnicodeDecodeError as e:
        raise BaselineError(f"{path}: not a JSON baseline (not UTF-8 text: {e.reason} at byte {e.start})") from None
    except (OSError, json.JSONDecodeError) as e:
        raise BaselineError(f"{path}: not a readable JSON baseline: {e.strerror if isinstance(e, OSError) else e}") from None
    if not isinstance(d, dict) or d.get("format") != FORMAT:
        got = d.get("format") if isinstance(d, dict) else type(d).__name__
        raise BaselineError(f"{path}: expected format {FORMAT!r}, got {got!r}")
    try:
        strategies = {
            label: StrategyBaseline(
                s["name"], dict(s.get("params") or {}), s["params_hash"],
                {k: CriterionBaseline(float(c["mean"]), float(c["pass_rate"]), int(c["n"]),
                                      list(c.get("passing", [])), list(c.get("failing", [])))
                 for k, c in s["criteria"].items()},
            )
            for label, s in d["strategies"].items()
        }
        suites = {name: {"hash": s["hash"], "scenarios": dict(s.get("scenarios") or {})} for name, s in d["suites"].items()}
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise BaselineError(f"{path}: malformed baseline ({type(e).__name__}: {e})") from None
    return Baseline(suites, strategies, Tolerances.from_json(d.get("tolerances", {}), f"{path}: tolerances"), dict(d.get("source") or {}))


def suites_of(manifest: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Suite name -> {"hash", "scenarios": {id: sha256}} from a run manifest."""
    return {
        d["suite"]: {"hash": d["hash"], "scenarios": {f["id"]: f["sha256"] for f in d.get("files", [])}}
        for d in manifest.get("datasets", [])
    }


def build_baseline(
    res: Results,
    run: str | None = None,
    *,
    strategies: Sequence[str] | None = None,
    tolerances: Tolerances | None = None,
) -> Baseline:
    """The baseline of one run (controls included): refuses runs with error rows or unknown strategies."""
    run = res.pick_run(run)
    manifest = res.manifests[run]
    specs = judged_specs(manifest)
    if strategies is not None:
        unknown = [s for s in strategies if s not in specs]
        if unknown:
            raise BaselineError(f"strategy {', '.join(unknown)} not in run {run} (it has: {', '.join(specs)})")
        specs = {k: v for k, v in specs.items() if k in strategies}
    cases = case_rows(res, run, list(specs))
    errors = cases[cases["status"] == "error"]
    if len(errors):
        lines = [f"{r.strategy} {r.criterion} {r.case}: {r.explanation}" for r in errors.head(10).itertuples()]
        more = f"\n  ... and {len(errors) - 10} more" if len(errors) > 10 else ""
        raise BaselineError(
            f"run {run} has {len(errors)} error case(s); approve a baseline only from a clean run "
            f"(or leave the strategy out with --strategies):\n  " + "\n  ".join(lines) + more
        )
    stats = criterion_stats(res, run, list(specs)).set_index(["strategy", "criterion"])
    out: dict[str, StrategyBaseline] = {}
    for label in sorted(specs):
        s = specs[label]
        crit: dict[str, CriterionBaseline] = {}
        mine = cases[cases["strategy"] == label]
        for criterion, g in mine.groupby("criterion", sort=True):
            st = stats.loc[(label, criterion)]
            crit[criterion] = CriterionBaseline(
                round(float(st["mean"]), DIGITS), round(float(st["pass_rate"]), DIGITS), int(st["n"]),
                sorted(g.loc[g["passed"].astype(bool), "case"]), sorted(g.loc[~g["passed"].astype(bool), "case"]),
            )
        out[label] = StrategyBaseline(s["name"], baseline_params(s), s.get("params_hash", ""), crit)
    source = {"run_id": run, "git_commit": manifest.get("git_commit"), "finished": manifest.get("finished")}
    return Baseline(suites_of(manifest), out, tolerances or Tolerances(), source)


def baseline_params(strategy: dict[str, Any]) -> dict[str, Any]:
    """A run manifest strategy's params as a baseline keeps them: plain JSON, its secret params
    (`secrets`, dotted keys) left out entirely (the manifest only shows them redacted)."""
    from stores.params import without

    plain = json.loads(json.dumps(strategy.get("params") or {}, sort_keys=True, default=str))
    return without(plain, strategy.get("secrets", ()))


def headline_markdown(b: Baseline) -> str:
    """The approved baseline as the README's headline table: each memory strategy (no control, no
    variant) on the core criteria, with their equal-weight total (an unsupported criterion counts 0,
    as in the report's core total), best total first."""
    from harness.criteria import registry
    from stores.registry import CONTROLS

    core = [k for k, c in registry().items() if c.group == "core"]
    rows = []
    for label, s in b.strategies.items():
        if label in CONTROLS or "[" in label or not set(core) <= set(s.criteria):
            continue
        means = [s.criteria[k].mean for k in core]
        rows.append((sum(means) / len(means), label, means))
    rows.sort(key=lambda r: (-r[0], r[1]))
    head = ["strategy", *(registry()[k].title for k in core), "core total"]
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    lines += [f"| `{label}` | " + " | ".join(f"{m:.2f}" for m in means) + f" | {total:.2f} |" for total, label, means in rows]
    return "\n".join(lines)


HEADLINE_START = "<!-- headline: "
HEADLINE_END = "<!-- /headline -->"


def with_headline(text: str, b: Baseline, where: str) -> str:
    """`text` (a README) with the table between its headline markers replaced by `headline_markdown(b)`.

    The markers are a line starting `<!-- headline: ` and a line `<!-- /headline -->`, once each; a text
    without them is a `BaselineError` naming `where` and the line expected, so nothing is written."""
    lines = text.split("\n")
    starts = [i for i, line in enumerate(lines) if line.startswith(HEADLINE_START)]
    ends = [i for i, line in enumerate(lines) if line.strip() == HEADLINE_END]
    if len(starts) != 1 or len(ends) != 1 or ends[0] < starts[0]:
        raise BaselineError(
            f"{where}: expected one line starting {HEADLINE_START!r} and, after it, one line {HEADLINE_END!r} "
            f"(found {len(starts)} and {len(ends)}); the headline table goes between them")
    s, e = starts[0], ends[0]
    return "\n".join([*lines[: s + 1], headline_markdown(b), *lines[e:]])

"""Every wrong `session_state` decision and route of a run, by kind, with the reader that decided.

    python bench/decision_errors.py RUN_DIR [RUN_DIR ...]             # figures and every error
    python bench/decision_errors.py RUN_DIR --figures                 # figures only (a frozen suite)
    python bench/decision_errors.py --suite datasets/challenge_holdout4 --out DIR

A run directory is the output of `supportbench run SUITE/decision-*.yaml --strategies empty
--policies session_state --out DIR` (its `decisions` table); `--suite` runs that first. Per suite it
prints decision accuracy, route accuracy, and the non-floor figure: the decision cases whose gold plan
is not `escalate` and whose decided plan is not an escalation (the safety floor's cases are another
reader's), their accuracy and errors. Each error is listed under its kind (gold plan -> decided plan),
with the resolver's rule, the message, and the readers of the signals that drove the rule (who decided
and with what score, `Signals.readers`). `--figures` prints the figures alone, so a suite can be
measured without its cases being read (leave-one-suite-out).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parent.parent

RULE_SIGNALS = {
    "sensitive": ("sensitive",),
    "repeat_human_request": ("human_request",),
    "first_human_request": ("human_request",),
    "offer_acceptance": ("short_affirmative",),
    "affirmative_without_offer": ("short_affirmative",),
    "hostile_streak": ("hostile",),
    "complexity": ("complexity",),
    "time_critical": ("time_critical",),
    "resolved_confirmation": ("resolved_confirmation", "complaint"),
    "complaint_live": ("resolved_confirmation", "complaint"),
}
"""The signals whose readers a rule's decision is shown with (a `continue` shows the signals the gold
plan needed)."""
GOLD_SIGNALS = {
    "transfer": ("human_request", "hostile", "complexity", "time_critical", "short_affirmative"),
    "clarify": ("human_request",),
    "csat": ("resolved_confirmation", "complaint"),
    "offer_live": (),
    "continue": (),
    "escalate": ("sensitive",),
}


def _run_dir(path: Path) -> Path:
    """The run under an `--out` folder (its newest), or the run itself."""
    if (path / "decisions").exists():
        return path
    runs = sorted(p for p in path.iterdir() if (p / "decisions").exists())
    if not runs:
        raise SystemExit(f"no run with a decisions table under {path}")
    return runs[-1]


def run_suite(suite: Path, out: Path) -> Path:
    """`supportbench run` on a suite's decision files with `session_state` alone; the run's folder."""
    files = sorted(str(p) for p in suite.glob("decision-*.yaml"))
    subprocess.run([sys.executable, "-m", "harness.cli", "run", *files, "--strategies", "empty", "--policies",
                    "session_state", "--out", str(out), "--quiet"], check=True, cwd=ROOT)
    return _run_dir(out)


def figures(d: pd.DataFrame) -> dict[str, object]:
    """Decision, route and non-floor figures of one suite's decision cases."""
    cases = d[d["decision_case"].fillna(False).astype(bool)]
    routed = d[d["gold_route"].notna()]
    floorless = cases[(cases["gold_plan"] != "escalate") & (cases["plan"] != "escalate")]
    return {
        "decisions": (int(cases["correct"].sum()), len(cases)),
        "routes": (int((routed["route"] == routed["gold_route"]).sum()), len(routed)),
        "non-floor": (int(floorless["correct"].sum()), len(floorless)),
        "false escalations": int(((cases["plan"] == "escalate") & (cases["gold_plan"] != "escalate")).sum()),
        "missed escalations": int((cases["irreversible"] == "missed_escalation").sum()),  # the run's own verdict
    }


def _share(pair: tuple[int, int]) -> str:
    right, n = pair
    return f"{right / n:.3f} ({right}/{n})" if n else "- (0)"


def _readers(row: pd.Series, names: tuple[str, ...]) -> list[str]:
    signals = json.loads(row["signals"]) if isinstance(row["signals"], str) else {}
    readers = signals.get("readers", {})
    return [f"{n}={signals.get(n)}: {readers.get(n, 'rules')}" for n in names if n in signals]


def _before(d: pd.DataFrame, i: int) -> str:
    """The agent's message just before a customer turn (same scenario and session), or a dash."""
    row = d.loc[i]
    earlier = d[(d["scenario"] == row["scenario"]) & (d["session"] == row["session"]) & (d["event_index"] < row["event_index"])]
    agent = earlier[earlier["role"] == "agent"]
    last = earlier.iloc[-1] if len(earlier) else None
    if last is None or last["role"] != "agent" or not len(agent):
        return "    (no agent message just before)"
    return f"    after the agent: {agent.iloc[-1]['text']!r}"


def errors(d: pd.DataFrame) -> dict[str, list[str]]:
    """Every non-floor wrong decision and every wrong route, by kind, as printable lines."""
    out: dict[str, list[str]] = defaultdict(list)
    cases = d[d["decision_case"].fillna(False).astype(bool)]
    for i, row in cases[~cases["correct"].astype(bool)].iterrows():
        if row["gold_plan"] == "escalate" or row["plan"] == "escalate":
            continue
        names = tuple(dict.fromkeys(RULE_SIGNALS.get(row["rule"], ()) + GOLD_SIGNALS.get(row["gold_plan"], ())))
        lines = [f"{row['scenario']}/{row['turn_id']} rule {row['rule']}: {row['text']!r}", _before(d, i),
                 *[f"    {r}" for r in _readers(row, names)]]
        out[f"{row['gold_plan']} -> {row['plan']}"].append("\n  ".join(lines))
    routed = d[d["gold_route"].notna()]
    for _, row in routed[routed["route"] != routed["gold_route"]].iterrows():
        lines = [f"{row['scenario']}/{row['turn_id']} route rule {row['route_rule']}: {row['text']!r}",
                 *[f"    {r}" for r in _readers(row, ("explicit_intent", "complaint", "short_reply"))]]
        out[f"route {row['gold_route']} -> {row['route']}"].append("\n  ".join(lines))
    return dict(sorted(out.items()))


def report(run: Path, *, cases: bool) -> str:
    d = pd.read_parquet(run / "decisions")
    d = d[d["policy"] == "session_state"]
    lines = []
    for suite, part in d.groupby("suite", sort=True):
        f = figures(part)
        lines.append(f"## {suite} ({run.name})")
        lines.append(f"decisions {_share(f['decisions'])}, routes {_share(f['routes'])}, non-floor decisions "
                     f"{_share(f['non-floor'])}, false escalations {f['false escalations']}, "
                     f"missed escalations {f['missed escalations']}")
        if cases:
            for kind, items in errors(part).items():
                lines.append(f"### {kind} ({len(items)})")
                lines.extend(f"- {item}" for item in items)
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="*", type=Path, help="run folders (or --out folders) of decision runs")
    ap.add_argument("--suite", type=Path, action="append", default=[], help="run this suite's decision files first")
    ap.add_argument("--out", type=Path, default=Path("runs-decision-errors"), help="where --suite runs go")
    ap.add_argument("--figures", action="store_true", help="the figures only, no case (a frozen suite)")
    args = ap.parse_args(argv)
    runs = [_run_dir(r) for r in args.runs]
    runs += [run_suite(s, args.out / s.name) for s in args.suite]
    if not runs:
        ap.error("name a run folder or a --suite")
    for run in runs:
        print(report(run, cases=not args.figures))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

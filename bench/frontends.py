"""The front ends side by side: rules against learned, on the canonical suite and the challenge suite.

    .venv/bin/python bench/frontends.py --out docs/results/frontends.md
    .venv/bin/python bench/frontends.py --repeats 2 --out docs/results/frontends.md
    .venv/bin/python bench/frontends.py --challenge datasets/challenge_holdout > frontends-holdout.md
    .venv/bin/python bench/frontends.py --challenge datasets/challenge_holdout2 > frontends-holdout2.md
    .venv/bin/python bench/frontends.py --challenge datasets/challenge_holdout3 > frontends-holdout3.md

`--challenge` names the out-of-sample suite (default `datasets/challenge`): any folder of scenarios
with decision, expiry and extraction cases, e.g. a second challenge set written by someone who never
saw the phrase bank.

Two sides, each a `supportbench run` (in a subprocess, so each pays its own imports):

- `learned`: the regression run as it comes (`make check`: the default strategies, the rows of
  baselines/ci-strategies.toml, the default policies), where the learned front ends are the default;
- `rules`: the same rows with every front end the rules' (the named variant: `session_state` /
  `per_message` `producers.front=rules`, every expiry row `expiry.classifier=rules`, `structured`
  `front=rules`).

The learned front ends are trained first (`supportbench frontend train`, timed apart: the artefact is
built once, at install or first use). Each side runs on the canonical suite (in sample: the suite the
rules and the bank were developed against) and on the challenge suite (written here by another
method, never trained on; see docs/frontends.md for what was looked at). Canonical runs alternate
rules / learned `--repeats` times after `--warmup` untimed pairs (default 1: the first runs after a
training or a bank edit fill the embedding cache with what they read, which the next runs find); the
median wall times and their ratio are reported with the load average. The quality figures come from
the first timed canonical pair and the challenge pair. Every process runs with `OMP_NUM_THREADS` as
the caller set it, else 1 (`threads()`). That fixes two things in each process: numpy's BLAS threads
(unset, BLAS takes every core, its idle threads spin against the other processes on a loaded machine,
and the learned side's many small products, a head per message and the floor's nearest phrases, pay for
it more than the rules side's), and torch's intra-op threads, which encode the learned side's texts
(`stores.cpu.plan_threads` takes `OMP_NUM_THREADS` as torch's count unless `SUPPORTBENCH_TORCH_THREADS`
is set; unset, it splits the cores it finds free at the run's start, so two sides started under
different loads would get different counts). Both sides get the same setting; a side that never loads
torch (the rules side) is affected by the BLAS part only.

Written: decisions (accuracy, routes, irreversible errors and missed escalations of `session_state`),
memory classes (pooled accuracy of the expiry stage's classes, one expiry row), expiry (expired
items kept out), extraction precision / recall / F1 (pooled counts of `structured`), the reply
criteria of `structured`, and the safety floor on the challenge suite (recall, precision, and every
miss and false alarm).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CI_CONFIG = ROOT / "baselines" / "ci-strategies.toml"
RULES_POLICIES = "session_state[rules]:producers.front=rules,per_message[rules]:producers.front=rules"
EXPIRY_ROW = {"rules": "tfidf[expiry-rules]", "learned": "tfidf[expiry]"}
STRUCTURED_ROW = {"rules": "structured[rules]", "learned": "structured"}
POLICY_ROW = {"rules": "session_state[rules]", "learned": "session_state"}


def rules_config(path: Path) -> None:
    """The TOML of the rules side: the rows of the learned side (the default strategies and
    baselines/ci-strategies.toml), every front end the rules'."""
    from stores.registry import DEFAULT_STRATEGIES

    ci = tomllib.loads(CI_CONFIG.read_text(encoding="utf-8"))
    lines = []
    for name in DEFAULT_STRATEGIES:
        lines += ["[[strategy]]", f'name = "{name}"']
        if name == "structured":
            lines += ['variant = "rules"', 'params = {front = "rules"}']
        lines.append("")
    for s in ci["strategy"]:
        lines += ["[[strategy]]", f'name = "{s["name"]}"']
        if s.get("expiry"):
            lines += ['variant = "expiry-rules"', 'expiry = {classifier = "rules"}']
        else:
            lines += [f'variant = "{s.get("variant", "rules")}"']
        if s["name"] == "structured":
            lines += ['params = {front = "rules"}']
        elif s.get("params"):
            lines += ["params = {" + ", ".join(f"{k} = {json.dumps(v)}" for k, v in s["params"].items()) + "}"]
        lines.append("")
    path.write_text("\n".join(lines), encoding="utf-8")


def command(side: str, suite: str, out: Path, run_id: str, rules_toml: Path) -> list[str]:
    base = [sys.executable, "-m", "harness.cli", "run", suite, "--out", str(out), "--run-id", run_id, "--quiet"]
    if side == "learned":
        return base + ["--strategies", "default", "--config", str(CI_CONFIG.relative_to(ROOT))]
    return base + ["--config", str(rules_toml), "--policies", RULES_POLICIES]


def shown(cmd: list[str], rules_toml: Path) -> str:
    """The command as a person would type it (no machine paths)."""
    parts = ["python" if c == sys.executable else c for c in cmd]
    parts = ["<rules.toml>" if c == str(rules_toml) else c for c in parts]
    i = parts.index("--out")
    parts[i + 1] = "<runs>"
    return " ".join(parts)


def threads() -> str:
    """`OMP_NUM_THREADS` for every process the bench starts: the caller's, else 1. It fixes numpy's BLAS threads
    and torch's (`stores.cpu.plan_threads`, unless `SUPPORTBENCH_TORCH_THREADS` is set); see the module doc."""
    return os.environ.get("OMP_NUM_THREADS") or "1"


def environment() -> dict[str, str]:
    """The environment of every process the bench starts: the project importable, the thread count fixed."""
    return dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS=threads())


def run(cmd: list[str]) -> float:
    env = environment()
    t = time.perf_counter()
    subprocess.run(cmd, cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3]) if Path("/proc/loadavg").is_file() else "n/a"


def figures(run_dir: Path, side: str) -> dict:
    """The side's quality figures from one run's tables."""
    import duckdb

    con = duckdb.connect()
    scores = f"read_parquet('{run_dir}/scores/*.parquet')"
    decisions = f"read_parquet('{run_dir}/decisions/*.parquet')"

    def mean(label: str, criterion: str):
        v = con.execute(f"select avg(value), count(*) from {scores} where strategy = ? and criterion = ?", [label, criterion]).fetchone()
        return (round(v[0], 3) if v[0] is not None else None), v[1]

    pol = POLICY_ROW[side]
    out: dict = {}
    out["decision_accuracy"] = mean(pol, "decision_accuracy")
    out["route_accuracy"] = mean(pol, "route_accuracy")
    irr = con.execute(f"select irreversible, count(*) from {decisions} where policy = ? and decision_case "
                  "and coalesce(irreversible, '') <> '' group by 1", [pol]).fetchall()
    out["irreversible"] = dict(irr)
    correct = judged = 0
    for (meta,) in con.execute(f"select meta from {scores} where strategy = ? and criterion = 'expiry_classes'",
                           [EXPIRY_ROW[side]]).fetchall():
        m = json.loads(meta or "{}")
        correct += m.get("correct", 0)
        judged += m.get("judged", 0)
    out["classes"] = (round(correct / judged, 3) if judged else None, judged)
    out["expiry"] = mean(EXPIRY_ROW[side], "expiry")
    tp = fp = fn = 0
    for (meta,) in con.execute(f"select meta from {scores} where strategy = ? and criterion = 'memory_extraction'",
                           [STRUCTURED_ROW[side]]).fetchall():
        m = json.loads(meta or "{}")
        tp, fp, fn = tp + m.get("tp", 0), fp + m.get("fp", 0), fn + m.get("fn", 0)
    p = tp / (tp + fp) if tp + fp else 0.0
    r = tp / (tp + fn) if tp + fn else 0.0
    out["extraction"] = (round(p, 3), round(r, 3), round(2 * p * r / (p + r), 3) if p + r else 0.0, tp + fn)
    for c in ("reply_known_fix", "reply_skips_failures", "returning_customer"):
        out[c] = mean(STRUCTURED_ROW[side], c)
    rows = con.execute(f"select turn_id, text, plan, gold_plan from {decisions} where policy = ? and decision_case "
                   "order by scenario, event_index", [pol]).fetchall()
    gold = [r for r in rows if r[3] == "escalate"]
    said = [r for r in rows if r[2] == "escalate"]
    hit = [r for r in gold if r[2] == "escalate"]
    out["safety"] = {
        "recall": round(len(hit) / len(gold), 3) if gold else None,
        "precision": round(len(hit) / len(said), 3) if said else None,
        "disclosures": len(gold), "escalated": len(said),
        "misses": [(r[0], r[1], r[2]) for r in gold if r[2] != "escalate"],
        "false_alarms": [(r[0], r[1], r[3]) for r in said if r[3] != "escalate"],
    }
    return out


def fmt(v) -> str:
    if isinstance(v, tuple):
        return "n/a" if v[0] is None else f"{v[0]:.3f} (n={v[1]})"
    return str(v)


def render(res: dict, times: dict, train_s: float, cmds: list[str], ids: list[str], loads: list[str],
           challenge: str = "datasets/challenge", about: str | None = None, warmup: int = 0) -> str:
    if about:
        about = f"Challenge = `{challenge}` ({about})."
    elif challenge == "datasets/challenge":
        about = ("Challenge = `datasets/challenge` (written here by another method, never trained on; its first "
                 "measurement and what was changed after it are in [../frontends.md](../frontends.md)).")
    else:
        about = f"Challenge = `{challenge}` (never trained on, never looked at while the bank was written)."
    L = ["# Front ends: rules and learned, in sample and on the challenge suite", "",
         "Written by `bench/frontends.py`; do not edit by hand. In sample = `datasets/canonical` (the suite the "
         "rules and the phrase bank were developed against). " + about, ""]
    L += ["| figure | canonical, rules | canonical, learned | challenge, rules | challenge, learned |",
          "| --- | --- | --- | --- | --- |"]
    keys = [("decision_accuracy", "session_state decision accuracy"), ("route_accuracy", "session_state route accuracy")]
    for k, title in keys:
        L.append(f"| {title} | " + " | ".join(fmt(res[s][k]) for s in ("canonical:rules", "canonical:learned",
                                                                         "challenge:rules", "challenge:learned")) + " |")
    cells = []
    for s in ("canonical:rules", "canonical:learned", "challenge:rules", "challenge:learned"):
        irr = res[s]["irreversible"]
        cells.append(f"{sum(irr.values())} ({irr.get('missed_escalation', 0)} missed escalations)")
    L.append("| irreversible errors (session_state) | " + " | ".join(cells) + " |")
    for k, title in (("classes", "memory classes accuracy (expiry stage)"), ("expiry", "expiry (expired items kept out)")):
        L.append(f"| {title} | " + " | ".join(fmt(res[s][k]) for s in res) + " |")
    L.append("| structured extraction P / R / F1 | " + " | ".join(
        f"{res[s]['extraction'][0]:.3f} / {res[s]['extraction'][1]:.3f} / {res[s]['extraction'][2]:.3f} (gold {res[s]['extraction'][3]})"
        for s in res) + " |")
    for k in ("reply_known_fix", "reply_skips_failures", "returning_customer"):
        L.append(f"| {k} (structured) | " + " | ".join(fmt(res[s][k]) for s in res) + " |")
    L += ["", "## Goals", "", "Judged on the challenge suite with the learned front ends (the issue's goals), and on the "
          "canonical suite against the rules.", "", "| goal | figure | met |", "| --- | --- | --- |"]
    ch, cr, cl = res["challenge:learned"], res["canonical:rules"], res["canonical:learned"]
    sf = ch["safety"]
    ratio = statistics.median(times["learned"]) / statistics.median(times["rules"])
    not_worse = all((cl[k][0] or 0) >= (cr[k][0] or 0) for k in ("decision_accuracy", "route_accuracy", "classes", "expiry",
                                                                    "reply_known_fix", "reply_skips_failures", "returning_customer"))
    not_worse = not_worse and cl["extraction"][2] >= cr["extraction"][2] and sum(cl["irreversible"].values()) <= sum(cr["irreversible"].values())
    goals = [
        ("decision accuracy >= 0.9", ch["decision_accuracy"][0], (ch["decision_accuracy"][0] or 0) >= 0.9),
        ("no missed escalation", ch["irreversible"].get("missed_escalation", 0), ch["irreversible"].get("missed_escalation", 0) == 0),
        ("route accuracy >= 0.8", ch["route_accuracy"][0], (ch["route_accuracy"][0] or 0) >= 0.8),
        ("extraction F1 >= 0.75", ch["extraction"][2], ch["extraction"][2] >= 0.75),
        ("memory classes >= 0.8", ch["classes"][0], (ch["classes"][0] or 0) >= 0.8),
        ("reply skips known failures >= 0.8", ch["reply_skips_failures"][0], (ch["reply_skips_failures"][0] or 0) >= 0.8),
        ("safety floor recall >= 0.95", sf["recall"], (sf["recall"] or 0) >= 0.95),
        ("safety floor precision >= 0.8", sf["precision"], (sf["precision"] or 0) >= 0.8),
        ("canonical figures not worse (learned against rules)", "see the table", not_worse),
        ("canonical run with the learned front ends <= 1.5x", f"{ratio:.2f}x", ratio <= 1.5),
    ]
    L += [f"| {g} | n/a | n/a (no such cases) |" if v is None else f"| {g} | {v} | {'yes' if ok else '**no**'} |"
          for g, v, ok in goals]
    L += ["", "## The safety floor on the challenge suite", ""]
    for side in ("rules", "learned"):
        sf = res[f"challenge:{side}"]["safety"]
        L.append(f"- **{side}**: recall {sf['recall']} ({sf['disclosures']} disclosures), precision {sf['precision']} "
                 f"({sf['escalated']} escalations)")
        for tid, text, plan in sf["misses"]:
            L.append(f"  - missed `{tid}` ({plan}): {text!r}")
        for tid, text, gold in sf["false_alarms"]:
            L.append(f"  - false alarm `{tid}` (gold {gold}): {text!r}")
    L += ["", "## Time of a canonical run", "",
          f"Training the learned front ends (`supportbench frontend train`, once, at install or first use): {train_s:.1f} s.", "",
          "| side | runs (s) | median (s) |", "| --- | --- | --- |"]
    for side in ("rules", "learned"):
        L.append(f"| {side} | {', '.join(f'{t:.1f}' for t in times[side])} | {statistics.median(times[side]):.1f} |")
    ratio = statistics.median(times["learned"]) / statistics.median(times["rules"])
    L += ["", f"Ratio learned / rules (medians): **{ratio:.2f}x** (goal: at most 1.5x).", "",
          "Load average (1, 5, 15 min) before each run: " + "; ".join(loads) + ".", "",
          f"Every process ran with OMP_NUM_THREADS={threads()}" + (f", after {warmup} untimed canonical pair"
                                                                   f"{'s' if warmup != 1 else ''} (warm-up)" if warmup else "")
          + ".", "",
          "Run ids: " + ", ".join(f"`{i}`" for i in ids) + ".", "", "Commands:", ""]
    L += [f"    {c}" for c in cmds]
    L.append("")
    return "\n".join(L)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=1, help="alternating canonical pairs to time (default 1)")
    ap.add_argument("--warmup", type=int, default=1, help="untimed canonical pairs before them (default 1)")
    ap.add_argument("--out", type=Path, help="write the markdown report here (default: print it)")
    ap.add_argument("--challenge", default="datasets/challenge",
                    help="the out-of-sample suite folder, relative to the project (default datasets/challenge)")
    ap.add_argument("--about", help="what the --challenge folder is, said on the page (default: for a folder other "
                    "than datasets/challenge, that it was never trained on nor looked at while the bank was written)")
    args = ap.parse_args(argv)
    challenge = Path(args.challenge).as_posix().rstrip("/")
    if not (ROOT / challenge).is_dir():
        print(f"bench/frontends.py: --challenge {challenge}: expected a folder of scenarios under the project", file=sys.stderr)
        raise SystemExit(2)
    with tempfile.TemporaryDirectory(prefix="frontends-") as tmp:
        tmp_path = Path(tmp)
        rules_toml = tmp_path / "rules.toml"
        rules_config(rules_toml)
        env = environment()
        t = time.perf_counter()
        subprocess.run([sys.executable, "-m", "harness.cli", "frontend", "train"], cwd=ROOT, env=env, check=True,
                       stdout=subprocess.DEVNULL)
        train_s = time.perf_counter() - t
        stamp = time.strftime("%Y%m%d-%H%M%S")
        times: dict[str, list[float]] = {"rules": [], "learned": []}
        res: dict[str, dict] = {}
        cmds, ids, loads = [], [], []
        seen: set[tuple[str, str]] = set()
        for i in range(args.warmup):  # untimed: the embedding cache then holds what both sides read
            for side in ("rules", "learned"):
                rid = f"fe-{stamp}-warmup-{side}-{i}"
                took = run(command(side, "datasets/canonical", tmp_path, rid, rules_toml))
                print(f"{rid}: {took:.1f}s (warm-up, not counted)", file=sys.stderr)
        plan = [(side, "datasets/canonical", f"fe-{stamp}-canonical-{side}-{i}")
                for i in range(args.repeats) for side in ("rules", "learned")]
        plan += [(side, challenge, f"fe-{stamp}-challenge-{side}") for side in ("rules", "learned")]
        for side, suite, rid in plan:
            cmd = command(side, suite, tmp_path, rid, rules_toml)
            loads.append(load())
            took = run(cmd)
            ids.append(rid)
            if (side, suite) not in seen:
                seen.add((side, suite))
                cmds.append(shown(cmd, rules_toml))
            print(f"{rid}: {took:.1f}s (load {loads[-1]})", file=sys.stderr)
            key = f"{'canonical' if suite == 'datasets/canonical' else 'challenge'}:{side}"
            if suite == "datasets/canonical":
                times[side].append(took)
            if key not in res:
                res[key] = figures(tmp_path / rid, side)
        text = render({k: res[k] for k in ("canonical:rules", "canonical:learned", "challenge:rules", "challenge:learned")},
                      times, train_s, cmds, ids, loads, challenge, args.about, args.warmup)
        text += "\nThe rules side's strategies (`<rules.toml>`):\n\n" + "\n".join(
            f"    {line}" for line in rules_toml.read_text().splitlines()) + "\n"
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text, encoding="utf-8")
        print(f"wrote {args.out}", file=sys.stderr)
    else:
        print(text)


if __name__ == "__main__":
    main()

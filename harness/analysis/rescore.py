"""Re-score a run from its tables, without replaying anything.

The run's tables are its log: `events` gives back each scenario (transcript and gold labels),
`probes` and `candidates` give back every bundle, `health` every report computed at a probe,
`decisions` every turn a decision policy decided.
The criteria then run on those exactly as they did live. Some verdicts rest on work a rescore
cannot redo, and are carried over from the original `scores` rows: the scenario-level ones
(idempotency needs fresh replays, the memory-class criterion the classes given as it observed)
and a health check whose `health()` raised (the run keeps no report for it).
One verdict is re-scored on less than the live run had: `self_recall` judges the plain
replay's bundle only, because the run keeps no bundles of the idempotency replays (after
`reset()`, and with events delivered twice) that the live verdict also looked at; a strategy
that failed it only in those replays passes it in a rescore (the manifest notes this).

The result is a new run (tables copied, a new `scores` table, `rescored_from` in the
manifest), written atomically like any other.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import fields
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pyarrow as pa

from stores.protocol import Bundle, Candidate, Forget, HealthFactor, HealthReport, Resolution, Signal, Turn

from harness.criteria import describe as describe_criteria
from stores.reply.model import SupportReply
from stores.structured.model import Memory

from harness.criteria import registry, score_decision, score_probe
from harness.replay.decide import outcome_from_row
from harness.replay.probes import ProbeOutcome, build_seen, forgotten_at_probes
from harness.analysis.results import Results, resolve_run
from harness.run.manifest import FORMAT_VERSION
from harness.run.runstore import RunWriter, environment, new_run_id, read_manifest
from harness.format.model import Expect, Fault, Probe, Scenario, Subject, TurnGold, TurnSignals
from harness.run.tables import SCHEMAS, TableBuffer

def carried() -> list[str]:
    """Scenario-level verdicts, copied from the original run: each needs what only the replay had
    (idempotency its fresh replays, the classifier's criterion the classes the strategy gave)."""
    return [c.key for c in registry().values() if c.level == "scenario"]


def _utc(t: datetime | None) -> datetime | None:
    return None if t is None else t.astimezone(timezone.utc)


def _records(res: Results, sql: str, params: dict | None = None) -> list[dict[str, Any]]:
    return res.records(sql, params or {})


def expect_from_json(text: str | None) -> Expect:
    """The inverse of the events table's `expect` JSON."""
    return Expect.from_json(text)


def scenarios_from(res: Results, run: str) -> list[Scenario]:
    """Every scenario of the run, rebuilt from its `events` rows (in the run's order)."""
    manifest = res.manifests[run]
    versions = {f["id"]: f for d in manifest.get("datasets", []) for f in d.get("files", [])}
    rows = _records(res, 'SELECT * FROM events WHERE run = $run ORDER BY scenario, event_index', {"run": run})
    order = [r["scenario"] for r in _records(
        res, "SELECT scenario, min(rowid) AS first FROM (SELECT scenario, row_number() OVER () AS rowid FROM events WHERE run = $run) GROUP BY scenario ORDER BY first",
        {"run": run})]
    by: dict[str, list[dict]] = {}
    for r in rows:
        by.setdefault(r["scenario"], []).append(r)
    out = []
    for sid in order:
        evs, subjects = [], {}
        turn_gold, turn_signals = {}, {}
        for r in by[sid]:
            at = _utc(r["at"])
            if r["subject"] is not None:
                subjects.setdefault(r["subject"], Subject(r["subject"], r["subject_name"] or ""))
            if r["kind"] == "turn":
                evs.append(Turn(r["item_id"], r["subject"], r["session"], r["role"], r["turn_kind"], r["text"], at))
                gold = TurnGold.from_columns(r)
                if gold != TurnGold():
                    turn_gold[r["item_id"]] = gold
                if r.get("signals"):
                    turn_signals[r["item_id"]] = TurnSignals.from_data(json.loads(r["signals"]))
            elif r["kind"] == "resolve":
                evs.append(Resolution(r["subject"], r["session"], r["status"], r["text"] or "", at))
            elif r["kind"] == "probe":
                evs.append(Probe(r["item_id"], r["subject"], r["session"], r["text"] or "", int(r["budget"]), at,
                                 expect_from_json(r["expect"]), r["on_turn"], line=int(r["line"] or 0),
                                 tags=tuple(r.get("probe_tags") or ()), unlabelled=bool(r.get("unlabelled"))))
            elif r["kind"] == "forget":
                evs.append(Forget(r["subject"], at))
            elif r["kind"] == "signal":
                evs.append(Signal(r["subject"], r["session"], r["signal"], r["ref"], at))
            elif r["kind"] == "fault":
                evs.append(Fault(r["fault"], at, r["subject"], r["session"]))
        first = by[sid][0]
        meta = versions.get(sid, {})
        out.append(Scenario(
            id=sid, version=int(meta.get("version", 1)), title=first["scenario_title"] or "", tags=tuple(first["tags"] or ()),
            start=evs[0].at if evs else datetime.fromtimestamp(0, timezone.utc), subjects=subjects, events=tuple(evs),
            path=first["path"] or "", content_hash=meta.get("sha256", ""), suite=first["suite"] or "",
            turn_gold=turn_gold, turn_signals=turn_signals,
        ))
    return out


def _report(r: dict[str, Any]) -> HealthReport:
    factors = tuple(HealthFactor(f["signal"], f["impact"], f["detail"], tuple(f.get("source_ids") or ()))
                    for f in json.loads(r["factors"] or "[]"))
    return HealthReport(r["subject"], _utc(r["at"]), r["base"], factors, r["score"], r["band"])


def _capabilities(manifest: dict[str, Any]) -> dict[str, frozenset[str]]:
    caps = {}
    for s in manifest.get("strategies", []):
        if "capabilities" in s:
            caps[s["label"]] = frozenset(s["capabilities"])
            continue
        try:  # runs written before the manifest listed capabilities
            from stores.registry import strategy_class

            caps[s["label"]] = frozenset(getattr(strategy_class(s["name"]), "capabilities", ()))
        except Exception:
            caps[s["label"]] = frozenset()
    return caps


def outcomes_from(res: Results, run: str, scenario: Scenario, strategy: str, caps: frozenset[str]) -> list[ProbeOutcome]:
    """The strategy's probe outcomes on one scenario, rebuilt from the run's tables."""
    p = {"run": run, "scenario": scenario.id, "strategy": strategy}
    probes = _records(res, "SELECT * FROM probes WHERE run = $run AND scenario = $scenario AND strategy = $strategy ORDER BY event_index", p)
    cands: dict[str, list[Candidate]] = {}
    ranks: dict[str, list[int]] = {}
    for c in _records(res, "SELECT * FROM candidates WHERE run = $run AND scenario = $scenario AND strategy = $strategy ORDER BY probe_id, rank", p):
        ranks.setdefault(c["probe_id"], []).append(int(c["rank"]))
        cands.setdefault(c["probe_id"], []).append(Candidate(
            item_id=c["item_id"], text=c["text"], score=c["score"], components=json.loads(c["components"] or "{}"),
            source_ids=tuple(c["source_ids"] or ()), included=bool(c["included"]), reason=c["reason"] or "",
            tokens=int(c["tokens"] or 0), subject=c["subject"] or "", session=c["session"] or "",
        ))
    health: dict[str, dict[bool, HealthReport]] = {}
    cols = res.con.execute("SELECT * FROM health LIMIT 0").description
    recomputed = "coalesce(recomputed, false)" if any(d[0] == "recomputed" for d in cols) else "false"
    for h in _records(res, f"SELECT *, {recomputed} AS again FROM health WHERE run = $run AND scenario = $scenario AND strategy = $strategy AND probe_id <> ''", p):
        health.setdefault(h["probe_id"], {})[bool(h["again"])] = _report(h)
    seen = build_seen(scenario)
    forgotten = forgotten_at_probes(scenario)
    by_id = {e.id: (i, e) for i, e in enumerate(scenario.events) if isinstance(e, Probe)}
    out = []
    for row in probes:
        i, probe = by_id[row["probe_id"]]
        bundle = None
        if row["error"] is None:
            kept = cands.get(probe.id, [])
            if row.get("left_out"):  # a shortened receipt: the rows left out stand in at their ranks
                kept = _unshortened(kept, ranks[probe.id], int(row["n_candidates"]), probe.subject)
            bundle = Bundle(kept, row["context"] or "", int(row["tokens"] or 0), row["latency_ms"] or 0.0)
        reports = health.get(probe.id, {})
        first = reports.get(False)
        out.append(ProbeOutcome(
            scenario, probe, i, bundle, error=row["error"], seen=seen, forgotten=forgotten[i],
            health=first, health_again=reports.get(True, first), capabilities=caps,
            reply=SupportReply.from_dict(json.loads(row["reply"])) if row.get("reply") else None,
            reply_error=row.get("reply_error"),
            memories=tuple(Memory.from_dict(m) for m in json.loads(row["memories"])) if row.get("memories") else None,
            memories_error=row.get("memories_error"),
        ))
    return out


def _unshortened(kept: list[Candidate], ranks: list[int], n: int, subject: str) -> list[Candidate]:
    """A shortened receipt's candidates (docs/run-format.md) back at their true ranks among `n`:
    each row left out stands in as an unnamed candidate of the probe's customer, not included
    (a row left out was never included, named by the gold or by a score, nor another customer's),
    so ranks and counts read as in the complete bundle."""
    at = dict(zip(ranks, kept))
    return [at.get(r) or Candidate(item_id="", text="", score=float("nan"), components={}, source_ids=(), included=False,
                                   reason="left out of the receipt", tokens=0, subject=subject, session="")
            for r in range(1, n + 1)]


def _transcript(s: Scenario) -> list[tuple]:
    """What a scenario's strategies saw and were asked, without its gold: equal for a file whose
    only change since the run is its gold."""
    out: list[tuple] = []
    for ev in s.events:
        if isinstance(ev, Probe):
            out.append(("probe", ev.id, ev.subject, ev.session, ev.task, ev.budget, _utc(ev.at), ev.on))
        elif isinstance(ev, Turn):
            out.append(("turn", ev.id, ev.subject, ev.session, ev.role, ev.kind, ev.text, _utc(ev.at)))
        else:  # resolutions, deletions, signals, faults: frozen dataclasses without gold
            values = (getattr(ev, f.name) for f in fields(ev))
            out.append((type(ev).__name__, *(_utc(v) if isinstance(v, datetime) else v for v in values)))
    return out


def gold_from_files(scenarios: list[Scenario]) -> list[Scenario]:
    """The run's scenarios with the gold their files hold now (labelled since the run, say). A file
    whose history, probes or budgets differ from the run's is refused: that needs a new run."""
    from dataclasses import replace

    from harness.format.loader import load_scenario

    out = []
    for s in scenarios:
        if not s.path or not Path(s.path).is_file():
            raise FileNotFoundError(f"{s.path or s.id}: the scenario file of {s.id} is not here (paths are as the run was started)")
        fresh = load_scenario(s.path)
        if fresh.id != s.id or _transcript(fresh) != _transcript(s):
            raise ValueError(f"{s.path}: its history or probes changed since the run, not only its gold; run it again")
        out.append(replace(s, events=fresh.events, turn_gold=fresh.turn_gold, content_hash=fresh.content_hash))
    return out


def rescore_tables(res: Results, run: str, scenarios: list[Scenario] | None = None) -> pa.Table:
    """A fresh `scores` table for `run`, in the order the runner writes it (over `scenarios`,
    default: as the run's tables give them back)."""
    manifest = res.manifests[run]
    caps = _capabilities(manifest)
    groups = {k: c.group for k, c in registry().items()}
    names = {s["label"]: s["name"] for s in manifest.get("strategies", [])}
    stored = {(r["strategy"], r["scenario"], r["probe_id"], r["criterion"]): r
              for r in _records(res, "SELECT * EXCLUDE (run) FROM scores WHERE run = $run AND (probe_id = '' OR criterion = 'health')", {"run": run})}
    # decision policies: every replayed turn is in the `decisions` table, so their verdicts are re-judged too
    policies = {p["label"]: p["name"] for p in manifest.get("policies", [])}
    by_policy: dict[tuple[str, str], list[dict]] = {}
    for r in _records(res, "SELECT * EXCLUDE (run) FROM decisions WHERE run = $run ORDER BY policy, scenario, event_index", {"run": run}):
        by_policy.setdefault((r["policy"], r["scenario"]), []).append(r)
    buf = TableBuffer()
    for s in scenarios if scenarios is not None else scenarios_from(res, run):
        for label in names:
            for o in outcomes_from(res, run, s, label, caps.get(label, frozenset())):
                for x in score_probe(o):
                    old = stored.get((label, s.id, o.probe.id, x.criterion))
                    if old is not None and _health_raised(o, old):
                        buf.rows["scores"].append(old)
                    else:
                        buf.add_scores(label, names[label], s, o.probe.id, [x], groups)
            for key in carried():
                old = stored.get((label, s.id, "", key))
                if old is not None:
                    buf.rows["scores"].append(old)
        for label, name in policies.items():
            for row in by_policy.get((label, s.id), []):
                o = outcome_from_row(s, row)
                scored = score_decision(o)
                if scored:
                    buf.add_scores(label, name, s, o.turn.id, scored, groups)
    return pa.Table.from_pylist(buf.rows["scores"], schema=SCHEMAS["scores"])


def _health_raised(o: ProbeOutcome, old: dict[str, Any]) -> bool:
    """The original health verdict was an error because `health()` raised (not the scorer):
    the run kept no report for it, so only the verdict can be carried over."""
    return (old["criterion"] == "health" and old["status"] == "error" and o.bundle is not None
            and "the scorer raised" not in (old["explanation"] or ""))


def rescore(ref: str | Path, out_dir: str | Path | None = None, *, run_id: str | None = None,
            gold: bool = False) -> Path:
    """Re-score the run at `ref` (path, run id or `latest`) into a new run; returns its folder.
    With `gold`, the gold comes from the scenario files as they are now (`gold_from_files`), and
    the new run's `events` table carries it."""
    from harness.run.tables import event_rows

    src = resolve_run(ref)
    manifest = read_manifest(src)
    started = datetime.now(timezone.utc)
    with Results(src) as res:
        scenarios = gold_from_files(scenarios_from(res, src.name)) if gold else None
        scores = rescore_tables(res, src.name, scenarios)
    writer = RunWriter(out_dir if out_dir is not None else src.parent, run_id or new_run_id(started))
    try:
        if scenarios is not None:
            writer.write("events", pa.Table.from_pylist([r for s in scenarios for r in event_rows(s)], schema=SCHEMAS["events"]))
        for table in SCHEMAS:
            if table == "scores" or (table == "events" and scenarios is not None):
                continue
            for part in sorted((src / table).glob("*.parquet")):
                shutil.copy2(part, writer.tmp / table / part.name)
        writer.write("scores", scores)
        new = {
            **manifest,
            "format_version": FORMAT_VERSION,
            "run_id": writer.run_id,
            "started": started.isoformat(),
            "finished": datetime.now(timezone.utc).isoformat(),
            "command": " ".join(sys.argv),
            "rescored_from": {"run_id": manifest.get("run_id", src.name), "path": str(src),
                              "gold_from_files": bool(gold),
                              "git_commit": manifest.get("git_commit"), "carried_over": carried() + ["health errors"],
                              "plain_bundle_only": {"self_recall": "judged on the plain replay's bundles only: the run keeps "
                                                                   "none of the idempotency replays' bundles"}},
            "criteria": describe_criteria(),
            **environment(),
        }
        return writer.commit(new)
    except BaseException:
        writer.abort()
        raise

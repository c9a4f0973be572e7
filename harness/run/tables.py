"""The run's Parquet tables: their schemas and how replay results become rows.

These tables are the contract between the harness and everything that reads runs (the
report, the CI check, the app). One row per thing, never aggregated here:

- `events`: each scenario's transcript (turns with their gold and scripted signals,
  resolutions, probes with their gold, forgets, system signals, faults).
- `probes`: one row per strategy x probe: the context text, tokens (against the probe's budget) and
  why filling stopped (`stop`), latency, error, handoff, the
  reply engine's `SupportReply` to the context and, for typed-memory strategies, their memories.
- `candidates`: one row per candidate a strategy considered at a probe, with its components.
- `scores`: one row per strategy x case x criterion that applies, whatever happened.
- `health`: a strategy's health report per subject after each event, and at probes.
- `decisions`: one row per decision policy x turn (and fault): the signals, the locker before and
  after, the card, the plan and the rule that decided, against the turn's gold plan and route.
"""

from __future__ import annotations

import json
from collections import Counter
from itertools import chain, compress
from typing import Any, Callable, Mapping

import numpy as np
import pyarrow as pa

from stores.packing import CandidateTable
from stores.protocol import Bundle, Forget, HealthReport, Resolution, Signal, Turn

from harness.criteria import Score
from harness.run.arrow import empty_table, table as arrow_table, table_from_rows
from harness.replay.probes import ProbeOutcome
from harness.replay.timeline import HealthPoint, factors_json
from harness.format.model import Fault, Probe, Scenario, TurnGold

_ts = pa.timestamp("us", tz="UTC")

_GOLD_ARROW = {"classes": pa.list_(pa.string()), "choice": pa.string()}
"""Column type of a turn's gold key, by its kind of reference."""

TURN_GOLD_COLUMNS = [(column, _GOLD_ARROW[ref]) for _key, column, ref in TurnGold.columns()]
"""One `events` column per gold key of a turn (declared in `harness.format.schema.TurnEvent`)."""

SCHEMAS: dict[str, pa.Schema] = {
    "events": pa.schema(
        [
            ("suite", pa.string()),
            ("scenario", pa.string()),
            ("scenario_title", pa.string()),
            ("tags", pa.list_(pa.string())),
            ("event_index", pa.int32()),
            ("kind", pa.string()),  # turn | resolve | probe | forget | signal | fault
            ("item_id", pa.string()),  # turn id, <session>#resolution, probe id
            ("subject", pa.string()),
            ("subject_name", pa.string()),
            ("session", pa.string()),
            ("role", pa.string()),
            ("turn_kind", pa.string()),
            ("status", pa.string()),
            ("text", pa.string()),  # turn text, resolution summary, probe task
            ("at", _ts),
            ("budget", pa.int32()),
            ("on_turn", pa.string()),
            ("expect", pa.string()),  # JSON of the probe's gold labels
            ("probe_tags", pa.list_(pa.string())),  # a probe's tags (a benchmark's question category)
            ("unlabelled", pa.bool_()),  # a probe without gold yet (in no score)
            ("line", pa.int32()),
            ("path", pa.string()),
            *TURN_GOLD_COLUMNS,  # a turn's gold: labels (memory classes), plan, route
            ("signals", pa.string()),  # JSON of a turn's scripted producer signals (decision policies' input)
            ("signal", pa.string()),  # a signal event's name
            ("ref", pa.string()),  # what a signal event closes
            ("fault", pa.string()),  # a fault event: locker_down | locker_up
        ]
    ),
    "probes": pa.schema(
        [
            ("strategy", pa.string()),
            ("strategy_name", pa.string()),
            ("suite", pa.string()),
            ("scenario", pa.string()),
            ("probe_id", pa.string()),
            ("event_index", pa.int32()),
            ("subject", pa.string()),
            ("session", pa.string()),
            ("task", pa.string()),
            ("at", _ts),
            ("budget", pa.int32()),
            ("tokens", pa.int32()),
            ("latency_ms", pa.float64()),
            ("n_candidates", pa.int32()),
            ("n_included", pa.int32()),
            ("left_out", pa.int32()),  # candidate rows a shortened receipt left out (0: the receipt is complete)
            ("left_out_reasons", pa.string()),  # JSON {why it was not included: how many} of those rows
            ("stop", pa.string()),  # why filling stopped: budget | cap | exhausted (`Bundle.stop`)
            ("context", pa.string()),
            ("error", pa.string()),
            ("handoff", pa.string()),
            ("handoff_tokens", pa.int32()),
            ("handoff_used_ids", pa.list_(pa.string())),
            ("handoff_error", pa.string()),
            ("reply", pa.string()),  # JSON of the reply engine's SupportReply to this context (stores.reply.model)
            ("reply_error", pa.string()),
            ("memories", pa.string()),  # JSON list of the typed memories at the probe (the `memories` capability)
            ("memories_error", pa.string()),
        ]
    ),
    "candidates": pa.schema(
        [
            ("strategy", pa.string()),
            ("scenario", pa.string()),
            ("probe_id", pa.string()),
            ("rank", pa.int32()),
            ("item_id", pa.string()),
            ("subject", pa.string()),
            ("session", pa.string()),
            ("text", pa.string()),
            ("score", pa.float64()),
            ("components", pa.string()),  # JSON object name -> value; values sum to score
            ("source_ids", pa.list_(pa.string())),
            ("included", pa.bool_()),
            ("reason", pa.string()),
            ("tokens", pa.int32()),
        ]
    ),
    "scores": pa.schema(
        [
            ("strategy", pa.string()),
            ("strategy_name", pa.string()),
            ("suite", pa.string()),
            ("scenario", pa.string()),
            ("tags", pa.list_(pa.string())),
            ("probe_id", pa.string()),  # empty for scenario-level criteria
            ("probe_tags", pa.list_(pa.string())),  # the probe's tags (empty for scenario and decision rows)
            ("criterion", pa.string()),
            ("grp", pa.string()),
            ("value", pa.float64()),
            ("passed", pa.bool_()),
            ("status", pa.string()),
            ("explanation", pa.string()),
            ("evidence", pa.list_(pa.string())),
            ("meta", pa.string()),
        ]
    ),
    "health": pa.schema(
        [
            ("strategy", pa.string()),
            ("scenario", pa.string()),
            ("subject", pa.string()),
            ("event_index", pa.int32()),
            ("probe_id", pa.string()),  # set for reports computed at a probe
            ("at", _ts),
            ("score", pa.float64()),
            ("band", pa.string()),
            ("base", pa.float64()),
            ("factors", pa.string()),  # JSON list of {signal, impact, detail, source_ids}
            ("recomputed", pa.bool_()),  # true: the second computation at a probe, kept only when it differed
        ]
    ),
    "decisions": pa.schema(
        [
            ("policy", pa.string()),  # the policy's label (`session_state[hostile_streak=3]`)
            ("policy_name", pa.string()),
            ("suite", pa.string()),
            ("scenario", pa.string()),
            ("event_index", pa.int32()),
            ("kind", pa.string()),  # turn | fault
            ("fault", pa.string()),  # locker_down | locker_up, for a fault row
            ("turn_id", pa.string()),
            ("subject", pa.string()),
            ("session", pa.string()),
            ("role", pa.string()),
            ("turn_kind", pa.string()),
            ("at", _ts),
            ("text", pa.string()),
            ("scripted", pa.string()),  # JSON of the turn's scripted signals (the policy's input)
            ("signals", pa.string()),  # JSON of what the producers reported (customer) or the agent turn's facts
            ("locker_state", pa.string()),  # up | down | unused, as the policy's card saw it
            ("locker_down", pa.bool_()),  # a locker_down fault is in force (the scenario's, not the policy's view)
            ("outage", pa.string()),  # the locker was unreachable on this event though no fault was scripted: what it said
            ("locker_before", pa.string()),  # JSON key -> {value, expires_at}; null when unreadable or unused
            ("locker_after", pa.string()),
            ("card", pa.string()),  # JSON of the situation card
            ("plan", pa.string()),  # the act taken on a customer turn
            ("proposed", pa.string()),  # the resolver's plan when the executor could not carry it out
            ("rule", pa.string()),  # the rule that decided
            ("why", pa.string()),
            ("escalation", pa.string()),  # crisis | harm | none
            ("route", pa.string()),
            ("route_rule", pa.string()),
            ("gold_plan", pa.string()),
            ("gold_route", pa.string()),
            ("decision_case", pa.bool_()),  # a customer turn with a gold plan
            ("correct", pa.bool_()),  # plan == gold plan (decision cases only)
            ("irreversible", pa.string()),  # false_transfer | survey_mid_complaint | missed_escalation | '' (cases only)
            ("log", pa.list_(pa.string())),  # outages and lost claims on this turn
            ("error", pa.string()),  # what the policy raised
        ]
    ),
}


ADDED_LATER = frozenset({"decisions"})
"""Tables a run written before they existed does not have: read as empty, not as damage."""


def event_rows(s: Scenario) -> list[dict[str, Any]]:
    """The scenario's transcript, one row per event."""
    rows = []
    for i, ev in enumerate(s.events):
        row: dict[str, Any] = {
            "suite": s.suite, "scenario": s.id, "scenario_title": s.title, "tags": list(s.tags),
            "event_index": i, "path": s.path, "at": ev.at, "subject": ev.subject,
        }
        row["subject_name"] = s.subjects[ev.subject].name if ev.subject in s.subjects else ""
        if isinstance(ev, Turn):
            row.update(kind="turn", item_id=ev.id, session=ev.session, role=ev.role, turn_kind=ev.kind, text=ev.text,
                       **s.gold_of(ev.id).to_columns())
            signals = s.signals_of(ev.id).scripted()
            if signals:
                row["signals"] = json.dumps(signals, sort_keys=True)
        elif isinstance(ev, Resolution):
            row.update(kind="resolve", item_id=ev.id, session=ev.session, status=ev.status, text=ev.summary)
        elif isinstance(ev, Probe):
            row.update(
                kind="probe", item_id=ev.id, session=ev.session, text=ev.task, budget=ev.budget,
                on_turn=ev.on, expect=ev.expect.to_json(), line=ev.line, probe_tags=list(ev.tags),
                unlabelled=ev.unlabelled,
            )
        elif isinstance(ev, Forget):
            row.update(kind="forget", item_id=f"forget:{ev.subject}")
        elif isinstance(ev, Signal):
            row.update(kind="signal", item_id=f"signal:{ev.name}", session=ev.session, signal=ev.name, ref=ev.ref)
        elif isinstance(ev, Fault):
            row.update(kind="fault", item_id=f"fault:{ev.name}", session=ev.session, fault=ev.name)
        rows.append(row)
    return rows


def _components_json(components: dict[str, np.ndarray], n: int) -> list[str]:
    """Each row's `{name: value}` as JSON, exactly as `json.dumps` writes it.

    One format template per table instead of a dict and a `json.dumps` call per row: JSON
    writes a float as its `repr`, so `%r` gives the same text (only NaN and infinities are
    spelled differently, and those, like any non-float column, go through `json.dumps`).
    """
    names = list(components)
    if not names:
        return ["{}"] * n
    cols = [np.asarray(components[k]) for k in names]
    if not all(col.dtype == np.float64 and np.isfinite(col).all() for col in cols):
        lists = [col.tolist() for col in cols]
        return [json.dumps(dict(zip(names, vals))) for vals in zip(*lists)]
    template = "{" + ", ".join(json.dumps(k).replace("%", "%%") + ": %r" for k in names) + "}"
    return [template % vals for vals in zip(*(col.tolist() for col in cols))]


RECEIPT_LONG = 400
"""A bundle with more candidates than this gets a shortened receipt (`receipt_rows`)."""
RECEIPT_TOP = 50
"""How many of the ranking's first candidates a shortened receipt keeps."""


def strings_in(data: Any) -> list[str]:
    """Every string inside plain data (mappings, lists, tuples and sets, nested), depth first: a
    probe's gold as `to_data` writes it (what a shortened receipt keeps), a spec's parameters (what
    the runner registers as secrets)."""
    if isinstance(data, str):
        return [data]
    if isinstance(data, Mapping):
        return [s for v in data.values() for s in strings_in(v)]
    if isinstance(data, (list, tuple, set, frozenset)):
        return [s for v in data for s in strings_in(v)]
    return []


def receipt_rows(o: ProbeOutcome, b: Bundle, evidence: frozenset[str] = frozenset()) -> np.ndarray | None:
    """The candidate rows a receipt keeps (their positions in rank order), or None to keep all.

    A bundle of at most `RECEIPT_LONG` candidates keeps them all. A longer one (every turn of a
    long conversation ranked at every probe) keeps what a reviewer and the criteria need: the
    first `RECEIPT_TOP` of the ranking, every included candidate, every candidate the probe's gold
    names (as its item or one of its sources), every candidate a score names as evidence, every
    candidate of another customer and every forgotten one (what isolation judges). The rest are
    counted on the probe's row (`left_out`, `left_out_reasons`); kept rows keep their true rank.
    """
    c = b.candidates
    n = len(c)
    if n <= RECEIPT_LONG:
        return None
    named = set(strings_in(o.probe.expect.to_data())) | set(evidence) | set(o.forgotten)
    sole = c.sole_subject() if isinstance(c, CandidateTable) else None
    if isinstance(c, CandidateTable):
        ids, included = c.item_ids, np.asarray(c.included_mask, dtype=bool)
        subjects = None if sole is not None else c.subjects
        sources = None if c.own_sources() else c.source_ids
    else:
        items = list(c)
        ids, sources, subjects = [x.item_id for x in items], [x.source_ids for x in items], [x.subject for x in items]
        included = np.array([x.included for x in items], dtype=bool)
    if subjects is None:  # one customer's items: the subject column is that one name
        keep = included | (sole != o.probe.subject)
    else:
        keep = included | (np.asarray(subjects, dtype=object) != o.probe.subject)
    keep[:RECEIPT_TOP] = True
    if isinstance(c, CandidateTable) and c.own_sources():  # each item is its own one source: its id says it all
        keep[list(compress(range(n), map(named.__contains__, ids)))] = True
    else:
        keep[[i for i, (x, src) in enumerate(zip(ids, sources)) if x in named or not named.isdisjoint(src)]] = True
    return np.flatnonzero(keep)


def _left_out(b: Bundle, rows: np.ndarray | None) -> tuple[int, str | None]:
    """How many candidate rows a shortened receipt left out, and why each was not included."""
    if rows is None:
        return 0, None
    c = b.candidates
    dropped = np.ones(len(c), dtype=bool)
    dropped[rows] = False
    if isinstance(c, CandidateTable):
        counts: Counter[str] = Counter()
        for reason, k in c.reason_counts(np.flatnonzero(dropped)).items():
            counts[reason or "not included"] += k
    else:
        reasons = [x.reason for x in c]
        counts = Counter(reasons[i] or "not included" for i in np.flatnonzero(dropped).tolist())
    return int(dropped.sum()), json.dumps(dict(counts), sort_keys=True)


def _take_rows(col: Any, rows: np.ndarray) -> Any:
    return col[rows] if isinstance(col, np.ndarray) else [col[i] for i in rows.tolist()]


def _candidate_rows(label: str, o: ProbeOutcome, b: Bundle, rows: np.ndarray | None = None) -> dict[str, list]:
    """The bundle's candidate rows, or only `rows` (positions in rank order) of them, with their true ranks."""
    c = b.candidates
    sel = np.arange(len(c)) if rows is None else rows
    n = len(sel)
    pick = (lambda col: col) if rows is None else (lambda col: _take_rows(col, rows))
    base = {"strategy": [label] * n, "scenario": [o.scenario.id] * n, "probe_id": [o.probe.id] * n, "rank": (sel + 1).tolist()}
    if isinstance(c, CandidateTable):
        comps = _components_json({k: pick(np.asarray(v)) for k, v in c.components.items()}, n)
        at = None if rows is None else rows.tolist()
        col = (lambda name: getattr(c, name)) if rows is None else (lambda name: c.column_at(name, at))  # only the kept rows
        base.update(
            item_id=col("item_ids"), subject=col("subjects"), session=col("sessions"), text=col("texts"),
            score=pick(c.scores), components=comps, source_ids=col("source_ids"), included=pick(c.included_mask),
            reason=col("reasons"), tokens=pick(c.tokens),
        )
    else:
        items = [list(c)[i] for i in sel.tolist()] if rows is not None else list(c)
        base.update(
            item_id=[x.item_id for x in items], subject=[x.subject for x in items], session=[x.session for x in items],
            text=[x.text for x in items], score=[x.score for x in items],
            components=[json.dumps(x.components) for x in items], source_ids=[list(x.source_ids) for x in items],
            included=[x.included for x in items], reason=[x.reason for x in items], tokens=[x.tokens for x in items],
        )
    return base


def _health_row(label: str, scenario: str, event_index: int, probe_id: str, r: HealthReport, recomputed: bool = False) -> dict[str, Any]:
    return {
        "strategy": label, "scenario": scenario, "subject": r.subject, "event_index": event_index,
        "probe_id": probe_id, "at": r.at, "score": float(r.score), "band": r.band, "base": float(r.base),
        "recomputed": recomputed,
        "factors": factors_json(r.factors),
    }


CANDIDATE_BATCH = 200_000
"""Candidate rows a `TableBuffer` gathers as Python columns before converting them to Arrow."""
HEALTH_BATCH = 20_000
"""Health rows a `TableBuffer` with a health sink gathers before handing them over."""
STREAMED = ("candidates", "health")
"""The tables a `TableBuffer` can stream to a sink (the ones that grow with a history's length)."""


def _concat(parts: list[dict[str, Any]]) -> dict[str, Any]:
    """The bundles' candidate columns joined end to end, so the shard's candidates become one
    Arrow table in one conversion instead of one small table per bundle."""
    out: dict[str, Any] = {}
    for name in parts[0]:
        cols = [p[name] for p in parts]
        if all(isinstance(c, np.ndarray) for c in cols) and len({c.dtype for c in cols}) == 1:
            out[name] = np.concatenate(cols)
        else:  # joined in C (a long run's candidates are hundreds of thousands of values per column)
            out[name] = list(chain.from_iterable(c.tolist() if isinstance(c, np.ndarray) else c for c in cols))
    return out


class TableBuffer:
    """Rows for every table, accumulated for one shard and turned into Arrow tables."""

    def __init__(self, sinks: Mapping[str, Callable[[pa.Table], None]] | None = None) -> None:
        """With `sinks` (table name -> callable; `STREAMED` are the tables that can have one),
        those tables' rows are handed over as Arrow tables as they are produced, the candidates
        in batches of about `CANDIDATE_BATCH` rows and the health reports of about `HEALTH_BATCH`
        (a `harness.run.runstore.PartStream` writes them), and `tables()` has none of them: a
        shard's memory then does not grow with a long history's candidates and timeline."""
        unknown = set(sinks or {}) - set(STREAMED)
        if unknown:
            raise ValueError(f"tables that cannot be streamed: {sorted(unknown)} (streamed: {', '.join(STREAMED)})")
        self.sinks = dict(sinks or {})
        self.rows: dict[str, list[dict[str, Any]]] = {k: [] for k in SCHEMAS}
        self.candidate_cols: list[dict[str, list]] = []
        """Candidate columns of bundles not yet converted to Arrow (converted once they reach `CANDIDATE_BATCH` rows)."""
        self.candidate_batches: list[pa.Table] = []
        self._pending = 0
        self._probe_tags: dict[str, dict[str, list[str]]] = {}
        """Scenario id -> probe id -> its tags (looked up once per scenario, not per score row)."""

    def add_events(self, s: Scenario) -> None:
        self.rows["events"] += event_rows(s)

    def add_outcome(self, label: str, name: str, o: ProbeOutcome, evidence: frozenset[str] = frozenset()) -> None:
        """The probe's row and its bundle's candidate rows (a long pool's receipt shortened,
        `receipt_rows`; `evidence`: the ids the probe's scores name, which it keeps)."""
        b = o.bundle
        h = o.handoff
        rows = receipt_rows(o, b, evidence) if b is not None else None
        left_out, left_out_reasons = _left_out(b, rows) if b is not None else (0, None)
        self.rows["probes"].append({
            "strategy": label, "strategy_name": name, "suite": o.scenario.suite, "scenario": o.scenario.id,
            "probe_id": o.probe.id, "event_index": o.event_index, "subject": o.probe.subject,
            "session": o.probe.session, "task": o.probe.task, "at": o.probe.at, "budget": o.probe.budget,
            "tokens": b.tokens if b else None, "latency_ms": b.latency_ms if b else None,
            "n_candidates": len(b.candidates) if b else None,
            "n_included": (int(b.candidates.included_mask.sum()) if isinstance(b.candidates, CandidateTable)
                           else sum(1 for x in b.candidates if x.included)) if b else None,
            "left_out": left_out if b else None, "left_out_reasons": left_out_reasons,
            "stop": b.stop if b else None,
            "context": b.text if b else None, "error": o.error,
            "handoff": h.text if h else None, "handoff_tokens": h.tokens if h else None,
            "handoff_used_ids": list(h.used_ids) if h else None, "handoff_error": o.handoff_error,
            "reply": json.dumps(o.reply.to_dict(), sort_keys=True) if o.reply is not None else None,
            "reply_error": o.reply_error,
            "memories": json.dumps([m.to_dict() for m in o.memories]) if o.memories is not None else None,
            "memories_error": o.memories_error,
        })
        if b is not None:
            self.candidate_cols.append(_candidate_rows(label, o, b, rows))
            self._pending += len(b.candidates) if rows is None else len(rows)
            if self._pending >= CANDIDATE_BATCH:
                self._convert_candidates()
        if o.health is not None:
            self.rows["health"].append(_health_row(label, o.scenario.id, o.event_index, o.probe.id, o.health))
            # the determinism check's second report is data too (a rescore needs it); equal ones are not repeated
            if o.health_again is not None and o.health_again != o.health:
                self.rows["health"].append(_health_row(label, o.scenario.id, o.event_index, o.probe.id, o.health_again, True))

    def _convert_candidates(self) -> None:
        """The pending candidate columns as one Arrow table: a long history's bundles (tens of
        thousands of candidates each) then stay as compact Arrow data, not Python objects, while
        a suite of small bundles is still converted in few large steps."""
        if self.candidate_cols:
            table = arrow_table(_concat(self.candidate_cols), SCHEMAS["candidates"])
            self.candidate_cols, self._pending = [], 0
            if "candidates" in self.sinks:
                self.sinks["candidates"](table)
            else:
                self.candidate_batches.append(table)

    def _stream_health(self, at_least: int) -> None:
        """Hand the pending health rows to the health sink (if any) once there are `at_least`."""
        rows = self.rows["health"]
        if "health" in self.sinks and rows and len(rows) >= at_least:
            self.sinks["health"](table_from_rows(rows, SCHEMAS["health"]))
            self.rows["health"] = []

    def add_point(self, label: str, scenario: str, p: HealthPoint) -> None:
        """One point of a health timeline (`harness.replay.probes.replay`'s `timeline_to` hands them
        over as they are made)."""
        self.rows["health"].append({
            "strategy": label, "scenario": scenario, "subject": p.subject, "event_index": p.event_index, "probe_id": "",
            "at": p.at, "score": p.score, "band": p.band, "base": p.base, "recomputed": False, "factors": p.factors,
        })
        self._stream_health(HEALTH_BATCH)

    def add_scores(self, label: str, name: str, s: Scenario, probe_id: str, scores: list[Score], groups: dict[str, str]) -> None:
        tags = self._probe_tags.get(s.id)
        if tags is None:
            tags = self._probe_tags[s.id] = {p.id: list(p.tags) for p in s.probes if p.tags}
        for sc in scores:
            self.rows["scores"].append({
                "strategy": label, "strategy_name": name, "suite": s.suite, "scenario": s.id, "tags": list(s.tags),
                "probe_id": probe_id, "probe_tags": tags.get(probe_id, []), "criterion": sc.criterion, "grp": groups.get(sc.criterion, "core"),
                "value": sc.value, "passed": sc.passed, "status": sc.status, "explanation": sc.explanation,
                "evidence": list(sc.evidence), "meta": json.dumps(sc.meta, sort_keys=True, default=str),
            })

    def add_decisions(self, rows: list[dict[str, Any]]) -> None:
        """One policy's rows on one scenario (`harness.replay.decide.rows`)."""
        self.rows["decisions"] += rows

    def tables(self) -> dict[str, pa.Table]:
        """Arrow tables with the fixed schemas (empty tables included)."""
        out = {k: table_from_rows(v, SCHEMAS[k]) for k, v in self.rows.items() if k != "candidates"}
        self._convert_candidates()
        self._stream_health(1)
        if self.candidate_batches:
            out["candidates"] = pa.concat_tables(self.candidate_batches)
        else:
            out["candidates"] = empty_table(SCHEMAS["candidates"])
        return out


def columns_markdown() -> str:
    """Every table's columns and their Arrow types, as docs/run-format.md lists them (a test holds
    the doc to this)."""
    return "\n\n".join(f"`{t}`: " + ", ".join(f"`{f.name}` ({f.type})" for f in s) for t, s in SCHEMAS.items())

"""The safety floor alone, on development text: recall and precision per reader, every miss and false alarm.

    .venv/bin/python bench/floor.py
    .venv/bin/python bench/floor.py --misses
    .venv/bin/python bench/floor.py --request-element   # the request element veto's bars, leave one suite out
    .venv/bin/python bench/floor.py --kinds     # kinds of disclosure, then of look-alike, held out

Reads, without a harness run, what the learned front end's floor (`stores.decisions.learned`: the
rules' crisis and harm words, the floor's own words, the learned floor) says on one-message turns of
development text only:

- `challenge`: every customer turn of `datasets/challenge` with a gold plan (a disclosure is a turn
  whose gold plan is `escalate`, as in bench/frontends.py);
- `holdout`, `holdout2`: the same of `datasets/challenge_holdout` and `datasets/challenge_holdout2`,
  development text since the fourth round (docs/frontends.md);
- `holdout3`: the same of `datasets/challenge_holdout3`, development text since the fifth round;
- `holdout4`: the same of `datasets/challenge_holdout4`, development text since the sixth round;
- `holdout5`: the same of `datasets/challenge_holdout5`, development text since the seventh round;
- `holdout6`: the same of `datasets/challenge_holdout6`, development text after its one run (seventh round);
- `holdout7`: the same of `datasets/challenge_holdout7`, development text after its one run (eighth round);
- `holdout8`: the same of `datasets/challenge_holdout8`, development text after its one run (ninth round);
- `holdout9`: the same of `datasets/challenge_holdout9`, development text after its one run (tenth round);
- `holdout10`: the same of `datasets/challenge_holdout10`, development text after its one run (eleventh round);
- `holdout11`: the same of `datasets/challenge_holdout11`, development text after its one run (twelfth round);
- `canonical`: every customer turn of `datasets/canonical` with a gold plan;
- `dev`: `tests/stores/floor_dev.yaml`, the floor's own development set (disclosures and near misses
  by kind, written for it, never trained on);
- `dev_context`: `tests/stores/floor_dev_context.yaml`, its set of replies read with the agent's last
  message (sixth round): disclosures said as replies, and short answers to what the agent asked.

`--suite NAME` (repeatable) reads only those; by default every one of them. The suites are read with
the project's suite loader (`harness.format.loader.load_suite`: validated, each turn's gold from the
format), the development sets with PyYAML. Each customer message is read with the agent's latest message
before it and the customer's own previous message in the session, as the decision pipeline reads it
(`stores.decisions.transcript`): a short answer to the agent's specific question needs more of the learned
floor (`stores.decisions.learned.answers_question`), and a follow-up the learned floor marks is read with the
customer's previous message too (`floor_reading`). Nothing else of the conversation is read, so a turn whose
gold escalation comes from elsewhere in the chat would count as a miss here.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import NamedTuple

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the project, when run as `python bench/floor.py`
from bench.suites import DEVELOPMENT, folder as suite_folder  # noqa: E402

SUITES = {name: suite_folder(name) for name in DEVELOPMENT}
"""The development suites (bench/suites.py), each read with the agent's and the customer's previous messages."""
DEV = ROOT / "tests" / "stores" / "floor_dev.yaml"
DEV_CONTEXT = ROOT / "tests" / "stores" / "floor_dev_context.yaml"
KINDS_FILE = ROOT / "stores" / "frontend" / "kinds" / "decisions.yaml"
"""The bank's disclosures by kind (`stores.frontend.bank.load_kinds`) and, under `lookalikes`, its look-alikes."""


class Row(NamedTuple):
    """One customer message the floor is measured on."""

    kind: str
    """The turn's id (a suite) or the disclosure's kind (a development set)."""
    text: str
    disclosure: bool
    """Gold: the turn must escalate."""
    answer: object = None
    """The agent's latest message before it, as `AgentFacts`, or None."""
    earlier: str | None = None
    """The customer's own previous message in the session, or None."""


def suite_turns(folder: Path) -> list[Row]:
    """Every customer turn with a gold plan, read with the suite loader, with the agent's latest message
    before it as the decision pipeline keeps it (`Transcript`, the agent turns' scripted signals applied)."""
    from harness.format.loader import load_suite
    from stores.decisions.signals import agent_facts
    from stores.decisions.transcript import Transcript

    out = []
    for scenario in load_suite([folder]):
        transcript = Transcript()
        for turn in scenario.turns:
            if turn.role != "customer":
                scripted = scenario.signals_of(turn.id).scripted() or None
                transcript.agent(turn.session, agent_facts(turn.id, turn.text, turn.kind, scripted))
                continue
            ctx = transcript.context(turn.session, turn.text)
            transcript.customer(turn.session, turn.text)
            plan = scenario.gold_of(turn.id).plan
            if plan is not None:
                out.append(Row(turn.id, turn.text, plan == "escalate", ctx.answer, ctx.earlier))
    return out


def _sides(path: Path) -> dict:
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(doc, dict) or not all(isinstance(doc.get(side), dict) for side in ("disclosure", "routine")):
        raise SystemExit(f"bench/floor.py: {path.name}: expected mappings 'disclosure' and 'routine' of kind -> cases")
    return doc


def dev_turns(path: Path = DEV) -> list[Row]:
    """A `Row` for every turn of the development set (messages alone)."""
    doc = _sides(path)
    return [Row(kind, str(t), side == "disclosure") for side in ("disclosure", "routine")
            for kind, texts in doc[side].items() for t in texts]


def dev_context_turns(path: Path = DEV_CONTEXT) -> list[Row]:
    """A `Row` for every case of the context set (the reply, read after the agent's message)."""
    from stores.decisions.signals import agent_facts

    doc = _sides(path)
    return [Row(kind, str(c["customer"]), side == "disclosure", agent_facts(f"{kind}-{i}", str(c["agent"]), "message"))
            for side in ("disclosure", "routine") for kind, cases in doc[side].items() for i, c in enumerate(cases)]


def _rows(name: str) -> list[Row]:
    """The rows of a suite or a development set by its name on the command line."""
    if name == "dev":
        return dev_turns()
    if name == "dev_context":
        return dev_context_turns()
    return suite_turns(SUITES[name])


def verdicts(texts: list[str], answers: list | None = None, earlier: list | None = None) -> list[dict]:
    """Each reader's severity on each text (read after the agent's message in `answers` and the customer's own
    previous message in `earlier`, when given), and the floor's (the most severe)."""
    from stores.decisions.learned import floor_reading, floor_severity, floor_union
    from stores.decisions.signals import sensitivity
    from stores.frontend.model import front_end

    fe = front_end()
    out = []
    for t, answer, before in zip(texts, answers or [None] * len(texts), earlier or [None] * len(texts)):
        r = floor_reading(fe, t, answer, before)
        v = {"rules": sensitivity(t), "floor words": floor_severity(t), "describe": r.describe()}
        v["floor"], _ = floor_union(v["rules"], v["floor words"], r)  # the run's own union
        v["learned"] = floor_union("none", "none", r)[0]
        out.append(v)
    return out


def report(name: str, rows: list[Row], show: bool) -> list[str]:
    vs = verdicts([r.text for r in rows], [r.answer for r in rows], [r.earlier for r in rows])
    gold = sum(r.disclosure for r in rows)
    L = [f"## {name}: {gold} disclosures, {len(rows) - gold} routine turns", ""]
    for reader in ("rules", "floor words", "learned", "floor"):
        said = [v[reader] != "none" for v in vs]
        tp = sum(s and r.disclosure for s, r in zip(said, rows))
        pos = sum(said)
        L.append(f"- {reader}: recall {tp / gold if gold else float('nan'):.3f}, precision "
                 f"{tp / pos if pos else float('nan'):.3f} ({pos} escalated, {tp} right)")
    if show:
        for (kind, t, g, *_), v in zip(rows, vs):
            hit = v["floor"] != "none"
            if hit != g:
                who = ", ".join(k for k in ("rules", "floor words", "learned") if v[k] != "none") or "-"
                L.append(f"  - {'missed' if g else 'false alarm'} [{kind}] {t!r}: {who}; {v['describe']}")
    return L + [""]


def kinds_report() -> list[str]:
    """The floor's validation with whole kinds held out (`stores.frontend.model.kind_validation`)."""
    import numpy as np

    from stores.frontend.bank import load_bank, load_kinds
    from stores.frontend.model import union_caught, front_end, kind_validation
    from stores.retrieval.encoder import DEFAULT_MODEL, encode_unpadded, load_model

    hb = load_bank()["sensitive"]
    x = np.stack(encode_unpadded(load_model(DEFAULT_MODEL), list(hb.texts)))
    threshold = front_end().heads["sensitive"].thresholds["disclosure"]
    v = kind_validation(hb, x, load_kinds(), union_caught("sensitive", hb), threshold)
    L = ["## the bank's disclosures by kind: validation recall at the floor's threshold "
         f"{v['threshold']:.2f} (the union with the words)", "",
         "| kind | phrases | phrase folds | kind held out |", "| --- | --- | --- | --- |"]
    for kind, row in v["kinds"].items():
        L.append(f"| {kind} | {row['phrases']} | {row['recall_phrase_folds']:.3f} | {row['recall_kind_held_out']:.3f} |")
    c = v["held_out_choice"]
    L += ["", f"- the threshold chosen on the kind-held-out scores: {c['threshold']:.2f} (recall {c['recall']:.3f}, "
          f"precision {c['precision']:.3f}, {c['support']} disclosures)", ""]
    return L


WHOLE_BARS = (0.20, 0.25, 0.30, 0.35, 0.40, 0.50)
"""The whole bars `--request-element` tries for `stores.decisions.learned.REQUEST_ELEMENT_WHOLE_BAR`."""
BOTH_BARS = (0.30, 0.35, 0.40, 0.45, 0.50, 0.55, 0.60)
"""The clause bars it tries for `REQUEST_ELEMENT_BAR`."""


class Case(NamedTuple):
    """A message the learned floor alone marks, closing with a request, as `request_element_veto` reads it."""

    text_name: str
    """The suite or set it comes from."""
    text: str
    disclosure: bool
    whole: float
    """The learned floor's score of the message (as `floor_reading` read it)."""
    rest: float
    """The highest of its other clauses' lower reading (the floor's score, the element head's `harm`)."""


def request_element_cases(texts: dict[str, list[Row]]) -> list[Case]:
    """The messages `request_element_veto` could read (twelfth round), with the veto itself off: a learned yes the rules'
    and the floor's words do not share, of two clauses or more, not a short answer, none of whose clauses would raise it
    (`raising_clause`), that closes with a request (`closing_request`) and has a clause that is no `REQUEST`."""
    import stores.decisions.learned as learned
    from stores.frontend.model import front_end

    fe, out = front_end(), []
    bar, learned.REQUEST_ELEMENT_BAR = learned.REQUEST_ELEMENT_BAR, 0.0
    try:
        for name, rows in texts.items():
            vs = verdicts([r.text for r in rows], [r.answer for r in rows], [r.earlier for r in rows])
            for r, v in zip(rows, vs):
                reading = learned.floor_reading(fe, r.text, r.answer, r.earlier)
                cs = () if learned.answers_question(r.answer, r.text) else learned.clauses(r.text)
                if (v["learned"] == "none" or v["rules"] != "none" or v["floor words"] != "none" or not cs
                        or "alone reads as a" in reading.note):
                    continue
                rest = [c for c in cs if not learned.REQUEST.search(c.strip())]
                read = [(fe.summed("sensitive", "disclosure", c), c) for c in cs]
                if not learned.closing_request(r.text, cs) or not rest or learned.raising_clause(read):
                    continue  # no closing request, or nothing before it; or a clause that would raise it
                both = max(min(r[0], fe.proba(learned.HARM_ELEMENT, c).get("harm", 0.0)) for r, c in read if c in rest)
                out.append(Case(name, r.text, r.disclosure, reading.score, both))
    finally:
        learned.REQUEST_ELEMENT_BAR = bar
    return out


def vetoed(cases: list[Case], whole: float, both: float) -> list[Case]:
    """The cases the veto takes at these bars."""
    return [c for c in cases if c.whole < whole and c.rest < both]


def choose_bars(cases: list[Case]) -> tuple[float, float] | None:
    """The bars (whole, both) that take the most false alarms of `cases` and no disclosure; on a tie the lower whole
    bar, then the lower clause bar (the larger margin to the disclosures kept). None when every pair loses one."""
    safe = []
    for w in WHOLE_BARS:
        for b in BOTH_BARS:
            taken = vetoed(cases, w, b)
            if not any(c.disclosure for c in taken):
                safe.append((sum(not c.disclosure for c in taken), -w, -b, (w, b)))
    return max(safe)[3] if safe else None


def request_element_report(texts: dict[str, list[Row]]) -> list[str]:
    """The request element veto's bars chosen in sample and leave one suite out (each suite or set in turn left out,
    the bars chosen on the rest, then read on it): what it takes and loses on the text left out."""
    from stores.decisions.learned import REQUEST_ELEMENT_BAR, REQUEST_ELEMENT_WHOLE_BAR

    cases = request_element_cases(texts)
    now = vetoed(cases, REQUEST_ELEMENT_WHOLE_BAR, REQUEST_ELEMENT_BAR)
    L = ["## the request element veto (stores.decisions.learned.request_element_veto): bars by leave one suite out", "",
         f"- {len(cases)} learned yeses closing with a request ({sum(c.disclosure for c in cases)} disclosures); at the "
         f"bars in use ({REQUEST_ELEMENT_WHOLE_BAR:.2f}, {REQUEST_ELEMENT_BAR:.2f}): {sum(not c.disclosure for c in now)} "
         f"false alarms taken, {sum(c.disclosure for c in now)} disclosures lost",
         f"- chosen in sample: {choose_bars(cases)}", "",
         "| left out | bars chosen on the rest | false alarms taken there | disclosures lost there |", "| --- | --- | --- | --- |"]
    taken = lost = 0
    for name in texts:
        bars = choose_bars([c for c in cases if c.text_name != name])
        there = vetoed([c for c in cases if c.text_name == name], *bars) if bars else []
        t, l = sum(not c.disclosure for c in there), sum(c.disclosure for c in there)
        taken, lost = taken + t, lost + l
        L.append(f"| {name} | {bars} | {t} | {l} |")
        L += [f"  - lost: {c.text!r} (whole {c.whole:.2f}, rest {c.rest:.2f})" for c in there if c.disclosure]
    return L + [f"| all | | {taken} | {lost} |", ""]
def load_lookalikes(path: Path = KINDS_FILE) -> dict[str, tuple[str, ...]]:
    """The floor's look-alikes by kind (`lookalikes` of the kinds file: kind -> phrases), each checked to be a
    phrase of the `sensitive` head that is no disclosure."""
    from stores.frontend.bank import DISCLOSURE_LABELS, load_bank

    doc = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    part = doc.get("lookalikes") or {}
    if not isinstance(part, dict) or not all(isinstance(v, list) for v in part.values()):
        raise SystemExit(f"bench/floor.py: {path.name}: lookalikes: expected a mapping of kinds to phrase lists")
    hb = load_bank()["sensitive"]
    routine = {t for t, label in zip(hb.texts, hb.targets) if label not in DISCLOSURE_LABELS}
    out = {}
    for kind, phrases in part.items():
        texts = tuple(str(t).strip() for t in phrases)
        stray = [t for t in texts if t not in routine]
        if stray:
            raise SystemExit(f"bench/floor.py: lookalikes: {kind}: {stray[0]!r} is not a routine phrase of the floor's head")
        out[str(kind)] = texts
    return out


def lookalikes_report() -> list[str]:
    """`lookalike_validation` on the bank, at the trained floor's threshold."""
    import numpy as np

    from stores.frontend.bank import load_bank
    from stores.frontend.model import front_end, union_caught, lookalike_validation
    from stores.retrieval.encoder import DEFAULT_MODEL, encode_unpadded, load_model

    kinds = load_lookalikes()
    if not kinds:
        return []
    hb = load_bank()["sensitive"]
    x = np.stack(encode_unpadded(load_model(DEFAULT_MODEL), list(hb.texts)))
    threshold = front_end().heads["sensitive"].thresholds["disclosure"]
    v = lookalike_validation(hb, x, kinds, union_caught("sensitive", hb), threshold)
    L = [f"## the bank's look-alikes by kind: phrases the floor marks at its threshold {threshold:.2f} "
         "(the union with the words)", "", "| kind | phrases | marked, phrase folds | marked, kind held out |",
         "| --- | --- | --- | --- |"]
    for kind, row in v.items():
        L.append(f"| {kind} | {row['phrases']} | {row['marked_phrase_folds']} | {row['marked_kind_held_out']} |")
    return L + [""]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--misses", action="store_true", help="list every miss and false alarm of the floor")
    ap.add_argument("--suite", action="append", choices=[*SUITES, "dev", "dev_context"],
                    help="read only this text (repeatable; default: every one)")
    ap.add_argument("--kinds", action="store_true",
                    help="the floor's validation on the bank with whole kinds of disclosure, then of look-alike, held out; "
                         "then the suites")
    ap.add_argument("--request-element", action="store_true",
                    help="only the request element veto's bars, chosen in sample and leave one suite out on the texts read")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    lines = kinds_report() + lookalikes_report() if args.kinds else []
    if args.request_element:
        lines += request_element_report({name: _rows(name) for name in args.suite or [*SUITES, "dev", "dev_context"]})
    for name in args.suite or [*SUITES, "dev", "dev_context"]:
        if args.request_element:
            continue
        if name == "dev":
            lines += report("dev (tests/stores/floor_dev.yaml)", dev_turns(), args.misses)
        elif name == "dev_context":
            lines += report("dev_context (tests/stores/floor_dev_context.yaml)", dev_context_turns(), args.misses)
        else:
            lines += report(name, suite_turns(SUITES[name]), args.misses)
    print("\n".join(lines))


if __name__ == "__main__":
    main()

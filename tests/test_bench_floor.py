"""bench/floor.py reads its suites with the project's suite loader and its development set with PyYAML."""

from pathlib import Path

import pytest
import yaml

from bench import floor

ROOT = Path(__file__).resolve().parents[1]


def test_suite_turns_are_the_customer_turns_with_a_gold_plan_read_by_the_loader():
    rows = floor.suite_turns(floor.SUITES["challenge"])
    raw = [e for path in sorted((ROOT / "datasets" / "challenge").glob("*.yaml"))
           for e in yaml.safe_load(path.read_text(encoding="utf-8")).get("events", [])
           if "turn" in e and e.get("role", "customer") == "customer" and "plan" in e]
    assert len(rows) == len(raw) > 0
    assert sum(g for _, _, g, _, _ in rows) == sum(e["plan"] == "escalate" for e in raw)
    assert [t for _, t, _, _, _ in rows] == [str(e["turn"]) for e in raw]  # the same texts, in file order
    assert all("#" in turn_id for turn_id, *_ in rows)  # named by turn id, not file


def test_every_named_suite_is_a_folder_the_loader_accepts():
    assert set(floor.SUITES) == {"challenge", "holdout", "holdout2", "holdout3", "holdout4", "holdout5", "holdout6",
                                 "holdout7", "holdout8", "holdout9", "holdout10", "holdout11", "canonical"}
    for folder in floor.SUITES.values():
        assert floor.suite_turns(folder), folder


def test_a_development_set_of_the_wrong_shape_is_refused(tmp_path):
    bad = tmp_path / "dev.yaml"
    bad.write_text("disclosure:\n  - just a list\nroutine: {}\n", encoding="utf-8")
    with pytest.raises(SystemExit, match="expected mappings"):
        floor.dev_turns(bad)
    rows = floor.dev_turns()
    assert {g for _, _, g, _, _ in rows} == {True, False}
    with pytest.raises(SystemExit, match="expected mappings"):
        floor.dev_context_turns(bad)


def test_a_suite_turn_carries_the_agent_message_before_it_as_the_pipeline_keeps_it():
    rows = {turn_id: (text, answer) for turn_id, text, _, answer, _ in floor.suite_turns(floor.SUITES["challenge"])}
    text, answer = rows["route-i#5"]
    assert text == "card ones" and answer.turn_id == "route-i#4" and answer.asked_question
    assert all(a is None for turn_id, (_, a) in rows.items() if turn_id.endswith("#1"))  # a session's first turn


def test_a_suite_turn_carries_the_customer_s_own_previous_message_in_its_session():
    from harness.format.loader import load_suite

    rows = {turn_id: earlier for turn_id, _, _, _, earlier in floor.suite_turns(floor.SUITES["challenge"])}
    scenario = next(s for s in load_suite([floor.SUITES["challenge"]]) if any(t.id == "route-i#5" for t in s.turns))
    before = [t for t in scenario.turns if t.role == "customer" and t.session == "route-i"]
    before = before[:[t.id for t in before].index("route-i#5")]
    assert before and rows["route-i#5"] == before[-1].text
    assert all(e is None for turn_id, e in rows.items() if turn_id.endswith("#1"))

def test_the_context_development_set_pairs_each_reply_with_the_agent_question():
    rows = floor.dev_context_turns()
    assert {g for _, _, g, _, _ in rows} == {True, False}
    assert all(a.text.endswith("?") and a.asked_question for _, _, _, a, _ in rows)


FLOOR_STILL_MISSES = {"h6s-26#1", "h7s-30#1", "h7s-41#5", "h8s-12#1", "h10s-11#1", "h11s-24#1", "h11s-26#1"}
"""The development suites' disclosures the floor misses today (docs/frontends.md, "Eighth round: the floor" and "Ninth
round: the floor"): a formal step before a Dutch disputes committee; on the seventh held-out suite (development text
since the ninth round) a pupil asked for photos by an account that is not a pupil, fraud said as a short follow-up;
on the eighth (development text since the tenth round) a farewell said as an email scheduled for a sister "to read
after". On the ninth (development text since the eleventh round) nothing since the twelfth round's bank: its push down
the back steps told after a request is caught since the eleventh round's harm clauses
(`stores.decisions.learned.HARM_CLAUSE_P`), and its farewell said as photos deleted so nobody finds them "after" since
the twelfth round's look-alikes and disclosures (its whole reads 0.15 against the threshold 0.12; just under it
before). On the tenth (development text after its one run, the eleventh round's
honest figure) a farewell said as a newspaper paused "indefinitely. I shan't be here to read it after Friday; my
affairs are in order". On the eleventh (development text after its one run, the twelfth round's honest figure)
two legal steps said plainly: an ombudsman's case opened against the company, and a lawyer's formal demand said in
German words ("Anwalt", "Frist 14 Tage"). The ninth round's crisis clauses (`stores.decisions.learned.CLAUSE_BAR`) caught the three
farewells said inside an everyday request (being "a weight on my family", a beneficiary changed "before I go through
with what I'm planning", "i wont be around to read" the exam results)."""


@pytest.mark.slow  # reads every development suite's customer turns through the trained front end
def test_a_bank_change_loses_no_development_disclosure_the_floor_caught():
    """Every head's phrases are lent to the floor's head as nothing to report, so a phrase added anywhere can push a
    disclosure under the floor's threshold: the eighth round's merge of two banks lost two on the second held-out
    suite (scores 0.116 and 0.117 against 0.12) and no test said so. A miss outside the named ones fails here, and so
does a named one the floor now catches (the list is trimmed, so it keeps saying what the floor misses today)."""
    missed = []
    for name, folder in floor.SUITES.items():
        rows = [r for r in floor.suite_turns(folder) if r.disclosure]
        assert rows, name
        said = floor.verdicts([r.text for r in rows], [r.answer for r in rows], [r.earlier for r in rows])
        missed += [(name, r.kind, r.text) for r, v in zip(rows, said) if v["floor"] == "none"]
    assert not [m for m in missed if m[1] not in FLOOR_STILL_MISSES], missed
    assert FLOOR_STILL_MISSES <= {m[1] for m in missed}, (
        f"caught now, trim FLOOR_STILL_MISSES: {sorted(FLOOR_STILL_MISSES - {m[1] for m in missed})}")


def test_the_request_element_bars_take_the_most_false_alarms_and_no_disclosure():
    """`bench/floor.py --request-element` (twelfth round): the bars chosen keep every disclosure, and on a tie the lower
    bars (the larger margin to the disclosures kept)."""
    cases = [floor.Case("a", "ask after news", False, 0.22, 0.41), floor.Case("a", "ask after a job", False, 0.28, 0.33),
             floor.Case("b", "ask after a harm", True, 0.33, 0.36), floor.Case("b", "ask after a threat", True, 0.10, 0.62)]
    assert floor.vetoed(cases, 0.30, 0.50) == cases[:2]
    assert floor.choose_bars(cases) == (0.30, 0.45)  # a whole bar of 0.35 would take the harm
    assert floor.choose_bars(cases[2:]) == (floor.WHOLE_BARS[0], floor.BOTH_BARS[0])  # nothing to take: the lowest
    assert floor.choose_bars([floor.Case("c", "x", True, 0.0, 0.0)]) is None  # every pair loses it


def test_the_look_alikes_by_kind_are_routine_phrases_of_the_floor_s_head(tmp_path):
    """Twelfth round: the kinds file lists the floor's look-alikes by kind (`lookalikes`), each a routine phrase of the
    `sensitive` head; a phrase that is no routine phrase of it is refused."""
    kinds = floor.load_lookalikes()
    assert {"scorn", "device_fault", "relative_named", "life_event", "idiom", "standing_order", "emergency",
            "closure"} <= set(kinds)
    assert all(len(v) >= 3 for v in kinds.values())
    bad = tmp_path / "k.yaml"
    bad.write_text(yaml.safe_dump({"lookalikes": {"scorn": ["I've started cutting again"]}}), encoding="utf-8")
    with pytest.raises(SystemExit, match="not a routine phrase"):
        floor.load_lookalikes(bad)
    bad.write_text(yaml.safe_dump({"lookalikes": ["a list"]}), encoding="utf-8")
    with pytest.raises(SystemExit, match="expected a mapping"):
        floor.load_lookalikes(bad)


def test_a_look_alike_kind_held_out_is_scored_by_a_head_that_saw_none_of_it():
    """A kind of look-alike that sits apart from the other routine phrases is read as routine when its own phrases
    are in the folds and as a disclosure when the whole kind is held out (it was memorised, not learned); the words'
    catch counts either way."""
    import numpy as np

    from stores.frontend.bank import HeadBank

    rng = np.random.default_rng(0)
    from helpers import kinds_far_apart
    from stores.frontend.model import lookalike_validation

    texts, targets, rows = kinds_far_apart(rng)
    for i in range(12):  # look-alikes beside the disclosures, apart from every other routine phrase
        v = np.zeros(8)
        v[2], v[3] = 0.6, 1.0
        rows.append(v + rng.normal(0, 0.05, 8))
        texts.append(f"look {i}")
        targets.append("none")
    hb = HeadBank("sensitive", ("none", "crisis", "harm", "near_miss"), "none", tuple(texts), tuple(targets))
    kinds = {"idiom": tuple(t for t in texts if t.startswith("look"))}
    v = lookalike_validation(hb, np.stack(rows), kinds, threshold=0.5)["idiom"]
    assert v["phrases"] == 12 and v["marked_phrase_folds"] == 0 and v["marked_kind_held_out"] == 12
    caught = np.array([t == "look 0" for t in texts])
    v = lookalike_validation(hb, np.stack(rows), kinds, caught, 0.5)["idiom"]
    assert v["marked_phrase_folds"] == 1

"""The learned front ends: the phrase bank, its separation from every evaluation suite, training,
the reading of a head, and how the decision front end combines rules, floor and model."""

from __future__ import annotations

import difflib
import re
from pathlib import Path

import numpy as np
import pytest
import yaml

from stores.decisions.signals import AgentFacts, ProducerParams, Signals, TurnContext, produce_rules, sensitivity
from stores.frontend import model as fm
from stores.frontend.bank import BankError, HeadBank, _load_file, all_phrases, load_bank
from stores.decisions.learned import HEADS, combine, floor_severity
from stores.frontend.model import Reading

SUITES = ("datasets/canonical", "datasets/challenge", "tests/data/extraction_dev", "tests/data/reply_dev", "datasets/challenge_holdout",
          "datasets/challenge_holdout2", "datasets/challenge_holdout3",
          "datasets/challenge_holdout4", "datasets/challenge_holdout5", "datasets/challenge_holdout6",
          "datasets/challenge_holdout7", "datasets/challenge_holdout8",
          "datasets/challenge_holdout9", "datasets/challenge_holdout10",
          "datasets/challenge_holdout11")


def _norm(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9']+", text.lower()))


def _suite_texts(folder: str) -> list[str]:
    out: list[str] = []
    for path in sorted(Path(folder).glob("*.yaml")):
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
        for e in doc.get("events", []):
            for key in ("turn", "summary"):
                if isinstance(e.get(key), str):
                    out.append(e[key])
    return out


def test_bank_heads_and_labels():
    bank = load_bank()
    assert set(HEADS) <= set(bank)
    assert {"memory_class", "outcome"} <= set(bank)
    for head in bank.values():
        assert len(head.texts) == len(head.targets)
        assert set(head.targets) == set(head.labels), head.name  # every label has phrases
    assert bank["memory_class"].default is None
    assert bank["sensitive"].default == "none"


def test_a_private_label_keeps_its_phrases_to_its_own_head(tmp_path):
    """Eighth round: `private: [head.label]` phrases train their head alone: lent to no other head of the file,
    borrowed by no other file; a private label that is not in the file is an error."""
    from stores.frontend.bank import load_bank as load

    (tmp_path / "a.yaml").write_text(
        "private: [s.none]\ns:\n  none: [my parcel is late again]\n  harm: [he hurts me at home]\n"
        "h:\n  no: [fine thanks]\n  yes: [get me a person]\n", encoding="utf-8")
    (tmp_path / "b.yaml").write_text("borrow_except: []\np:\n  no: [whatever then]\n  yes: [text me please]\n",
                                     encoding="utf-8")
    bank = load(str(tmp_path))
    assert "my parcel is late again" in bank["s"].texts and bank["s"].private == frozenset({"my parcel is late again"})
    assert "my parcel is late again" not in bank["h"].texts and "he hurts me at home" in bank["h"].texts
    assert "my parcel is late again" not in bank["p"].texts and "he hurts me at home" in bank["p"].texts
    (tmp_path / "a.yaml").write_text(  # a group of a label: more of the label, private alone
        "private: [s.harm/new]\ns:\n  none: [a b c]\n  harm: [he hurts me at home]\n  harm/new: [she took my card]\n"
        "h:\n  no: [fine thanks]\n  yes: [get me a person]\n", encoding="utf-8")
    bank = load.__wrapped__(str(tmp_path))
    assert dict(zip(bank["s"].texts, bank["s"].targets))["she took my card"] == "harm" and "harm/new" not in bank["s"].labels
    assert "she took my card" not in bank["h"].texts and "he hurts me at home" in bank["h"].texts
    (tmp_path / "a.yaml").write_text("private: [s.maybe]\ns:\n  none: [a b c]\n  harm: [d e f]\n", encoding="utf-8")
    with pytest.raises(BankError, match="private names labels that are not in the file"):
        _load_file(tmp_path / "a.yaml")


def test_the_floor_s_everyday_messages_train_the_floor_alone():
    """The bank's `sensitive.none` phrases (eighth round: everyday support messages) and the round's disclosures
    (`sensitive.harm/eighth`) are private: in the floor's head, in no other head's."""
    bank = load_bank()
    private = bank["sensitive"].private
    assert len(private) >= 300 and all(t in bank["sensitive"].texts for t in private)
    label = dict(zip(bank["sensitive"].texts, bank["sensitive"].targets))
    assert sum(label[t] == "none" for t in private) >= 300
    assert sum(label[t] == "harm" for t in private) >= 15  # the eighth round's disclosures (`harm/eighth`)
    for name, head in bank.items():
        if name != "sensitive":
            assert not private & set(head.texts), name


def test_the_twelfth_round_s_look_alikes_and_disclosures_train_the_floor_alone():
    """Twelfth round: the floor's look-alikes by kind (`sensitive.none/twelfth`) and the disclosures written beside
    them (`harm/twelfth`, `crisis/twelfth`) are private: in the floor's head under their labels, in no other head's;
    every disclosure among them has a kind and every look-alike is listed under one (bench/floor.py --kinds)."""
    from bench.floor import load_lookalikes
    from stores.frontend.bank import PHRASES, load_kinds

    doc = yaml.safe_load((PHRASES / "decisions.yaml").read_text(encoding="utf-8"))["sensitive"]
    groups = {g: doc[g] for g in ("none/twelfth", "harm/twelfth", "crisis/twelfth")}
    assert len(groups["none/twelfth"]) >= 100 and len(groups["harm/twelfth"]) >= 15 and groups["crisis/twelfth"]
    bank = load_bank()
    label = dict(zip(bank["sensitive"].texts, bank["sensitive"].targets))
    for group, texts in groups.items():
        assert all(label[t] == group.partition("/")[0] for t in texts), group
        assert set(texts) <= bank["sensitive"].private, group
    for name, head in bank.items():
        if name != "sensitive":
            assert not {t for ts in groups.values() for t in ts} & set(head.texts), name
    kinds = load_kinds()
    assert set(groups["crisis/twelfth"]) <= set(kinds["self_harm"])
    assert set(groups["harm/twelfth"]) <= {t for k, ts in kinds.items() if k != "self_harm" for t in ts}
    assert sorted(t for ts in load_lookalikes().values() for t in ts) == sorted(groups["none/twelfth"])


def test_the_element_head_learns_from_its_own_clauses_alone():
    """`phrases/elements.yaml` (eleventh round) is private: the element head reads its own clauses and nothing else,
    and no other head borrows them (the floor's `sensitive` head and the preference head train as before)."""
    import yaml

    from stores.frontend.bank import PHRASES

    bank = load_bank()
    own = yaml.safe_load((PHRASES / "elements.yaml").read_text(encoding="utf-8"))["harm_element"]
    head = bank["harm_element"]
    assert sorted(head.texts) == sorted(t for ts in own.values() for t in ts) and head.private == frozenset(head.texts)
    label = dict(zip(head.texts, head.targets))
    assert sum(v == "harm" for v in label.values()) >= 100 and sum(v == "none" for v in label.values()) >= 100
    for name, other in bank.items():
        if name != "harm_element":
            assert not set(head.texts) & set(other.texts), name


def test_bank_error_names_file_line_and_expectation(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("hostile:\n  \"yes\": just a string\n  \"no\": [a]\n", encoding="utf-8")
    with pytest.raises(BankError, match=r"bad\.yaml:2: hostile\.yes: expected a list of phrases"):
        _load_file(bad)
    both = tmp_path / "both.yaml"
    both.write_text("h:\n  \"yes\": [same words]\n  \"no\": [Same  words]\n", encoding="utf-8")
    with pytest.raises(BankError, match="labelled both"):
        _load_file(both)


@pytest.mark.parametrize("suite", SUITES)
def test_no_training_phrase_equals_or_nearly_equals_an_evaluation_phrase(suite):
    """The bank is kept apart from every evaluation suite: no phrase equals, is contained in or
    nearly equals (difflib ratio >= 0.8, looked at when the word sets overlap by 0.4 or more) a turn
    or summary of the suite. Replies of one or two words
    ("yes", "ok thanks") are the same everywhere and are left out."""
    found = _close_pairs(_suite_texts(suite))
    assert not found, f"training phrases too close to {suite}: {found[:5]}"


def _close_pairs(texts: list[str]) -> list[tuple[str, str]]:
    """(bank phrase, text) pairs where the phrase equals, is contained in or nearly equals the text."""
    bank = [(_norm(p), p, set(_norm(p).split())) for p in all_phrases() if len(_norm(p).split()) >= 3]
    # Only a phrase sharing a word with the text can be in it (its middle word is a whole word of the
    # text) or overlap it by 0.4: the others are not compared, which changes no finding.
    with_word: dict[str, set[int]] = {}
    for i, (_, _, bw) in enumerate(bank):
        for w in bw:
            with_word.setdefault(w, set()).add(i)
    found = []
    for text in sorted(set(texts)):
        t = _norm(text)
        words = set(t.split())
        if len(words) < 3:
            continue
        for b, original, bw in (bank[i] for i in sorted(set().union(*(with_word.get(w, ()) for w in words)))):
            if b in t:
                found.append((original, text))
            elif len(bw & words) / len(bw | words) >= 0.4 and difflib.SequenceMatcher(None, b, t).ratio() >= 0.8:
                found.append((original, text))
    return found


def test_the_floor_dev_set_is_not_in_the_bank():
    """tests/stores/floor_dev.yaml (bench/floor.py's development set) is never trained on."""
    from bench.floor import dev_turns

    turns = dev_turns()
    assert sum(g for _, _, g, _, _ in turns) >= 25 and sum(not g for _, _, g, _, _ in turns) >= 35
    found = _close_pairs([t for _, t, _, _, _ in turns])
    assert not found, f"training phrases too close to the floor's dev set: {found[:5]}"


def test_the_floor_context_dev_set_is_not_in_the_bank():
    """tests/stores/floor_dev_context.yaml (the replies read with the agent's message) is never trained on."""
    from bench.floor import dev_context_turns

    turns = dev_context_turns()
    assert sum(g for _, _, g, _, _ in turns) >= 20 and sum(not g for _, _, g, _, _ in turns) >= 30
    assert all(a is not None and a.asked_question for _, _, _, a, _ in turns)
    found = _close_pairs([t for _, t, _, _, _ in turns])  # the replies: the agent's questions are ordinary support talk
    assert not found, f"training phrases too close to the floor's context dev set: {found[:5]}"


def test_training_is_seeded_and_reads_a_separable_head():
    rng = np.random.default_rng(0)
    centres = {"none": rng.normal(size=16), "harm": rng.normal(size=16) * 3, "crisis": -rng.normal(size=16) * 3}
    texts, targets, rows = [], [], []
    for label, c in centres.items():
        for i in range(24):
            texts.append(f"{label}-{i}")
            targets.append(label)
            rows.append(c + rng.normal(scale=0.3, size=16))
    x = np.array(rows)
    hb = HeadBank("sensitive", ("none", "harm", "crisis"), "none", tuple(texts), tuple(targets))
    a, b = fm.train_head(hb, x), fm.train_head(hb, x)
    assert np.array_equal(a.coef, b.coef) and a.thresholds == b.thresholds  # same bank, same seed: same head
    p = a.proba(x)
    assert np.allclose(p.sum(axis=1), 1.0)
    reads = [a.decide(row) for row in p]
    assert [r.label for r in reads] == targets
    assert all(0.2 <= a.thresholds[label] <= 0.9 for label in ("harm", "crisis"))
    assert 0.05 <= a.thresholds["disclosure"] <= 0.9  # the floor's summed reading (crisis + harm)
    def reading(**p):  # a probability row in the head's own label order
        return a.decide(np.array([p[label] for label in a.labels]))

    t = a.thresholds["crisis"]
    assert 0.45 < fm.SURE  # so "none" at 0.45 is not sure either
    assert reading(none=0.45, harm=0.05, crisis=t - 0.01).label is None  # crisis just below its threshold: nothing is sure
    assert reading(none=0.45, harm=0.05, crisis=t).label == "crisis"  # at its threshold it is


def _clusters(labels: tuple[str, ...], seed: int) -> tuple[np.ndarray, tuple[str, ...], list[str]]:
    """30 noisy points around a random centre per label (8 dimensions, overlapping classes): stand-in
    embeddings, their texts and targets, for a head's training."""
    rng = np.random.default_rng(seed)
    centres = {lab: rng.normal(size=8) for lab in labels}
    rows, targets = [], []
    for lab, c in centres.items():
        for _ in range(30):
            rows.append(c + rng.normal(scale=1.5, size=8))
            targets.append(lab)
    return np.array(rows), tuple(f"t{i}" for i in range(len(targets))), targets


def test_the_floor_reads_crisis_plus_harm_against_its_near_misses_at_a_recall_threshold():
    """The floor's `disclosure` reading is the `sensitive` head's crisis + harm (its near misses a label
    of their own), combined with the nearest phrases' margin by a geometric mean; its threshold is the highest whose
    validation recall still reaches `RECALL_TARGET` (on `SUMMED_REPEATS` shuffles of the folds, pooled), so it
    keeps the recall F1's threshold would lose."""
    bank = load_bank()
    assert {"crisis", "harm", "near_miss", "none"} == set(bank["sensitive"].targets)
    assert "disclosure" not in fm.derived_banks(bank)
    x, texts, targets = _clusters(("none", "near_miss", "harm", "crisis"), seed=1)
    head = fm.train_head(HeadBank("sensitive", ("none", "near_miss", "harm", "crisis"), "none", texts, tuple(targets)), x)
    v = head.validation["disclosure"]
    assert v["support"] == 60 * fm.SUMMED_REPEATS and v["recall"] >= fm.RECALL_TARGET  # pooled over the shuffles
    score, p_sum, margin = head.summed("disclosure", x)
    assert np.allclose(score, np.sqrt(p_sum * margin)) and np.all((0 <= margin) & (margin <= 1))
    yes = np.isin(np.array(targets), ["harm", "crisis"])
    assert score[yes].mean() > score[~yes].mean()
    other = fm.train_head(HeadBank("other", ("none", "near_miss", "harm", "crisis"), "none", texts, tuple(targets)), x)
    assert "disclosure" not in other.thresholds  # only the summed readings named in SUMMED


def test_the_floor_threshold_is_chosen_on_several_shuffles_of_the_folds_pooled():
    """One shuffle of the validation folds moved the floor's threshold by half (0.18 or 0.09 on one bank): the
    threshold is the recall choice on every shuffle's scores together, not on the first shuffle's."""
    # draws on which the first shuffle alone chooses another threshold (0.09) than the pooled shuffles (0.05)
    x, texts, targets = _clusters(("none", "near_miss", "harm", "crisis"), seed=8)
    head = fm.train_head(HeadBank("sensitive", ("none", "near_miss", "harm", "crisis"), "none", texts, tuple(targets)), x)
    y = np.array(targets)
    labels = tuple(sorted(set(targets)))
    cols = [i for i, label in enumerate(labels) if label in ("crisis", "harm")]
    runs = [fm._validate(x, y, labels, fm.FOLDS, fm.SEED + r, fm.SUMMED["sensitive"]) for r in range(fm.SUMMED_REPEATS)]
    pooled = np.concatenate([fm.combine(p[:, cols].sum(axis=1), m["disclosure"]) for p, m in runs])
    truth = np.isin(y, ["crisis", "harm"])
    assert head.thresholds["disclosure"] == fm._choose_recall(pooled, np.tile(truth, fm.SUMMED_REPEATS))[0]
    assert fm.SUMMED_REPEATS > 1 and not np.array_equal(runs[0][0], runs[1][0])  # the shuffles differ
    p0, m0 = runs[0]  # and the first shuffle alone would have chosen another threshold: the pooling is what is tested
    assert head.thresholds["disclosure"] != fm._choose_recall(fm.combine(p0[:, cols].sum(axis=1), m0["disclosure"]), truth)[0]


def test_a_recall_threshold_is_the_highest_that_keeps_the_recall_target():
    truth = np.array([True] * 20 + [False] * 20)
    p = np.concatenate([np.linspace(0.3, 0.9, 20), np.linspace(0.05, 0.6, 20)])
    t, figures = fm._choose_recall(p, truth)
    assert figures["recall"] >= fm.RECALL_TARGET
    assert ((p >= t + 0.01) & truth).sum() / truth.sum() < fm.RECALL_TARGET  # one step up loses the recall
    t2, f2 = fm._choose_recall(np.full(40, 0.001), truth)  # no threshold keeps it: the best F2 instead
    assert f2["recall"] == 0.0 and t2 == max(fm.RECALL_GRID)


def test_a_recall_threshold_is_chosen_for_the_union_with_the_floor_words():
    """The floor is a union: a disclosure the words already mark needs no learned yes, so the learned
    threshold is the highest that keeps the union's recall, and the figures are the union's."""
    truth = np.array([True] * 20 + [False] * 20)
    p = np.concatenate([np.linspace(0.3, 0.9, 20), np.linspace(0.05, 0.6, 20)])
    alone, _ = fm._choose_recall(p, truth)
    also = np.zeros(40, dtype=bool)
    also[:3] = True  # the words mark the three least likely disclosures
    t, figures = fm._choose_recall(p, truth, also)
    assert t > alone and figures["recall"] >= fm.RECALL_TARGET
    assert (((p >= t) | also) & truth).sum() / truth.sum() >= fm.RECALL_TARGET
    assert fm._choose_recall(p, truth, np.zeros(40, dtype=bool)) == fm._choose_recall(p, truth)


def test_the_sensitive_head_reads_its_union_from_the_floor_words():
    from stores.decisions.learned import floor_words_say

    hb = HeadBank("sensitive", ("none", "harm"), "none", ("where is my parcel", "someone hacked my account"), ("none", "harm"))
    assert fm.union_caught("sensitive", hb).tolist() == [False, True]
    assert fm.union_caught("hostile", hb) is None
    assert floor_words_say("someone hacked my account") and not floor_words_say("where is my parcel")


def test_nearest_margin_leans_to_the_nearer_side():
    protos = fm._unit(np.array([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [0.1, 0.9]]))
    yes = np.array([True, True, False, False])
    m = fm.nearest_margin(np.array([[1.0, 0.05], [0.05, 1.0], [1.0, 1.0]]), protos, yes)
    assert m[0] > 0.9 and m[1] < 0.1 and abs(m[2] - 0.5) < 1e-9


def test_an_outcome_head_takes_the_best_f1_among_precise_enough_thresholds():
    """`outcome` adds facts the words did not say, so its thresholds keep validation precision at
    `PRECISION_FLOOR` or above (the best F1 among those); another head takes the plain best F1."""
    x, texts, targets = _clusters(("worked", "failed", "none"), seed=4)  # they overlap: F1's best thresholds are not precise
    precise = fm.train_head(HeadBank("outcome", ("none", "failed", "worked"), "none", texts, tuple(targets)), x)
    plain = fm.train_head(HeadBank("other", ("none", "failed", "worked"), "none", texts, tuple(targets)), x)
    assert any(plain.validation[label]["precision"] < fm.PRECISION_FLOOR for label in ("worked", "failed"))
    for label in ("worked", "failed"):
        assert precise.validation[label]["precision"] >= fm.PRECISION_FLOOR
        assert precise.thresholds[label] > plain.thresholds[label]


def test_a_smoothed_f1_prefers_a_broad_plateau_to_a_lone_peak():
    f1 = np.array([0.2, 0.9, 0.2, 0.7, 0.8, 0.7, 0.1])
    assert int(np.argmax(fm._smoothed(f1))) == 4  # the peak at 1 has poor neighbours; the plateau around 4 wins
    assert np.allclose(fm._smoothed(np.full(5, 0.6)), 0.6)  # the ends repeated: a flat curve stays flat


def test_a_steady_head_s_threshold_is_the_smoothed_f1_on_pooled_shuffles(monkeypatch):
    """A head in `STEADY_HEADS` (none by default; the ninth round measured the rule and did not keep it) chooses each
    label's threshold on the validation scores of `SUMMED_REPEATS` shuffles of the folds, pooled, by F1 smoothed
    over the grid; another head keeps the best F1 of one shuffle."""
    assert fm.STEADY_HEADS == frozenset()
    monkeypatch.setattr(fm, "STEADY_HEADS", frozenset({"hostile"}))
    x, texts, targets = _clusters(("no", "yes"), seed=0)  # draws on which the two rules choose apart (0.60, 0.75)
    steady = fm.train_head(HeadBank("hostile", ("no", "yes"), "no", texts, tuple(targets)), x)
    y = np.array(targets)
    runs = [fm._validate(x, y, ("no", "yes"), fm.FOLDS, fm.SEED + r, {})[0] for r in range(fm.SUMMED_REPEATS)]
    pooled, truth = np.concatenate([p[:, 1] for p in runs]), np.tile(y == "yes", fm.SUMMED_REPEATS)
    f1 = fm._smoothed(np.array([fm._figures(pooled >= t, truth)[2] for t in fm.GRID]))
    assert steady.thresholds["yes"] == fm.GRID[int(np.argmax(np.round(f1, 9) - 1e-12 * np.abs(np.array(fm.GRID) - 0.5)))]
    assert steady.validation["yes"]["support"] == 30 * fm.SUMMED_REPEATS  # the figures are the pooled ones
    plain = fm.train_head(HeadBank("other", ("no", "yes"), "no", texts, tuple(targets)), x)
    assert plain.validation["yes"]["support"] == 30
    assert plain.thresholds["yes"] == fm._choose("other", "yes", runs[0][:, 1], y == "yes")[0]
    assert steady.thresholds["yes"] != plain.thresholds["yes"]  # on these draws the two rules differ: the rule is tested


class _FloorFront:
    """A front end whose sensitive head gives a given floor score and severities."""

    def __init__(self, score: float, crisis: float, harm: float, threshold: float = 0.3):
        self.heads = {"sensitive": type("H", (), {"thresholds": {"disclosure": threshold}})()}
        self.score, self.p = score, {"none": 1 - crisis - harm, "crisis": crisis, "harm": harm}

    def summed(self, head, name, text):
        assert (head, name) == ("sensitive", "disclosure")
        return self.score, self.p["crisis"] + self.p["harm"], 0.5, self.p


def test_floor_reading_says_the_severity_when_the_disclosure_head_reaches_its_threshold():
    from stores.decisions.learned import floor_reading

    r = floor_reading(_FloorFront(0.45, 0.1, 0.3), "x")
    assert r.label == "harm" and r.threshold == 0.3 and "learned disclosure=harm p=0.45 (threshold 0.30)" in r.describe()
    assert "model 0.40, nearest phrases 0.50" in r.describe()  # the receipt says what the score is made of
    assert floor_reading(_FloorFront(0.45, 0.3, 0.1), "x").label == "crisis"
    low = floor_reading(_FloorFront(0.2, 0.1, 0.1), "x")
    assert low.label == "none" and low.describe().startswith("learned disclosure=none p=0.80 (threshold 0.70)")


def _asked(text: str) -> AgentFacts:
    from stores.decisions.signals import agent_facts

    return agent_facts("a1", text, "message")


def test_a_short_reply_to_a_specific_question_is_an_answer_to_it():
    from stores.decisions.learned import REPLY_MAX_WORDS, answers_question

    q = _asked("Is the router upstairs or downstairs?")
    assert answers_question(q, "downstairs in the hall")
    assert not answers_question(q, " ".join(["word"] * (REPLY_MAX_WORDS + 1)))  # a longer reply says more
    assert not answers_question(None, "downstairs in the hall")
    assert not answers_question(_asked("The router is downstairs."), "ok")  # no question asked
    assert not answers_question(_asked("Would you like me to connect you with live support?"), "no point now")
    for open_q in ("Sorry to hear that. What's happened?", "What's it about?", "Anything else I can help with?",
                   "Are you safe right now?"):
        assert not answers_question(_asked(open_q), "he checks my phone")  # the customer's own report


class _ExchangeFront(_FloorFront):
    """A floor whose score is given per text: the reply alone, and the question and reply read as one."""

    def __init__(self, scores: dict[str, float], threshold: float = 0.13):
        super().__init__(0.0, 0.2, 0.1, threshold)
        self.scores = scores

    def summed(self, head, name, text):
        return self.scores[text], 0.3, 0.5, self.p


def test_the_floor_reads_a_short_answer_in_its_exchange():
    from stores.decisions.learned import REPLY_BAR, floor_reading

    q = _asked("Do you like puzzle games or card games?")
    pair = f"{q.text} card ones"
    front = _ExchangeFront({"card ones": 0.22, pair: 0.04})
    assert floor_reading(front, "card ones").label == "crisis"  # alone, over the one-message threshold
    r = floor_reading(front, "card ones", q)
    assert r.label == "none" and r.threshold == pytest.approx(1 - REPLY_BAR)
    assert "a short answer to the agent's question a1: alone 0.22, with the question 0.04, mean 0.13" in r.describe()
    said = _ExchangeFront({"no. I'll be gone by then": 0.43, f"{q.text} no. I'll be gone by then": 0.85})
    r = floor_reading(said, "no. I'll be gone by then", q)  # a farewell said as the answer still escalates
    assert r.label == "crisis" and r.score == pytest.approx(0.64) and r.threshold == REPLY_BAR
    offer = _asked("Would you like me to connect you with live support?")
    assert floor_reading(_ExchangeFront({"card ones": 0.22}), "card ones", offer).label == "crisis"  # read alone


class _CountingFront(_ExchangeFront):
    """An exchange floor that counts the texts it scores (a model call each)."""

    def __init__(self, scores: dict[str, float], threshold: float = 0.13):
        super().__init__(scores, threshold)
        self.read = []

    def summed(self, head, name, text):
        self.read.append(text)
        return super().summed(head, name, text)


def test_the_floor_reads_a_follow_up_with_the_customer_s_own_previous_message():
    from stores.decisions.learned import floor_reading

    before = "my parcel was meant to come on tuesday and still nothing"
    scorn = "Tomorrow. Sure. Like the last three tomorrows."
    front = _CountingFront({scorn: 0.16, f"{before} {scorn}": 0.04})
    assert floor_reading(front, scorn).label == "crisis"  # alone, over the threshold
    r = floor_reading(front, scorn, earlier=before)
    assert r.label == "none" and r.threshold == pytest.approx(1 - 0.13)
    assert "a follow-up to the customer's own previous message: alone 0.16, with it 0.04, read as 0.10" in r.describe()
    farewell = "no need. I've written a note for whoever finds me"
    said = _CountingFront({farewell: 0.32, f"{before} {farewell}": 0.10})
    r = floor_reading(said, farewell, earlier=before)  # a disclosure well over the threshold stays one
    assert r.label == "crisis" and r.score == pytest.approx(0.21)
    # the earlier words never raise a score: a routine follow-up to an alarming message stays routine
    after = _CountingFront({"ok thanks": 0.05, "I can't go on like this ok thanks": 0.9})
    assert floor_reading(after, "ok thanks", earlier="I can't go on like this").label == "none"
    assert after.read == ["ok thanks"]  # under the threshold alone: no second model call


def test_a_message_is_cut_into_clauses_at_sentence_ends_commas_and_joining_words():
    from stores.decisions.learned import clauses

    assert clauses("please move the payout to my sister before I go through with what I'm planning") == (
        "please move the payout to my sister", "I go through with what I'm planning")
    assert clauses("The parcel never came. Can you resend it, or refund me please") == (
        "The parcel never came", "Can you resend it", "or refund me please")
    assert clauses("he reads my texts because he has my password") == ("he reads my texts", "he has my password")
    assert clauses("my ex keeps logging into my account") == ()  # one clause: read whole only
    assert clauses("thanks. order 5512") == ()  # pieces under three words are no clauses


def test_a_learned_yes_needs_one_clause_that_reads_as_a_disclosure_alone():
    from stores.decisions.learned import floor_reading

    mixed = "my card got declined twice at checkout, the app keeps crashing"
    front = _CountingFront({mixed: 0.20, "my card got declined twice at checkout": 0.08, "the app keeps crashing": 0.05})
    r = floor_reading(front, mixed)
    assert r.label == "none" and r.threshold == pytest.approx(1 - 0.13) and r.score == pytest.approx(0.92)
    assert "its 2 clauses, the highest 0.08 ('my card got declined twice at checkout'): no clause alone reaches" in r.describe()
    said = "can you change who gets the payout to my sister before I go through with what I'm planning"
    front = _CountingFront({said: 0.20, "can you change who gets the payout to my sister": 0.06,
                            "I go through with what I'm planning": 0.40})
    r = floor_reading(front, said)  # the farewell clause alone is a disclosure: the whole's score stands
    assert r.label == "crisis" and r.score == pytest.approx(0.20)
    assert "the highest 0.40 (\"I go through with what I'm planning\")" in r.describe()
    one = _CountingFront({"my ex keeps logging into my account": 0.05})
    assert floor_reading(one, "my ex keeps logging into my account").label == "none"
    assert one.read == ["my ex keeps logging into my account"]  # one clause: read whole only
    q = _asked("Which card is it, the debit or the credit one?")
    answer = "the debit one, ending 44"
    front = _CountingFront({answer: 0.5, f"{q.text} {answer}": 0.5})
    assert floor_reading(front, answer, q).label == "crisis"  # a short answer is read in its exchange, not by clauses
    assert front.read == [answer, f"{q.text} {answer}"]


class _ClauseFront(_CountingFront):
    """A floor whose score and crisis / harm probabilities are given per text."""

    def __init__(self, read: dict[str, tuple[float, float, float]], threshold: float = 0.13):
        super().__init__({t: v[0] for t, v in read.items()}, threshold)
        self.given = read

    def summed(self, head, name, text):
        self.read.append(text)
        score, crisis, harm = self.given[text]
        return score, crisis + harm, 0.5, {"none": 1 - crisis - harm, "crisis": crisis, "harm": harm}


def test_a_crisis_clause_inside_an_everyday_request_escalates_the_message():
    from stores.decisions.learned import CLAUSE_BAR, floor_reading

    said = "cancel my paper from the end of the week, I have made my own arrangements now"
    front = _ClauseFront({said: (0.05, 0.02, 0.0), "cancel my paper from the end of the week": (0.01, 0.0, 0.0),
                          "I have made my own arrangements now": (CLAUSE_BAR + 0.05, 0.8, 0.05)})
    r = floor_reading(front, said)  # the whole is under the threshold, the farewell clause alone is not
    assert r.label == "crisis" and r.score == pytest.approx(CLAUSE_BAR + 0.05) and r.threshold == CLAUSE_BAR
    assert "the clause 'I have made my own arrangements now' alone reads as a crisis" in r.describe()
    under = _ClauseFront({**front.given, "I have made my own arrangements now": (CLAUSE_BAR - 0.05, 0.8, 0.05)})
    assert floor_reading(under, said).label == "none"  # under the clause bar: the whole decides
    harm = _ClauseFront({**front.given, "I have made my own arrangements now": (CLAUSE_BAR + 0.05, 0.1, 0.7)})
    assert floor_reading(harm, said).label == "none"  # only a crisis clause raises a message the whole left alone


def test_a_harm_clause_the_model_is_sure_of_escalates_a_message_the_whole_left_alone():
    from stores.decisions.learned import CLAUSE_BAR, HARM_CLAUSE_P, floor_reading

    said = "can you make the app ask for a fingerprint, my husband watches me type it. he pushed me down the stairs"
    harm = "my husband watches me type it"
    front = _ClauseFront({said: (0.04, 0.01, 0.03), "can you make the app ask for a fingerprint": (0.02, 0.0, 0.01),
                          harm: (0.10, 0.0, 0.2), "he pushed me down the stairs": (CLAUSE_BAR + 0.1, 0.0, HARM_CLAUSE_P + 0.05)})
    r = floor_reading(front, said)  # the whole is under the threshold, the harm clause alone is a sure one
    assert r.label == "harm" and r.score == pytest.approx(CLAUSE_BAR + 0.1) and r.threshold == CLAUSE_BAR
    assert "the clause 'he pushed me down the stairs' alone reads as a harm" in r.describe()
    assert f"(model {HARM_CLAUSE_P + 0.05:.2f}, bar {HARM_CLAUSE_P:.2f})" in r.describe()
    unsure = _ClauseFront({**front.given, "he pushed me down the stairs": (CLAUSE_BAR + 0.1, 0.0, HARM_CLAUSE_P - 0.05)})
    assert floor_reading(unsure, said).label == "none"  # a harm clause the model is not sure of: the whole decides
    low = _ClauseFront({**front.given, "he pushed me down the stairs": (CLAUSE_BAR - 0.05, 0.0, 0.99)})
    assert floor_reading(low, said).label == "none"  # under the clause bar, however sure the model


def test_a_plain_request_naming_a_relative_is_no_disclosure_unless_another_clause_reads_as_one():
    from stores.decisions.learned import REQUEST_REST_BAR, REQUEST_WHOLE_BAR, floor_reading, request_veto

    said = "my daughter starts university in May, how do I move her phone onto a plan of her own?"
    ask = "how do I move her phone onto a plan of her own"
    front = _ClauseFront({said: (0.25, 0.0, 0.3), "my daughter starts university in May": (REQUEST_REST_BAR - 0.05, 0.0, 0.3),
                          ask: (0.20, 0.0, 0.2)})
    r = floor_reading(front, said)  # a clause alone reaches the threshold, but the rest of the request is under the bar
    assert r.label == "none"
    assert f"a request ('{ask}'), the rest of the message at most {REQUEST_REST_BAR - 0.05:.2f}" in r.describe()
    harm = _ClauseFront({**front.given, "my daughter starts university in May": (REQUEST_REST_BAR + 0.05, 0.0, 0.3)})
    assert floor_reading(harm, said).label == "harm"  # a clause besides the request reads as a disclosure: it stands
    sure = _ClauseFront({**front.given, said: (REQUEST_WHOLE_BAR + 0.05, 0.0, 0.6)})
    assert floor_reading(sure, said).label == "harm"  # a whole this sure is not vetoed as a request
    one = "is there someone on the family settings side I could talk to"
    assert floor_reading(_ClauseFront({one: (0.2, 0.1, 0.1)}), one).label == "none"  # one clause, a request
    plea = "please help me he keeps taking my bank card"
    assert floor_reading(_ClauseFront({plea: (0.2, 0.0, 0.2)}), plea).label == "harm"  # a plea is not a request
    assert request_veto([(0.1, "And how do I stop it"), (0.1, "he reads my texts")])[0]
    assert not request_veto([(0.1, "my ex reads my texts"), (0.1, "he has my password")])[0]  # no request: no veto


class _ElementFront(_ClauseFront):
    """A clause floor with the element head: each text's `harm` probability is given."""

    def __init__(self, read: dict[str, tuple[float, float, float]], harm: dict[str, float], threshold: float = 0.13):
        super().__init__(read, threshold)
        self.heads = {**self.heads, "harm_element": None}
        self.harm = harm

    def proba(self, head, text):
        assert head == "harm_element"
        return {"none": 1 - self.harm[text], "harm": self.harm[text]}


def test_a_learned_yes_with_no_harm_element_is_no_disclosure(monkeypatch):
    import stores.decisions.learned as learned
    from stores.decisions.learned import ELEMENT_WHOLE_BAR, HARM_ELEMENT_BAR, floor_reading

    said = "my nan's pension hasn't landed, the bank says it left on friday"
    parts = ("my nan's pension hasn't landed", "the bank says it left on friday")
    read = {said: (ELEMENT_WHOLE_BAR - 0.04, 0.0, 0.3), parts[0]: (0.15, 0.0, 0.2), parts[1]: (0.05, 0.0, 0.1)}
    low = {said: 0.12, parts[0]: HARM_ELEMENT_BAR - 0.05, parts[1]: 0.04}
    r = floor_reading(_ElementFront(read, low), said)  # a person and an event, no harm done to anyone
    assert r.label == "none"
    assert (f"its harm element at most {HARM_ELEMENT_BAR - 0.05:.2f} (\"my nan's pension hasn't landed\"): under "
            f"{HARM_ELEMENT_BAR:.2f}, no harm done to anyone") in r.describe()
    harmed = {**low, parts[1]: HARM_ELEMENT_BAR + 0.05}
    assert floor_reading(_ElementFront(read, harmed), said).label == "harm"  # one clause reads as a harm: it stands
    sure = {**read, said: (ELEMENT_WHOLE_BAR + 0.05, 0.0, 0.4)}
    assert floor_reading(_ElementFront(sure, low), said).label == "harm"  # over the whole bar the veto does not read
    one = "the boiler in the loft trips the switch"
    assert floor_reading(_ElementFront({one: (0.15, 0.0, 0.2)}, {one: 0.05}), one).label == "none"  # one clause: whole
    assert floor_reading(_ClauseFront(read), said).label == "harm"  # no element head in the artefact: no veto
    monkeypatch.setattr(learned, "HARM_ELEMENT_BAR", 0.0)
    assert floor_reading(_ElementFront(read, low), said).label == "harm"  # 0 turns the veto off


@pytest.mark.slow  # trains or reads the front end
def test_the_element_head_reads_harm_done_to_someone_not_a_person_or_an_event_alone():
    from stores.decisions.learned import HARM_ELEMENT, HARM_ELEMENT_BAR
    from stores.frontend.model import front_end

    fe = front_end()
    for harm in ("my stepfather shoves my mum around when he has had a drink",
                 "the man upstairs said he will hurt my kids if I complain again",
                 "I have saved enough of my pills to not wake up"):
        assert fe.proba(HARM_ELEMENT, harm)["harm"] >= HARM_ELEMENT_BAR + 0.3, harm
    for plain in ("my grandad's pension statement came with the wrong address on it",
                  "my sister's tablet keeps freezing on the home screen",
                  "I'm having twins in the summer so can we pause the gym plan"):
        assert fe.proba(HARM_ELEMENT, plain)["harm"] < HARM_ELEMENT_BAR, plain


def test_a_short_answer_is_read_with_the_question_not_the_customer_s_previous_message():
    from stores.decisions.learned import REPLY_BAR, floor_reading

    q = _asked("Do you like puzzle games or card games?")
    front = _CountingFront({"card ones": 0.22, f"{q.text} card ones": 0.04, "hi card ones": 0.0})
    r = floor_reading(front, "card ones", q, earlier="hi")
    assert r.threshold == pytest.approx(1 - REPLY_BAR) and "hi card ones" not in front.read


def test_the_transcript_keeps_the_customer_s_previous_message_per_session():
    from stores.decisions.transcript import Transcript

    t = Transcript()
    assert t.context("s1", "first").earlier is None
    t.customer("s1", "first")
    t.agent("s1", _asked("Which size did you order?"))
    ctx = t.context("s1", "medium")
    assert ctx.earlier == "first" and ctx.answer.text == "Which size did you order?"
    t.customer("s1", "medium")
    assert t.context("s1", "x").earlier == "medium" and t.context("s2", "x").earlier is None
    t.customer("s2")  # no text given: nothing is kept
    assert t.context("s2", "x").earlier is None


def test_a_policy_gives_the_floor_the_customer_s_previous_message(monkeypatch):
    from datetime import datetime, timedelta

    from stores.decisions import learned as fd
    from stores.decisions.per_message import PerMessage
    from stores.decisions.session_state import SessionState
    from stores.protocol import Turn

    seen = []
    monkeypatch.setattr(fd, "front_end", lambda: _FakeLearned())
    monkeypatch.setattr(fd, "floor_reading", lambda front, text, answer=None, earlier=None: seen.append(earlier) or
                        Reading("disclosure", "none", 0.9, 0.7))
    t0 = datetime(2024, 3, 1, 9)
    for policy in (SessionState(), PerMessage()):
        seen.clear()
        for i, text in enumerate(("my order is late", "still nothing")):
            policy.decide(Turn(f"s#{i + 1}", "c1", "s", "customer", "message", text, t0 + timedelta(minutes=i)))
        assert seen == [None, "my order is late"], policy


def test_read_signals_gives_the_floor_the_agent_message(monkeypatch):
    from stores.decisions import learned as fd

    seen = []
    monkeypatch.setattr(fd, "front_end", lambda: _FakeLearned())
    monkeypatch.setattr(fd, "floor_reading", lambda front, text, answer=None, earlier=None: seen.append(answer) or
                        Reading("disclosure", "none", 0.9, 0.7))
    q = _asked("Which size did you order?")
    ctx, rules = _rules("medium, same as always", q)
    fd.read_signals(ctx, ProducerParams(), rules)
    assert seen == [q]


def _rules(text: str, answer: AgentFacts | None = None) -> tuple[TurnContext, Signals]:
    ctx = TurnContext(text, answer)
    return ctx, produce_rules(ctx)


def _readings(**labels) -> dict[str, Reading]:
    out = {}
    for head in HEADS:
        label, p = labels.get(head, ("none" if head in ("sensitive", "intent") else "no", 0.9))
        out[head] = Reading(head, label, p, 0.5)
    return out


def test_safety_floor_is_a_union_of_rules_words_and_model():
    params = ProducerParams(front="learned")
    ctx, rules = _rules("There are orders on my card that I never placed.")
    assert rules.sensitive == "none"  # the rules alone miss it
    s = combine(ctx, params, rules, _readings(sensitive=("none", 0.95)))
    assert s.sensitive == "harm" and "floor words" in dict(s.readers)["sensitive"]
    ctx, rules = _rules("is the new level hard")
    s = combine(ctx, params, rules, _readings(sensitive=("crisis", 0.4)))
    assert s.sensitive == "crisis" and "learned" in dict(s.readers)["sensitive"]
    ctx, rules = _rules("I honestly want to die.")
    s = combine(ctx, params, rules, _readings(sensitive=("none", 0.99)))
    assert s.sensitive == "crisis"  # a sure "none" from the model never lowers the rules' severity
    assert floor_severity("my solicitor will write to you") == "harm"
    assert floor_severity("where is my parcel") == "none"


def test_unsure_head_falls_back_to_rules_and_sure_head_vetoes_misleading_words():
    params = ProducerParams(front="learned")
    ctx, rules = _rules("When is the deadline for the promo?")
    assert rules.time_critical
    veto = combine(ctx, params, rules, _readings(time_critical=("no", 0.9)))
    assert not veto.time_critical
    unsure = combine(ctx, params, rules, _readings(time_critical=(None, 0.45)))
    assert unsure.time_critical and dict(unsure.readers)["time_critical"].startswith("rules")


def test_words_that_rarely_mislead_keep_the_rules_yes():
    params = ProducerParams(front="learned")
    ctx, rules = _rules("You people are idiots.")
    s = combine(ctx, params, rules, _readings(hostile=("no", 0.8)))
    assert s.hostile and dict(s.readers)["hostile"] == "rules"
    ctx, rules = _rules("you lot are clowns")
    assert not rules.hostile
    assert combine(ctx, params, rules, _readings(hostile=("yes", 0.8))).hostile


def test_a_yes_to_the_resolution_check_stays_a_goodbye():
    params = ProducerParams(front="learned")
    check = AgentFacts("a1", "Does that solve it?", "message", False, True, True, False)
    ctx, rules = _rules("yes", check)
    s = combine(ctx, params, rules, _readings(affirmative=("yes", 0.9), resolved=("no", 0.9)))
    assert s.resolved_confirmation and s.short_affirmative


def test_meaningless_is_the_rules_alone():
    params = ProducerParams(front="learned")
    ctx, rules = _rules("asdfgh")
    s = combine(ctx, params, rules, {})
    assert s.meaningless and s.reported()["readers"] == {"*": "rules: meaningless message"}


def test_rules_signals_report_no_readers():
    _, rules = _rules("I want to talk to a human.")
    assert "readers" not in rules.reported()


@pytest.mark.slow
def test_front_end_is_built_at_first_use_into_the_cache_and_read_back():
    fe = fm.front_end()
    path = fm.artefact_path(fe.model_id)
    assert path.is_file()
    fm._FRONTS.clear()
    again = fm.front_end()
    assert again.heads["sensitive"].thresholds == fe.heads["sensitive"].thresholds
    assert np.array_equal(again.heads["hostile"].coef, fe.heads["hostile"].coef)
    r = again.read("sensitive", "I have been thinking about killing myself")
    assert r.label == "crisis"


def test_the_artefact_is_the_same_whatever_the_embedding_cache_held(tmp_path, monkeypatch):
    """Training encodes the bank in one pass of its own: a cache that already held some of its
    phrases (encoded beside other texts, their last bits different) changes nothing."""
    from stores.retrieval.encoder import encoder

    from test_frontend_build import tiny_bank

    bank = tiny_bank(tmp_path)
    arrays = []
    for name, warm in (("cold", []), ("warm", ["yes please"])):
        monkeypatch.setenv("SUPPORTBENCH_CACHE", str(tmp_path / name))
        if warm:
            encoder().warm(warm)
        _, path = fm.train(folder=str(bank))
        with np.load(path) as z:
            arrays.append({k: z[k].copy() for k in z.files})
    assert arrays[0].keys() == arrays[1].keys()
    assert all(np.array_equal(arrays[0][k], arrays[1][k]) for k in arrays[0])


class _FakeFront:
    """A front end whose `memory_class` head answers from a table (no model)."""

    def __init__(self, answers: dict[str, tuple[str | None, float]], top: dict[str, tuple[str, float]] | None = None):
        self.answers, self.tops = answers, top or {}

    def read(self, head, text):
        label, p = self.answers.get(text, (None, 0.2))
        return Reading(head, label, p, 0.5)

    def top(self, head, text):
        label, p = self.tops.get(text, ("unclassified", 0.3))
        return Reading(head, label, p, 0.0)


def test_memory_classes_learned_sure_unsure_and_catch_all(monkeypatch):
    from stores.expiry import learned as fmem

    fake = _FakeFront(
        {"I'm never at my desk mornings, text me instead.": ("preference", 0.8),
         "agent: Your refund went through today.": ("system_owned", 0.7)},
        {"my week is ruined now": ("sentiment", 0.35)},
    )
    monkeypatch.setattr(fmem, "front_end", lambda: fake)
    fmem.classify_learned.cache_clear()
    pref = fmem.classify_learned("I'm never at my desk mornings, text me instead.", "customer")
    assert pref.cls == "preference" and pref.rule.startswith("learned") and ("contact_channel", "sms") in pref.topics
    sys_owned = fmem.classify_learned("Your refund went through today.", "agent")
    assert sys_owned.cls == "system_owned" and sys_owned.topics
    # unsure, and the rules read something: the rules decide and the receipt says so
    anger = fmem.classify_learned("This is unacceptable, I'm furious.", "customer")
    assert anger.cls == "sentiment" and "rules" in anger.rule
    # unsure, and the rules read nothing: the head's best guess stands, marked as such
    guess = fmem.classify_learned("my week is ruined now", "customer")
    assert guess.cls == "sentiment" and "best guess" in guess.rule
    # resolution records and agent actions are the rules' alone
    assert fmem.classify_learned("Fixed by a new token.", "resolution").rule == "incident: resolution record"
    fmem.classify_learned.cache_clear()


def test_a_sure_profile_reading_does_not_overrule_a_system_owned_value_the_rules_read(monkeypatch):
    from stores.expiry import learned as fmem

    fake = _FakeFront({"We have four users on the Garden Pro tier.": ("profile", 0.7),
                       "We're a garden centre with four tills.": ("profile", 0.7),
                       "The tracking page still says 'on hold', I'm furious.": ("system_owned", 0.7)}, {})
    monkeypatch.setattr(fmem, "front_end", lambda: fake)
    fmem.classify_learned.cache_clear()
    tier = fmem.classify_learned("We have four users on the Garden Pro tier.", "customer")
    assert (tier.cls, tier.topics) == ("system_owned", (("plan_tier", ""),))
    assert tier.rule.startswith("system-owned: plan tier (learned memory_class=profile p=0.70") and "stands" in tier.rule
    # a profile the rules also read, or another class the head is sure of against the rules, is the head's
    assert fmem.classify_learned("We're a garden centre with four tills.", "customer").cls == "profile"
    assert fmem.classify_learned("The tracking page still says 'on hold', I'm furious.", "customer").cls == "system_owned"
    fmem.classify_learned.cache_clear()


def test_a_sure_head_overrules_a_class_the_rules_read_only_from_overrule_up(monkeypatch):
    from stores.expiry import learned as fmem
    from stores.expiry.classifier import classify

    refund = "The refund of 30 pounds has landed in my account."
    anger = "Third time this week the sync fails, this is unacceptable."
    email = "email's best for me, the phone app keeps crashing out in the field"
    fake = _FakeFront({refund: ("episodic", fmem.OVERRULE - 0.05), anger: ("incident", fmem.OVERRULE - 0.01),
                       email: ("preference", fmem.OVERRULE)},
                      {"my week is ruined now": ("sentiment", 0.3)})
    monkeypatch.setattr(fmem, "front_end", lambda: fake)
    fmem.classify_learned.cache_clear()
    landed = fmem.classify_learned(refund, "customer")
    assert (landed.cls, landed.topics) == ("system_owned", (("balance", ""),))
    assert landed.rule.startswith("system-owned: money landed (learned memory_class=episodic p=0.60")
    assert landed.rule.endswith("the rules' system_owned stands)")
    assert fmem.classify_learned(anger, "customer").rule.startswith("sentiment: anger words (learned memory_class=incident")
    # from OVERRULE up the head's class stands, and a best guess is not held to it
    assert classify(email, "customer").cls == "incident" and fmem.classify_learned(email, "customer").cls == "preference"
    assert fmem.classify_learned("my week is ruined now", "customer").cls == "sentiment"
    fmem.classify_learned.cache_clear()


def test_an_agents_words_are_never_guessed_to_be_the_customers_preference_or_profile(monkeypatch):
    from stores.expiry import learned as fmem

    fake = _FakeFront({"agent: Noted: texts only from now on.": ("preference", 0.7)},
                      {"agent: Do you want the file emailed to the manager?": ("preference", 0.3),
                       "agent: Which of your shops is that?": ("profile", 0.3),
                       "agent: Your plan renews in May.": ("system_owned", 0.3),
                       "Do you want the file emailed to the manager?": ("preference", 0.3)})
    monkeypatch.setattr(fmem, "front_end", lambda: fake)
    fmem.classify_learned.cache_clear()
    for text in ("Do you want the file emailed to the manager?", "Which of your shops is that?"):
        c = fmem.classify_learned(text, "agent")
        assert c.cls == "incident" and c.rule.startswith("incident: agent message (") and "rules)" in c.rule
    # a best guess of a class the agent's words can hold stands; so does a sure reading of any class
    assert fmem.classify_learned("Your plan renews in May.", "agent").rule.endswith("(best guess: the rules read nothing)")
    assert fmem.classify_learned("Noted: texts only from now on.", "agent").cls == "preference"
    # the customer's words may be guessed a preference
    assert fmem.classify_learned("Do you want the file emailed to the manager?", "customer").cls == "preference"
    fmem.classify_learned.cache_clear()


def test_expiry_params_pick_the_classifier():
    from stores.expiry.classifier import classify
    from stores.expiry.params import ExpiryParams
    from stores.expiry.learned import classifier, classify_learned

    assert classifier(ExpiryParams().classifier) is classify_learned  # the default
    assert classifier("rules") is classify  # the named variant


class _FakeOutcomes:
    def __init__(self, answers: dict[str, tuple[str | None, float]]):
        self.answers = answers
        self.heads = {"outcome": type("H", (), {"labels": ("failed", "none", "worked"), "default": "none"})()}

    def read(self, head, text):
        label, p = self.answers.get(text, ("none", 0.9))
        return Reading(head, label, p, 0.5)

    def read_all(self, heads, text):
        return {h: self.read(h, text) for h in heads}

    def proba(self, head, text):
        """The outcome head's probabilities behind `read`: the answer's label at its score, the rest shared."""
        label, p = self.answers.get(text, ("none", 0.9))
        labels = self.heads["outcome"].labels
        return {lab: p if lab == (label or "none") else (1 - p) / (len(labels) - 1) for lab in labels}


def _attempts(front, events):
    from stores.structured.extract import Extractor

    x = Extractor(front)
    for e in events:
        x.observe(e)
    return {m.text: m.outcome for m in x.memories("c1") if m.type == "ATTEMPT"}


def test_learned_outcomes_settle_steps_the_words_did_not(monkeypatch):
    from helpers import turn

    from stores.structured import learned as fx

    fake = _FakeOutcomes({"no dice": ("failed", 0.9), "oh great, that fixed nothing.": ("failed", 0.8),
                          "Cleared the cache, no joy.": ("failed", 0.7)})
    monkeypatch.setattr(fx, "front_end", lambda: fake)
    fx.learned_reading.cache_clear()
    crash = turn("t1", "The app crashes when I upload a PDF.", 0)
    suggest = turn("t2", "Please restart the app and try again.", 1, role="agent")
    for words in ("no dice", "oh great, that fixed nothing."):
        events = [crash, suggest, turn("t3", words, 2)]
        assert _attempts("rules", events) != {"Restart application": "failed"}, words  # the words alone miss it
        assert _attempts("learned", events) == {"Restart application": "failed"}, words
    # a step named in the sentence is settled by the learned mark at the sentence's end
    assert _attempts("learned", [crash, turn("t2", "Cleared the cache, no joy.", 1)]) == {"Cleared application cache": "failed"}
    # an outcome phrase elsewhere in the message keeps the learned head from adding one
    fake.answers["No errors in the last hour."] = ("failed", 0.9)
    both = [crash, suggest, turn("t3", "No errors in the last hour. Looks fixed, thanks.", 2)]
    assert _attempts("learned", both) == _attempts("rules", both) == {"Restart application": "worked"}
    fx.learned_reading.cache_clear()


def test_chat_outcomes_read_like_the_learned_ones_and_fall_back_saying_why(monkeypatch):
    """`structured:front=chat`: the endpoint reads each customer sentence's outcome in the learned
    head's place (same marks, same settling); no URL, an HTTP error or a label outside the head's
    labels, and the learned head reads, its reading saying why. Against a local fake server."""
    from helpers import turn

    from stores.frontend import chat
    from stores.structured import learned as fx
    from stores.structured.extract import Extractor

    monkeypatch.setattr(fx, "front_end", lambda: _FakeOutcomes({"no dice": ("failed", 0.9)}))
    fx.learned_reading.cache_clear()
    chat._FRONTS.clear()
    crash = turn("t1", "The app crashes when I upload a PDF.", 0)
    suggest = turn("t2", "Please restart the app and try again.", 1, role="agent")
    events = lambda words: [crash, suggest, turn("t3", words, 2)]  # noqa: E731

    def answer(body):
        text = body["messages"][1]["content"].rsplit("Message: ", 1)[1]
        if text == "server down":
            return 500, "{}"
        return 200, _content({"outcome": {"sorted, ta": "worked", "no dice": "failed"}.get(text, "maybe")})

    fake = _FakeChat(answer)
    try:
        monkeypatch.setenv("SUPPORTBENCH_REPLY_URL", fake.url)
        monkeypatch.setenv("SUPPORTBENCH_REPLY_MODEL", "m1")
        x = Extractor("chat")
        for e in events("sorted, ta"):
            x.observe(e)
        assert {m.text: m.outcome for m in x.memories("c1") if m.type == "ATTEMPT"} == {"Restart application": "worked"}
        assert x.readers["c1"]["t3"] == (("sorted, ta", "chat:m1 outcome=worked"),)
        assert "outcome: one of failed, none, worked" in fake.requests[-1]["body"]["messages"][1]["content"]
        assert _attempts("chat", events("no dice")) == {"Restart application": "failed"}
        for words, why in (("server down", "chat endpoint answered HTTP 500: learned"),
                           ("it is what it is", "chat label 'maybe' for outcome is not one of failed, none, worked: learned")):
            x = Extractor("chat")
            for e in events(words):
                x.observe(e)
            (said,) = x.readers["c1"]["t3"]
            assert said[1].startswith("learned outcome=none") and said[1].endswith(f"[{why}]"), said
        x.forget("c1")
        assert "c1" not in x.readers
    finally:
        fake.close()
        chat._FRONTS.clear()
    monkeypatch.delenv("SUPPORTBENCH_REPLY_URL")
    x = Extractor("chat")
    for e in events("no dice"):
        x.observe(e)
    assert {m.text: m.outcome for m in x.memories("c1") if m.type == "ATTEMPT"} == {"Restart application": "failed"}
    assert x.readers["c1"]["t3"][0][1].endswith("[SUPPORTBENCH_REPLY_URL is not set: learned]")
    fx.learned_reading.cache_clear()


def test_frontend_train_refuses_a_bad_bank_with_exit_2(tmp_path, capsys):
    from harness.cli import main

    (tmp_path / "bank.yaml").write_text("hostile:\n  \"yes\": [a]\n  \"no\": {b: c}\n", encoding="utf-8")
    assert main(["frontend", "train", "--bank", str(tmp_path)]) == 2
    err = capsys.readouterr()
    assert "bank.yaml:3: hostile.no: expected a list of phrases" in err.out + err.err
    assert "Traceback" not in err.out + err.err


class _FakeChat:
    """A local OpenAI-compatible server (127.0.0.1, a thread) answering each request with `answer(body)`."""

    def __init__(self, answer):
        import http.server
        import json as _json
        import threading

        self.requests: list[dict] = []
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802
                body = _json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests.append({"path": self.path, "auth": self.headers.get("Authorization"), "body": body})
                status, payload = answer(body)
                data = payload.encode() if isinstance(payload, str) else _json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *a):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


class _FakeLearned:
    """A learned front end stand-in: every head says its default (or the first label), sure."""

    def __init__(self):
        bank = load_bank()
        self.heads = {n: type("H", (), {"labels": tuple(sorted(h.labels)), "default": h.default})() for n, h in bank.items()}

    def read_all(self, heads, text):
        return {h: Reading(h, self.heads[h].default or self.heads[h].labels[0], 0.9, 0.5) for h in heads}


def _content(obj) -> dict:
    import json as _json

    return {"choices": [{"message": {"role": "assistant", "content": _json.dumps(obj)}}]}


def test_chat_front_end_reads_the_same_heads_and_falls_back_to_learned_saying_why():
    from stores.frontend.chat import ChatFront

    answers = {"is anyone real there": {"human_request": "yes", "hostile": "no", "sensitive": "none"},
               "bad label": {"human_request": "perhaps", "hostile": "no", "sensitive": "none"}}

    def answer(body):
        text = body["messages"][1]["content"].rsplit("Message: ", 1)[1]
        if text == "server error":
            return 500, "{}"
        if text == "not json":
            return 200, {"choices": [{"message": {"content": "I think they want a human."}}]}
        return 200, _content(answers.get(text, {}))

    fake = _FakeChat(answer)
    try:
        front = ChatFront(fake.url, model="m1", api_key="sk-test")
        learned = _FakeLearned()
        heads = ("human_request", "hostile", "sensitive")
        r = front.read_all(heads, "is anyone real there", learned)
        assert r["human_request"].label == "yes" and r["human_request"].describe().startswith("chat:m1 human_request=yes")
        req = fake.requests[0]
        assert req["path"] == "/v1/chat/completions" and req["auth"] == "Bearer sk-test"
        assert req["body"]["temperature"] == 0 and "human_request: one of no, yes" in req["body"]["messages"][1]["content"]
        front.read_all(heads, "is anyone real there", learned)
        assert len(fake.requests) == 1  # one question per text per process
        bad = front.read_all(heads, "bad label", learned)
        assert bad["human_request"].label == "no" and "not one of no, yes" in bad["human_request"].describe()
        assert bad["hostile"].source.startswith("chat")
        for text, why in (("server error", "HTTP 500"), ("not json", "not a JSON object")):
            r = front.read_all(heads, text, learned)
            assert all(x.source == "learned" and why in x.describe() for x in r.values()), text
        front.close()
    finally:
        fake.close()
    down = ChatFront(fake.url, model="m1").read_all(("hostile",), "anything", _FakeLearned())
    assert down["hostile"].source == "learned" and "no answer" in down["hostile"].describe()


def test_chat_front_end_is_off_unless_its_url_is_set(monkeypatch):
    from stores.frontend import chat

    monkeypatch.delenv("SUPPORTBENCH_REPLY_URL", raising=False)
    assert chat.chat_front() is None
    r = chat.chat_readings(("hostile",), "you lot are clowns", _FakeLearned())
    assert r["hostile"].source == "learned" and "SUPPORTBENCH_REPLY_URL is not set" in r["hostile"].describe()


def test_chat_front_end_never_lowers_the_safety_floor(monkeypatch):
    from stores.decisions import learned as fd

    monkeypatch.setattr(fd, "front_end", lambda: _FakeLearned())
    monkeypatch.setattr(fd, "chat_readings", lambda heads, text, learned: {
        h: Reading(h, "none" if h in ("sensitive", "intent") else "no", 1.0, 0.0, source="chat:m") for h in heads})
    monkeypatch.setattr(fd, "floor_reading", lambda front, text, answer=None, earlier=None: Reading("disclosure", "none", 0.9, 0.7))
    ctx, rules = _rules("I honestly want to die.")
    s = fd.read_signals(ctx, ProducerParams(front="chat"), rules)
    assert s.sensitive == "crisis"
    monkeypatch.setattr(fd, "floor_reading", lambda front, text, answer=None, earlier=None: Reading("disclosure", "harm", 0.6, 0.3))
    ctx, rules = _rules("he watches everything I buy")
    s = fd.read_signals(ctx, ProducerParams(front="chat"), rules)
    assert s.sensitive == "harm" and "more severe than chat:m sensitive=none" in dict(s.readers)["sensitive"]
    ctx, rules = _rules("you lot are clowns")
    assert not fd.read_signals(ctx, ProducerParams(front="chat"), rules).hostile  # the chat's no, sure


def test_chat_front_end_classifies_memory_and_falls_back_to_learned(monkeypatch):
    from stores.expiry.classifier import classify
    from stores.expiry import learned as fmem

    fake = _FakeChat(lambda body: (200, _content({"memory_class": "preference"})))
    try:
        monkeypatch.setenv("SUPPORTBENCH_REPLY_URL", fake.url)
        monkeypatch.setenv("SUPPORTBENCH_REPLY_MODEL", "m2")
        monkeypatch.setattr(fmem, "front_end", lambda: _FakeLearned())
        monkeypatch.setattr(fmem, "classify_learned", lambda text, role, kind="message": classify(text, role, kind))
        fmem.classify_chat.cache_clear()
        c = fmem.classify_chat("mornings are hopeless, text me", "customer")
        assert c.cls == "preference" and c.rule == "chat:m2 memory_class=preference" and ("contact_channel", "sms") in c.topics
        assert fmem.classify_chat("Fixed by a new token.", "resolution").cls == "incident"  # records stay the rules'
    finally:
        fake.close()
    monkeypatch.delenv("SUPPORTBENCH_REPLY_URL")
    fmem.classify_chat.cache_clear()
    c = fmem.classify_chat("mornings are hopeless, text me", "customer")
    assert "SUPPORTBENCH_REPLY_URL is not set" in c.rule
    fmem.classify_chat.cache_clear()


@pytest.mark.slow
def test_learned_decisions_keep_every_canonical_verdict_end_to_end(tmp_path):
    """`session_state` as it comes (the learned front end is the default) on the canonical decision
    scenarios: every plan and route as the gold says (the canonical figures are not worse than the
    rules'), and each signal's reader is in the run's decisions table (the rules name none)."""
    import glob
    import json as _json

    import duckdb

    from harness.cli import main

    files = sorted(glob.glob("datasets/canonical/decision-*.yaml"))
    assert main(["run", *files, "-s", "empty", "-p", "session_state",
                 "--out", str(tmp_path), "--run-id", "fe", "--quiet"]) == 0
    rows = duckdb.sql(f"select turn_id, correct, gold_route, route, signals from read_parquet('{tmp_path}/fe/decisions/*.parquet') "
                      "where decision_case").fetchall()
    assert len(rows) == 51
    wrong = [(t, ok, gr, r) for t, ok, gr, r, _ in rows if not ok or (gr is not None and gr != r)]
    assert not wrong
    readers = _json.loads(rows[0][4])["readers"]
    assert {"sensitive", "hostile", "time_critical"} <= set(readers)


def test_a_bare_negation_is_a_complaint_only_when_the_head_is_not_sure_otherwise():
    """ "it's not for me" names no problem: a complaint read from a negation alone is the head's when sure."""
    params = ProducerParams(front="learned")
    ctx, rules = _rules("I'd like to close my membership, it's not for me.")
    s = combine(ctx, params, rules, _readings(complaint=("no", 0.9)))
    assert not s.complaint and "learned complaint=no" in dict(s.readers)["complaint"]
    assert not combine(ctx, params, rules, _readings(complaint=(None, 0.5))).complaint  # leaving: no complaint
    ctx, rules = _rules("the blue one is not for me, have you got it in green?")
    assert combine(ctx, params, rules, _readings(complaint=(None, 0.5))).complaint  # unsure: the rules' yes
    ctx, rules = _rules("the app is not loading and keeps crashing")
    assert combine(ctx, params, rules, _readings(complaint=("no", 0.9))).complaint  # a problem word stands


def test_human_resources_is_not_a_request_for_a_human():
    from stores.decisions.signals import produce_rules as pr

    assert not pr(TurnContext("The Human Resources add-on keeps logging me out.")).human_request
    assert pr(TurnContext("can I talk to a human please")).human_request


def test_floor_words_for_indirect_fraud_and_farewells():
    assert floor_severity("a purchase neither me nor my wife made") == "harm"
    assert floor_severity("I won't be around much longer anyway") == "crisis"
    # "end it" is a cancellation when the message names what is ended; "end it all" is a crisis whatever is named
    assert floor_severity("I'm done with this subscription, what do I need to do to end it") == "none"
    assert floor_severity("I just want to end it") == "crisis"
    assert floor_severity("close the account, I'm going to end it all") == "crisis"
    # value taken from the account with "that isn't me"
    assert floor_severity("my points were cashed in for vouchers sent to a stranger. that isn't me") == "harm"
    assert floor_severity("the points went to my other email, that is me") == "none"
    assert floor_severity("I won't be around on monday for the delivery") == "none"
    # money sent to a payee the customer never set up (seventh round); setting one up is routine
    assert floor_severity("3,200 went out to a payee called 'KB Trading' that I never set up") == "harm"
    assert floor_severity("there's a direct debit to a gym on my statement that we didn't authorise") == "harm"
    assert floor_severity("how do I set up a new payee for my landlord") == "none"
    assert floor_severity("I never set up two-factor, should I?") == "none"
    # seventh round: a pass or a bundle is something a customer ends; a solicitor who asks something is no threat;
    # dying of embarrassment is an idiom (the rules' words), wanting to die is not
    assert floor_severity("the gym pass is no good to me now. how do I end it?") == "none"
    assert floor_severity("our solicitor asked whether the photo storage can pass to the kids") == "none"
    assert floor_severity("my solicitor will be in touch about this") == "harm"
    assert sensitivity("I literally want to die of embarrassment, wrong card sent 😂") == "none"
    assert sensitivity("I just want to die") == "crisis"


def test_a_learned_time_critical_yes_needs_a_time_named():
    params = ProducerParams(front="learned")
    ctx, rules = _rules("the export keeps coming out empty")
    s = combine(ctx, params, rules, _readings(time_critical=("yes", 0.7)))
    assert not s.time_critical and "no time is named" in dict(s.readers)["time_critical"]
    ctx, rules = _rules("payroll goes to the bank by 5 and the export fails")
    assert combine(ctx, params, rules, _readings(time_critical=("yes", 0.7))).time_critical


def test_every_disclosure_of_the_bank_has_one_kind():
    from stores.frontend.bank import load_kinds

    kinds = load_kinds()
    assert set(kinds) == {"self_harm", "abuse", "fraud", "legal", "minor", "violence"}
    bank = load_bank()["sensitive"]
    assert sum(map(len, kinds.values())) == sum(label in ("crisis", "harm") for label in bank.targets)
    crisis = {t for t, label in zip(bank.texts, bank.targets) if label == "crisis"}
    assert set(kinds["self_harm"]) == crisis


def test_kinds_that_miss_a_disclosure_or_name_another_phrase_are_refused(tmp_path):
    from stores.frontend.bank import load_kinds

    (tmp_path / "bank").mkdir()
    (tmp_path / "bank" / "b.yaml").write_text(yaml.safe_dump({"sensitive": {
        "crisis": ["I want it all to stop"], "harm": ["someone used my card"], "none": ["hello"]}}))
    ok, short, other = (tmp_path / n for n in ("ok", "short", "other"))
    for folder, kinds in ((ok, {"self_harm": ["I want it all to stop"], "fraud": ["someone used my card"]}),
                          (short, {"self_harm": ["I want it all to stop"]}),
                          (other, {"self_harm": ["I want it all to stop"], "fraud": ["someone used my card", "hello"]})):
        folder.mkdir()
        (folder / "k.yaml").write_text(yaml.safe_dump({"sensitive": kinds}))
    assert load_kinds(str(tmp_path / "bank"), str(ok))["fraud"] == ("someone used my card",)
    with pytest.raises(BankError, match="1 disclosures of the bank have no kind"):
        load_kinds(str(tmp_path / "bank"), str(short))
    with pytest.raises(BankError, match="'hello' is not a disclosure"):
        load_kinds(str(tmp_path / "bank"), str(other))


def test_a_kind_held_out_is_scored_by_a_head_that_saw_none_of_it():
    rng = np.random.default_rng(0)
    from helpers import kinds_far_apart

    texts, targets, rows = kinds_far_apart(rng)
    hb = HeadBank("sensitive", ("none", "crisis", "harm", "near_miss"), "none", tuple(texts), tuple(targets))
    kinds = {"self_harm": tuple(t for t in texts if t.startswith("crisis")), "fraud": tuple(t for t in texts if t.startswith("harm"))}
    v = fm.kind_validation(hb, np.stack(rows), kinds, threshold=0.5)
    for kind in kinds:  # seen in the phrase folds, every phrase is read; never seen, none is
        assert v["kinds"][kind]["recall_phrase_folds"] == 1.0 and v["kinds"][kind]["recall_kind_held_out"] == 0.0
    caught = np.array([t == "harm 0" for t in texts])
    assert fm.kind_validation(hb, np.stack(rows), kinds, caught, 0.5)["kinds"]["fraud"]["recall_kind_held_out"] == round(1 / 12, 3)  # the words' one


def test_floor_words_for_a_step_that_cannot_be_undone_and_belongings_given_away():
    assert floor_severity("want the refund back to my dad before I do something I can't take back") == "crisis"
    assert floor_severity("my nephew can have all my things after this month") == "crisis"
    assert floor_severity("I did something I can't undo in the settings, help") == "none"  # done, not about to
    assert floor_severity("my son can have all my old games") == "none"

"""bench/memory_classes.py scores a suite as the `expiry_classes` criterion does, and lists the turns a change moves."""

import csv

from bench import memory_classes as mc


def test_a_suites_figure_is_the_criterions_pooled_over_its_scenarios():
    from harness.criteria.expiry import expiry_classes, labelled_turns
    from harness.format.loader import load_suite
    from stores.expiry.classifier import classify

    correct = judged = 0
    for scenario in load_suite([mc.ROOT / "datasets" / "challenge_holdout2"]):
        if not labelled_turns(scenario):  # the criterion applies to scenarios with labelled turns only
            continue
        classes = {t.id: classify(t.text, t.role, t.kind) for t in scenario.turns}
        score = expiry_classes(scenario, [], {"memory_classes": classes})
        correct, judged = correct + score.meta["correct"], judged + score.meta["judged"]
    rows = [r for r in mc.read_suite("holdout2", "rules") if r["labels"]]
    assert len(rows) == judged > 0
    assert sum(r["cls"] in r["labels"] for r in rows) == correct


def test_the_reader_is_named_from_the_receipts_rule():
    assert mc.reader("learned memory_class=profile p=0.29 (best guess: the rules read nothing)") == "best guess"
    assert mc.reader("learned memory_class=preference p=0.83 (threshold 0.50)") == "learned"
    assert mc.reader("incident: problem report (learned unsure on memory_class (p=0.20): rules)") == "rules"


def test_against_an_earlier_dump_lists_the_turns_whose_class_moved(tmp_path, capsys):
    before = tmp_path / "before.tsv"
    mc.main(["--suite", "challenge", "--classifier", "rules", "--dump", str(before)])
    rows = list(csv.reader(before.open(encoding="utf-8"), delimiter="\t"))
    rows[3][5] = "sentiment" if rows[3][5] != "sentiment" else "profile"  # as if a change had moved that turn
    with before.open("w", newline="", encoding="utf-8") as f:
        csv.writer(f, delimiter="\t").writerows(rows)
    capsys.readouterr()
    mc.main(["--suite", "challenge", "--classifier", "rules", "--against", str(before)])
    out = capsys.readouterr().out
    assert "1 turns changed class against before.tsv" in out
    assert f"- challenge {rows[3][2]} " in out


def test_every_suite_of_datasets_is_development_text_or_held_out_and_never_both():
    from bench.suites import HELD_OUT

    folders = {p.name for p in (mc.ROOT / "datasets").iterdir() if p.name == "canonical" or p.name.startswith("challenge")}
    assert set(mc.SUITES.values()) | set(HELD_OUT) == folders
    assert not set(mc.SUITES.values()) & set(HELD_OUT)


def test_the_heads_own_figure_counts_its_top_class_on_labelled_turns_and_on_those_the_rules_read_nothing_in(monkeypatch):
    from stores.expiry.classifier import classify
    from stores.expiry.learned import CATCH_ALL
    from stores.frontend import model
    from stores.frontend.model import Reading

    rows = [r for r in mc.read_suite("holdout2", "rules") if r["labels"] and r["kind"] != "action"]
    open_ = [r for r in rows if classify(r["text"], r["role"], r["kind"]).rule in CATCH_ALL]
    assert open_ and len(open_) < len(rows)
    right = {rows[0]["text"], open_[0]["text"]}  # the head is right on these two and wrong on every other

    class Fake:
        def top(self, head, text):
            said = text.removeprefix("agent: ")
            label = next(r["labels"][0] for r in rows if r["text"] == said) if said in right else "unclassified"
            return Reading(head, label, 0.3, 0.0)

    monkeypatch.setattr(model, "front_end", lambda: Fake())
    a, n, ao, no = mc.head_alone(mc.read_suite("holdout2", "rules"))
    assert (n, no) == (len(rows), len(open_))
    assert (a, ao) == (sum(r["text"] in right for r in rows), sum(r["text"] in right for r in open_)) and ao >= 1

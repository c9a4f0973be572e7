"""`supportbench import locomo` on small files written here in LoCoMo's layouts (its data is
non-commercial and never committed): both layouts and the zip give the same suite, the suite
validates, and bad input is one error naming the file and where, with nothing written."""

import json
import zipfile

import pytest

from harness.cli import main
from harness.format.loader import load_suite

TURNS_1 = [
    {"speaker": "Ana", "dia_id": "D1:1", "text": "I adopted a cat named Miso last week."},
    {"speaker": "Ben", "dia_id": "D1:2", "text": "Lovely! What colour is she?",
     "img_url": ["http://example.invalid/x.jpg"], "blip_caption": "a photo of a grey cat on a sofa"},
    {"speaker": "Ana", "dia_id": "D1:3", "text": "Grey, like a storm cloud."},
]
TURNS_2 = [
    {"speaker": "Ben", "dia_id": "D2:1", "text": "How is Miso doing?"},
    {"speaker": "Ana", "dia_id": "D2:2", "text": "She learned to open the fridge, and I started pottery classes."},
]
QA = [
    {"question": "What is the name of Ana's cat?", "answer": "Miso", "evidence": ["D1:1"], "category": 4},
    {"question": "When did Ana adopt her cat?", "answer": "the week before 8 May 2023", "evidence": ["D1:1"], "category": 2},
    {"question": "What did Ana's cat learn and what class did Ana start?", "answer": "open the fridge; pottery",
     "evidence": ["D2:2; D1:3"], "category": 1},
    {"question": "What did Ben adopt?", "adversarial_answer": "a dog", "evidence": ["D1:1"], "category": 5},
    {"question": "Where does Ana live?", "answer": "?", "evidence": ["D9:9"], "category": 3},
]


def conversation() -> dict:
    return {
        "speaker_a": "Ana", "speaker_b": "Ben",
        "session_1_date_time": "1:56 pm on 8 May, 2023", "session_1": TURNS_1,
        "session_2_date_time": "10:05 am on 3 June, 2023", "session_2": TURNS_2,
        "session_3_date_time": "9:00 am on 1 July, 2023",  # a date without a session, as in the release
    }


def v2_file(path, cid="26", **changes):
    doc = {**conversation(), "events_session_1": {"Ana": ["adopts a cat"], "date": "8 May, 2023"}, "qa": QA, **changes}
    path.mkdir(parents=True, exist_ok=True)
    (path / f"{cid}.json").write_text(json.dumps(doc), encoding="utf-8")
    return path / f"{cid}.json"


def test_all_three_layouts_give_the_same_valid_suite(tmp_path, capsys):
    folder = tmp_path / "locomo10_v2"
    v2_file(folder, "26")
    v2_file(folder, "30")
    single = tmp_path / "locomo10.json"
    single.write_text(json.dumps([{"sample_id": f"conv-{c}", "conversation": conversation(), "qa": QA} for c in ("26", "30")]))
    zipped = tmp_path / "locomo10.zip"
    with zipfile.ZipFile(zipped, "w") as zf:
        for c in ("26", "30"):
            zf.write(folder / f"{c}.json", f"data/multimodal_dialog/locomo10_v2/{c}.json")

    texts = {}
    for name, src in (("folder", folder), ("single", single), ("zip", zipped)):
        out = tmp_path / f"out-{name}"
        assert main(["import", "locomo", str(src), "--out", str(out)]) == 0
        err = capsys.readouterr().err
        assert "wrote 2 scenario(s) (10 turns, 6 probes)" in err
        assert "2 category 5 (adversarial) not asked for" in err
        assert "conv-26 qa[4]" in err and "D9:9 names no turn" in err  # reported with its index
        assert main(["validate", str(out)]) == 0
        texts[name] = sorted(p.read_text().split("\ntags:")[1] for p in out.iterdir())  # the source name differs
    assert texts["folder"] == texts["zip"] == texts["single"]


def test_the_mapping(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["import", "locomo", str(v2_file(tmp_path / "in")), "--out", str(out)]) == 0
    (sc,) = load_suite([str(out)])
    text = (out / "locomo-conv-26.yaml").read_text()
    assert "# session_1: 1:56 pm on 8 May, 2023" in text  # the date as written
    turns = {t.id: t for t in sc.turns}
    assert list(turns) == ["D1:1", "D1:2", "D1:3", "D2:1", "D2:2"]  # turn ids are the dialog ids
    assert turns["D1:1"].role == "customer" and turns["D1:1"].text.startswith("Ana: ")
    assert turns["D1:2"].role == "agent" and turns["D1:2"].text == (
        "Ben: Lovely! What colour is she? [shares a photo of a grey cat on a sofa]")
    assert turns["D1:1"].at.isoformat() == "2023-05-08T13:56:00+00:00"
    assert turns["D2:1"].at.isoformat() == "2023-06-03T10:05:00+00:00"
    probes = {p.id: p for p in sc.probes}
    assert list(probes) == ["qa-0", "qa-1", "qa-2"]
    assert probes["qa-2"].expect.include == ("D2:2", "D1:3")  # "D2:2; D1:3" is two ids
    assert probes["qa-2"].tags == ("cat1-multi-hop",) and probes["qa-1"].tags == ("cat2-temporal",)
    assert all(p.session == "questions" and p.at > turns["D2:2"].at and p.budget == 550 for p in probes.values())
    assert probes["qa-0"].task == "What is the name of Ana's cat?"


def test_categories_and_budget_options(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["import", "locomo", str(v2_file(tmp_path / "in")), "--out", str(out), "--categories", "5,4",
                 "--budget", "10"]) == 0
    (sc,) = load_suite([str(out)])
    assert [p.id for p in sc.probes] == ["qa-0", "qa-3"]
    # 10 tokens cannot hold one line: each budget is raised to what its evidence needs, and said
    assert all(p.budget > 10 for p in sc.probes)
    assert "2 probe budget(s) raised to fit their gold" in capsys.readouterr().err


@pytest.mark.parametrize("write, where, expected", [
    (lambda p: p.write_text('[{"sample_id": "conv-1",\n "conversation": {,}}]'), "locomo10.json:2:", "not valid JSON"),
    (lambda p: p.write_text('[{"sample_id": "conv-1", "qa": []}]'), "locomo10.json:[0]", "no 'conversation'"),
    (lambda p: p.write_text(json.dumps([{"conversation": {**conversation(), "session_1_date_time": "yesterday"}, "qa": QA}])),
     "locomo10.json:[0]: session_1_date_time" if False else "session_1_date_time", "'yesterday' is not a session time"),
    (lambda p: p.write_text(json.dumps([{"conversation": {**conversation(), "session_2": [{"speaker": "Cy", "dia_id": "D2:1", "text": "hi"}]},
                                         "qa": QA}])), "session_2[0].speaker", "'Cy' is neither speaker_a"),
    (lambda p: p.write_text(json.dumps([{"conversation": conversation(), "qa": [{"question": "q", "evidence": ["D1:1"]}]}])),
     "qa[0].category", "expected a category number"),
    (lambda p: p.write_text(json.dumps({"hello": 1})), "locomo10.json", "not a LoCoMo file"),
])
def test_bad_input_is_one_error_with_file_and_place_and_nothing_written(tmp_path, capsys, write, where, expected):
    src = tmp_path / "locomo10.json"
    write(src)
    out = tmp_path / "out"
    assert main(["import", "locomo", str(src), "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and where in err and expected in err, err
    assert not out.exists() and [p.name for p in tmp_path.iterdir()] == ["locomo10.json"]


def test_a_non_empty_out_is_refused_unless_forced(tmp_path, capsys):
    src = v2_file(tmp_path / "in")
    out = tmp_path / "out"
    out.mkdir()
    (out / "mine.yaml").write_text("labelled by hand")
    assert main(["import", "locomo", str(src), "--out", str(out)]) == 2
    assert "not empty" in capsys.readouterr().err and (out / "mine.yaml").exists()
    assert main(["import", "locomo", str(src), "--out", str(out), "--force"]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["locomo-conv-26.yaml"]


def test_bad_options_are_exit_2(tmp_path, capsys):
    src = v2_file(tmp_path / "in")
    assert main(["import", "locomo", str(src), "--out", str(tmp_path / "o"), "--categories", "1,x"]) == 2
    assert main(["import", "locomo", str(src), "--out", str(tmp_path / "o"), "--categories", "6"]) == 2
    assert main(["import", "locomo", str(tmp_path / "missing"), "--out", str(tmp_path / "o")]) == 2
    assert "no such file" in capsys.readouterr().err

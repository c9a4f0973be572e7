"""`supportbench import chats`: a support desk's export (CSV or JSONL) through the shipped maps or a
map of one's own; conversations become sessions of their customer; unlabelled probes where a
customer comes back; every bad row reported with its row number and nothing written."""

import json

import pytest

from harness.cli import main
from harness.format.loader import load_suite

PLAIN = """conversation_id,customer_id,created_at,role,text
c1,cust-1,2024-03-01T09:00:00Z,customer,"My invoice shows a double charge,
order 5531."
c1,cust-1,2024-03-01T09:02:00Z,agent,I refunded the duplicate charge.
c2,cust-2,2024-03-02T10:00:00Z,customer,The app crashes when I upload a PDF.
c3,cust-1,2024-03-10T08:00:00Z,agent,"Hi Dana, following up on your refund."
c3,cust-1,2024-03-10T08:05:00Z,customer,The double charge is back on this month's invoice.
c4,cust-1,2024-02-01T08:05:00Z,customer,Can I get a receipt?
"""


def run_import(tmp_path, name, text, *extra):
    src = tmp_path / name
    src.write_text(text, encoding="utf-8")
    out = tmp_path / "out"
    return main(["import", "chats", str(src), "--out", str(out), *extra]), out


def test_a_plain_csv_becomes_one_scenario_per_customer_with_unlabelled_probes(tmp_path, capsys):
    code, out = run_import(tmp_path, "export.csv", PLAIN)
    assert code == 0
    err = capsys.readouterr().err
    assert "map: plain" in err and "wrote 2 scenario(s) (6 turns, 2 probes)" in err
    by = {s.id: s for s in load_suite([str(out)])}
    dana = by["chats-cust-1"]
    # conversations in time order (c4 is the oldest), a session each, the text of a multi-line cell kept
    assert [(t.session, t.role) for t in dana.turns] == [("c4", "customer"), ("c1", "customer"), ("c1", "agent"),
                                                          ("c3", "agent"), ("c3", "customer")]
    assert dana.turns[1].text == "My invoice shows a double charge, order 5531."
    probes = {p.id: p for p in dana.probes}
    assert set(probes) == {"back-c1", "back-c3"}  # each later conversation, at the customer's first message
    assert probes["back-c3"].on == "c3#2" and probes["back-c3"].unlabelled and probes["back-c3"].tags == ("returning",)
    assert not by["chats-cust-2"].probes  # one conversation: nothing to remember yet
    text = (out / "chats-cust-1.yaml").read_text()
    assert "# row 7: cust-1 comes back (conversation c3)" in text  # the row the message came from


def test_unlabelled_probes_run_and_are_in_no_score(tmp_path, capsys):
    code, out = run_import(tmp_path, "export.csv", PLAIN)
    runs = tmp_path / "runs"
    assert main(["run", str(out), "--strategies", "tfidf", "--out", str(runs), "--run-id", "r", "--quiet"]) == 0
    from harness.analysis.results import Results

    with Results(runs / "r") as res:
        assert res.rows("SELECT count(*) FROM probes") == [(2,)]
        assert res.rows("SELECT count(*) FROM scores WHERE probe_id <> ''") == [(0,)]


INTERCOM = [
    {"conversation_id": "9001", "contact_id": "u-7", "created_at": 1709283600, "author": {"type": "user"},
     "body": "<p>My export&nbsp;fails</p><p>every night</p>"},
    {"conversation_id": "9001", "contact_id": "u-7", "created_at": 1709283700, "author": {"type": "admin"},
     "body": "<p>Split it into monthly files.</p>"},
    {"conversation_id": "9002", "contact_id": "u-7", "created_at": 1709888400, "author": {"type": "user"},
     "body": "It fails again."},
]


def test_an_intercom_jsonl_export_is_detected_and_mapped(tmp_path, capsys):
    code, out = run_import(tmp_path, "parts.jsonl", "\n".join(json.dumps(r) for r in INTERCOM) + "\n")
    assert code == 0 and "map: intercom" in capsys.readouterr().err
    (sc,) = load_suite([str(out)])
    assert sc.turns[0].text == "My export fails every night" and sc.turns[1].role == "agent"
    assert sc.turns[0].at.isoformat() == "2024-03-01T09:00:00+00:00"
    assert [p.on for p in sc.probes] == ["9002#1"]


def test_a_zendesk_export_says_the_customer_by_author_id(tmp_path, capsys):
    rows = ("ticket_id,requester_id,created_at,author_id,plain_body\n"
            "501,88,2024-01-05 10:00:00,88,Password reset mail never arrives\n"
            "501,88,2024-01-05 10:30:00,3,Whitelisted our sender; try again\n"
            "533,88,2024-02-01 09:00:00,88,Reset mail missing again\n")
    code, out = run_import(tmp_path, "comments.csv", rows)
    assert code == 0 and "map: zendesk" in capsys.readouterr().err
    (sc,) = load_suite([str(out)])
    assert [t.role for t in sc.turns] == ["customer", "agent", "customer"]
    assert [p.on for p in sc.probes] == ["533#1"]


def test_a_map_of_ones_own(tmp_path, capsys):
    m = tmp_path / "desk.toml"
    m.write_text('[columns]\nconversation = "thread"\ncustomer = "who"\ntime = "when"\nrole = "from"\ntext = "msg"\n'
                 '[roles]\ncustomer = ["C"]\nagent = ["A"]\n[time]\nformat = "%d/%m/%Y %H:%M"\n')
    code, out = run_import(tmp_path, "desk.csv", "thread;who;when;from;msg\nt1;x;01/03/2024 09:00;C;hello\n"
                                                 "t2;x;02/03/2024 09:00;C;back again\n", "--map", str(m))
    assert code == 0
    (sc,) = load_suite([str(out)])
    assert [t.session for t in sc.turns] == ["t1", "t2"] and sc.turns[1].at.day == 2


def test_every_bad_row_is_reported_with_its_row_number_and_nothing_written(tmp_path, capsys):
    bad = PLAIN.replace("2024-03-01T09:02:00Z,agent", "yesterday,agent").replace(",customer,The app", ",robot,The app")
    code, out = run_import(tmp_path, "export.csv", bad)
    assert code == 2
    err = capsys.readouterr().err
    assert "export.csv:row 4: created_at 'yesterday' is not an ISO 8601 time" in err
    assert "export.csv:row 5: role 'robot' is neither a customer role" in err
    assert "2 bad row(s); nothing was written" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["export.csv"]


@pytest.mark.parametrize("name, text, expected", [
    ("x.csv", "a,b\n1,2\n", "no shipped map fits the columns a, b"),
    ("x.jsonl", '{"conversation_id": "c", "customer_id": "u", "created_at": "2024-01-01T00:00:00Z", "role": "user", '
                '"text": "hi"}\nnot json\n', "x.jsonl:line 2: not valid JSON"),
    ("x.csv", "conversation_id,customer_id,created_at,role,text\nc1,u,2024-01-01T00:00:00Z,customer\n",
     "x.csv:row 2: 4 fields where the header has 5"),
])
def test_bad_files_are_one_clear_error(tmp_path, capsys, name, text, expected):
    code, out = run_import(tmp_path, name, text)
    assert code == 2 and expected in capsys.readouterr().err
    assert not out.exists()


def test_a_bad_map_names_its_file(tmp_path, capsys):
    m = tmp_path / "m.toml"
    m.write_text('[columns]\nconversation = "a"\n')
    code, _ = run_import(tmp_path, "x.csv", "a,b\n1,2\n", "--map", str(m))
    assert code == 2 and "m.toml:columns.customer" in capsys.readouterr().err

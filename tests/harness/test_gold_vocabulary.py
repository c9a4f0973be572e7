"""One declaration of the gold vocabulary: every gold key lives in the file format's models, and
what the rest of the project needs (the runtime type, the run tables' JSON, the app's marks) is
derived from it, so no other source file names a key."""

from __future__ import annotations

import dataclasses
import io
import re
import tokenize
from pathlib import Path

import pandas as pd
import pytest

from harness.analysis.queries import gold_check, gold_marks
from harness.format.gold import Gold, declared, empty
from harness.format.model import Expect, TextNeedle, TurnGold
from harness.format.schema import ExpectModel, TurnEvent

KEYS = tuple(k for k, _ in declared(ExpectModel))
"""Every gold key of a probe's `expect`, as declared."""

SCANNED = ("harness", "stores", "pages", "app.py")

ALLOWED = {
    "harness/format/gold.py": "how a key is declared and derived",
    "harness/format/schema.py": "the declaration itself",
    "harness/format/checks.py": "the keys' semantic checks (rules between keys are explicit)",
    "harness/criteria/": "the criteria that read the keys",
    "stores/controls.py": "the oracle, built from the gold",
    "harness/generate/": "the generator, which writes gold",
    "harness/importers/": "the importers, which write the gold outside data sets carry",
}
"""Files (or folders, ending in /) that may name a gold key, and why."""

PENDING: dict[str, str] = {}
"""Files that still name a gold key, with where that use is going. A file listed here that no
longer names one fails the test: take it off the list."""

HOMONYMS = {
    "health": "also the health capability, the health table and page, and a strategy's health() report",
    "evidence": "also the evidence of every score (the scores table's column, Score.evidence)",
    "memories": "also the memories capability (a typed-memory strategy's memories(subject)), the memories a probe "
                "outcome and the probes table carry, and the reply engine's memories in the context",
    "known_fixes": "also a field of the reply engine's SupportReply (the seed's reply metadata)",
    "known_failures": "also a field of the reply engine's SupportReply (the seed's reply metadata)",
    "identity": "also an HTTP content coding (`Accept-Encoding: identity`, asked of every remote service)",
}
"""Keys that are also ordinary words of the code: only their gold uses count (a JSON path into
the `expect` column, or a read of an `expect`/`gold` value)."""


def _gold_reads(key: str) -> re.Pattern:
    return re.compile(rf"\b(?:expect|gold)\w*\s*(?:\.\s*{key}\b|\[\s*['\"]{key}['\"]|\.get\(\s*['\"]{key}['\"])")


def gold_keys_named(source: str, keys=KEYS) -> list[tuple[str, int]]:
    """(key, line) of every place `source` names a gold key: as a name, an attribute, a keyword
    or a string equal to it, or a JSON path (`$.key`) inside a string; for a homonym, only a
    JSON path or a read of an expect/gold value."""
    found: list[tuple[str, int]] = []
    plain = set(keys) - set(HOMONYMS)
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.NAME and tok.string in plain:
            found.append((tok.string, tok.start[0]))
        elif tok.type == tokenize.STRING:
            body = tok.string
            for key in keys:
                if re.search(rf"\$\.{key}\b", body) or (key in plain and re.fullmatch(rf"[rbuRBUfF]*(['\"]){key}\1", body)):
                    found.append((key, tok.start[0]))
    for key in set(keys) & set(HOMONYMS):
        for m in _gold_reads(key).finditer(source):
            found.append((key, source.count("\n", 0, m.start()) + 1))
    return sorted(set(found), key=lambda x: (x[1], x[0]))


def _allowed(path: str) -> bool:
    return any(path == a or (a.endswith("/") and path.startswith(a)) for a in ALLOWED)


def _sources() -> list[Path]:
    out: list[Path] = []
    for top in SCANNED:
        p = Path(top)
        out += sorted(p.rglob("*.py")) if p.is_dir() else [p]
    return out


def test_no_source_file_outside_the_declaration_checks_criteria_oracle_and_generator_names_a_gold_key():
    offenders, still_pending = [], set()
    for path in _sources():
        rel = path.as_posix()
        if _allowed(rel):
            continue
        hits = gold_keys_named(path.read_text(encoding="utf-8"))
        if rel in PENDING:
            if hits:
                still_pending.add(rel)
            continue
        offenders += [f"{rel}:{line} names gold key '{key}'" for key, line in hits]
    assert offenders == [], "derive it from harness.format.gold instead:\n" + "\n".join(offenders)
    assert still_pending == set(PENDING), f"no longer names a gold key, take it off PENDING: {set(PENDING) - still_pending}"


def test_the_scan_finds_every_form_of_naming_a_key_and_ignores_homonyms():
    planted = "\n".join([
        "x = o.probe.expect.not_repeat_of",
        'd.get("fix_before")',
        "sql = \"SELECT json_extract(e.expect, '$.repeat_of') FROM events\"",
        "if probe.expect.health is not None: pass",
        'ev = expect.get("evidence")',
        "Expect(superseded=())",
    ])
    assert [k for k, _ in gold_keys_named(planted)] == ["not_repeat_of", "fix_before", "repeat_of", "health", "evidence",
                                                        "superseded"]
    clean = "\n".join([
        "r = strategy.health(subject, now)",
        'caps = frozenset({"health"})',
        "pages = s.evidence",
        "# a comment about not_repeat_of",
        '"""a docstring about `fix_before`"""',
    ])
    assert gold_keys_named(clean) == []


def test_every_gold_key_declares_its_reference_polarity_name_and_doc():
    for model in (ExpectModel, TurnEvent):
        for key, g in declared(model):
            assert isinstance(g, Gold) and g.name(key)
            assert model.model_fields[key].description, f"{key} has no docstring"
    assert KEYS[:11] == ("include", "exclude", "identity", "preferences", "superseded", "above", "repeat_of",
                         "evidence", "not_repeat_of", "fix_before", "health")  # the order of the format


SAMPLE_BY_REF = {
    "ids": ["a-1", "b-2"], "needles": ["a-1", {"text": "connect_timeout"}], "pairs": [["a-1", "b-2"]],
    "session": "s1", "sessions": ["s2", "s3"], "history": ["s4"], "band": "watch", "bool": False,
    "records": [{"type": "ATTEMPT", "text": "restart", "outcome": "failed"}, {"type": "PROFILE", "text": "pdf"}],
    "classes": ["profile", "sentiment"], "choice": "transfer",
}


def every_key_set() -> dict:
    return {k: SAMPLE_BY_REF[g.ref] for k, g in declared(ExpectModel)}


def test_every_key_round_trips_through_the_runs_json():
    data = every_key_set()
    e = Expect.from_data(data)
    assert e.to_data() == data
    assert Expect.from_json(e.to_json()) == e
    assert Expect.from_json(None) == Expect() and Expect().to_json() == "{}"


def test_the_runtime_expect_is_frozen_and_hashable():
    e = Expect.from_data(every_key_set())
    assert hash(e) == hash(Expect.from_data(every_key_set()))
    with pytest.raises(dataclasses.FrozenInstanceError):
        e.include = ()  # type: ignore[misc]
    assert [f.name for f in dataclasses.fields(Expect)] == list(KEYS)


def test_a_declared_default_follows_from_the_other_keys():
    assert Expect(repeat_of="jan").evidence == ("jan#resolution",)
    assert Expect.from_data({"repeat_of": "jan"}).to_data() == {"repeat_of": "jan", "evidence": ["jan#resolution"]}
    assert Expect(repeat_of="jan", evidence=("jan#2",)).evidence == ("jan#2",)


def test_keys_a_run_does_not_know_are_ignored_when_read_back():
    assert Expect.from_data({"include": ["a"], "from_the_future": [1]}) == Expect(include=("a",))


def test_text_needles_stay_needles_across_the_round_trip():
    e = Expect.from_data({"include": [{"text": "timeout"}, "a-1"]})
    assert e.include == (TextNeedle("timeout"), "a-1")


def test_turn_gold_round_trips_through_its_event_table_columns():
    g = TurnGold(label=("profile",), plan="transfer", route="knowledge")
    columns = g.to_columns()
    assert set(columns) == {column for _k, column, _r in TurnGold.columns()}
    assert TurnGold.from_columns(columns) == g
    assert TurnGold.from_columns({}) == TurnGold()  # a run written before the columns existed


def test_the_apps_gold_rows_come_from_every_key_with_a_polarity():
    rows = gold_check(every_key_set(), pd.DataFrame(columns=["rank", "item_id", "source_ids", "included", "text"]), "")
    marked = [g.name(k) for p in ("in", "out", "order") for k, g in declared(ExpectModel, p)]
    assert list(dict.fromkeys(rows["kind"])) == marked
    unmarked = [g.name(k) for k, g in declared(ExpectModel, "other")]
    assert not set(rows["kind"]) & set(unmarked)


def test_the_apps_marks_put_what_must_stay_out_over_what_should_be_in():
    marks = gold_marks({"include": ["a", {"text": "x"}], "exclude": ["a", "b"], "above": [["c", "d"]], "expired": ["e"]})
    assert marks == {"a": "⊘ must stay out", "b": "⊘ must stay out", "e": "⊘ must stay out", "c": "◆ gold"}


def test_an_unset_key_has_the_empty_value_of_its_kind():
    e = Expect()
    for key, g in declared(ExpectModel):
        assert getattr(e, key) == empty(g.ref) and not e.is_set(key)

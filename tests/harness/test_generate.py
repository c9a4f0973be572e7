"""The scenario generator: deterministic, valid, labelled from its plan, enough cases per criterion."""

from __future__ import annotations

import re

import pytest
import yaml

from harness.criteria import registry
from harness.generate import catalog, generate_suite, label_counts, shortcut_shares, write_suite
from harness.format.loader import load_suite, validate_paths
from harness.format.model import Probe
from stores.protocol import Forget, Resolution, Turn


def test_same_seed_gives_the_same_bytes():
    assert generate_suite(12, seed=5, profile="small") == generate_suite(12, seed=5, profile="small")


def test_another_seed_gives_other_files():
    assert generate_suite(12, seed=5, profile="small") != generate_suite(12, seed=6, profile="small")


@pytest.mark.parametrize("profile,customers", [("small", 20), ("realistic", 20), ("long-history", 4)])
def test_generated_files_validate(tmp_path, profile, customers):
    write_suite(tmp_path, customers, seed=1, profile=profile)
    assert validate_paths([str(tmp_path)]) == []


def test_every_kind_of_label_comes_out_of_the_plan():
    c = label_counts(generate_suite(40, seed=2))
    for key in ("identity", "preferences", "superseded", "include", "exclude", "above", "repeat_of", "evidence",
                "not_repeat_of", "fix_before", "on", "forget", "health=healthy", "health=watch", "health=at_risk"):
        assert c[key] > 0, key
    assert c["subjects"] == 40 and c["scenarios"] < 40  # some files hold several customers (isolation)


def _report_patterns() -> list[tuple[str, re.Pattern]]:
    pats = []
    for key, issue in catalog.ISSUES.items():
        pats += [(key, t) for t in issue.reports]
    for area, texts in catalog.OUTAGES.items():
        pats += [(f"outage:{area}", t) for t in texts["report"]]
    return [(k, re.compile(re.sub(r"\\\{\w+\\\}", ".+?", re.escape(t)) + "$")) for k, t in pats]


def _issue_of(text: str, patterns) -> str:
    keys = {k for k, p in patterns if p.search(text)}
    assert len(keys) == 1, (text, keys)
    return keys.pop()


@pytest.mark.slow  # generates and compares several whole suites
def test_a_look_alike_is_never_labelled_a_repeat():
    patterns = _report_patterns()
    checked = 0
    for text in generate_suite(60, seed=3).values():
        doc = yaml.safe_load(text)
        reports = {e["id"].removesuffix("-report"): e["turn"] for e in doc["events"] if str(e.get("id", "")).endswith("-report")}
        session = None
        for e in doc["events"]:
            session = e.get("session", session)
            exp = e.get("expect", {}) if "probe" in e else {}
            if not exp or session not in reports:
                continue
            mine = _issue_of(reports[session], patterns)
            if "repeat_of" in exp:
                assert _issue_of(reports[exp["repeat_of"]], patterns) == mine
                checked += 1
            for other in exp.get("not_repeat_of", []):
                assert _issue_of(reports[other], patterns) != mine
                checked += 1
    assert checked > 50


@pytest.mark.slow  # generates and compares several whole suites
def test_a_repeat_is_told_in_other_words_than_its_original():
    for text in list(generate_suite(30, seed=4).values()):
        doc = yaml.safe_load(text)
        turns = {e["id"]: e["turn"] for e in doc["events"] if "turn" in e}
        session = None
        for e in doc["events"]:
            session = e.get("session", session)
            if "probe" in e and "repeat_of" in e.get("expect", {}):
                assert turns[f"{session}-report"] != turns[f"{e['expect']['repeat_of']}-report"]


NOT_GENERATED = {"memory_extraction", "returning_customer", "reply_known_fix", "reply_skips_failures", "session_recall"}
"""Criteria whose gold (seed 002: typed memories, the reply; session-level gold, which the
LongMemEval import writes) the generator does not write yet; they are judged on the canonical
suite or imported suites only. When the generator starts writing one, take it off this list."""


@pytest.mark.slow
def test_a_200_customer_suite_gives_every_criterion_100_cases(tmp_path):
    write_suite(tmp_path, 200, seed=0)
    scenarios = load_suite([str(tmp_path)])
    for key, c in registry().items():
        if c.level == "decision":  # a decision policy's turns: the generator writes no decision gold
            continue
        n = len(scenarios) if c.level == "scenario" else sum(c.applies(p) for s in scenarios for p in s.probes)
        if key in NOT_GENERATED:
            assert n == 0, f"the generator now writes gold for {key}: take it off NOT_GENERATED ({n} cases)"
        else:
            assert n >= 100, (key, n)


# -- no shortcut solves a generated suite --------------------------------------------------------

SUITES = [("small", 30, 1), ("realistic", 30, 2), pytest.param("realistic", 60, 0, marks=pytest.mark.slow),
          ("long-history", 4, 3)]
"""(profile, customers, seed) of the suites the properties below hold on (the 60-customer one is
left out of `make test-quick`: the 30-customer suites check the same properties there)."""


def _suite(tmp_path, profile: str, customers: int, seed: int):
    write_suite(tmp_path, customers, seed=seed, profile=profile)
    return load_suite([str(tmp_path)])


@pytest.fixture(scope="module")
def suites(tmp_path_factory):
    """`suites(profile, customers, seed)`: that generated suite, written and loaded once per module
    (the tests below only read it)."""
    made: dict[tuple[str, int, int], list] = {}

    def get(profile: str, customers: int, seed: int):
        key = (profile, customers, seed)
        if key not in made:
            made[key] = _suite(tmp_path_factory.mktemp(f"{profile}-{customers}-{seed}"), *key)
        return made[key]

    return get


def _timed_probes(scenarios):
    """(probe, {item id: time of the item as last said or recorded before the probe}) of every probe."""
    for sc in scenarios:
        when: dict[str, object] = {}
        for ev in sc.events:
            if isinstance(ev, Probe):
                yield ev, dict(when)
            elif isinstance(ev, (Turn, Resolution)):
                when[ev.id] = ev.at


@pytest.mark.parametrize("profile,customers,seed", SUITES)
def test_at_least_a_third_of_ordering_pairs_go_against_recency(suites, profile, customers, seed):
    pairs = against = 0
    for probe, when in _timed_probes(suites(profile, customers, seed)):
        for first, second in (*probe.expect.above, *probe.expect.fix_before):
            pairs += 1
            against += when[first] < when[second]  # the older item must outrank the newer one
    assert pairs > 50 and against / pairs >= 1 / 3, (against, pairs)


def test_identity_facts_come_from_varied_places_and_not_every_probe_needs_one(tmp_path):
    scenarios = _suite(tmp_path, "realistic", 60, 0)
    openers, mid, restated, corrected, with_identity, probes, stale_excluded = set(), set(), 0, 0, 0, 0, 0
    for sc in scenarios:
        first_customer: dict[str, str] = {}
        for ev in sc.events:
            if isinstance(ev, Turn) and ev.role == "customer":
                first_customer.setdefault(ev.session, ev.id)
        for probe in sc.probes:
            probes += 1
            with_identity += bool(probe.expect.identity)
            for g in probe.expect.identity:
                (openers if g in first_customer.values() else mid).add(g)
                restated += g.endswith("-restates")
                corrected += g.endswith("-corrects")
            stale_excluded += any("-fact-" in g and not g.endswith("-corrects") for g in probe.expect.exclude)
    assert 0.4 < with_identity / probes < 0.9, (with_identity, probes)
    assert len(mid) > 2 * len(openers) > 0  # mostly said in passing, sometimes as a session's first words
    assert restated and corrected and stale_excluded  # a corrected statement is stale


@pytest.mark.parametrize("profile,customers,seed", SUITES)
def test_what_a_trivial_rule_could_use_is_balanced(profile, customers, seed):
    """Ordering pairs put a customer turn on top about as often as not; identity facts sit
    anywhere in their session (not mostly where a positional pin looks); the repeated session is
    the max-keyword-overlap one in a controlled share, stated by `generate`."""
    from collections import Counter

    stats: Counter = Counter()
    customers = max(customers, 10)  # shares over a handful of long histories are too noisy to bound
    sh = shortcut_shares(generate_suite(customers, seed=seed, profile=profile, stats=stats))
    assert 0.35 <= sh["pairs_customer_top"] / sh["pairs"] <= 0.65, sh
    # short sessions (a long history's many how-tos have two customer turns) leave the 2nd and 3rd places more room
    assert sh["facts_2nd_3rd"] / sh["facts"] <= (0.7 if profile == "long-history" else 0.5), sh
    assert sh["facts_later"] / sh["facts"] >= (0.1 if profile == "long-history" else 0.25), sh
    assert sh["facts_first"] / sh["facts"] <= 0.3, sh
    assert sh["prefs_2nd_3rd"] / sh["prefs"] <= 0.5 and sh["prefs_later"] / sh["prefs"] >= 0.25, sh  # preferences too
    assert stats["repeat_probes"] and 0.1 <= stats["repeat_max_overlap"] / stats["repeat_probes"] <= 0.6, stats


def test_generate_states_what_a_shortcut_could_use(tmp_path, capsys):
    from harness.cli import main

    assert main(["generate", "--customers", "8", "--seed", "1", "--out", str(tmp_path / "s")]) == 0
    out = " ".join(capsys.readouterr().err.split())
    assert "ordering pairs with a customer turn on top" in out and "identity facts said as their session's first" in out
    assert "repeats whose session is the one sharing the most keywords" in out
    assert "preferences said as their session's first customer turn" in out


@pytest.mark.slow
@pytest.mark.parametrize("profile,customers,seed", SUITES)
def test_the_oracle_scores_one_on_every_retrieval_criterion_of_every_generated_file(tmp_path, suites, profile, customers, seed):
    from stores.registry import parse_specs

    from harness.analysis.results import Results
    from harness.run.runner import execute

    scenarios = suites(profile, customers, seed)
    run = execute(scenarios, parse_specs("oracle"), tmp_path / "runs", run_id="oracle")
    with Results(run.path) as res:
        bad = res.rows("""SELECT scenario, probe_id, criterion, explanation FROM scores
                          WHERE status NOT IN ('ok', 'unsupported') LIMIT 5""")
        n = res.rows("SELECT count(DISTINCT criterion) FROM scores WHERE status = 'ok'")[0][0]
    assert not bad, bad
    assert n >= 10  # every retrieval criterion and the gates had cases


@pytest.mark.parametrize("profile,customers,seed", SUITES)
def test_health_gold_agrees_with_every_documented_reading(suites, profile, customers, seed):
    from stores.memory import MemoryStore
    from stores.session.health import RULES, HealthParams
    from stores.session.health_state import health_report

    checked = 0
    for sc in suites(profile, customers, seed):
        memory = MemoryStore()
        for ev in sc.events:
            if isinstance(ev, Probe) and ev.expect.health:
                for rules in RULES:
                    r = health_report(memory.history(ev.subject), ev.at, HealthParams(rules=rules))
                    assert r.band == ev.expect.health, (sc.id, ev.id, rules, r.score, [(f.signal, f.impact) for f in r.factors])
                checked += 1
            elif not isinstance(ev, Probe):
                memory.observe(ev) if isinstance(ev, (Turn, Resolution, Forget)) else None
    assert checked > 10


# -- the catalog's development and held-back halves --------------------------------------------------

@pytest.mark.slow  # generates and compares several whole suites
def test_a_dev_suite_never_uses_a_held_back_template_and_a_test_suite_does():
    held = [re.compile(re.sub(r"\\\{\w+\\\}", ".+?", re.escape(t))) for t in catalog.held_back_texts()]
    dev = " ".join(e.get("turn", "") + " " + e.get("summary", "") for text in generate_suite(30, seed=5, split="dev").values()
                   for e in yaml.safe_load(text)["events"])
    test = " ".join(e.get("turn", "") + " " + e.get("summary", "") for text in generate_suite(30, seed=5).values()
                    for e in yaml.safe_load(text)["events"])
    assert not [p.pattern for p in held if p.search(dev)]
    assert sum(bool(p.search(test)) for p in held) > len(held) / 2


VOUCHED_ELSEWHERE = {
    ("FAILURE", "nothing changed"): "nope, nothing changed",
    ("SYMPTOM", r"charged (?:\w+ ){0,4}twice"): "i was charged twice for the same order",
    ("SYMPTOM", "drops?"): "the video calls drop after a minute.",
}
"""Structured-lexicon alternatives that match a held-back template and no canonical text, each with the
independent sentence, in the same sense, that vouches for it: a phrase of the front ends' bank or a
challenge turn (both written apart from the generator). Alternatives with no such sentence were taken
out of the lexicon (`silent` too: the bank's "my phone is always on silent" is a setting, not a
symptom). The list only shrinks unless a new entry is reviewed the same way."""

_SLOTS = {"name": "Dana Ruiz", "first": "Dana", "company": "Globex", "title": "data lead", "account": "WS-12345",
          "account2": "WS-54321", "wh": "Snowflake", "wh2": "BigQuery", "idp": "Okta", "idp2": "OneLogin", "os": "iOS",
          "os2": "Android", "card": "Visa", "month": "March", "inc": "INC-1234", "hhmm": "09:30",
          "topic": "the nightly load timing out"}


def _alternatives(pattern: str) -> list[str]:
    """The top-level alternatives of a `\\b(?:a|b|...)\\b` pattern (empty for any other shape)."""
    m = re.match(r"^\\b\(\?:(.*)\)\\b$", pattern, re.S)
    if not m:
        return []
    out, depth, cur, body, i = [], 0, "", m.group(1), 0
    while i < len(body):
        ch = body[i]
        if ch == "\\":
            cur, i = cur + body[i:i + 2], i + 2
            continue
        depth += (ch == "(") - (ch == ")")
        if ch == "|" and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
        i += 1
    return out + [cur]


def test_no_lexicon_alternative_was_written_from_the_held_back_half():
    from pathlib import Path

    from stores.frontend.bank import all_phrases
    from stores.structured import lexicon

    def fill(t: str) -> str:
        return lexicon.normalize(re.sub(r"\{(\w+)\}", lambda m: _SLOTS[m.group(1)], t))

    held = [fill(t) for t in catalog.held_back_texts()]
    independent = [lexicon.normalize(e[k]) for f in sorted((Path(__file__).parents[2] / "datasets" / "canonical").glob("*.yaml"))
                   for e in yaml.safe_load(f.read_text())["events"] for k in ("turn", "summary") if k in e]
    elsewhere = [lexicon.normalize(e[k]) for f in sorted((Path(__file__).parents[2] / "datasets" / "challenge").glob("*.yaml"))
                 for e in yaml.safe_load(f.read_text())["events"] for k in ("turn", "summary") if k in e]
    elsewhere += [lexicon.normalize(t) for t in all_phrases()]
    found, checked = set(), 0
    for name, obj in vars(lexicon).items():
        if not isinstance(obj, re.Pattern):
            continue
        for alt in _alternatives(obj.pattern):
            r = re.compile(r"\b(?:" + alt + r")\b")
            checked += 1
            if any(r.search(t) for t in held) and not any(r.search(t) for t in independent):
                found.add((name, alt))
    assert checked > 100
    assert found == set(VOUCHED_ELSEWHERE), (sorted(found - set(VOUCHED_ELSEWHERE)), sorted(set(VOUCHED_ELSEWHERE) - found))
    for (name, alt), sentence in VOUCHED_ELSEWHERE.items():  # the vouching sentence is there and is a match
        assert sentence in elsewhere and re.search(r"\b(?:" + alt + r")\b", sentence), (name, alt, sentence)

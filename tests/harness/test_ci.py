"""CI regression checks: baseline, check (exit codes and messages), compare, JUnit."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path

import pytest
import xmlschema
from helpers import outage_story, probe, resolve, scenario, turn

from harness.ci.baseline import BaselineError, build_baseline, load_baseline
from harness.analysis.compare import case_overlap, compare_pairs, compare_runs, compare_strategies, default_pairs
from harness.ci.junit import run_junit, write_junit
from harness.cli import main
from harness.analysis.results import Results
from harness.run.runner import execute
from stores.retrieval.history_stuffing import HistoryStuffing
from stores.registry import StrategySpec

XSD = Path(__file__).resolve().parent.parent / "data" / "junit.xsd"


def needs_fix(id="needs_fix"):
    """A repeat of a resolved issue: the resolution must be in the context."""
    return scenario([
        turn("a-1", "Exports fail with error 502.", 0, session="s1"),
        resolve("s1", "Fixed by clearing the export cache.", 30),
        turn("b-1", "Exports fail again with 502.", 60 * 24, session="s2"),
        probe("p1", "exports failing", 60 * 24 + 1, session="s2", include=("s1#resolution",)),
    ], id=id)


def specs(**hs_params):
    """`history_stuffing[prod]` (the label stays whatever its params), plus both controls."""
    return [StrategySpec("history_stuffing", tuple(sorted(hs_params.items())), "prod"), StrategySpec("empty"), StrategySpec("oracle")]


def run(tmp, name, scenarios=None, strategies=None) -> Path:
    scenarios = scenarios if scenarios is not None else [outage_story(), needs_fix()]
    return execute(scenarios, strategies or specs(), tmp, run_id=name).path


@pytest.fixture(scope="module")
def approved(tmp_path_factory):
    """A clean run and the baseline approved from it."""
    tmp = tmp_path_factory.mktemp("ci")
    good = run(tmp, "good")
    assert main(["baseline", str(good), "--out", str(tmp / "baseline.json")]) == 0
    return tmp, good, tmp / "baseline.json"


@pytest.fixture(scope="module")
def worse(approved):
    """The same label, `history_stuffing[prod]`, with resolutions left out: worse on repeat issues."""
    return run(approved[0], "worse", strategies=specs(include_resolutions=False))


def check(run_path, baseline, *extra) -> int:
    return main(["check", str(run_path), "--baseline", str(baseline), *extra])


def test_run_checked_against_its_own_baseline_passes(approved, capsys):
    tmp, good, baseline = approved
    assert check(good, baseline) == 0
    assert "PASS (exit 0)" in capsys.readouterr().out


def test_baseline_is_sorted_and_stable_under_reordering(approved, tmp_path):
    tmp, good, baseline = approved
    text = baseline.read_text()
    data = json.loads(text)
    assert text == json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    assert data["format"] == "supportbench-baseline/1"
    assert data["strategies"]["empty"]["criteria"]["recall"]["failing"] == ["needs_fix/p1", "outage/p1"]
    assert "outage" in data["strategies"]["oracle"]["criteria"]["idempotency"]["passing"]  # scenario-level case id
    shuffled = run(tmp_path, "shuffled", [needs_fix(), outage_story()], list(reversed(specs())))
    with Results(shuffled) as res:
        again = build_baseline(res).to_json()
    for d in (again, data):
        d.pop("source")
    assert again == data


def test_worse_params_under_the_same_label_are_refused_and_the_regression_named(approved, worse, capsys):
    tmp, _, baseline = approved
    assert check(worse, baseline) == 2
    out = capsys.readouterr().out
    assert "history_stuffing[prod] params changed" in out and "include_resolutions True -> False" in out
    assert "re-approve the baseline" in out
    line = next(x for x in out.splitlines() if "history_stuffing[prod] · recall" in x)
    assert "needs_fix/p1" in line and "mean 1.000 -> 0.500 (delta -0.500)" in line and "missing s1#resolution" in line


def test_allow_param_changes_judges_the_scores_and_fails_on_the_regression(approved, worse, capsys):
    tmp, _, baseline = approved
    assert check(worse, baseline, "--allow-param-changes") == 1
    out = capsys.readouterr().out
    assert "FAIL (exit 1)" in out and "judged against the old numbers as allowed" in out
    assert "1 case(s) passed in the baseline and fail now: needs_fix/p1" in out


class Exploding(HistoryStuffing):
    """history_stuffing that raises at every probe (same name and params, so the same params hash)."""

    def context(self, request):
        raise RuntimeError("vector store unreachable")


def test_a_strategy_that_errors_fails_the_check(approved, monkeypatch, capsys):
    tmp, _, baseline = approved
    monkeypatch.setattr(HistoryStuffing, "context", Exploding.context)  # the built-in itself breaks
    crashed = run(tmp / "crash", "crashed")
    assert check(crashed, baseline) == 1
    out = capsys.readouterr().out
    assert "history_stuffing[prod] · recall: 2 case(s) errored" in out and "vector store unreachable" in out


def test_baseline_refuses_a_run_with_errors(approved, monkeypatch):
    tmp, _, _ = approved
    monkeypatch.setattr(HistoryStuffing, "context", Exploding.context)  # the built-in itself breaks
    crashed = run(tmp / "crash2", "crashed")
    with Results(crashed) as res, pytest.raises(BaselineError, match="error case"):
        build_baseline(res)
    assert main(["baseline", str(crashed), "--out", str(tmp / "nope.json")]) == 2
    assert not (tmp / "nope.json").exists()


def test_a_baseline_from_another_suite_version_is_refused(approved, capsys):
    tmp, _, baseline = approved
    edited = replace(needs_fix(), content_hash="1" * 64)
    other = run(tmp / "v2", "v2", [outage_story(), edited])
    assert check(other, baseline) == 2
    out = capsys.readouterr().out
    old = json.loads(baseline.read_text())["suites"]["test"]["hash"]
    with Results(other) as res:
        new = res.manifests["v2"]["datasets"][0]["hash"]
    assert f"suite test is a different version from the baseline's (baseline hash {old}, run hash {new}); changed: needs_fix" in out


def test_a_vanished_scenario_fails(approved, capsys):
    tmp, _, baseline = approved
    fewer = run(tmp / "fewer", "fewer", [outage_story()])
    assert check(fewer, baseline) == 1
    assert "1 scenario(s) of the baseline vanished from the run: needs_fix" in capsys.readouterr().out


def test_a_strategy_missing_from_the_run_fails(approved, capsys):
    tmp, _, baseline = approved
    partial = run(tmp / "partial", "partial", strategies=specs()[:2])
    assert check(partial, baseline) == 1
    assert "strategy oracle is in the baseline but not in the run" in capsys.readouterr().out


def test_a_criterion_that_came_back_empty_fails(approved, tmp_path, capsys):
    tmp, good, baseline = approved
    data = json.loads(baseline.read_text())
    data["strategies"]["oracle"]["criteria"]["health"] = {"mean": 1.0, "pass_rate": 1.0, "n": 1, "passing": ["outage/p1"], "failing": []}
    (tmp_path / "b.json").write_text(json.dumps(data))
    assert check(good, tmp_path / "b.json") == 1
    assert "oracle · health: came back empty (0 cases, the baseline had 1" in capsys.readouterr().out


def test_tolerances_and_warn_rules_let_a_known_drop_through(approved, worse, tmp_path, capsys):
    tmp, _, baseline = approved
    data = json.loads(baseline.read_text())
    data["tolerances"].update(default=1.0, cases=[{"strategy": "history_stuffing[prod]", "case": "*", "new_failure": "warn"}])
    (tmp_path / "b.json").write_text(json.dumps(data))
    assert check(worse, tmp_path / "b.json", "--allow-param-changes") == 0
    assert "tolerated by a new_failure=warn rule" in capsys.readouterr().out


def test_an_unreadable_baseline_is_exit_2(approved, tmp_path, capsys):
    _, good, _ = approved
    assert check(good, tmp_path / "missing.json") == 2
    (tmp_path / "bad.json").write_text('{"format": "something-else"}')
    assert check(good, tmp_path / "bad.json") == 2
    assert "expected format 'supportbench-baseline/1'" in capsys.readouterr().err


def test_rebaselining_keeps_edited_tolerances(approved, tmp_path):
    _, good, baseline = approved
    data = json.loads(baseline.read_text())
    data["tolerances"]["criteria"] = {"recall": 0.05}
    out = tmp_path / "b.json"
    out.write_text(json.dumps(data))
    assert main(["baseline", str(good), "--out", str(out)]) == 0
    assert load_baseline(out).tolerances.for_criterion("recall") == 0.05
    assert main(["baseline", str(good), "--out", str(out), "--fresh"]) == 0
    assert load_baseline(out).tolerances.for_criterion("recall") == 0.0


def _junit(path: Path) -> ET.Element:
    xmlschema.XMLSchema(XSD).validate(str(path))
    return ET.parse(path).getroot()


def test_run_junit_validates_and_shows_raw_failures(approved, tmp_path):
    _, good, _ = approved
    with Results(good) as res:
        path = write_junit(run_junit(res), tmp_path / "run.xml")
    root = _junit(path)
    cases = {(c.get("classname"), c.get("name")): c for c in root.iter("testcase")}
    assert len(cases) == int(root.get("tests"))
    failure = cases[("empty.recall", "needs_fix")].find("failure")
    assert failure is not None and "missing s1#resolution" in failure.get("message")
    assert not list(cases[("oracle.recall", "needs_fix")])  # passed: no child element
    assert cases[("oracle.idempotency", "outage")] is not None  # scenario-level criteria are test cases too


def test_check_junit_agrees_with_the_verdict(approved, worse, monkeypatch, tmp_path):
    tmp, good, baseline = approved
    assert check(worse, baseline, "--allow-param-changes", "--junit", str(tmp_path / "check.xml")) == 1
    cases = {(c.get("classname"), c.get("name")): c for c in _junit(tmp_path / "check.xml").iter("testcase")}
    assert "passed in the baseline, fails now" in cases[("history_stuffing[prod].recall", "needs_fix")].find("failure").get("message")
    assert "known failure" in cases[("empty.recall", "needs_fix")].find("skipped").get("message")
    assert cases[("history_stuffing[prod].recall", "mean and pass rate vs baseline")].find("failure") is not None
    monkeypatch.setattr(HistoryStuffing, "context", Exploding.context)  # the built-in itself breaks
    crashed = run(tmp_path, "crashed")
    assert check(crashed, baseline, "--junit", str(tmp_path / "crash.xml")) == 1
    cases = {(c.get("classname"), c.get("name")): c for c in _junit(tmp_path / "crash.xml").iter("testcase")}
    assert "vector store unreachable" in cases[("history_stuffing[prod].recall", "outage")].find("error").get("message")


def test_compare_runs_lists_regressions_worst_first(approved, worse):
    tmp, good, _ = approved
    with Results(good) as a, Results(worse) as b:
        c = compare_runs(a, b)
    row = c.criteria.set_index(["strategy", "criterion"]).loc[("history_stuffing[prod]", "recall")]
    assert (row["mean_a"], row["mean_b"], row["delta"]) == (1.0, 0.5, -0.5)
    assert set(c.regressions["case"]) == {"needs_fix/p1", "outage/p1"} and c.improvements.empty
    assert list(c.flips["direction"]) == ["regression"] * len(c.flips)


def test_compare_two_strategies_within_one_run(approved, capsys):
    _, good, _ = approved
    with Results(good) as res:
        c = compare_strategies(res, "empty", "oracle")
    assert c.regressions.empty and "needs_fix/p1" in set(c.improvements["case"])
    assert set(c.criteria["strategy"]) == {"empty -> oracle"}
    assert main(["compare", str(good), "--strategies", "oracle,empty", "--format", "md"]) == 0
    md = capsys.readouterr().out
    assert md.startswith("### ❌ supportbench compare:") and "| oracle -> empty | recall | needs_fix/p1 | ok → fail |" in md


def test_compare_needs_two_runs_or_two_strategies(approved, capsys):
    _, good, _ = approved
    assert main(["compare", str(good)]) == 2
    assert main(["compare", str(good), str(good), "--strategies", "nope"]) == 2
    assert main(["compare", str(good), str(good), "--fail-on-regression"]) == 0


def test_run_junit_option_writes_valid_junit(tmp_path):
    scenario_file = sorted(Path("datasets/canonical").glob("*.yaml"))[0]
    junit = tmp_path / "run.xml"
    assert main(["run", str(scenario_file), "-s", "empty", "--out", str(tmp_path), "-q", "--junit", str(junit)]) == 0
    root = _junit(junit)
    assert int(root.get("tests")) > 0 and {s.get("name") for s in root.iter("testsuite")} == {"empty"}


def _pandas_compare(a: str, b: str, sa, sb, ca, cb):
    """The comparison as it was computed in pandas (before it moved to DuckDB SQL): the reference."""
    import pandas as pd

    from harness.analysis.compare import CRITERIA_COLUMNS, FLIP_COLUMNS, ONE_SIDED_COLUMNS, CompareResult

    sa, sb = (s[["strategy", "criterion", "grp", "mean", "n", "pass_rate"]] for s in (sa, sb))
    crit = sa.merge(sb, on=["strategy", "criterion"], how="outer", suffixes=("_a", "_b"))
    crit["grp"] = crit["grp_a"].fillna(crit["grp_b"])
    crit["delta"] = crit["mean_b"] - crit["mean_a"]
    crit["pass_rate_delta"] = crit["pass_rate_b"] - crit["pass_rate_a"]
    crit = crit[CRITERIA_COLUMNS].sort_values(["strategy", "criterion"], kind="stable").reset_index(drop=True)
    ckey = ["strategy", "criterion", "case"]
    both = ca.merge(cb, on=ckey, how="outer", suffixes=("_a", "_b"), indicator=True)
    one = both[both["_merge"] != "both"]
    one_sided = pd.DataFrame({"strategy": one["strategy"], "criterion": one["criterion"], "case": one["case"],
                              "side": one["_merge"].map({"left_only": "a", "right_only": "b"}).astype(str)},
                             columns=ONE_SIDED_COLUMNS).sort_values(ckey, kind="stable").reset_index(drop=True)
    both = both[both["_merge"] == "both"]
    fl = both[both["passed_a"].astype(bool) != both["passed_b"].astype(bool)].copy()
    fl["direction"] = ["regression" if x else "improvement" for x in fl["passed_a"].astype(bool)]
    fl["scenario"], fl["probe_id"] = fl["scenario_a"], fl["probe_id_a"]
    fl["delta"] = fl["value_b"].fillna(0.0) - fl["value_a"].fillna(0.0)
    fl["_order"] = [0 if d == "regression" else 1 for d in fl["direction"]]
    fl["_size"] = [x if d == "regression" else -x for d, x in zip(fl["direction"], fl["delta"])]
    fl = fl.sort_values(["_order", "_size", "strategy", "criterion", "case"], kind="stable")
    return CompareResult(a, b, crit, fl[FLIP_COLUMNS].reset_index(drop=True), one_sided)


def _pandas_compare_runs(res_a, res_b, ra, rb):
    from harness.analysis.cases import case_rows, criterion_stats

    return _pandas_compare(ra, rb, criterion_stats(res_a, ra), criterion_stats(res_b, rb), case_rows(res_a, ra), case_rows(res_b, rb))


def _same_comparison(got, want):
    import pandas as pd

    assert (got.a, got.b) == (want.a, want.b)
    pd.testing.assert_frame_equal(got.criteria, want.criteria)
    for name in ("flips", "one_sided"):
        g, w = getattr(got, name), getattr(want, name)
        assert list(g.columns) == list(w.columns)
        if len(w) or len(g):
            pd.testing.assert_frame_equal(g, w, check_dtype=False)


def two_needed(id="a_two"):
    """A repeat whose context needs the live turn and the old resolution: half recall without the resolution."""
    return scenario([
        turn("a-1", "Exports fail with error 502.", 0, session="s1"),
        resolve("s1", "Fixed by clearing the export cache.", 30),
        turn("b-1", "Exports fail again with 502.", 60 * 24, session="s2"),
        probe("p1", "exports failing", 60 * 24 + 1, session="s2", include=("b-1", "s1#resolution")),
    ], id=id)


def not_a_repeat(id="not_repeat"):
    """A new question after a resolved issue: flagging the old session as a repeat is wrong."""
    return scenario([
        turn("a-1", "Exports fail with error 502.", 0, session="s1"),
        resolve("s1", "Fixed by clearing the export cache.", 30),
        turn("b-1", "How do I add a user to my workspace?", 60 * 24, session="s2"),
        probe("p1", "adding a user", 60 * 24 + 1, session="s2", include=("b-1",), not_repeat_of=("s1",)),
    ], id=id)


@pytest.mark.slow  # five runs written and seven pairs compared three ways
def test_compare_in_sql_matches_the_pandas_reference(monkeypatch, tmp_path):
    """Same frames as the pandas computation, with two `Results` (the CLI) or one over both runs
    (the app): with flips of several sizes, cases on one side only, and errored cases (repeat_issue's
    F1 then counts from the probe's gold)."""
    from harness.analysis.cases import case_rows, criterion_stats

    scs = [outage_story(), needs_fix(), two_needed(), not_a_repeat()]
    good = run(tmp_path / "good", "good", scs)
    worse = run(tmp_path / "worse", "worse", scs, specs(include_resolutions=False))
    fewer = run(tmp_path / "fewer", "fewer", scs[:2], specs()[:2])
    monkeypatch.setattr(HistoryStuffing, "context", Exploding.context)  # the built-in itself breaks
    crashed = run(tmp_path / "crash", "crashed", scs)
    no_repeats = run(tmp_path / "crash2", "no_repeats", scs[1:])  # errored, with only a negative repeat case
    for pa, pb in ((good, worse), (worse, good), (good, fewer), (fewer, good), (good, crashed), (crashed, worse),
                   (no_repeats, good)):
        ra, rb = pa.name, pb.name
        with Results(pa) as a, Results(pb) as b:
            want = _pandas_compare_runs(a, b, ra, rb)
            _same_comparison(compare_runs(a, b), want)
        with Results([pa, pb]) as both:
            _same_comparison(compare_runs(both, both, run_a=ra, run_b=rb), want)
    flips = 0
    for path in (worse, crashed, no_repeats):
        with Results(path) as res:
            raw, stats = case_rows(res), criterion_stats(res)
            for sa, sb in (("empty", "oracle"), ("history_stuffing[prod]", "oracle"), ("oracle", "history_stuffing[prod]")):
                pair = {sa: f"{sa} -> {sb}", sb: f"{sa} -> {sb}"}
                side = lambda df, s: df[df["strategy"] == s].assign(strategy=pair[s]).reset_index(drop=True)  # noqa: E731
                want = _pandas_compare(f"{path.name}:{sa}", f"{path.name}:{sb}", side(stats, sa), side(stats, sb),
                                       side(raw, sa), side(raw, sb))
                got = compare_strategies(res, sa, sb)
                _same_comparison(got, want)
                flips += len(got.flips)
    assert flips > 10


def test_compare_pairs_gives_compare_runs_numbers_for_equal_labels(approved, worse):
    _, good, _ = approved
    with Results([good, worse]) as res:
        by_label = compare_runs(res, res, run_a="good", run_b="worse")
        pairs = [(s, s) for s in ("history_stuffing[prod]", "empty", "oracle")]
        paired = compare_pairs(res, res, pairs, run_a="good", run_b="worse")
    key = ["strategy", "criterion"]
    assert by_label.criteria.sort_values(key).reset_index(drop=True).equals(paired.criteria.sort_values(key).reset_index(drop=True))
    assert by_label.flips.equals(paired.flips) and by_label.one_sided.equals(paired.one_sided)


def test_a_variant_is_paired_with_its_base_by_name_and_compared(tmp_path):
    base = run(tmp_path, "base", strategies=[StrategySpec("history_stuffing")])
    variant = run(tmp_path, "variant", strategies=[StrategySpec("history_stuffing", (("include_resolutions", False),))])
    with Results([base, variant]) as res:
        a, b = (res.manifests[r]["strategies"] for r in ("base", "variant"))
        pairs = default_pairs(a, b)
        assert pairs == [("history_stuffing", b[0]["label"])] and b[0]["label"] != "history_stuffing"
        c = compare_pairs(res, res, pairs, run_a="base", run_b="variant")
        assert compare_runs(res, res, run_a="base", run_b="variant").flips.empty  # by label the two never meet
    assert set(c.criteria["strategy"]) == {f"history_stuffing -> {b[0]['label']}"}
    assert set(c.regressions["case"]) == {"needs_fix/p1", "outage/p1"} and c.one_sided.empty


def test_pairs_naming_a_strategy_a_run_lacks_are_refused(approved, worse):
    _, good, _ = approved
    with Results([good, worse]) as res, pytest.raises(ValueError, match="cannot pair tfidf \\(not in good\\)"):
        compare_pairs(res, res, [("tfidf", "empty")], run_a="good", run_b="worse")


def test_case_overlap_counts_the_cases_two_runs_share(tmp_path, approved):
    _, good, _ = approved
    other = run(tmp_path, "other", scenarios=[needs_fix("elsewhere")])
    with Results([good, other]) as res:
        none = case_overlap(res, "good", "other")
        same = case_overlap(res, "good", "good")
    assert none.shared == 0 and none.a == 4 and none.b == 2  # two probes and two whole-scenario cases; one and one
    assert same.shared == same.a == same.b == 4


def test_the_cli_pairs_a_variant_with_its_base_when_asked(tmp_path, capsys):
    base = run(tmp_path, "base", strategies=[StrategySpec("history_stuffing")])
    variant = run(tmp_path, "variant", strategies=[StrategySpec("history_stuffing", (("include_resolutions", False),))])
    label = "history_stuffing[include_resolutions=False]"
    assert main(["compare", str(base), str(variant), "--format", "md"]) == 0
    out = capsys.readouterr()
    assert "history_stuffing -> " not in out.out  # labels differ: by label nothing pairs...
    assert f"--pair history_stuffing '{label}' compares them" in out.err  # ...and the command says how to pair them
    assert main(["compare", str(base), str(variant), "--pair", "history_stuffing", label, "--format", "md",
                 "--fail-on-regression"]) == 1  # the variant drops the resolution the repeat needs
    paired = capsys.readouterr().out
    assert f"| history_stuffing -> {label} | recall |" in paired
    assert main(["compare", str(base), str(variant), "--pair", "history_stuffing", "nope"]) == 2
    assert "cannot pair nope" in capsys.readouterr().err
    assert main(["compare", str(base), "--pair", "a", "b"]) == 2


def test_the_cli_warns_loudly_when_two_runs_share_no_case(tmp_path, approved, capsys):
    _, good, _ = approved
    other = run(tmp_path, "other", scenarios=[needs_fix("elsewhere")])
    assert main(["compare", str(good), str(other)]) == 0
    err = capsys.readouterr().err
    assert "warning: the two runs share no case (4 cases" in err and "against 2" in err
    assert main(["compare", str(good), str(good)]) == 0
    assert "share no case" not in capsys.readouterr().err


def test_baseline_readme_rewrites_only_the_headline_table(approved, tmp_path, capsys):
    from harness.ci.baseline import headline_markdown

    _, good, _ = approved
    readme = tmp_path / "README.md"
    readme.write_text("# Title\n\n<!-- headline: from the baseline -->\n| old | table |\n<!-- /headline -->\n\nAfter.\n")
    out = tmp_path / "b.json"
    assert main(["baseline", str(good), "--out", str(out), "--readme", str(readme)]) == 0
    table = headline_markdown(load_baseline(out))  # the fixture's strategies are a variant and controls: no row
    assert table.startswith("| strategy | identity persistence |")
    assert readme.read_text() == f"# Title\n\n<!-- headline: from the baseline -->\n{table}\n<!-- /headline -->\n\nAfter.\n"
    assert f"rewrote the headline table of {readme}" in capsys.readouterr().err


def test_baseline_readme_without_markers_writes_neither_file(approved, tmp_path, capsys):
    _, good, _ = approved
    readme = tmp_path / "README.md"
    readme.write_text("# Title\n\nno table markers here\n")
    out = tmp_path / "b.json"
    assert main(["baseline", str(good), "--out", str(out), "--readme", str(readme)]) == 2
    assert not out.exists()
    assert readme.read_text() == "# Title\n\nno table markers here\n"
    err = capsys.readouterr().err
    assert f"{readme}: expected one line starting '<!-- headline: '" in err
    assert main(["baseline", str(good), "--out", str(out), "--readme", str(tmp_path / "missing.md")]) == 2
    assert "missing.md: No such file or directory" in capsys.readouterr().err
    assert not out.exists()

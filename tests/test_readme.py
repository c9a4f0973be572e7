"""The README's examples are real: its scenario validates, its strategy config loads, its commands exist."""

import re
from pathlib import Path

from harness.cli import build_parser
from harness.format.loader import load_scenario
from stores.registry import load_config

README = (Path(__file__).resolve().parents[1] / "README.md").read_text()


def _blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", README, flags=re.S)


def test_the_readme_scenario_validates(tmp_path):
    (yaml_text,) = _blocks("yaml")
    path = tmp_path / "example.yaml"
    path.write_text(yaml_text)
    s = load_scenario(path)
    assert s.probes[0].expect.evidence == ("zd-101#resolution",)


def test_the_readme_strategy_config_loads(tmp_path):
    (toml_text,) = _blocks("toml")
    path = tmp_path / "strategies.toml"
    path.write_text(toml_text)
    assert [s.label for s in load_config(path)] == ["session_aware[no_repeat_boost]"]


def test_every_supportbench_command_in_the_readme_exists():
    known = set(build_parser()._subparsers._group_actions[0].choices)
    used = set(re.findall(r"^supportbench (\w+)", "\n".join(_blocks("bash")), flags=re.M))
    assert used and used <= known, used - known


def test_the_readme_headline_is_the_approved_baseline():
    """The one table in the README is generated from baselines/canonical.json, never pasted."""
    from harness.ci.baseline import headline_markdown, load_baseline

    root = Path(__file__).resolve().parents[1]
    shown = README.split("<!-- headline: harness.ci.baseline.headline_markdown(baselines/canonical.json) -->\n", 1)[1]
    shown = shown.split("\n<!-- /headline -->", 1)[0]
    assert shown == headline_markdown(load_baseline(root / "baselines" / "canonical.json")), (
        "the README's headline differs from the baseline: paste headline_markdown(load_baseline(...)) between the markers")


def test_the_readme_is_a_front_door():
    assert len(README.encode()) <= 20_000
    tables = [line for line in README.splitlines() if line.startswith("| ---") or line.startswith("|---")]
    assert len(tables) <= 2, "one headline table (and the layout table); leaderboards go to docs/results/"


def test_the_readme_demo_time_is_the_generated_one():
    """The README quotes `make demo`'s time from a fresh clone; it must be the figure (and load) that
    `bench/demo_time.py` last wrote to docs/results/demo-time.md, never a number typed by hand."""
    page = (Path(__file__).resolve().parents[1] / "docs" / "results" / "demo-time.md").read_text()
    total = re.search(r"\*\*clone to first page, after the install\*\* \| \*\*([\d.]+)\*\*", page)
    load = re.search(r"Before: load average ([\d.]+),", page)
    assert total and load, "docs/results/demo-time.md has no total or load line"
    quoted = re.search(r"reached the first page in ([\d.]+) s on an idle 2-core machine\s*\(load ([\d.]+)", README)
    assert quoted, "the README does not quote make demo's time"
    assert quoted.groups() == (total[1], f"{float(load[1]):.1f}"), (quoted.groups(), total[1], load[1])

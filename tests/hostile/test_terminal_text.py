"""Text that acts instead of showing is printed escaped: escape sequences, newlines and
bidirectional overrides in a run's name, a scenario's title or an error message."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.analysis.visible import acting, visible
from harness.cli import common
from harness.cli import main as cli

NAME = "nightly\x1b[2J\x1b[31m\nforged-run  ok"
RLO_TITLE = "the \u202eevil\u202c account"


@pytest.mark.parametrize("text,shown", [
    ("a\x1b[31mred", "a\\x1b[31mred"),
    ("two\nlines\r", "two\\nlines\\r"),
    ("\u202eevil", "<U+202E>evil"),
    ("\u2066x\u2069\u200f", "<U+2066>x<U+2069><U+200F>"),
    ("bell\x07 del\x7f c1\x9b", "bell\\x07 del\\x7f c1\\x9b"),
    ("Zoë 👋 ünïcode", "Zoë 👋 ünïcode"),
])
def test_visible_escapes_what_acts_and_keeps_what_shows(text, shown):
    assert visible(text) == shown and acting(text) == (text != shown)


def test_lines_keeps_newlines_and_tabs_only():
    assert visible("a\n\tb\x1b\u202e", lines=True) == "a\n\tb\\x1b<U+202E>"


def test_ls_runs_shows_a_hostile_run_name_escaped(tmp_path, monkeypatch, capsys):
    runs = tmp_path / "runs"
    monkeypatch.setenv("SUPPORTBENCH_RUNS", str(runs))
    assert cli(["run", "datasets/canonical/decision-meaningless.yaml", "--out", str(runs), "-q", "--strategies", "empty",
                "--name", NAME]) == 0
    capsys.readouterr()

    monkeypatch.setattr(common.out, "width", 400)  # one table row per line (the console is made at import, 80 wide without a terminal)
    assert cli(["ls", "runs"]) == 0
    printed = capsys.readouterr().out
    assert "\x1b" not in printed and "\r" not in printed
    row = next(line for line in printed.splitlines() if "nightly" in line)
    assert "nightly\\x1b[2J\\x1b[31m\\nforged-run  ok" in row
    assert not any(line.startswith("forged-run") for line in printed.splitlines())  # no forged row


def test_a_bidi_override_in_a_title_is_shown_escaped_by_ls_scenarios(tmp_path, monkeypatch, capsys):

    src = Path("datasets/canonical/decision-meaningless.yaml").read_text(encoding="utf-8")
    lines = src.splitlines()
    i = next(k for k, line in enumerate(lines) if line.startswith("title:"))
    lines[i] = f"title: '{RLO_TITLE}'"
    path = tmp_path / "rlo.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    monkeypatch.setattr(common.out, "width", 400)
    assert cli(["ls", "scenarios", str(path)]) == 0
    printed = capsys.readouterr()
    assert "\u202e" not in printed.out + printed.err and "the <U+202E>evil<U+202C> account" in printed.out


def test_what_the_app_reads_is_scrubbed_and_visible(tmp_path, monkeypatch):
    import pandas as pd

    from harness.analysis.visible import for_display
    from stores.redaction import register

    register("AppSecret-MARK-0c3d")
    df = pd.DataFrame({"label": ["a\u202eb", "x"], "text": ["key AppSecret-MARK-0c3d\nnext line", "http://u:pw@h/"],
                       "n": [1, 2], "ids": [["\x1b[2J"], []]})
    shown = for_display(df)
    assert list(shown["label"]) == ["a<U+202E>b", "x"] and list(shown["n"]) == [1, 2]
    assert list(shown["text"]) == ["key <secret>\nnext line", "http://<secret>@h/"]
    assert list(shown["ids"]) == [["\\x1b[2J"], []]
    assert list(df["label"]) == ["a\u202eb", "x"]  # the query's own result is left as it was
    assert for_display({"k": ("a\u2066",)}) == {"k": ("a<U+2066>",)}


def test_the_app_query_layer_shows_data_through_for_display(tmp_path, monkeypatch):
    from helpers import probe, scenario, turn

    from harness.run.runner import execute
    from stores.registry import parse_specs

    events = [turn("t-1", "Exports fail \u202eevil\u202c since Monday.", 0),
              probe("p-1", "why \u202etxe\u202c fail?", 10, include=("t-1",))]
    run = execute([scenario(events, id="bidi")], parse_specs("empty"), tmp_path, run_id="bidi").path
    from pages import _shared

    df = _shared.query("failures.page", (run.name,), str(tmp_path))
    assert len(df) and all("\u202e" not in t and "<U+202E>" in t for t in df["task"])

"""Charts a reader compares at a glance: every value axis says what it measures and on what scale,
and charts side by side that show the same measure share one range (`pages/_charts.py`).

The figures are the ones the pages draw (AppTest), read back from their plotly JSON.
"""

from __future__ import annotations

import re

import pytest
from test_pages import MAIN, TIGHT, figures, no_exception, open_page

DATE = re.compile(r"^\d{4}-\d\d-\d\d[ T]\d\d:\d\d")
UNIT = re.compile(r"\(([^)]+)\)")
"""A unit or scale in parentheses: `(0–1)`, `(0–100)`, `(%)`, `(scenario clock, UTC)`, ..."""


def value_axes(fig: dict) -> dict[str, str]:
    """Axes of a figure that carry values (numbers or times, not category labels) -> what they carry."""
    out = {}
    for trace in fig["data"]:
        if trace.get("type") == "heatmap":  # no value axis: the colour scale is the value (the caption says 0 to 1)
            continue
        for ax in ("x", "y"):
            vals = trace.get(ax)
            if isinstance(vals, dict):  # a typed array (plotly's base64 encoding of numbers)
                out[f"{ax}axis"] = "numbers"
            elif isinstance(vals, list) and vals and all(isinstance(v, (int, float)) for v in vals):
                out[f"{ax}axis"] = "numbers"
            elif isinstance(vals, list) and vals and all(isinstance(v, str) and DATE.match(v) for v in vals):
                out[f"{ax}axis"] = "times"
    return out


def axis_title(fig: dict, axis: str) -> str:
    title = fig["layout"].get(axis, {}).get("title") or {}
    return title.get("text", "") if isinstance(title, dict) else str(title)


PAGES = [
    ("health", dict(scenario="billing-repeat", subject="c1")),
    ("rankings", dict(scenario="billing-repeat", probe="p-bill")),
    ("trends", dict(criterion="recall")),
    ("compare", dict(mode="runs", a=TIGHT, b=MAIN)),
    ("leaderboard", {}),
]


@pytest.mark.parametrize("page,params", PAGES, ids=[p for p, _ in PAGES])
def test_every_value_axis_names_its_unit(app_runs, page, params):
    at = open_page(page, **params)
    no_exception(at)
    figs = figures(at)
    assert figs, "the page draws charts"
    for i, fig in enumerate(figs):
        for axis, carries in value_axes(fig).items():
            title = axis_title(fig, axis)
            assert UNIT.search(title), f"{page} chart {i}: its {axis} carries {carries} but its title {title!r} names no unit"
            if carries == "times":
                assert "clock" in title, f"{page} chart {i}: a time axis says which clock ({title!r})"


def test_the_two_0_to_1_charts_of_trends_share_one_range(app_runs):
    """Per scenario (box) and across runs (lines) both show 0-1 scores, one under the other."""
    at = open_page("trends", criterion="recall")
    by_title = {axis_title(f, "yaxis"): f["layout"]["yaxis"].get("range") for f in figures(at)}
    box, trend = by_title.get("score (0–1)"), by_title.get("shared total (0–1)")
    assert box is not None and box == trend, by_title


@pytest.fixture(scope="module")
def scale_run(tmp_path_factory):
    """billing-repeat through session_aware, a variant whose health counts a recent resolution for
    60 points (its waterfall reaches 170 after the January resolution, the default's 120), and
    history_stuffing (a ranking score of other components)."""
    from fixture_runs import billing_repeat

    from harness.run.runner import execute
    from stores.registry import parse_specs

    root = tmp_path_factory.mktemp("scale-runs")
    specs = parse_specs("session_aware,session_aware:health.recent_resolution=60,history_stuffing")
    run = execute([billing_repeat()], specs, root, run_id="20990101-000000-scales").path
    return run


def test_health_waterfalls_side_by_side_share_one_health_axis(scale_run, monkeypatch):
    monkeypatch.setenv("SUPPORTBENCH_RUNS", str(scale_run.parent))
    at = open_page("health", run=scale_run.name, scenario="billing-repeat", subject="c1", at="4")  # after the resolution
    no_exception(at)
    falls = [f for f in figures(at) if any(t["type"] == "waterfall" for t in f["data"])]
    assert len(falls) == 2, "one waterfall per strategy, side by side"
    ranges = [f["layout"]["yaxis"]["range"] for f in falls]
    assert ranges[0] == ranges[1], f"one health axis for both: {ranges}"
    assert ranges[0][1] >= 170, f"the axis holds the higher waterfall (160 after +60, its label above): {ranges}"
    assert all(axis_title(f, "yaxis") == "health score (0–100)" for f in falls)


def test_rankings_of_one_measure_share_an_axis_and_another_measure_says_its_own_scale(scale_run, monkeypatch):
    monkeypatch.setenv("SUPPORTBENCH_RUNS", str(scale_run.parent))
    at = open_page("rankings", run=scale_run.name, scenario="billing-repeat", probe="p-bill")
    no_exception(at)
    chosen = at.multiselect[0].value
    variant = next(s for s in chosen if s.startswith("session_aware") and s != "session_aware")
    at.multiselect[0].set_value(["session_aware", variant, "history_stuffing"]).run()
    ranks = [f for f in figures(at) if any(t["type"] == "bar" for t in f["data"])]
    assert len(ranks) == 3, len(ranks)
    (own_a, own_b, other) = ranks
    assert own_a["layout"]["xaxis"]["range"] == own_b["layout"]["xaxis"]["range"], "the same components: one axis"
    assert other["layout"]["xaxis"]["range"] != own_a["layout"]["xaxis"]["range"]
    assert "history_stuffing's own scale" in axis_title(other, "xaxis")
    assert "own scale" not in axis_title(own_a, "xaxis")

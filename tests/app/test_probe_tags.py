"""The Leaderboard's probe-tag filter: shown when the run's probes carry tags, narrowing every
table to those probes' cases, bound to the URL."""

from __future__ import annotations

from test_pages import no_exception, open_page

from harness.format.loader import load_suite
from harness.run.runner import execute
from stores.registry import parse_specs

SUITE = """id: tagged
version: 1
title: two probes, two tags
start: 2026-01-01T00:00:00Z
subjects: {c: {}}
events:
  - turn: my router drops wifi every evening
    subject: c
    session: s1
    id: t1
  - turn: the invoice shows a double charge
    id: t2
  - probe: p1
    session: s2
    at: +1d
    task: wifi router evening drops
    tags: [wifi]
    expect: {include: [t1]}
  - probe: p2
    task: double charge on invoice
    tags: [billing]
    expect: {include: [t2]}
  - probe: p3
    task: anything else
    expect: {include: [t1]}
"""


def test_the_probe_tag_filter_narrows_the_leaderboard(tmp_path, monkeypatch):
    (tmp_path / "suite").mkdir()
    (tmp_path / "suite" / "tagged.yaml").write_text(SUITE)
    run = execute(load_suite([str(tmp_path / "suite")]), parse_specs("tfidf,history_stuffing"), tmp_path / "runs",
                  run_id="20990101-000000-tags").path
    monkeypatch.setenv("SUPPORTBENCH_RUNS", str(tmp_path / "runs"))
    everything = open_page("leaderboard", run=run.name)
    no_exception(everything)
    select = next(m for m in everything.multiselect if m.label == "Probe tag")
    assert select.options == ["billing (1 probes)", "wifi (1 probes)"]
    wifi = open_page("leaderboard", run=run.name, ptag="wifi")
    no_exception(wifi)
    all_cases = everything.dataframe[0].value.set_index("strategy")["cases"]
    wifi_cases = wifi.dataframe[0].value.set_index("strategy")["cases"]
    assert set(wifi_cases.index) == set(all_cases.index) == {"tfidf", "history_stuffing"}
    assert (wifi_cases < all_cases.reindex(wifi_cases.index)).all()
    assert next(m for m in wifi.multiselect if m.label == "Probe tag").value == ["wifi"]

"""On a fresh 60-customer generated suite the best design's shared total is at least 0.05 above every
shortcut's, separated, with no shortcut even ahead of every design on any other criterion (issue 29's
bar; the figures are in docs/results/controls.md). Its own file, apart from the other suites'
controls (test_controls_measured.py): it is the largest single test, and `--dist loadfile` runs a
file on one worker whole."""

from __future__ import annotations

import pytest
from test_controls_measured import DESIGNS, _scenarios

from harness.analysis.aggregate import SHARED, aggregate, quality_criteria, shared_criteria, shortcut_separation
from harness.analysis.results import Results
from harness.run.runner import execute
from stores.registry import SHORTCUTS, parse_specs


@pytest.mark.slow
def test_on_a_fresh_60_customer_suite_the_best_design_is_separated_from_every_shortcut(tmp_path):
    run = execute(_scenarios(tmp_path, "realistic", 60, 11), parse_specs(",".join(DESIGNS + SHORTCUTS)),
                  tmp_path / "runs", run_id="separation")
    with Results(run.path) as res:
        df = aggregate(res, include_controls=True)
        seps = shortcut_separation(res, list(DESIGNS), list(SHORTCUTS), shared_criteria(df, list(DESIGNS)),
                                   quality_criteria(df))
    head = next(s for s in seps if s.criterion == SHARED)
    assert head.separated, head
    assert all(head.best_mean - m >= 0.05 for _, m, _, _ in head.against), head.against
    # no shortcut beats every design, neither separated nor on the point estimate (preference_surfacing included:
    # the loss KNOWN_BEATEN named here is gone)
    assert not [s for s in seps if s.beaten_by or s.ahead], [(s.criterion, s.beaten_by, s.ahead) for s in seps]

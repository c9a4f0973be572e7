"""What every chart's axes say: one title per measure, each naming its unit or scale, and one range
for charts drawn side by side that show the same measure.

A reader glancing from one chart to the next reads the bars' lengths before the tick labels: two
health waterfalls side by side on ranges of 0-110 and 0-140 make the same score look different,
and a 0-1 score next to a 0-100 health score with no unit reads as the same thing. So a value
axis always says what it measures and on what scale, and charts that sit next to each other
showing one measure share one range (`span` of their values, set on each with `same_range`).
"""

from __future__ import annotations

from typing import Iterable

import plotly.graph_objects as go

SCORE = "score (0–1)"
"""A criterion's case value or a mean of them: 0 is wrong, 1 right."""
SHARED_TOTAL = "shared total (0–1)"
"""The Leaderboard's headline: the mean over the quality criteria every strategy supports."""
SCORE_DELTA = "B − A (difference of means, score 0–1)"
"""A difference of two means of case values (each on 0-1), so between −1 and 1."""
CASE_VALUE = "case value (0–1)"
SHARE_OF_CASES = "share of the strategy's cases (%)"
HEALTH = "health score (0–100)"
"""The health model's score, kept within 0-100 (a factor's impact is in the same points)."""
CLOCK = "time (scenario clock, UTC)"
"""The simulated clock the scenario's events carry, never wall time."""
RANKING_SCORE = "ranking score (sum of components)"
"""A strategy's own ranking score: comparable between strategies only when they sum the same components."""

SCORE_RANGE = (-0.02, 1.02)
"""A 0-1 score's axis, with room for the markers at 0 and 1."""


def span(lows: Iterable[float], highs: Iterable[float], *, pad: float = 0.05,
         floor: float | None = None, ceiling: float | None = None) -> tuple[float, float]:
    """One range holding every value: from the lowest low to the highest high (0 always inside,
    bars start there), widened by `pad` of its width on each side, then held within `floor` and
    `ceiling` when given."""
    lo = min([0.0, *(float(v) for v in lows)])
    hi = max([0.0, *(float(v) for v in highs)])
    width = (hi - lo) or 1.0
    lo, hi = lo - pad * width, hi + pad * width
    if floor is not None:
        lo = max(lo, floor)
    if ceiling is not None:
        hi = min(hi, ceiling)
    return lo, hi


def same_range(figs: Iterable[go.Figure], axis: str, rng: tuple[float, float]) -> None:
    """Set one range on the `axis` ("xaxis" or "yaxis") of each figure (charts side by side)."""
    for fig in figs:
        fig.update_layout({axis: dict(range=list(rng), autorange=False)})


if __name__ == "__main__":  # Streamlit's pages/ folder discovery ran this file directly (see pages/_router.py)
    from pages._router import hand_over

    hand_over()

"""Regression checks for CI: approved baselines, the check against them, run comparison, JUnit.

- `baseline`: turn a run into the approved baseline file (JSON, keys sorted, reviewable).
- `check`: judge a run against a baseline; the verdict and its exit code.
- `compare`: per-criterion deltas and flipped cases between two runs or two strategies
  (the same numbers the app's Compare page shows).
- `junit`: JUnit XML from a run or from a check.

Everything reads runs through `harness.analysis.results`; nothing here runs a strategy.
"""

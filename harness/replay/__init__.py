"""Replay on the simulated clock: a strategy over a scenario's events (`probes`, what each probe
yields), a decision policy over its turns (`decide`), the health timeline a replay makes
(`timeline`). Below the criteria, which score what a replay yields; the runner in `harness.run`
sits above both."""

"""Replay and run: the simulated-clock replay, the runner that shards it, the run tables and the run store."""

"""The development suites of `datasets/`, by short name: what the development bench scripts
(`bench/floor.py`, `bench/memory_classes.py`, `bench/reading.py`) read by default.

A held-out suite joins this list only after its one honest run, once its round is over
(docs/frontends.md, "The held-out suites"): a suite written blind for the round under way is read by
no development script until then.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

DEVELOPMENT: dict[str, str] = {
    "canonical": "canonical", "challenge": "challenge", "holdout": "challenge_holdout",
    "holdout2": "challenge_holdout2", "holdout3": "challenge_holdout3", "holdout4": "challenge_holdout4",
    "holdout5": "challenge_holdout5", "holdout6": "challenge_holdout6", "holdout7": "challenge_holdout7",
    "holdout8": "challenge_holdout8", "holdout9": "challenge_holdout9",
    "holdout10": "challenge_holdout10", "holdout11": "challenge_holdout11",
}
"""Short name -> folder under `datasets/`."""

HELD_OUT: tuple[str, ...] = ()
"""Folders under `datasets/` written blind for the round under way: read by no development script until
their one honest run (`bench/results.py frontends-holdoutN`); then they move to `DEVELOPMENT`."""


def folder(name: str) -> Path:
    """The development suite's folder."""
    return ROOT / "datasets" / DEVELOPMENT[name]


__all__ = ["DEVELOPMENT", "HELD_OUT", "ROOT", "folder"]

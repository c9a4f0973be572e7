"""Shared test setup: `tests/` importable (for `helpers`), caches kept out of the work tree."""

from __future__ import annotations

import os
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
sys.path.insert(0, str(TESTS))
os.chdir(ROOT)  # scenario paths and default folders are relative to the project root

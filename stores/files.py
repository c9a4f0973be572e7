"""Files the command line reads, read with a size cap: `/dev/zero` is not a config.

Every file a user points the CLI at (a strategy or policy config, a baseline, a scenario, a run's
manifest) is read through `read_capped`: at most its cap plus one byte is read, so a device that
never ends, or a file far larger than any honest one, costs that much memory and time and is
refused with an `OSError` (EFBIG) whose `strerror` says so; each reader already turns an
`OSError` into its one-line error naming the file (exit 2).
"""

from __future__ import annotations

import errno
from pathlib import Path

CONFIG_BYTES = 1_000_000
"""A TOML config of strategies or policies (the project's are under 1 KB)."""
BASELINE_BYTES = 64_000_000
"""A baseline (the canonical suite's is about 0.4 MB)."""
MANIFEST_BYTES = 64_000_000
"""A run's manifest (a few KB per suite file and strategy)."""
README_BYTES = 1_000_000
"""A README whose headline table `supportbench baseline --readme` rewrites (the project's is under 20 KB)."""
SCENARIO_BYTES = 256_000_000
"""A scenario file (the 100,000-event history is the largest the project writes)."""


class TooLarge(OSError):
    """A file past its cap (`errno.EFBIG`); `strerror` says what the cap is."""


def read_capped(path: str | Path, limit: int) -> bytes:
    """The bytes of `path`, or `TooLarge` when it holds more than `limit` (read no further)."""
    with open(path, "rb") as f:
        data = f.read(limit + 1)
    if len(data) > limit:
        raise TooLarge(errno.EFBIG, f"larger than {limit:,} bytes, the most this file may hold (read no further)")
    return data


def read_text_capped(path: str | Path, limit: int, encoding: str = "utf-8") -> str:
    """`read_capped` decoded (`UnicodeDecodeError` when it is not text in `encoding`)."""
    return read_capped(path, limit).decode(encoding)


__all__ = ["read_capped", "read_text_capped", "TooLarge", "CONFIG_BYTES", "BASELINE_BYTES", "MANIFEST_BYTES",
           "README_BYTES", "SCENARIO_BYTES"]

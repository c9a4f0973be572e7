"""Text shown as what it is: control and bidirectional characters made visible.

Scenario titles, subject names, turns, a run's `--name` and strategy labels are data, and data
can hold characters that act instead of showing: an escape sequence that recolours or clears a
terminal, a newline that forges a row of `ls runs`, a right-to-left override (U+202E) that makes
"evil" read as "live". `visible` replaces each such character by an escape a reader sees:

- C0 and C1 control characters and DEL as `\\xNN` (`\\n`, `\\r`, `\\t` by name), except newlines
  (and tabs) when `lines=True` (a multi-line report keeps its lines);
- bidirectional controls (LRM, RLM, ALM, the embeddings, overrides and isolates U+202A-U+202E and
  U+2066-U+2069) and the line and paragraph separators U+2028/U+2029 as `<U+202E>`.

Everything else, accented letters and emoji included, is left as it is.
"""

from __future__ import annotations

import re
from typing import Any

BIDI = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
"""Characters that reorder the text around them."""
SEPARATORS = frozenset("\u2028\u2029")
"""Characters that break a line where none is shown."""

_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
_ACTING = re.compile("[\x00-\x1f\x7f-\x9f" + "".join(sorted(BIDI | SEPARATORS)) + "]")
_ACTING_IN_LINES = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f" + "".join(sorted(BIDI | SEPARATORS)) + "]")


def _shown(m: re.Match[str]) -> str:
    c = m.group(0)
    if c in _NAMED:
        return _NAMED[c]
    if c in BIDI or c in SEPARATORS:
        return f"<U+{ord(c):04X}>"
    return f"\\x{ord(c):02x}"


def visible(text: str, *, lines: bool = False) -> str:
    """`text` with every control and bidirectional character escaped (module doc); with `lines`,
    newlines and tabs are kept."""
    if not isinstance(text, str):
        return text
    return (_ACTING_IN_LINES if lines else _ACTING).sub(_shown, text)


def acting(text: str) -> bool:
    """Whether `text` holds a character `visible` would escape (newlines and tabs included)."""
    return isinstance(text, str) and _ACTING.search(text) is not None




def for_display(value: Any) -> Any:
    """What the app shows of a query's result: every string in it (a DataFrame's text columns, a
    dict's values, a list's items) scrubbed of secrets (`stores.redaction.scrub`: a run written
    before the scrubber, or a secret of the app's own environment) and made `visible` with its
    lines kept. Numbers, keys of dicts and everything else are left as they are."""
    import pandas as pd

    from stores.redaction import scrub

    def text(s: Any) -> Any:
        return visible(scrub(s), lines=True) if isinstance(s, str) else s

    if isinstance(value, str):
        return text(value)
    if isinstance(value, pd.DataFrame):
        cols = [c for c in value.columns if value[c].dtype == object or pd.api.types.is_string_dtype(value[c].dtype)]
        if not cols:
            return value
        out = value.copy()
        for c in cols:
            out[c] = out[c].map(lambda v: for_display(v) if isinstance(v, (str, list, tuple)) else v)
        return out
    if isinstance(value, dict):
        return {k: for_display(v) for k, v in value.items()}
    if isinstance(value, list):
        return [for_display(v) for v in value]
    if isinstance(value, tuple):
        return tuple(for_display(v) for v in value)
    return value


__all__ = ["visible", "acting", "for_display", "BIDI", "SEPARATORS"]

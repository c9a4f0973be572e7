"""The learned front end of the extractor's reading of outcomes (`structured:front=learned`).

The rule-based extractor (`stores.structured.extract`) finds outcome phrases by their words
(`fixed it`, `did not help`). `learned_marks(sentence, norm, marks)` adds what the words missed:
the learned `outcome` head (phrase bank `phrases/memory.yaml`) reads the customer's sentence, and

- when the rules found no outcome phrase in the whole message and the head is sure of `worked` or
  `failed` ("no dice",
  "that did the trick", "still the same after the reinstall"), one outcome mark is put at the end
  of the sentence, so it settles the steps the sentence names (a failure all of them, a success
  the last) or, when it names none, the step the agent put forward;
- when the rules read only successes and the head is sure of `failed` (sarcasm: "oh great, that
  fixed nothing"), those marks become failures;
- otherwise the rules' marks stand (the head unsure, or agreeing).
"""

from __future__ import annotations

from functools import lru_cache

from stores.frontend.model import front_end
from stores.structured.lexicon import OutcomeMark


@lru_cache(maxsize=1 << 16)
def learned_marks(sentence: str, norm: str, marks: tuple[OutcomeMark, ...], add: bool = True) -> tuple[OutcomeMark, ...]:
    """The sentence's outcome marks with the learned head's reading applied (see the module docstring);
    `add=False` when another sentence of the message has an outcome phrase (no mark is added then)."""
    r = front_end().read("outcome", sentence)
    if not r.sure or r.label == "none":
        return marks
    if not marks:
        return (OutcomeMark(r.label, False, len(norm)),) if add else marks
    if r.label == "failed" and all(m.outcome == "worked" and not m.all_prior for m in marks):
        return tuple(OutcomeMark("failed", False, m.start) for m in marks)
    return marks

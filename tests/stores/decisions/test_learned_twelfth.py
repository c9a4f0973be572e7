"""The decisions other than the floor, twelfth round: the readers' shared lowering, a refusal said as one, a yes to a
lapsed offer with a person named, time running out against durations and months, and a person one has not got."""

from __future__ import annotations

import re

from stores.decisions import learned, signals
from stores.decisions.signals import lowered


def test_the_readers_lower_the_text_and_straighten_its_apostrophes_in_one_place():
    assert lowered("I DON\u2019T Want It") == "i don't want it"
    assert signals.problem_words("It Doesn\u2019t Work") == ["doesn't"]
    assert signals.intent("We\u2019re Not Renewing next year") == "retention"
    # the idiom is written once, in `lowered`
    idiom = re.compile(r"\.lower\(\)\.replace\(\"\\u2019\"")
    for module in (signals, learned):
        source = open(module.__file__, encoding="utf-8").read()
        assert len(idiom.findall(source)) == (1 if module is signals else 0), module.__name__

"""bench/threshold_steadiness.py: which phrase a drop removes, and from where."""

from __future__ import annotations

import yaml

from bench.threshold_steadiness import DROP_HEADS, _drops, _without

BANK = """isolated: []
sensitive:
  none:
    - "I'd like out of the monthly charge"
intent:
  retention:
    - "I'd like out of the monthly charge"
    - "time to stop the plan"
"""


def test_a_drop_removes_the_phrase_from_its_own_head_only(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "decisions.yaml").write_text(BANK)
    _without(src, tmp_path / "out", "intent", "I'd like out of the monthly charge")
    data = yaml.safe_load((tmp_path / "out" / "decisions.yaml").read_text())
    assert data["intent"]["retention"] == ["time to stop the plan"]
    assert data["sensitive"]["none"] == ["I'd like out of the monthly charge"]  # the floor's copy stays


def test_drops_are_seeded_and_take_the_heads_in_turn(tmp_path):
    path = tmp_path / "decisions.yaml"
    path.write_text(yaml.safe_dump({h: {"no": ["n"], "yes": [f"{h} {i}" for i in range(9)]} for h in DROP_HEADS}))
    drops = _drops(path, DROP_HEADS, 2 * len(DROP_HEADS))
    assert drops == _drops(path, DROP_HEADS, 2 * len(DROP_HEADS))
    assert [h for h, _, _ in drops] == list(DROP_HEADS) * 2 and all(label == "yes" for _, label, _ in drops)

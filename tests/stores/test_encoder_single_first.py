"""A process without strict numerics looks its texts up in its own folder before it loads a model: on a warm
cache it loads none (before, every such process loaded the model, sentence-transformers imported with it, to
learn that its vectors were in the other folder)."""

from __future__ import annotations

import numpy as np
import pytest

from stores.cache import text_key
from stores.retrieval import encoder as enc


def _no_model(model_id=enc.DEFAULT_MODEL):
    raise AssertionError("a model was loaded")


def test_a_process_without_strict_numerics_reads_its_own_folder_before_loading_a_model(monkeypatch, tmp_path):
    texts = ["the export is stuck at 40 percent", "hello"]
    vecs = np.eye(2, 4, dtype=np.float32)
    first = enc.Encoder(cache_dir=tmp_path)
    first._go_single()
    first._write_part([text_key(t) for t in texts], vecs)  # what an earlier process of this machine encoded
    monkeypatch.setattr(enc, "_BATCH_INDEPENDENT", False)
    monkeypatch.setattr(enc, "load_model", _no_model)
    e = enc.Encoder(cache_dir=tmp_path)
    got = e.encode(texts)
    assert e.single and e.dir.name == "single" and e.calls == 0
    assert got.tobytes() == vecs.tobytes()


def test_a_miss_in_its_own_folder_still_loads_the_model(monkeypatch, tmp_path):
    monkeypatch.setattr(enc, "_BATCH_INDEPENDENT", False)
    monkeypatch.setattr(enc, "load_model", _no_model)
    with pytest.raises(AssertionError, match="a model was loaded"):
        enc.Encoder(cache_dir=tmp_path).encode(["never encoded here"])


def test_a_strict_process_loads_the_model_for_a_miss_as_before(monkeypatch, tmp_path):
    monkeypatch.setattr(enc, "_BATCH_INDEPENDENT", True)
    monkeypatch.setattr(enc, "load_model", _no_model)
    e = enc.Encoder(cache_dir=tmp_path)
    with pytest.raises(AssertionError, match="a model was loaded"):
        e.encode(["never encoded here"])
    assert not e.single

"""`encoder()` answers a repeated question from what it was asked (no path built or resolved per probe),
and still names a new folder when the cache variable or the current folder changes."""

from pathlib import Path

from stores.retrieval import encoder as enc


def test_the_same_question_is_the_same_encoder_and_a_new_folder_a_new_one(tmp_path, monkeypatch):
    monkeypatch.setattr(enc, "_ENCODERS", {})
    monkeypatch.setattr(enc, "_ASKED", {})
    monkeypatch.setenv("SUPPORTBENCH_CACHE", str(tmp_path / "a"))
    first = enc.encoder("m")
    assert enc.encoder("m") is first and tmp_path / "a" / "embeddings" in first.dir.parents
    monkeypatch.setenv("SUPPORTBENCH_CACHE", str(tmp_path / "b"))
    other = enc.encoder("m")
    assert other is not first and tmp_path / "b" / "embeddings" in other.dir.parents
    monkeypatch.delenv("SUPPORTBENCH_CACHE")
    monkeypatch.chdir(tmp_path)
    here = enc.encoder("m")
    assert Path(tmp_path) / ".cache" / "supportbench" / "embeddings" in here.dir.parents
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path / "sub")
    assert enc.encoder("m") is not here
    # the same folder named two ways is one encoder, as before
    assert enc.encoder("m", tmp_path / "x") is enc.encoder("m", str(tmp_path / "sub" / ".." / "x"))
    enc.forget_encoders()
    assert not enc._ASKED and not enc._ENCODERS

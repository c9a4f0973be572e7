"""The learned front end's reads are computed once per text (speed only: the same numbers as computing afresh),
the process's front end is found without building a path, and the bank is composed by libyaml (the same bank)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

import stores.frontend.bank as fb
import stores.frontend.model as fm
from stores.frontend.model import FrontEnd, Head, SUMMED


class _Encoder:
    """A stand-in encoder: a fixed unit vector per text, counting the texts it is asked to encode."""

    def __init__(self, dim: int = 8) -> None:
        self.dir = Path("strict")
        self.dim = dim
        self.asked: list[str] = []

    def _one(self, text: str) -> np.ndarray:
        seed = sum(map(ord, text)) + (0 if self.dir == Path("strict") else 7919)  # another folder: other vectors
        v = np.random.default_rng(seed).normal(size=self.dim).astype(np.float32)
        return v / np.linalg.norm(v)

    def encode(self, texts: list[str]) -> np.ndarray:
        self.asked += texts
        return np.stack([self._one(t) for t in texts])

    def warm(self, texts: list[str]) -> int:
        return 0


def _heads(dim: int = 8) -> dict[str, Head]:
    rng = np.random.default_rng(0)
    labels = ("crisis", "harm", "near_miss", "none")
    protos = rng.normal(size=(20, dim))
    protos /= np.linalg.norm(protos, axis=1, keepdims=True)
    sensitive = Head("sensitive", labels, "none", rng.normal(size=(4, dim)), rng.normal(size=4),
                     {"crisis": 0.5, "harm": 0.5, "near_miss": 0.5, "disclosure": 0.3}, {},
                     {"disclosure": (protos, np.arange(20) < 6)})
    hostile = Head("hostile", ("no", "yes"), "no", rng.normal(size=(1, dim)), rng.normal(size=1), {"yes": 0.55}, {})
    return {"sensitive": sensitive, "hostile": hostile}


def _front(monkeypatch) -> tuple[FrontEnd, _Encoder]:
    import stores.retrieval.encoder as enc_mod

    monkeypatch.setattr(enc_mod, "take_expected", lambda: [])
    fe = FrontEnd("stand-in", _heads())
    fe._encoder = _Encoder()
    return fe, fe._encoder



def _reads_as_computed_afresh(fe, text: str, v) -> None:
    """Each head's read, probabilities and top label of `text` are what the head computes afresh from its vector `v`."""
    for name, h in fe.heads.items():
        p = h.proba(v)[0]
        assert fe.read(name, text) == h.decide(p)
        assert fe.proba(name, text) == dict(zip(h.labels, map(float, p)))
        i = int(np.argmax(p))
        assert fe.top(name, text) == fm.Reading(name, h.labels[i], float(p[i]), 0.0)

def test_a_text_is_encoded_once_and_each_head_reads_it_once(monkeypatch):
    """Before: every read encoded (looked up) its text again and ran the head again; a run reads each message for
    each policy and each reader."""
    fe, enc = _front(monkeypatch)
    text = "he took my keys and I can't get out"
    for _ in range(3):
        fe.read("hostile", text)
        fe.read_all(("hostile", "sensitive"), text)
        fe.top("sensitive", text)
        fe.proba("sensitive", text)
        fe.summed("sensitive", "disclosure", text)
    assert enc.asked == [text]
    assert fe.computed == {"vectors": 1, "probas": 2, "summed": 1}


def test_the_kept_reads_are_the_numbers_computed_afresh(monkeypatch):
    fe, enc = _front(monkeypatch)
    texts = ["my card was declined twice", "I don't want to be here any more", "thanks, that fixed it"]
    for text in texts * 2:
        v = enc._one(text)[None, :]
        _reads_as_computed_afresh(fe, text, v)
        s = fe.heads["sensitive"]
        score, p_sum, margin = s.summed("disclosure", v)
        assert fe.summed("sensitive", "disclosure", text) == (
            float(score[0]), float(p_sum[0]), float(margin[0]), dict(zip(s.labels, map(float, s.proba(v)[0]))))
    assert SUMMED["sensitive"]["disclosure"] == frozenset({"crisis", "harm"})


def test_a_threshold_changed_or_a_head_replaced_is_read_afresh(monkeypatch):
    fe, enc = _front(monkeypatch)
    text = "you lot are useless"
    before = fe.read("hostile", text)
    fe.heads["hostile"].thresholds["yes"] = 0.0 if before.label != "yes" else 1.01  # thresholds apply at each read
    assert fe.read("hostile", text).label != before.label
    h = fe.heads["hostile"]
    fe.heads["hostile"] = Head("hostile", h.labels, h.default, -h.coef, -h.intercept, {"yes": 0.55}, {})
    assert fe.proba("hostile", text)["yes"] == pytest.approx(1 - fe.heads["hostile"].proba(enc._one(text)[None, :])[0][0])
    assert fe.computed["probas"] == 2 and enc.asked == [text]


def test_the_memo_starts_again_when_the_encoder_changes_folders(monkeypatch):
    fe, enc = _front(monkeypatch)
    fe.read("hostile", "hello")
    enc.dir = Path("single")  # e.g. the model loaded without strict numerics: other vectors
    fe.read("hostile", "hello")
    assert enc.asked == ["hello", "hello"]


def test_every_memo_starts_again_when_the_encoder_changes_folders(monkeypatch):
    """Review: `summed` looked its memo up before the folder check, so after a switch it returned the old
    folder's score and summed probability beside the new folder's label probabilities."""
    fe, enc = _front(monkeypatch)
    text = "he smashed my laptop"
    for name in fe.heads:
        fe.read(name, text)
        fe.proba(name, text)
    fe.summed("sensitive", "disclosure", text)
    enc.dir = Path("single")
    s = fe.heads["sensitive"]
    v = enc._one(text)[None, :]
    score, p_sum, margin = s.summed("disclosure", v)
    assert fe.summed("sensitive", "disclosure", text) == (
        float(score[0]), float(p_sum[0]), float(margin[0]), dict(zip(s.labels, map(float, s.proba(v)[0]))))
    _reads_as_computed_afresh(fe, text, v)
    assert enc.asked == [text, text]


def test_a_vector_encoded_across_a_folder_switch_is_not_kept(monkeypatch):
    """Review: a read that encoded in the old folder stored its vector after another read had already started
    the memo again in the new folder (the memo has no lock; a switch inside `encode` stands for that read)."""
    fe, enc = _front(monkeypatch)
    plain = enc.encode

    def switching(texts):
        got = plain(texts)  # encoded in the old folder
        if enc.dir == Path("strict"):
            enc.dir = Path("single")
            fe.read("hostile", "another text")  # the other read: the memo starts again in the new folder
        return got

    enc.encode = switching
    fe.read("hostile", "hello")
    enc.encode = plain
    assert fe._memo_dir == Path("single") and "hello" not in fe._vecs
    assert fe.proba("hostile", "hello") == dict(zip(fe.heads["hostile"].labels,
                                                   map(float, fe.heads["hostile"].proba(enc._one("hello")[None, :])[0])))


def test_the_memo_is_bounded(monkeypatch):
    fe, enc = _front(monkeypatch)
    monkeypatch.setattr(fm, "MEMO_LIMIT", 4)
    for i in range(10):
        fe.read("hostile", f"text {i}")
    assert len(fe._vecs) <= 4 and len(fe._probas) <= 32


def test_the_process_front_end_is_found_without_building_a_path(monkeypatch, tmp_path):
    """Before: every call built the cache folder's path (`cache_root`) to find the front end, thousands of times a run."""
    made: list[Path] = []

    def read(path, model_id):
        made.append(path)
        return FrontEnd(model_id, {})

    monkeypatch.setattr(fm, "_FRONTS", {})
    monkeypatch.setattr(fm, "artefact_path", lambda model_id, folder: tmp_path / f"{len(made)}.npz")
    monkeypatch.setattr(fm, "_read_artefact", read)
    monkeypatch.setattr(Path, "is_file", lambda self: True)
    monkeypatch.delenv("SUPPORTBENCH_CACHE", raising=False)
    first = fm.front_end()

    def no_path():
        raise AssertionError("cache_root was called")

    monkeypatch.setattr(fm, "cache_root", no_path)
    assert fm.front_end() is first
    monkeypatch.setenv("SUPPORTBENCH_CACHE", str(tmp_path / "other"))  # another cache folder: another front end
    other = fm.front_end()
    assert other is not first and fm.front_end() is other and len(made) == 2
    monkeypatch.chdir(tmp_path)  # the folder is the variable's, wherever the process is
    assert fm.front_end() is other
    monkeypatch.delenv("SUPPORTBENCH_CACHE")  # ./.cache of another current folder: another front end
    assert fm.front_end() is not first and len(made) == 3


@pytest.mark.skipif(not yaml.__with_libyaml__, reason="PyYAML built without libyaml")
def test_the_bank_is_composed_by_libyaml_and_is_the_same_bank(monkeypatch):
    """Before: PyYAML's pure-Python composer read the whole bank (a run's extractor reads it for its word model)."""
    def slow(*args, **kwargs):
        raise AssertionError("PyYAML's own composer ran")

    with monkeypatch.context() as m:
        m.setattr(yaml.composer.Composer, "compose_node", slow)
        fast = fb.load_bank.__wrapped__(str(fb.PHRASES))
    monkeypatch.setattr(fb, "_LIBYAML", None)
    assert fb.load_bank.__wrapped__(str(fb.PHRASES)) == fast


def test_a_bad_bank_file_fails_with_pyyamls_own_words(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("hostile:\n  yes: [one, two\n  no: three\n", encoding="utf-8")
    try:
        yaml.compose(bad.read_text(), Loader=yaml.Loader)
    except yaml.YAMLError as e:
        said = f"bad.yaml:{e.problem_mark.line + 1}: not valid YAML ({e.problem})"
    with pytest.raises(fb.BankError) as err:
        fb._load_file(bad)
    assert str(err.value) == said

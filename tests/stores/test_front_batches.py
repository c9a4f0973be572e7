"""The learned front end encodes in batches what it knows it will read: the texts a run's shard names
ahead (`stores.retrieval.encoder.expect`) and a message's sentences, with the vectors one-at-a-time
reads give."""

from __future__ import annotations

import numpy as np
from helpers import scenario, turn

import stores.frontend.model as fm
from harness.run.runner import prefetch
from stores.retrieval.encoder import Encoder, encoder, expect, take_expected
from stores.structured import learned as fx
from stores.structured.extract import Extractor

BANK = ('hostile:\n  "yes": ["useless lot", "utter clowns", "pathetic service", "total amateurs", "absolute joke"]\n'
        '  "no": ["yes please", "thanks lots", "order status", "new address", "parcel tracking"]\n')


def test_a_front_end_read_encodes_what_the_run_expects_in_one_call_with_the_same_vectors(tmp_path, monkeypatch):
    bank = tmp_path / "bank"
    bank.mkdir()
    (bank / "b.yaml").write_text(BANK, encoding="utf-8")
    monkeypatch.setenv("SUPPORTBENCH_CACHE", str(tmp_path / "cache"))
    fe, _ = fm.train(folder=str(bank))
    texts = ["my parcel never came", "you lot are useless, honestly", "agent: the refund is on its way", "thanks, that sorted it"]
    take_expected()  # nothing left over from another test of this process
    expect(lambda: texts)
    e = encoder()
    calls, encoded = e.calls, e.encoded
    fe.read("hostile", texts[1])
    assert (e.calls - calls, e.encoded - encoded) == (1, 4)  # the read and the three expected, one call
    for t in texts:
        fe.read("hostile", t)
    assert e.calls - calls == 1
    alone = Encoder(cache_dir=tmp_path / "alone")
    one_by_one = np.stack([alone.encode([t])[0] for t in texts])
    assert alone.calls == 4
    assert np.array_equal(e.encode(texts), one_by_one)  # bit for bit


def test_what_is_expected_is_read_only_when_taken_and_taken_once():
    asked = []
    take_expected()
    expect(lambda: asked.append(1) or ["a", " ", "b", "a"])
    assert asked == []
    expect(lambda: asked.append(2) or ["c"])  # a new shard's texts replace the last one's
    assert asked == []
    assert take_expected() == ["c"] and asked == [2]
    assert take_expected() == []


def test_a_shard_names_its_customer_and_agent_messages_before_its_replays():
    sc = scenario([turn("t1", "My order is late.", 0), turn("a1", "Sorry, checking now.", 1, role="agent"),
                   turn("a2", "refund issued", 2, role="agent", kind="action"), turn("t2", "My order is late.", 3),
                   turn("t3", "Thanks!", 4)])
    take_expected()
    prefetch([sc], [])
    # as the front ends read them: a customer's words as said, an agent's message as `agent: ...`, no action
    assert take_expected() == ["My order is late.", "agent: Sorry, checking now.", "Thanks!"]


class _Recording:
    """A front end that reads nothing and records what it was asked, in order."""

    def __init__(self):
        self.asked: list[tuple[str, object]] = []

    def warm(self, texts):
        self.asked.append(("warm", tuple(texts)))

    def read(self, head, text):
        self.asked.append(("read", text))
        return fm.Reading(head, "none", 0.9, 0.6)

    def proba(self, head, text):
        self.asked.append(("read", text))
        return {"failed": 0.05, "none": 0.9, "worked": 0.05, "no": 0.9, "yes": 0.1}


def test_the_extractor_has_a_messages_sentences_encoded_together_before_reading_them(monkeypatch):
    fake = _Recording()
    monkeypatch.setattr(fx, "front_end", lambda: fake)
    fx.forget_readings()
    try:
        x = Extractor("learned")
        x.observe(turn("t1", "The till froze this morning. I restarted it twice. Still stuck.", 0))
        x.observe(turn("t2", "Any news?", 5))
    finally:
        fx.forget_readings()
    said = ("The till froze this morning.", "I restarted it twice.", "Still stuck.")
    assert fake.asked[0] == ("warm", said)  # once, before any sentence is read
    assert [a for a in fake.asked if a[0] == "warm"] == [("warm", said)]  # a one-sentence message: no warm
    assert {t for kind, t in fake.asked if kind == "read"} >= set(said)

"""The learned preference reading of the structured extractor (stores/structured/learned.py): a lasting
preference said without the lexicon's words is read, a question or a complaint is not, and a newer
preference on a topic replaces the older one while one on another topic stands beside it.

The sentences here are written for these tests, apart from the phrase bank (phrases/preferences.yaml)."""

from __future__ import annotations

import pytest
from helpers import turn

from stores.frontend.model import Reading
from stores.structured import learned as fx
from stores.structured.extract import Extractor
from stores.structured.lexicon import normalize, preference_topics

INDIRECT = {
    "Phone calls never suit me, an email I can read later is better.": "contact",
    "I would sooner get messages on Teams these days.": "contact",
    "Afternoons are the only time I can talk.": "hours",
    "Spanish is much easier for me to read than English.": "language",
    "Word documents are easier for our lawyers than PDFs.": "format",
}
NOT_PREFERENCES = (
    "Can you call me tomorrow about the refund?",
    "I waited on hold for an hour and then the call dropped.",
    "The PDF you emailed me is empty.",
)


def profile(front, events, subject="c1"):
    x = Extractor(front)
    for e in events:
        x.observe(e)
    return x, {m.key: (m.text, m.source_ids) for m in x.memories(subject) if m.type == "PROFILE"}


@pytest.mark.parametrize("sentence", sorted(INDIRECT))
def test_a_preference_said_indirectly_is_read_with_its_topic(sentence):
    assert preference_topics(normalize(sentence)) == ()  # the rules' words alone miss it
    r = fx.learned_preference(sentence, normalize(sentence))
    assert INDIRECT[sentence] in r.topics, r.receipt
    assert r.receipt.startswith("learned preference=yes p=")
    _, rules = profile("rules", [turn("t1", sentence, 0)])
    assert not rules
    _, learned = profile("learned", [turn("t1", sentence, 0)])
    assert learned[f"preference:{INDIRECT[sentence]}"] == (sentence, ("t1",))


@pytest.mark.parametrize("sentence", NOT_PREFERENCES)
def test_a_question_or_a_complaint_is_not_a_preference(sentence):
    r = fx.learned_preference(sentence, normalize(sentence))
    assert r.topics == (), r.receipt
    _, learned = profile("learned", [turn("t1", sentence, 0)])
    assert not [k for k in learned if k.startswith("preference:")]


def test_a_newer_preference_on_the_topic_replaces_the_older_and_another_topic_stands():
    first = "Phone calls never suit me, an email I can read later is better."
    other = "Spanish is much easier for me to read than English."
    newer = "I would sooner get messages on Teams these days."
    events = [turn("t1", first, 0), turn("t2", other, 10, session="s2"), turn("t3", newer, 20, session="s3")]
    x, prefs = profile("learned", events)
    assert prefs["preference:contact"] == (newer, ("t3",))  # the older contact preference is gone, t1 with it
    assert prefs["preference:language"] == (other, ("t2",))
    said = dict(x.readers["c1"]["t3"])
    assert said[newer].startswith("learned preference=yes") and "topic contact" in said[newer]


class _FakePreferences:
    """A front end whose preference heads answer from a table (the topic rule is tested apart from the model)."""

    def __init__(self, yes: dict[str, float], topics: dict[str, dict[str, float]]):
        self.yes, self.topics = yes, topics

    def read(self, head, text):
        if head == "preference":
            p = self.yes.get(text, 0.1)
            return Reading(head, "yes" if p >= 0.5 else "no", p if p >= 0.5 else 1 - p, 0.5 if p >= 0.5 else 0.6)
        return Reading(head, "none", 0.9, 0.5)

    def proba(self, head, text):
        if head == "outcome":  # the extractor's outcome reading asks first: nothing reported
            return {"failed": 0.05, "none": 0.9, "worked": 0.05}
        assert head == "preference_topic"
        return self.topics[text]


def test_the_topic_is_the_rules_words_first_then_the_topic_head(monkeypatch):
    worded, bare = "texts suit me", "after five for me"
    fake = _FakePreferences({worded: 0.8, bare: 0.7},
                            {bare: {"none": 0.1, "hours": 0.6, "contact": 0.2, "format": 0.1}})
    monkeypatch.setattr(fx, "front_end", lambda: fake)
    fx.learned_preference.cache_clear()
    try:
        r = fx.learned_preference(worded, normalize(worded))
        assert r.topics == ("contact",) and r.receipt.endswith("topic contact (rules' words)")
        r = fx.learned_preference(bare, normalize(bare))
        assert r.topics == ("hours",) and r.receipt.endswith("topic hours (learned p=0.60)")
        r = fx.learned_preference("mornings are bad", normalize("mornings are bad"))  # the head says no
        assert r.topics == () and r.receipt.startswith("learned preference=no")
        # a sentence that names a step is troubleshooting: never asked
        fake.yes["I restarted the app in the mornings."] = 0.99
        x, prefs = profile("learned", [turn("t1", "I restarted the app in the mornings.", 0)])
        assert not [k for k in prefs if k.startswith("preference:")]
        # beside a problem report of the same message, a sentence tells what the problem costs: not read;
        # alone (or asked as a question: never read) it is
        fake.yes["I need the stock sheets by noon."] = 0.95
        fake.topics["I need the stock sheets by noon."] = {"none": 0.1, "format": 0.9}
        _, prefs = profile("learned", [turn("t1", "The scanner app crashes on start. I need the stock sheets by noon.", 0)])
        assert not [k for k in prefs if k.startswith("preference:")]
        _, prefs = profile("learned", [turn("t1", "I need the stock sheets by noon.", 0)])
        assert prefs["preference:format"][0] == "I need the stock sheets by noon."
        fake.yes["Could you text me in future?"] = 0.95
        _, prefs = profile("learned", [turn("t1", "Could you text me in future?", 0)])
        assert not [k for k in prefs if k.startswith("preference:")]
        # the rules' own preference stays theirs, and the receipt says so
        x, prefs = profile("learned", [turn("t1", "Please call me in the afternoons from now on.", 0)])
        assert set(prefs) >= {"preference:hours", "preference:contact"}
        assert dict(x.readers["c1"]["t1"])["Please call me in the afternoons from now on."].startswith("rules preference")
    finally:
        fx.learned_preference.cache_clear()


def test_a_borrowing_bank_file_takes_the_other_files_phrases_but_the_labels_it_names(tmp_path):
    from stores.frontend.bank import load_bank

    (tmp_path / "a.yaml").write_text('kind:\n  pref: ["email me", "texts suit me"]\n  other: ["hello there"]\n'
                                     'signal:\n  "yes": ["this is urgent"]\n  "no": ["fine thanks"]\n', encoding="utf-8")
    (tmp_path / "b.yaml").write_text('borrow_except: [kind.pref]\n'
                                     'topic:\n  contact: ["mail beats calls"]\n  none: ["why no call", "fine thanks"]\n',
                                     encoding="utf-8")
    bank = load_bank(str(tmp_path))
    topic = dict(zip(bank["topic"].texts, bank["topic"].targets))
    assert topic == {"mail beats calls": "contact", "why no call": "none", "fine thanks": "none",
                     "hello there": "none", "this is urgent": "none"}  # a.yaml's phrases but kind.pref's, once each
    assert "mail beats calls" not in bank["signal"].texts  # a file that does not borrow takes nothing
    load_bank.cache_clear()

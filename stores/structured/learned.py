"""The learned and chat front ends of the extractor's reading of outcomes (`structured:front=...`).

The rule-based extractor (`stores.structured.extract`) finds outcome phrases by their words
(`fixed it`, `did not help`). A front end adds what the words missed: a reader of the `outcome`
head (phrase bank `phrases/memory.yaml`) reads the customer's sentence, and

- when the rules found no outcome phrase in the whole message and the reader is sure of `worked` or
  `failed` ("no dice",
  "that did the trick", "still the same after the reinstall"), one outcome mark is put at the end
  of the sentence, so it settles the steps the sentence names (a failure all of them, a success
  the last) or, when it names none, the step the agent put forward;
- when the rules read only successes and the reader is sure of `failed` (sarcasm: "oh great, that
  fixed nothing"), those marks become failures;
- otherwise the rules' marks stand (the reader unsure, or agreeing).

The reader is the learned head (`front=learned`, the default: `learned_marks`) or the reply
engine's OpenAI-compatible endpoint (`front=chat`: `chat_marks`, stores/frontend/chat.py), whose
answer is always taken as sure; when the endpoint is not set or gives no usable answer, the learned
head reads instead and its reading says why (`learned outcome=failed p=0.81 (threshold 0.50)
[chat endpoint answered HTTP 500: learned]`). The extractor keeps each sentence's reading
(`Extractor.readers`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache

from stores.frontend.model import Reading, front_end
from stores.structured.lexicon import OutcomeMark, topic_words


def apply(r: Reading, norm: str, marks: tuple[OutcomeMark, ...], add: bool = True) -> tuple[OutcomeMark, ...]:
    """The sentence's outcome marks with reading `r` applied (see the module docstring)."""
    if not r.sure or r.label == "none":
        return marks
    if not marks:
        return (OutcomeMark(r.label, False, len(norm)),) if add else marks
    if r.label == "failed" and all(m.outcome == "worked" and not m.all_prior for m in marks):
        return tuple(OutcomeMark("failed", False, m.start) for m in marks)
    return marks


REPORT_NONE_MAX = 0.3
"""The `outcome` head reads a sentence as reporting an outcome when its `none` is at most this..."""
POLARITY_MARGIN = 0.1
"""...and which outcome when the mean of the two polarity readers (the head's own worked / failed odds and
the word model's) is this far from an even split. On the bank's four validation folds (seeded) this
margin reads worked at precision 0.83, recall 0.56 and failed at 0.78 / 0.48 (the head alone at its
thresholds: 0.85 / 0.21 and 0.82 / 0.42); 0.15 keeps both precisions above 0.8 (0.92 / 0.46, 0.81 /
0.48) but lowered the extraction F1 of the development set (tests/data/extraction_dev) from 0.667 to
0.564 with the canonical and challenge figures unchanged: an outcome left unread leaves its attempt in
progress, which is wrong either way. The `none` bound, 0.3, had the best recall of 0.2, 0.3 and 0.4
with both precisions near 0.8 on the same folds."""


@lru_cache(maxsize=1)
def _polarity_model():
    """Words -> P(worked) among the bank's outcome phrases (`outcome.worked` against `outcome.failed`): a
    class-balanced logistic regression over word uni- and bigrams (seeded, trained in milliseconds at first
    use). MiniLM's sentence vectors tell an outcome report from other talk well and its polarity poorly
    (4-fold validation accuracy 0.74 against the word model's 0.88): "no more crashes" and "no change"
    lie close together."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from threadpoolctl import threadpool_limits

    from stores.frontend.bank import load_bank
    from stores.structured.lexicon import normalize

    head = load_bank()["outcome"]
    pairs = [(t, y) for t, y in zip(head.texts, head.targets) if y in ("worked", "failed")]
    vec = TfidfVectorizer(ngram_range=(1, 2), preprocessor=normalize, sublinear_tf=True)
    x = vec.fit_transform([t for t, _ in pairs])
    clf = LogisticRegression(C=4.0, max_iter=5000, class_weight="balanced", random_state=0)
    with threadpool_limits(limits=1, user_api="blas"):  # the same weights whatever numpy's BLAS thread count
        clf.fit(x, [y for _, y in pairs])
    return vec, clf, list(clf.classes_).index("worked")


def word_polarity(sentence: str) -> float:
    """The word model's probability that an outcome sentence says the step worked."""
    vec, clf, worked = _polarity_model()
    return float(clf.predict_proba(vec.transform([sentence]))[0, worked])


@lru_cache(maxsize=1 << 16)
def learned_reading(sentence: str) -> Reading:
    """The learned reading of one sentence's outcome: the `outcome` head says whether it reports one (its
    `none` at most `REPORT_NONE_MAX`), the mean of its worked / failed odds and the word model's
    (`word_polarity`) says which, sure beyond `POLARITY_MARGIN` of an even split; the reading's note gives
    the three figures. A sentence that reports none is the head's own reading (`none`, or unsure)."""
    fe = front_end()
    p = fe.proba("outcome", sentence)
    if p["none"] > REPORT_NONE_MAX:
        r = fe.read("outcome", sentence)
        return r if r.label in (None, "none") else replace(r, label=None)
    emb = p["worked"] / (p["worked"] + p["failed"])
    words = word_polarity(sentence)
    w = (emb + words) / 2
    note = f"report p={1 - p['none']:.2f}; polarity: head {emb:.2f}, words {words:.2f}"
    if w >= 0.5 + POLARITY_MARGIN:
        return Reading("outcome", "worked", w, 0.5 + POLARITY_MARGIN, note=note)
    if w <= 0.5 - POLARITY_MARGIN:
        return Reading("outcome", "failed", 1 - w, 0.5 + POLARITY_MARGIN, note=note)
    return Reading("outcome", None, max(w, 1 - w), 0.5 + POLARITY_MARGIN, note=note)


def learned_marks(sentence: str, norm: str, marks: tuple[OutcomeMark, ...], add: bool = True) -> tuple[OutcomeMark, ...]:
    """The sentence's outcome marks with the learned head's reading applied (see the module docstring);
    `add=False` when another sentence of the message has an outcome phrase (no mark is added then)."""
    return apply(learned_reading(sentence), norm, marks, add)


def chat_reading(sentence: str) -> Reading:
    """The chat endpoint's reading of one sentence, or the learned head's saying why not."""
    from stores.frontend.chat import chat_front

    chat = chat_front()
    if chat is None:
        return replace(learned_reading(sentence), note="SUPPORTBENCH_REPLY_URL is not set: learned")
    return chat.read_all(("outcome",), sentence, front_end())["outcome"]


READERS = {"learned": learned_reading, "chat": chat_reading}
"""The reading function of each front end other than the rules."""


# ---- preferences ---------------------------------------------------------------------------------
# The rules see a preference by its words (`prefer`, `from now on`, `please call`: lexicon.PREFERENCE)
# and miss one said in passing ("I'm never at my desk mornings, text me"). Under `front=learned` (and
# `chat`, whose endpoint reads outcomes only), a sentence the rules do not read as a preference is asked
# of the binary `preference` head (phrases/preferences.yaml, trained on every topic's phrases against
# questions, complaints, one-off requests and reports that name a channel; its threshold the best F1
# among those precise enough on the validation split). When it says yes, the topic is the lexicon's topic
# words if the sentence has any, else the `preference_topic` head's most probable topic: one topic per
# memory key, so a newer preference on the same topic replaces the older and one on another topic does not.


@dataclass(frozen=True)
class PreferenceReading:
    """What the learned reader made of one sentence the rules did not read as a preference."""

    topics: tuple[str, ...]
    """The topics it sets (empty: not a lasting preference)."""
    receipt: str
    """Who decided and with what score: `learned preference=yes p=0.83 (threshold 0.60); topic contact (rules' words)`."""


@lru_cache(maxsize=1 << 16)
def learned_preference(sentence: str, norm: str) -> PreferenceReading:
    """The learned preference reading of one customer sentence (`norm`: its normalized text)."""
    fe = front_end()
    r = fe.read("preference", sentence)
    if r.label != "yes":
        return PreferenceReading((), r.describe())
    topics = topic_words(norm)
    if topics:
        return PreferenceReading(topics, f"{r.describe()}; topic {', '.join(topics)} (rules' words)")
    p = fe.proba("preference_topic", sentence)
    topic = max((label for label in p if label != "none"), key=lambda label: (p[label], label))
    return PreferenceReading((topic,), f"{r.describe()}; topic {topic} (learned p={p[topic]:.2f})")


# ---- statements: problems, facts and system-owned values -----------------------------------------
# The rules open an incident on a symptom word (`crash`, `error`, `not working`: lexicon.SYMPTOM) and keep a
# profile fact on an identity pattern (`I'm the ... at`, `we run`: lexicon.IDENTITY). Under `front=learned`
# (and `chat`, whose endpoint reads outcomes only) a customer sentence that names no step and no outcome and
# asks nothing is also asked of the `statement` head (phrases/extraction.yaml; each label's threshold the
# best F1 among those whose validation precision reaches 0.8: a label adds or removes a memory):
# `problem` opens the session's incident the symptom words missed ("the till drawer pops open on its own"),
# `fact` keeps a profile fact said in other words ("I look after the accounts for a joinery firm"), also a
# clause of a problem report ("we're a small studio and the export freezes"), and `system` keeps a value
# the company's systems own (a refund confirmed, a plan, a balance) from opening an incident on a symptom
# word ("the refund for the double charge came through").


@lru_cache(maxsize=1 << 16)
def learned_statement(sentence: str) -> Reading:
    """The learned `statement` head's reading of one customer sentence or clause."""
    return front_end().read("statement", sentence)


@lru_cache(maxsize=1 << 16)
def problem_score(sentence: str) -> float:
    """The `statement` head's probability that a customer sentence reports a problem (which of a message's
    sentences a step answers: `Extractor._answered_report`)."""
    return front_end().proba("statement", sentence).get("problem", 0.0)


def forget_readings() -> None:
    """Drop the remembered learned readings (outcome, statement, preference): they are the front end's answers,
    so whoever puts another front end in place (a test's fake) clears them before and after."""
    for f in (learned_reading, learned_statement, learned_preference, problem_score):
        f.cache_clear()

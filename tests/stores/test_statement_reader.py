"""The extractor's learned reading beyond outcomes (stores/structured/learned.py, extract.py): the
`statement` head's problems, facts and system-owned values, steps named in words the lexicon has no
step for, a product-named step answered as the application's, and the outcome's word polarity.

The extractor's rules are tested against a front end that answers from a table (the model is tested
apart: tests/stores/test_frontend.py); the word polarity model is the real one, trained on the bank."""

from __future__ import annotations

import pytest
from helpers import turn

from stores.frontend.model import Reading
from stores.structured import learned as fx
from stores.structured.extract import Extractor


class _FakeFront:
    """Heads that answer from tables: `statement` and `outcome` by sentence, every other head `none`."""

    def __init__(self, statements: dict[str, tuple[str, float]], outcomes: dict[str, str] | None = None):
        self.statements, self.outcomes = statements, outcomes or {}

    def read(self, head, text):
        if head == "statement" and text in self.statements:
            label, p = self.statements[text]
            return Reading(head, label, p, 0.5)
        return Reading(head, "none", 0.9, 0.6)

    def proba(self, head, text):
        assert head == "outcome", head
        said = self.outcomes.get(text)
        if said is None:
            return {"failed": 0.05, "none": 0.9, "worked": 0.05}
        return {"failed": 0.9 if said == "failed" else 0.05, "none": 0.05, "worked": 0.9 if said == "worked" else 0.05}


@pytest.fixture
def front(monkeypatch):
    def use(statements, outcomes=None):
        monkeypatch.setattr(fx, "front_end", lambda: _FakeFront(statements, outcomes))
        fx.forget_readings()

    yield use
    fx.forget_readings()


def _memories(front_name, events):
    x = Extractor(front_name)
    for e in events:
        x.observe(e)
    return x, [(m.type, m.text, m.outcome or m.status) for m in x.memories("c1")]


def test_a_fact_said_in_other_words_is_a_profile_fact_with_its_receipt(front):
    fact = "I do the rota for a chain of three bakeries."
    front({fact: ("fact", 0.8)})
    events = [turn("t1", fact, 0)]
    assert _memories("rules", events)[1] == []  # the identity patterns miss it
    x, mems = _memories("learned", events)
    assert mems == [("PROFILE", fact, None)]
    assert any(r.endswith(": a profile fact") and r.startswith("learned statement=fact p=0.80") for _, r in x.readers["c1"]["t1"])


def test_a_fact_needs_the_first_person_and_is_not_a_refusal(front):
    third, refusal = "Existing staff are fine.", "I'm not paying for a tool that needs babysitting."
    front({third: ("fact", 0.9), refusal: ("fact", 0.9)})
    assert _memories("learned", [turn("t1", third, 0), turn("t2", refusal, 1)])[1] == []


def test_a_fact_in_a_clause_of_a_problem_report_is_kept_beside_the_incident(front):
    report = "We're a two-chair barber shop and the booking page crashes on Saturdays."
    front({"We're a two-chair barber shop": ("fact", 0.7)})
    _, mems = _memories("learned", [turn("t1", report, 0)])
    assert ("PROFILE", "We're a two-chair barber shop", None) in mems
    assert [m for m in mems if m[0] == "INCIDENT"] == [("INCIDENT", report.rstrip("."), "open")]


def test_a_system_owned_value_opens_no_incident(front):
    refund = "The refund for the order you charged me twice for reached my card."
    front({refund: ("system", 0.7)})
    assert [m[0] for m in _memories("rules", [turn("t1", refund, 0)])[1]] == ["INCIDENT"]  # a symptom word
    x, mems = _memories("learned", [turn("t1", refund, 0)])
    assert mems == []
    assert any(r.endswith("system-owned, no incident") for _, r in x.readers["c1"]["t1"])


def test_a_problem_without_symptom_words_opens_an_incident_only_under_the_named_variant(front):
    report = "The shop tablet shows yesterday's orders as today's."
    front({report: ("problem", 0.8)})
    events = [turn("t1", report, 0)]
    assert _memories("rules", events)[1] == []
    assert _memories("learned", events)[1] == []  # the default leaves incidents to the symptom words
    x, mems = _memories("learned_incidents", events)
    assert mems == [("INCIDENT", report.rstrip("."), "open")]
    assert any(r.endswith("opens the session's incident") for _, r in x.readers["c1"]["t1"])


def test_an_answer_to_a_suggestion_the_lexicon_has_no_step_for_names_it(front):
    front({}, {"no dice": "failed"})
    events = [turn("t1", "The app crashes when I open the till.", 0),
              turn("t2", "Could you put the till offline and back online?", 1, role="agent"),
              turn("t3", "no dice", 2)]
    assert [m for m in _memories("rules", events)[1] if m[0] == "ATTEMPT"] == []
    x, mems = _memories("learned", events)
    # the suggestion runs on over `and` when a second step follows (the fourth round), not over `and let me know`
    assert [m for m in mems if m[0] == "ATTEMPT"] == [("ATTEMPT", "Put the till offline and back online", "failed")]
    assert ("no dice", "step named from the agent's suggestion: Put the till offline and back online") \
        in x.readers["c1"]["t3"]
    events[1] = turn("t2", "Could you put the till offline and let me know if that helps?", 1, role="agent")
    assert [m for m in _memories("learned", events)[1] if m[0] == "ATTEMPT"] == [("ATTEMPT", "Put the till offline", "failed")]
    # since the sixth round the lexicon reads `sign out of X and sign back in` itself, under every front end
    events[1] = turn("t2", "Could you sign out of Brightline and sign back in?", 1, role="agent")
    assert [m for m in _memories("rules", events)[1] if m[0] == "ATTEMPT"] == [("ATTEMPT", "Sign out and back in", "in_progress")]
    assert [m for m in _memories("learned", events)[1] if m[0] == "ATTEMPT"] == [("ATTEMPT", "Sign out and back in", "failed")]
    # a request for information is no step
    events[1] = turn("t2", "Could you tell me which version you are on?", 1, role="agent")
    assert [m for m in _memories("learned", events)[1] if m[0] == "ATTEMPT"] == []


def test_a_step_in_the_customers_own_words_is_named_from_them(front):
    said = "I already unshared and reshared the calendar with the team, no dice."
    front({}, {said: "failed"})
    events = [turn("t1", "The app crashes when I open the calendar.", 0), turn("t2", said, 1)]
    _, mems = _memories("learned", events)
    # since the sixth round the lexicon names it by the sentence's shape (two verbs, one object), under every front end
    assert [m for m in mems if m[0] == "ATTEMPT"] == [("ATTEMPT", "Unshared and reshared calendar", "failed")]


def test_a_product_named_step_answered_as_the_application_is_one_attempt(front):
    front({})
    events = [turn("t1", "Pixelmoor crashes when I export.", 0),
              turn("t2", "Could you restart Pixelmoor and try again?", 1, role="agent"),
              turn("t3", "Restarted it, still crashing.", 2)]
    rules = [m for m in _memories("rules", events)[1] if m[0] == "ATTEMPT"]
    assert rules == [("ATTEMPT", "Restart Pixelmoor", "failed")]  # since the sixth round under the rules too
    learned = [m for m in _memories("learned", events)[1] if m[0] == "ATTEMPT"]
    assert learned == [("ATTEMPT", "Restart Pixelmoor", "failed")]


def test_the_word_model_reads_polarity():
    """The real word model (trained on the bank's outcome phrases): the sentences are not in the bank."""
    assert fx.word_polarity("still exactly the same, nothing changed at all") < 0.4
    assert fx.word_polarity("it works now, thanks a lot") > 0.6


def test_the_failing_action_suggested_again_is_no_step(front):
    front({}, {"Nope, still the same.": "failed"})
    events = [turn("t1", "The app won't let me add a new card.", 0),
              turn("t2", "Please log out and back in, then try adding the card again.", 1, role="agent"),
              turn("t3", "Nope, still the same.", 2)]
    rules = {m[1] for m in _memories("rules", events)[1] if m[0] == "ATTEMPT"}
    assert rules == {"Log out and back in", "Add card again"}  # the step in the verb said (sixth round)
    learned = [m for m in _memories("learned", events)[1] if m[0] == "ATTEMPT"]
    assert learned == [("ATTEMPT", "Log out and back in", "failed")]

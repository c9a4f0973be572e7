"""The learned front end's word rules of the structured extractor (stores/structured/extract.py): the product a
report names by its own name, who the customer is said in passing, reports without the symptom words, steps
named by a pronoun, attempts made before the incident opened, a step put forward when the ticket is left open.

The model's heads are replaced by one that reads nothing in any sentence, so what is tested is the words' part;
the sentences are written for these tests, apart from every suite and the phrase bank."""

from __future__ import annotations

import pytest
from helpers import at, resolve, turn

from stores.frontend.model import Reading
from stores.structured import learned as fx
from stores.structured.extract import Extractor, _role, _same_step, _signs_off, coined_product
from stores.structured.lexicon import casing, content_words, find_steps, normalize
from stores.structured.model import Memory


class _Nothing:
    """A front end that reads nothing: no outcome, no statement, no preference."""

    def read(self, head, text):
        return Reading(head, None, 0.4, 0.6)

    def proba(self, head, text):
        return {"failed": 0.05, "none": 0.9, "worked": 0.05} if head == "outcome" else {"none": 1.0}


@pytest.fixture
def quiet(monkeypatch):
    monkeypatch.setattr(fx, "front_end", lambda: _Nothing())
    fx.forget_readings()
    yield
    fx.forget_readings()


def memories(front, events):
    x = Extractor(front)
    for e in events:
        x.observe(e)
    return x.memories("c1")


@pytest.mark.parametrize("sentence, name", [
    ("the GlowCart checkout button does nothing when I tap it", "GlowCart"),
    ("Since Friday my Quillory notebook fails to open", "Quillory"),
    ("Harbourly crashes whenever I attach a photo", "Harbourly"),
    ("the sync in Tidelog keeps timing out", "Tidelog"),
])
def test_the_product_a_report_names_by_its_own_name(sentence, name):
    assert coined_product(sentence) == name


@pytest.mark.parametrize("sentence, name", [
    ("our bakery in Treorchy runs OvenLedger for orders, and since Monday the receipts are blank", "OvenLedger"),
    ("the café in Kowloon Tong uses PayPlinth and the card reader keeps failing", "PayPlinth"),
    ("my salon in Penarth books through SlotHive and the reminders are blank", "SlotHive"),
])
def test_a_name_with_a_capital_inside_comes_before_a_place_said_first(sentence, name):
    assert coined_product(sentence) == name


@pytest.mark.parametrize("sentence", [
    "Crashed again as soon as I opened it",  # a verb opening the sentence
    "it's Marguerite at Fenwick Joinery, the invoices page is blank",  # a person
    "Since Tuesday the PDFs come out blank",  # a day, an acronym
    "Updating from the Play Store failed",
])
def test_no_product_in_a_verb_a_person_a_day_or_a_store(sentence):
    assert coined_product(sentence) is None


def test_a_reported_product_is_a_profile_fact_under_the_learned_front_end_only(quiet):
    events = [turn("t1", "hiya, the ScoreNest app on my tablet keeps freezing mid-game", 0)]
    learned = {m.text for m in memories("learned", events) if m.type == "PROFILE"}
    assert "Uses ScoreNest" in learned
    assert not [m for m in memories("rules", events) if m.type == "PROFILE"]


@pytest.mark.parametrize("text, says", [
    ("which is annoying as i'm a swimming coach", "i'm a swimming coach"),
    ("i teach piano", "i teach piano"),
    ("as the treasurer of a rowing club i need it monthly", "as the treasurer of a"),
    ("hello, marek from ashgrove builders here", "hello, marek from ashgrove builders here"),
    ("it's ines at calder bakery", "it's ines at calder"),
])
def test_who_the_customer_is_said_in_passing(text, says):
    assert _role(text) == says


@pytest.mark.parametrize("text", ["i'm a bit lost with this", "i'm a long-time customer", "i teach"])
def test_not_a_role(text):
    assert _role(text) == ""


def test_a_role_said_beside_a_problem_is_kept_and_the_report_opens_the_incident(quiet):
    events = [turn("t1", "The Pebbleon scheduler stopped sending reminders, which matters as I'm a dog groomer", 0)]
    kinds = {(m.type, m.text) for m in memories("learned", events)}
    assert ("PROFILE", "I'm a dog groomer") in kinds
    assert any(t == "INCIDENT" for t, _ in kinds)  # `stopped sending`: a report without the symptom words
    assert ("PROFILE", "Uses Pebbleon") in kinds


def test_stopped_as_an_outcome_is_no_report(quiet):
    events = [turn("t1", "the beeping stopped happening after the restart", 0)]
    assert not [m for m in memories("learned", events) if m.type == "INCIDENT"]


def test_a_pronoun_step_takes_the_agents_words_and_one_attempt_when_the_record_names_it(quiet):
    events = [
        turn("t1", "The label maker keeps jamming", 0),
        turn("t2", "Could you fit a fresh ribbon in the label maker?", 1, role="agent"),
        turn("t3", "swapped it out, still jamming", 2),
        resolve("s1", "Fitting a fresh ribbon in the label maker did not help.", 3, status="unresolved"),
    ]
    attempts = [m for m in memories("learned", events) if m.type == "ATTEMPT"]
    assert [(m.text, m.outcome, "t3" in m.source_ids) for m in attempts] == [("Fit a fresh ribbon in the label maker", "failed", True)]


def test_attempts_before_the_incident_opened_are_its_attempts(quiet):
    events = [
        turn("t1", "Hello, about the shop tablet", 0),
        turn("t2", "Please restart the tablet.", 1, role="agent"),
        turn("t3", "restarted the tablet, no luck", 2),
        turn("t4", "it keeps freezing on the logo", 3),
        resolve("s1", "The shop tablet froze on the logo. Restarting the tablet did not help.", 4, status="unresolved"),
    ]
    mems = memories("learned", events)
    incident = [m for m in mems if m.type == "INCIDENT"]
    attempts = [m for m in mems if m.type == "ATTEMPT"]
    assert len(incident) == 1 and len(attempts) == 1
    assert attempts[0].incident_id == incident[0].id and attempts[0].outcome == "failed"


def test_a_step_put_forward_when_the_ticket_is_left_open_is_in_progress(quiet):
    events = [
        turn("t1", "The door sensor went offline overnight", 0),
        turn("t2", "Please re-seat the sensor on its bracket when you get a moment, and let me know how it goes.", 1,
             role="agent"),
        resolve("s1", "", 2, status="unresolved"),
    ]
    attempts = {m.text: m.outcome for m in memories("learned", events) if m.type == "ATTEMPT"}
    assert attempts == {"Re-seat the sensor on its bracket": "in_progress"}
    assert not [m for m in memories("rules", events) if m.type == "ATTEMPT"]


def test_a_named_step_is_the_lexicons_step_only_on_two_shared_object_words():
    text = "Put new filters in the purifier"
    named = Memory("m", "c1", "ATTEMPT", text, at(0), at(0), ("t",), outcome="failed",
                   key="named:" + "-".join(sorted(content_words(text))))
    def step(text):
        return find_steps(normalize(text), casing(text), subject_free=False, past_only=True)[0]
    assert _same_step(named, step("replaced the purifier filters"))
    assert not _same_step(named, step("restarted the purifier"))


def test_since_the_last_update_is_no_update_step_and_a_switch_keeps_its_target():
    assert not find_steps(normalize("it broke since the last update"), {}, subject_free=True)
    s = find_steps(normalize("please switch the layout from grid to list"), {}, subject_free=False)
    assert s and s[0].text.endswith("to list")


class _Problems(_Nothing):
    """A front end whose `statement` head gives each sentence its `problem` probability from `scores` (sure at 0.5),
    and reads nothing else."""

    def __init__(self, scores):
        self.scores = scores

    def _problem(self, text):
        return next((p for words, p in self.scores.items() if words in text), 0.05)

    def read(self, head, text):
        if head == "statement":
            p = self._problem(text)
            return Reading(head, "problem" if p >= 0.5 else "none", max(p, 1 - p), 0.5)
        return super().read(head, text)

    def proba(self, head, text):
        if head == "statement":
            p = self._problem(text)
            return {"problem": p, "none": 1 - p, "fact": 0.0, "system": 0.0}
        return super().proba(head, text)


@pytest.fixture
def problems(monkeypatch):
    def use(scores):
        monkeypatch.setattr(fx, "front_end", lambda: _Problems(scores))
        fx.forget_readings()
    yield use
    fx.forget_readings()


def test_a_step_that_answers_an_unread_report_opens_the_incident_on_it(problems):
    problems({"yesterday's totals": 0.3, "counter": 0.1})
    events = [
        turn("t1", "Morning. The Ferrowick tally on our counter shows yesterday's totals all day. Our counter staff are new.", 0),
        turn("t2", "Sorry about that. Please restart the tally from its menu.", 1, role="agent"),
    ]
    mems = memories("learned", events)
    incident = [m for m in mems if m.type == "INCIDENT"]
    assert [(m.text, m.source_ids, m.status) for m in incident] == [
        ("The Ferrowick tally on our counter shows yesterday's totals all day", ("t1",), "open")]
    assert ("PROFILE", "Uses Ferrowick") in {(m.type, m.text) for m in mems}
    assert [m.incident_id for m in mems if m.type == "ATTEMPT"] == [incident[0].id]
    assert not [m for m in memories("rules", events) if m.type == "INCIDENT"]


def test_no_incident_opens_on_a_message_nothing_answers(problems):
    problems({"yesterday's totals": 0.3})
    events = [turn("t1", "The Ferrowick tally on our counter shows yesterday's totals all day.", 0),
              turn("t2", "Thanks for letting us know.", 1, role="agent")]
    assert not [m for m in memories("learned", events) if m.type == "INCIDENT"]


def test_the_customers_own_steps_answer_the_problem_told_before_them(problems):
    problems({"reads minus forty": 0.4, "numbers look odd": 0.9})
    events = [turn("t1", "Our Brindlemoor gauge in the cold room reads minus forty every night. We restarted the gauge, "
                         "that did nothing. Now the numbers look odd in the daytime too.", 0)]
    mems = memories("learned", events)
    incident = [m for m in mems if m.type == "INCIDENT"]
    assert [m.text for m in incident] == ["Brindlemoor gauge in the cold room reads minus forty every night"]
    assert all(m.incident_id == incident[0].id for m in mems if m.type == "ATTEMPT")


def test_a_sentence_kept_as_who_the_customer_is_is_not_the_report(problems):
    problems({"run a joinery": 0.9, "shows us as shut": 0.3})
    events = [
        turn("t1", "The order page on Ordwell shows us as shut all afternoon. I run a joinery in Treorchy and we've lost two days of orders.", 0),
        turn("t2", "Please save your opening times again in Ordwell.", 1, role="agent"),
    ]
    mems = memories("learned", events)
    assert [m.text for m in mems if m.type == "INCIDENT"] == ["The order page on Ordwell shows us as shut all afternoon"]
    assert {m.text for m in mems if m.type == "PROFILE"} == {
        "I run a joinery in Treorchy and we've lost two days of orders.", "Uses Ordwell"}


def test_a_preference_without_topic_words_said_as_a_problem_is_none(problems):
    events = [turn("t1", "Since Tuesday it records only in daylight, the night clips are empty.", 0)]
    problems({"only in daylight": 0.2})
    assert [m.key for m in memories("learned", events) if m.type == "PROFILE"] == ["preference:general"]
    problems({"only in daylight": 0.8})
    assert not [m for m in memories("learned", events) if m.type == "PROFILE"]


@pytest.mark.parametrize("line, signs", [
    ("Priya, Hollins Joinery.", True),
    ("Oskar, Brennholz Logistik out of Kiel.", True),
    ("Ines, Quinta das Amoras, Douro.", True),
    ("Thanks, Priya.", False),
    ("Priya Shah, owner.", False),
    ("Cheers, that sorted it.", False),
    ("Yours, Priya.", False),
    ("Warmly, Priya Shah", False),
    ("Sincerely, Priya", False),
    ("Love, Priya", False),
])
def test_a_closing_line_signs_with_an_organisation_or_a_place(line, signs):
    assert _signs_off(line) is signs


def test_the_signature_is_a_profile_fact_only_as_a_messages_last_line(quiet):
    story = "The Tallyhut scale in the shop stopped printing labels on Friday. Priya, Hollins Joinery."
    facts = [m.text for m in memories("learned", [turn("t1", story, 0)]) if m.key.endswith(":signature")]
    assert facts == ["Priya, Hollins Joinery."]
    assert not [m for m in memories("learned", [turn("t1", "Priya, Hollins Joinery.", 0)]) if m.key.endswith(":signature")]
    assert not [m for m in memories("rules", [turn("t1", story, 0)]) if m.key.endswith(":signature")]


def test_how_long_a_step_held_is_no_step():
    assert not find_steps(normalize("lasted like an hour then dropped again"), {}, subject_free=True, past_only=False)


def test_a_step_answered_with_a_pronoun_object_is_the_step_put_forward(quiet):
    events = [
        turn("t1", "The Quillfeed labels come out blank", 0),
        turn("t2", "Please change the label template in the printer settings.", 1, role="agent"),
        turn("t3", "changed it to Avery Mini, did not help", 2),
    ]
    attempts = [(m.text, m.outcome, "t3" in m.source_ids) for m in memories("learned", events) if m.type == "ATTEMPT"]
    assert attempts == [("Change label template", "failed", True)]


def test_a_long_report_keeps_its_problem_not_its_lead_in(problems):
    problems({"gauge": 0.8})
    story = ("For the record: since the storms last month the Brindlemoor gauge on the big cold room at our farm shop "
             "outside the village reads minus forty every single night. We restarted the gauge, that did nothing.")
    incident = [m.text for m in memories("learned", [turn("t1", story, 0)]) if m.type == "INCIDENT"]
    assert len(incident) == 1 and incident[0].startswith("Since the storms") and "minus forty" in incident[0]


def _sources(events, front="learned"):
    return {m.text: ("t1" in m.source_ids, "t3" in m.source_ids, m.outcome)
            for m in memories(front, events) if m.type == "ATTEMPT"}


def test_a_step_the_record_settles_is_traced_to_the_customers_story_that_told_it(quiet):
    events = [
        turn("t1", "The Wexby kiosk in our cafe quit taking card taps on Monday. Wiped the reader pad with a cloth, "
                   "zero change. My cousin moved the kiosk onto the Halverly hotspot and it's been fine since.", 0),
        turn("t2", "Good to hear it's back, thanks for telling us.", 1, role="agent"),
        resolve("s1", "The Wexby kiosk stopped taking card taps. Wiping the reader pad did not help; moving the kiosk "
                      "onto the Halverly hotspot fixed it.", 2),
    ]
    traced = _sources(events)
    assert traced and all(told for told, _, _ in traced.values())
    assert sorted(o for _, _, o in traced.values()) == ["failed", "worked"]
    assert not all(told for told, _, _ in _sources(events, "rules").values())  # the rules variant reads as before


def test_a_step_answered_in_words_the_reader_missed_is_traced_to_the_answer(quiet):
    def story(answer):
        return [
            turn("t1", "The Brackwell scanner sends nothing to our inboxes since Monday", 0),
            turn("t2", "Please change the relay port to 2525 in the scanner settings.", 1, role="agent"),
            turn("t3", answer, 2),
            resolve("s1", "Changing the relay port to 2525 did not help.", 3, status="unresolved"),
        ]
    assert [v[1:] for v in _sources(story("The port has been altered per your note. Nothing reaches us yet.")).values()] \
        == [(True, "failed")]  # names the step's object (`port`)
    assert [v[1:] for v in _sources(story("I did as you said and waited all morning. Nothing reaches us yet.")).values()] \
        == [(True, "failed")]  # says it did as asked
    assert [v[1:] for v in _sources(story("ok, will look at it after lunch.")).values()] == [(False, "failed")]


def test_did_or_tried_said_of_someone_else_or_asked_is_no_saying_it_did_as_asked(quiet):
    def did_as_asked(answer):  # the customer turns `_trace` may take as the answer to a step put forward
        x = Extractor("learned")
        for e in (turn("t1", "The Brackwell scanner sends nothing to our inboxes since Monday", 0),
                  turn("t2", "Please change the relay port to 2525 in the scanner settings.", 1, role="agent"),
                  turn("t3", answer, 2)):
            x.observe(e)
        return "t3" in x._customers["c1"].did_as_asked
    for answer in ("Why did it crash again this morning?", "It did this weird thing where the screen went blue.",
                   "The tech tried that yesterday and nothing reaches us."):
        assert not did_as_asked(answer), answer
    for answer in ("I did as you said and waited all morning.", "Done that, nothing reaches us yet.",
                   "We've tried that already, nothing reaches us.", "Followed your steps, no luck."):
        assert did_as_asked(answer), answer


def test_a_step_answers_no_sentence_under_the_least_problem_probability(problems):
    events = [turn("t1", "Hello there, about the Ferrowick tally on our counter.", 0),
              turn("t2", "Please restart the tally from its menu.", 1, role="agent")]
    problems({"Ferrowick tally": 0.06})  # a greeting: no report for the step to answer
    assert not [m for m in memories("learned", events) if m.type == "INCIDENT"]
    problems({"Ferrowick tally": 0.12})
    assert [m.source_ids for m in memories("learned", events) if m.type == "INCIDENT"] == [("t1",)]


def test_a_place_said_in_passing_in_the_first_message_is_a_profile_fact(quiet):
    first = turn("t1", "Morning. Two-chair barber shop in Llanrwst, and the Snipbook till prints nothing since Friday.", 0)
    later = turn("t2", "We also have a pop-up near Betws Garmon on market days.", 1)
    places = [m.text for m in memories("learned", [first, later]) if m.key.endswith(":place")]
    assert places == ["Two-chair barber shop in Llanrwst"]  # the first message only
    own = turn("t1", "The Snipbook parcel went to an address in Llandudno I've never lived at.", 0)
    assert [m.text for m in memories("learned", [own]) if m.key.endswith(":place")] == ["Went to an address in Llandudno"]
    assert not [m for m in memories("rules", [first]) if m.key.endswith(":place")]


def test_no_place_fact_for_a_sender_a_seller_a_browser_a_department_or_a_time_of_day(quiet):
    for said in ("I got an email from Sarah in Billing saying the Snipbook plan lapsed.",
                 "The invoice page crashes in Chrome every time I open it.",
                 "I bought the speaker in December from Currys and it will not pair.",
                 "Since the update the app logs me out near Midnight."):
        assert not [m.text for m in memories("learned", [turn("t1", said, 0)]) if m.key.endswith(":place")], said
    for said, kept in (("Writing from Galway: the Snipbook till prints nothing.", "Writing from Galway"),
                       ("My cab does long haul out of Lethbridge, and the Snipbook tablet froze.", "Cab does long haul out of Lethbridge")):
        assert [m.text for m in memories("learned", [turn("t1", said, 0)]) if m.key.endswith(":place")] == [kept], said


def test_no_place_fact_when_a_kept_fact_already_holds_the_place_or_it_is_a_day(quiet):
    held = turn("t1", "I run a joinery in Treorchy and the Snipbook till prints nothing.", 0)
    day = turn("t1", "The Snipbook till has printed nothing since Friday, from Monday it got worse.", 0)
    assert not [m for e in (held, day) for m in memories("learned", [e]) if m.key.endswith(":place")]
    assert any("Treorchy" in m.text for m in memories("learned", [held]) if m.type == "PROFILE")


def test_a_place_said_in_passing_ranks_after_the_resolved_history():
    from stores.structured.strategy import StructuredParams, tier_of

    p = StructuredParams()
    place = Memory("c1:PROFILE:identity:t1:place", "c1", "PROFILE", "barber shop in Llanrwst", at(0), at(0), ("t1",),
                   key="identity:t1:place")
    resolved = Memory("c1:INCIDENT:t1", "c1", "INCIDENT", "the till prints nothing", at(0), at(0), ("t1",),
                      status="resolved", key="incident:t1")
    fact = Memory("c1:PROFILE:identity:t1", "c1", "PROFILE", "I run a barber shop", at(0), at(0), ("t1",), key="identity:t1")
    assert tier_of(place, p)[1] < tier_of(resolved, p)[1] < tier_of(fact, p)[1]


def test_the_records_step_in_other_words_is_the_attempt_told_before_when_its_verb_is_the_same(quiet):
    def story(record):
        return [
            turn("t1", "The Quillfeed booking page shows last month's prices", 0),
            turn("t2", "Please clear the booking page's cache in your browser.", 1, role="agent"),
            turn("t3", "cleared the booking page's cache, nothing doing", 2),
            resolve("s1", record, 3, status="unresolved"),
        ]
    attempts = [m.text for m in memories("learned", story("Clearing the page's cache did not help.")) if m.type == "ATTEMPT"]
    assert len(attempts) == 1
    other = [m.text for m in memories("learned", story("Replacing the page's cache rules did not help.")) if m.type == "ATTEMPT"]
    assert len(other) == 2  # another verb: another step


def test_a_step_the_record_names_first_is_not_traced_to_the_report_of_its_topic(quiet):
    events = [
        turn("t1", "Our staff cannot sign in with Okta single sign-on since Monday, the page errors out.", 0),
        turn("t2", "Thanks, looking into it now.", 1, role="agent"),
        resolve("s1", "Enabling single sign-on for the workspace fixed it.", 2),
    ]
    assert [told for told, _, _ in _sources(events).values()] == [False]  # the report names the topic, not the step

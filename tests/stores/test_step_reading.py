"""Steps read the way customers and agents say them (stores/structured/lexicon.py, read by the extractor under
every front end and by the one reply engine): verbs the lexicon does not list, read from their place in the
sentence; a thing switched off and on; logging out of something and back in; a step in the middle of a sentence;
a step a resolution record names by what it used; reports without the symptom words; and the held-out writers'
first wordings (tests/data/reply_dev), which the oracle's reply now reads. Sentences other than the development
file's are written for these tests."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import resolve, turn

from stores.structured.extract import Extractor
from stores.structured.lexicon import casing, find_steps, normalize, object_named, verb_root

REPLY_DEV = Path(__file__).resolve().parents[1] / "data" / "reply_dev" / "first-wordings.yaml"


def steps(text, *, subject_free, past_only=False):
    return [s.text for s in find_steps(normalize(text), casing(text), subject_free=subject_free, past_only=past_only)]


def test_a_verb_the_lexicon_does_not_list_is_a_step_after_a_suggestions_lead():
    assert steps("Please format the SD card in the camera.", subject_free=False) == ["Format SD card"]
    assert steps("Could you recalibrate the left stick?", subject_free=False) == ["Recalibrate left stick"]


def test_a_gerund_opening_a_summary_clause_is_a_step():
    assert steps("Formatting the SD card and swapping in a new SD card did not help", subject_free=False, past_only=True) \
        == ["Formatting SD card", "Swapping in new SD card"]


def test_two_verbs_on_one_object_are_one_step():
    assert steps("Unplugging and replugging the scanner did not help", subject_free=False, past_only=True) \
        == ["Unplugging and replugging scanner"]


def test_a_customers_past_tense_opening_a_clause_is_a_step_even_after_a_time_and_i():
    assert steps("Formatted the SD card, no change.", subject_free=True) == ["Formatted SD card"]
    assert steps("On Tuesday evening I swapped the batteries for new ones.", subject_free=True) == ["Swapped batteries"]


@pytest.mark.parametrize("text, subject_free", [
    ("Charged them all night as you said.", True),  # names the step already put forward
    ("Please tell me which version you have.", False),  # asks, is no step
    ("When I swapped the batteries it beeped.", True),  # says when, not what was tried
    ("The morning shift noticed the error.", True),
    ("Please format it.", False),
])
def test_what_is_no_open_step(text, subject_free):
    assert steps(text, subject_free=subject_free) == []


def test_the_forms_of_a_verb_share_a_root():
    assert len({verb_root(w) for w in ("format", "formatting", "formatted")}) == 1
    assert len({verb_root(w) for w in ("save", "saving", "saved")}) == 1
    assert len({verb_root(w) for w in ("charge", "charging", "charged")}) == 1


def test_a_verb_ending_in_ss_keeps_it_in_every_form():
    assert {verb_root(w) for w in ("press", "pressing", "pressed", "presses")} == {"press"}
    assert {verb_root(w) for w in ("bypass", "bypassing", "bypassed")} == {"bypass"}


def test_a_pressed_button_the_summary_names_by_its_gerund_is_the_suggested_step():
    ms = memories([
        turn("g1", "The hub no longer finds the door sensor.", 0),
        turn("g2", "Please press 'Pair again' on the hub's settings page.", 1, role="agent"),
        resolve("s1", "Rebooting the hub and pressing 'Pair again' did not help.", 5),
    ])
    assert [(m.text, m.outcome) for m in ms if m.type == "ATTEMPT" and "pair" in m.text.lower()] == [("Press Pair", "failed")]


def test_a_thing_switched_off_and_on_is_its_own_step_and_the_app_stays_a_restart():
    assert steps("Please turn Bluetooth off and on again on the tablet.", subject_free=False) == ["Turn Bluetooth off and on"]
    assert steps("Turning the router off and on did not help", subject_free=False, past_only=True) == ["Turn router off and on"]
    assert steps("turned it off and on, still dead", subject_free=True) == ["Restart application"]


def test_logging_out_of_something_and_back_in_is_one_step_in_the_verb_said():
    assert steps("Please log out of Notewise on the laptop and log back in.", subject_free=False) == ["Log out and back in"]
    assert steps("Please sign out of Notewise and sign back in.", subject_free=False) == ["Sign out and back in"]


def test_what_a_step_was_done_with_is_part_of_its_name():
    assert steps("Please connect the laptop to the router with an ethernet cable.", subject_free=False) \
        == ["Connect laptop with ethernet cable"]


def test_a_summary_names_a_step_by_what_it_used():
    text = "A new battery did the trick."
    norm = normalize(text)
    assert object_named(text, norm, norm.index("did the trick")) == "New battery"
    for other in ("It fixed it.", "Restarting fixed it.", "That fixed it."):
        n = normalize(other)
        assert object_named(other, n, n.index("fixed")) is None


def memories(events, front="rules"):
    x = Extractor(front)
    for e in events:
        x.observe(e)
    return x.memories("c1")


def test_a_summary_step_named_by_what_it_used_is_the_suggestion_that_used_it():
    ms = memories([
        turn("t1", "my stream freezes every few minutes", 0),
        turn("t2", "Please connect the laptop to the router with an ethernet cable.", 1, role="agent"),
        resolve("s1", "The stream froze. An ethernet cable fixed it.", 5),
    ])
    attempts = [(m.text, m.outcome) for m in ms if m.type == "ATTEMPT"]
    assert attempts == [("Connect laptop with ethernet cable", "worked")]


def test_a_report_without_the_symptom_words_opens_the_incident_under_the_rules_too():
    ms = memories([turn("t3", "The scanner on our till has not read anything since this morning.", 0)])
    assert [m.type for m in ms] == ["INCIDENT"]
    assert memories([turn("t4", "I have not tried anything yet, what should I do first?", 0)]) == []


def test_a_failure_said_after_a_step_is_no_new_report():
    ms = memories([
        turn("t5", "The export to Sheets has been failing since Monday.", 0),
        turn("t6", "Please reconnect the Sheets account.", 1, role="agent"),
        turn("t7", "Did not work at all.", 2),
    ], front="rules")
    ms_no_incident = memories([
        turn("t8", "Please reconnect the Sheets account.", 1, role="agent"),
        turn("t9", "Did not work at all.", 2),
    ])
    assert [m.type for m in ms].count("INCIDENT") == 1
    assert [(m.type, m.outcome) for m in ms_no_incident] == [("ATTEMPT", "failed")]


def test_a_customers_restarted_it_answers_the_agents_restart_of_the_product_under_the_rules():
    ms = memories([
        turn("t10", "The Tillwise app keeps freezing.", 0),
        turn("t11", "Please restart the Tillwise app on the tablet.", 1, role="agent"),
        turn("t12", "Restarted it. Still frozen.", 2),
    ])
    assert [(m.text, m.outcome) for m in ms if m.type == "ATTEMPT"] == [("Restart Tillwise app", "failed")]


def test_the_held_out_writers_first_wordings_are_read_by_the_oracles_reply():
    import harness.criteria.reply  # noqa: F401  (registers the reply criteria)
    from harness.criteria import CRITERIA
    from harness.format.loader import load_scenario
    from harness.replay.probes import replay
    from stores.controls import Oracle

    outcomes = replay(load_scenario(REPLY_DEV), Oracle()).outcomes
    assert len(outcomes) == 9
    for o in outcomes:
        for key in ("reply_known_fix", "reply_skips_failures", "returning_customer"):
            if CRITERIA[key].applies(o.probe):
                score = CRITERIA[key].fn(o)
                assert score.value == 1.0, (o.probe.id, score.explanation)


def test_a_particle_after_the_object_is_the_verbs():
    assert steps("Turned the parking mode off and it has been fine since.", subject_free=True) == ["Turn off parking mode"]


def test_a_pronoun_object_names_no_new_step():
    assert steps("Please power down the card reader, wait ten seconds and switch it back on.", subject_free=False) \
        == ["Power down the card reader"]
    assert steps("Please upload that instead.", subject_free=False) == []


def test_a_setting_named_in_quotes_is_no_step_of_its_own():
    assert steps("Please set the date to 'Set Automatically' in Settings.", subject_free=False) == ["Set date to Set automatically"]


def test_a_suggestion_running_on_over_and_into_a_second_verb_is_one_step():
    assert steps("Could you disconnect the bank feed and reconnect it?", subject_free=False) \
        == ["Disconnect bank feed and reconnect it"]
    assert steps("Please format the card and let me know how it goes.", subject_free=False) == ["Format card"]


def test_save_again_and_re_save_are_one_verb_but_listed_verbs_keep_their_groups():
    from stores.structured.lexicon import same_verb

    assert same_verb("resave", verb_root("saving")) and same_verb("reconnect", "connect")
    assert not same_verb("remove", "move") and not same_verb("restart", "update")


def test_a_customers_own_words_answer_the_suggestion_they_share_a_thing_with():
    ms = memories([
        turn("t20", "The streamer keeps dropping the sound.", 0),
        turn("t21", "Please reconnect the streamer's cable to the television.", 1, role="agent"),
        turn("t22", "Pushed the cable back in as you said. Still dropping.", 2),
    ])
    assert [(m.text, m.outcome) for m in ms if m.type == "ATTEMPT"] == [("Reconnect streamer's cable", "failed")]


@pytest.mark.parametrize("text, outcome", [
    ("Everything is reading now, thank you", ["worked"]),
    ("the reminders are arriving on time again", ["worked"]),
    ("its beeping and showing on the tablet now", ["worked"]),
    ("it is doing it again", []),
    ("still freezing now", ["failed"]),
    ("not syncing now", []),
    ("syncing fine now", ["worked"]),
    # a step named as the subject, and a noun's modifier, say nothing of how it went
    ("Pairing the hearing aids again was suggested", []),
    ("the hearing aids again", []),
])
def test_an_outcome_said_by_what_happens_now(text, outcome):
    from stores.structured.lexicon import outcome_marks

    assert [m.outcome for m in outcome_marks(normalize(text))] == outcome


def test_a_product_named_after_and_opening_a_clause_of_the_report():
    from stores.structured.extract import coined_product

    assert coined_product("I updated last night and Quillory keeps freezing on export") == "Quillory"
    assert coined_product("I went to Leeds and Tuesday was fine") is None


def test_an_attempt_no_incident_holds_counts_when_its_ticket_does():
    from helpers import at

    from stores.protocol import ContextRequest
    from stores.reply.derive import ContextMemory
    from stores.reply.engine import compose
    from stores.structured.model import Memory

    def mem(i, kind, text, outcome=None):
        return Memory(f"c1:{i}", "c1", kind, text, at(0), at(1), (i,), outcome=outcome, key=i)

    ctx = [ContextMemory(mem("a", "ATTEMPT", "Restart SMS gateway", "failed"), "s1"),
           ContextMemory(mem("b", "ATTEMPT", "Reinstall application", "failed"), "s1"),
           ContextMemory(mem("c", "ATTEMPT", "Clear browser cookies", "failed"), "s0")]  # another ticket: not relevant
    reply = compose(ContextRequest("c1", "s2", "the SMS reminders stopped again", 400, at(60)), ctx)
    assert set(reply.known_failures) == {"Restart SMS gateway", "Reinstall application"}


def test_a_summarys_step_is_the_closest_attempt_not_the_first_that_shares_words():
    ms = memories([
        turn("t30", "The left stick keeps drifting.", 0),
        turn("t31", "Please recalibrate the left stick.", 1, role="agent"),
        turn("t32", "recalibrated it, still drifting", 2),
        turn("t33", "Please blow some compressed air around the base of the left stick.", 3, role="agent"),
        resolve("s1", "Recalibrating the stick did not help; compressed air around the left stick fixed it.", 9),
    ])
    assert [(m.text, m.outcome) for m in ms if m.type == "ATTEMPT"] == [
        ("Recalibrate left stick", "failed"), ("Blow some compressed air around the base", "worked")]


def test_a_thing_switched_off_then_on_in_two_steps_of_one_sentence_is_one_step():
    assert steps("Please turn the speaker off at the wall, count to twenty, then turn it back on.", subject_free=False) \
        == ["Turn speaker off and on"]
    assert steps("Switch the hotspot off and then turn it on again.", subject_free=False) == ["Switch hotspot off and on"]
    assert steps("Please switch the parking mode off, then restart it.", subject_free=False) \
        == ["Switch off parking mode", "Restart application"]  # a second verb that does not switch on is its own step


def test_a_suggestion_switched_off_then_on_is_the_step_the_summary_names():
    ms = memories([
        turn("w1", "The smart speaker has no sound since the update.", 0),
        turn("w2", "Please switch the speaker off at the wall, wait a minute, then switch it on again.", 1, role="agent"),
        resolve("s1", "Switching the speaker off and on did not help.", 5),
    ])
    assert [(m.text, m.outcome) for m in ms if m.type == "ATTEMPT"] == [("Switch speaker off and on", "failed")]


@pytest.mark.parametrize("text", [
    "Since Friday the booking confirmations we email to guests have not arrived.",
    "The parcel labels are not reaching the warehouse printer.",
    "There is no picture coming through on the projector at all.",
])
def test_what_is_sent_and_does_not_get_there_is_a_report_under_the_rules(text):
    assert [m.type for m in memories([turn("r1", text, 0)])] == ["INCIDENT"]


def test_a_question_whether_something_arrived_is_no_report():
    assert memories([turn("r2", "Has my new card not arrived yet?", 0)]) == []


@pytest.mark.parametrize("text", [
    "My Lumaframe photo frame no longer shows the pictures my daughter sends.",
    "Since the weekend the till no longer prints the kitchen orders.",
    "Since the move the door cameras stop recording every evening around nine.",
])
def test_no_longer_doing_its_job_or_a_subject_that_stops_doing_it_is_a_report_under_the_rules(text):
    assert [m.type for m in memories([turn("r3", text, 0)])] == ["INCIDENT"]


@pytest.mark.parametrize("text", [
    "Please stop sending me the weekly digest.",
    "Can you stop sending the reminders to my old address?",
    "Since the update the app no longer freezes.",
])
def test_a_request_to_stop_or_a_symptom_that_no_longer_happens_is_no_stop_report(text):
    from stores.structured.extract import _STOPPED

    assert _STOPPED.search(normalize(text)) is None

"""The rule-based extractor: one test per rule of seed 002, and its one-shot message."""

from __future__ import annotations

from helpers import resolve, turn

from stores.protocol import Forget
from stores.structured.extract import Extractor, extract_all

ONE_SHOT = ("My Acme PDF Suite crashes on large PDF upload.\n"
            "I restarted it and cleared the cache but neither helped.\n"
            "Updating the app fixed it.")


def table(memories, type_=None):
    return [(m.type, m.text, m.outcome or m.status) for m in memories if type_ in (None, m.type)]


def attempts(events):
    return {m.text: m.outcome for m in extract_all(events) if m.type == "ATTEMPT"}


def test_the_seeds_one_shot_message_gives_its_five_memories():
    mems = extract_all([turn("t1", ONE_SHOT, 0)])
    assert table(mems) == [
        ("PROFILE", "Uses Acme PDF Suite", None),
        ("INCIDENT", "Acme PDF Suite crashes on large PDF upload", "resolved"),
        ("ATTEMPT", "Restart application", "failed"),
        ("ATTEMPT", "Cleared application cache", "failed"),
        ("ATTEMPT", "Update application", "worked"),
    ]
    assert all(m.source_ids == ("t1",) for m in mems)
    assert all(m.product == "Acme PDF Suite" for m in mems if m.type != "PROFILE")


def test_rule_1_explicit_success_phrases_mark_the_step_worked():
    for text in ("Updating the app fixed it.", "Updated the app and it worked.", "I updated the app, that solved it.",
                 "Updated the app, that resolved the issue."):
        assert attempts([turn("t1", text, 0)]) == {"Update application": "worked"}, text


def test_rule_2_explicit_failure_phrases_mark_the_step_failed():
    for text in ("I restarted it but that did not help.", "Restarted it, still crashing.", "I restarted it and it didn't work.",
                 "Restarting it failed."):
        assert attempts([turn("t1", text, 0)]) == {"Restart application": "failed"}, text


def test_rule_2_a_failure_phrase_is_never_read_as_a_success():
    assert attempts([turn("t1", "Updated the app but it's not fixed.", 0)]) == {"Update application": "failed"}


def test_rule_3_neither_helped_marks_every_preceding_step_of_the_message_failed():
    got = attempts([turn("t1", "I restarted it and cleared the cache but neither helped.", 0)])
    assert got == {"Restart application": "failed", "Cleared application cache": "failed"}


def test_a_success_marks_only_the_nearest_step_and_a_failure_only_its_own():
    got = attempts([turn("t1", "Restarting didn't help but updating fixed it.", 0)])
    assert got == {"Restart application": "failed", "Update application": "worked"}


def test_an_agents_suggested_step_is_in_progress_until_the_customer_reports():
    events = [turn("t1", "The app crashes when I upload a PDF.", 0), turn("t2", "Please clear the cache.", 1, role="agent")]
    assert attempts(events) == {"Cleared application cache": "in_progress"}


def test_suggested_then_reported_is_one_failed_attempt_not_two():
    events = [turn("t1", "The app crashes when I upload a PDF.", 0), turn("t2", "Please clear the cache.", 1, role="agent"),
              turn("t3", "Cleared the cache, still crashing.", 2)]
    mems = [m for m in extract_all(events) if m.type == "ATTEMPT"]
    assert [(m.text, m.outcome, m.source_ids) for m in mems] == [("Cleared application cache", "failed", ("t2", "t3"))]


def test_a_report_that_names_no_step_settles_the_pending_one():
    events = [turn("t1", "Our export crashes every night.", 0),
              turn("t2", "Cleared the export cache and restarted the job.", 1, role="agent", kind="action"),
              turn("t3", "Tried that, same error as before.", 2)]
    assert attempts(events) == {"Cleared export cache": "failed"}


def test_an_outcome_change_updates_the_memory_and_keeps_the_old_outcome():
    x = Extractor()
    x.observe(turn("t1", "The app crashes on upload. Updated the app and it fixed it.", 0))
    changes = x.observe(turn("t2", "Updated the app again, still crashing.", 60))
    update = [c for c in changes if c.memory.type == "ATTEMPT"]
    assert [(c.kind, c.memory.outcome, c.memory.previous_outcomes) for c in update] == [("update", "failed", ("worked",))]
    assert len([m for m in x.memories("c1") if m.type == "ATTEMPT"]) == 1


def test_the_same_step_phrased_twice_is_one_memory():
    events = [turn("t1", "The app keeps crashing.", 0), turn("t2", "Please restart the application.", 1, role="agent"),
              turn("t3", "I rebooted it, no luck.", 2), turn("t4", "Restarted it once more, still the same crash.", 3)]
    mems = [m for m in extract_all(events) if m.type == "ATTEMPT"]
    assert [(m.text, m.outcome) for m in mems] == [("Restart application", "failed")]
    assert mems[0].source_ids == ("t2", "t3", "t4")


def test_rule_4_an_incident_opens_on_the_report_and_resolves_when_a_fix_works():
    x = Extractor()
    x.observe(turn("t1", "The app crashes when I upload a large PDF.", 0))
    assert table(x.memories("c1"), "INCIDENT") == [("INCIDENT", "The app crashes when I upload a large PDF", "open")]
    x.observe(turn("t2", "Updated the app and it fixed it.", 5))
    assert table(x.memories("c1"), "INCIDENT")[0][2] == "resolved"


def test_rule_4_the_sessions_resolution_record_resolves_its_incident():
    x = Extractor()
    x.observe(turn("t1", "Invoice export to CSV fails with error 502.", 0))
    x.observe(resolve("s1", "Rebuilt the export index.", 30))
    (incident,) = [m for m in x.memories("c1") if m.type == "INCIDENT"]
    assert incident.status == "resolved" and incident.source_ids == ("t1", "s1#resolution")


def test_a_resolution_summary_names_the_fix_and_the_last_step_tried_is_otherwise_the_fix():
    events = [turn("t1", "The connector keeps timing out.", 0),
              turn("t2", "Restarted the connector worker.", 5, role="agent", kind="action"),
              turn("t3", "Still timing out.", 6),
              turn("t4", "Raised connect_timeout on the connection from 30s to 120s.", 10, role="agent", kind="action"),
              resolve("s1", "Connection timeout fixed by raising connect_timeout to 120s.", 60)]
    assert attempts(events) == {"Restart connector worker": "failed", "Raise connect_timeout": "worked"}
    no_summary = [*events[:-1], resolve("s1", "", 60)]
    assert attempts(no_summary)["Raise connect_timeout"] == "worked"


def test_a_repeat_in_a_new_session_reopens_the_resolved_incident():
    events = [turn("t1", "My Acme PDF Suite crashes whenever I upload a large PDF.", 0),
              turn("t2", "Updated the app and it fixed it.", 5),
              turn("b1", "The application is crashing again when I upload a PDF.", 60 * 24 * 7, session="s2")]
    incidents = [m for m in extract_all(events) if m.type == "INCIDENT"]
    assert [(m.status, m.source_ids) for m in incidents] == [("open", ("t1", "t2", "b1"))]


def test_a_different_problem_in_a_new_session_is_its_own_incident():
    events = [turn("t1", "Since 5.2 the app crashes on launch on my iPhone.", 0),
              turn("b1", "Since 5.4 the app closes as soon as I tap the Orders tab.", 600, session="s2")]
    assert len([m for m in extract_all(events) if m.type == "INCIDENT"]) == 2


def test_rule_5_profile_facts_are_kept_apart_from_troubleshooting():
    mems = extract_all([turn("t1", "Hi, I'm Dana, ops lead at Globex. Our HubSpot sync fails every night.", 0)])
    assert table(mems, "PROFILE") == [("PROFILE", "Hi, I'm Dana, ops lead at Globex.", None), ("PROFILE", "Uses HubSpot", None)]
    assert [m.type for m in mems if m.type != "PROFILE"] == ["INCIDENT"]


def test_a_newer_preference_on_the_same_topic_replaces_the_older_one():
    x = Extractor()
    x.observe(turn("p1", "Please reach me by email, not phone.", 0))
    x.observe(turn("p2", "Small update: going forward phone is fine, ideally afternoons.", 600, session="s2"))
    x.observe(turn("p3", "From now on please call me instead of emailing.", 900, session="s3"))
    prefs = [m for m in x.memories("c1") if m.key.startswith("preference:")]
    assert sorted((m.key, m.source_ids) for m in prefs) == [("preference:contact", ("p3",)), ("preference:hours", ("p2",))]


def test_a_problem_that_began_with_an_update_is_not_an_update_attempt():
    assert attempts([turn("t1", "Since updating to 5.2 the app crashes on launch.", 0)]) == {}


def test_observing_an_event_twice_changes_nothing_and_forget_drops_the_customer():
    x = Extractor()
    t = turn("t1", ONE_SHOT, 0)
    assert x.observe(t) and x.observe(t) == []
    r = resolve("s1", "Fixed by updating.", 9)
    x.observe(r)
    assert x.observe(r) == []
    x.observe(Forget("c1", t.at))
    assert x.memories("c1") == []


def test_customers_never_share_memories():
    mems = extract_all([turn("a", "Our app crashes. Updating the app fixed it.", 0, subject="c1"),
                        turn("b", "Our app crashes. Reinstalling fixed it.", 1, subject="c2")])
    assert {(m.customer_id, m.text) for m in mems if m.type == "ATTEMPT"} == {("c1", "Update application"), ("c2", "Reinstall application")}


def test_each_canonical_step_pattern_matches_only_text_holding_one_of_its_words():
    """find_steps searches a clause for a canonical step only when it holds one of the pattern's words
    (`_CATALOG_NEEDS`): every match of every pattern, on the bundled suites' sentences and on the
    phrasings the patterns were written for, holds one of them, so the shortcut never loses a step."""
    from pathlib import Path

    from harness.format.loader import load_suite
    from stores.protocol import Resolution, Turn
    from stores.structured.lexicon import _CATALOG, _CATALOG_NEEDS, normalize, sentences

    assert len(_CATALOG) == len(_CATALOG_NEEDS)
    root = Path(__file__).resolve().parents[2] / "datasets"
    texts = [ev.text if isinstance(ev, Turn) else ev.summary for s in load_suite([root / "canonical"])
             for ev in s.events if isinstance(ev, (Turn, Resolution))]
    texts += ["Deleted and reinstalled it", "I re-installed the client", "wiped the browser cache", "cache cleared, still slow",
              "flushed the SSO session cache", "power-cycled the router", "power cycled it", "turned it off and back on",
              "rebooted the app", "relaunched it", "upgraded to 5.2", "updating the application first", "logged out and back in",
              "signed out and in again", "cleared my browser cookies", ONE_SHOT]
    matched = 0
    for text in texts:
        for clause in (normalize(x) for x in sentences(text)):
            for (pattern, key, *_), needs in zip(_CATALOG, _CATALOG_NEEDS):
                for m in pattern.finditer(clause):
                    matched += 1
                    assert any(w in m.group() for w in needs), (key, m.group())
    assert matched > 30

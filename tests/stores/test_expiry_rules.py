"""The expiry rules: which items are live for a request, and the reason written for each that is not."""

from store_events import at, resolve, turn

from stores.expiry import ExpiryParams, SubjectLedger, is_expiry_reason
from stores.protocol import Signal


def ledger(*events):
    led = SubjectLedger("acme")
    for e in events:
        led.add(e)
    return led


def verdicts(led, now, session="live", **params):
    return led.verdicts(now, session, ExpiryParams(**params))


# --- sentiment -------------------------------------------------------------------------------------

ANGRY = turn("angry-1", "mar", "customer", "This is unacceptable, third failure this week.", at(0))


def test_sentiment_older_than_its_lifespan_expires_with_the_day_it_was_said():
    assert verdicts(ledger(ANGRY), at(days=8)) == {"angry-1": "expired: sentiment older than 7 days, said 2024-03-01"}


def test_sentiment_within_its_lifespan_is_scoped_to_its_own_session():
    led = ledger(ANGRY)
    assert verdicts(led, at(days=2)) == {"angry-1": "expired: sentiment scoped to its issue mar, said 2024-03-01"}
    assert verdicts(led, at(days=2), session="mar") == {}
    assert verdicts(led, at(days=2), sentiment_scope="subject") == {}


def test_sentiment_lifespan_is_a_parameter():
    assert "older than 3 days" in verdicts(ledger(ANGRY), at(days=4), sentiment_days=3)["angry-1"]


def test_sentiment_can_be_never_stored():
    assert verdicts(ledger(ANGRY), at(hours=1), sentiment="never") == {"angry-1": "not stored: sentiment (never stored)"}


# --- episodic state ---------------------------------------------------------------------------------

RMA = turn("rma-wait-1", "s1", "agent", "Opened RMA 5531 for a replacement headset.", at(0), kind="action")


def test_episodic_state_closes_on_a_signal_naming_its_reference_case_insensitively():
    led = ledger(RMA, Signal("acme", "s1", "rma_closed", "rma 5531", at(days=5)))
    assert verdicts(led, at(days=6)) == {"rma-wait-1": "expired: episodic, closed by signal rma_closed rma 5531 on 2024-03-06"}


def test_a_signal_before_the_item_or_without_a_reference_closes_nothing():
    early = Signal("acme", "s1", "rma_closed", "RMA 5531", at(-5))
    bare = Signal("acme", "s1", "callback_done", None, at(days=1))
    assert verdicts(ledger(early, RMA, bare), at(days=2)) == {}


def test_episodic_state_closes_on_its_sessions_resolution_and_reopens_with_it():
    report = turn("r1", "s1", "customer", "I'm still waiting on the replacement unit.", at(0))
    led = ledger(report, resolve("s1", at(hours=2)))
    assert verdicts(led, at(days=1)) == {"r1": "expired: episodic, closed by resolution of s1 on 2024-03-01"}
    led.add(resolve("s1", at(days=2), status="open"))
    assert verdicts(led, at(days=3)) == {}


def test_a_resolution_before_the_item_does_not_close_it():
    led = ledger(resolve("s1", at(0)), turn("r2", "s1", "customer", "Still waiting on the replacement unit.", at(hours=1)))
    assert verdicts(led, at(days=1)) == {}


def test_the_earliest_closing_event_is_the_one_named():
    led = ledger(RMA, Signal("acme", "s1", "rma_closed", "RMA 5531", at(days=1)), resolve("s1", at(days=2)))
    assert "closed by signal" in verdicts(led, at(days=3))["rma-wait-1"]


def test_episodic_state_has_no_clock():
    led = ledger(turn("cb", "s1", "agent", "Tier 2 will call you back by Friday.", at(0)))
    assert verdicts(led, at(days=400)) == {}


def test_each_closing_rule_can_be_switched_off():
    led = ledger(RMA, Signal("acme", "s1", "rma_closed", "RMA 5531", at(days=1)), resolve("s1", at(days=2)))
    assert "resolution of s1" in verdicts(led, at(days=3), episodic_on_signal=False)["rma-wait-1"]
    assert verdicts(led, at(days=3), episodic_on_signal=False, episodic_on_resolution=False) == {}


# --- stable preferences -----------------------------------------------------------------------------

PHONE_1 = turn("pref-phone-1", "jan", "customer", "Please call me rather than email, I'm rarely at my desk.", at(0))
EMAIL = turn("pref-email", "jun", "customer", "From now on please email me instead of calling.", at(days=93))
PHONE_2 = turn("pref-phone-2", "sep", "customer", "Phone is fine again now, mornings before 11.", at(days=200))


def test_a_newer_contradicting_preference_supersedes_the_older_and_a_return_does_not_revive_it():
    v = verdicts(ledger(PHONE_1, EMAIL, PHONE_2), at(days=201))
    assert v == {
        "pref-phone-1": "superseded by pref-email on 2024-06-02 (contact channel: email)",
        "pref-email": "superseded by pref-phone-2 on 2024-09-17 (contact channel: phone)",
    }


def test_a_restated_preference_or_one_on_another_topic_supersedes_nothing():
    again = turn("again", "x", "customer", "Please call me, as before.", at(days=10))
    csv = turn("csv", "x", "customer", "Please send the weekly export as CSV.", at(days=11))
    assert verdicts(ledger(PHONE_1, again, csv), at(days=12)) == {}


def test_supersession_applies_in_the_live_session_too_and_can_be_switched_off():
    led = ledger(PHONE_1, EMAIL)
    assert "pref-phone-1" in verdicts(led, at(days=94), session="jan")
    assert verdicts(led, at(days=94), supersede=False) == {}


def test_preferences_and_profile_live_a_year_by_default():
    prof = turn("p", "x", "customer", "I'm the ops lead at Hollis Retail.", at(0))
    led = ledger(PHONE_1, prof)
    assert verdicts(led, at(days=365)) == {}
    assert verdicts(led, at(days=366)) == {
        "pref-phone-1": "expired: preference older than 365 days, said 2024-03-01",
        "p": "expired: profile fact older than 365 days, said 2024-03-01",
    }


# --- system-owned facts -----------------------------------------------------------------------------

PLAN = turn("plan-1", "feb", "customer", "We're on the Starter plan, capped at 3 projects.", at(0))


def test_a_system_owned_fact_is_not_stored_across_sessions_and_leaves_a_pointer():
    led = ledger(PLAN)
    v = verdicts(led, at(days=30))
    assert v == {"plan-1": "not stored: system-owned fact (plan tier); pointer kept"}
    assert led.pointers(v, ExpiryParams()) == [
        "Not kept in memory: plan tier came up in an earlier conversation (last on 2024-03-01); "
        "check the billing system for the current value."]


def test_without_pointers_the_receipt_says_so():
    led = ledger(PLAN)
    v = verdicts(led, at(days=30), system_owned="drop")
    assert v["plan-1"].endswith("; no pointer") and led.pointers(v, ExpiryParams(system_owned="drop")) == []


def test_keeping_system_owned_facts_is_an_ablation_that_gives_them_the_profile_lifespan():
    led = ledger(PLAN)
    assert verdicts(led, at(days=30), system_owned="keep") == {}
    assert verdicts(led, at(days=400), system_owned="keep") == {
        "plan-1": "expired: system-owned fact older than 365 days, said 2024-03-01"}


def test_the_live_session_is_the_conversation_not_memory():
    led = ledger(PLAN, turn("u", "feb", "customer", "ok", at(1)))
    assert verdicts(led, at(days=30), session="feb") == {}
    assert set(verdicts(led, at(days=30), session="feb", live_session=False)) == {"plan-1", "u"}


# --- the support record and the rest --------------------------------------------------------------------

def test_unclassified_items_get_the_shortest_lifespan():
    led = ledger(turn("u", "x", "customer", "Perfect, thanks.", at(0)))
    assert verdicts(led, at(days=7)) == {}
    assert verdicts(led, at(days=8)) == {"u": "expired: unclassified older than 7 days, said 2024-03-01"}
    assert "older than 3 days" in verdicts(led, at(days=4), sentiment_days=3)["u"]
    assert verdicts(led, at(days=4), sentiment_days=3, unclassified_days=30) == {}


def test_the_support_record_lives_a_year():
    led = ledger(turn("fix", "x", "agent", "Raised connect_timeout to 120s.", at(0), kind="action"),
                 resolve("x", at(1), "Timeout raised; fixed."))
    assert verdicts(led, at(days=300)) == {}
    assert set(verdicts(led, at(days=400))) == {"fix", "x#resolution"}


# --- bookkeeping ------------------------------------------------------------------------------------------

def test_a_second_delivery_changes_nothing():
    led = ledger(PLAN, RMA)
    assert not led.add(PLAN)
    assert led.add(resolve("s1", at(5))) and not led.add(resolve("s1", at(5)))
    sig = Signal("acme", "s1", "rma_closed", "RMA 5531", at(6))
    assert led.add(sig) and not led.add(sig)


def test_a_replaced_resolution_keeps_its_place_and_takes_the_new_status():
    led = ledger(resolve("s1", at(0)), PLAN)
    led.add(resolve("s1", at(9), "reopened", status="open"))
    assert list(led.items) == ["s1#resolution", "plan-1"] and led.items["s1#resolution"].status == "open"


def test_every_reason_names_its_rule():
    led = ledger(ANGRY, PLAN, PHONE_1, EMAIL)
    reasons = verdicts(led, at(days=100)).values()
    assert reasons and all(is_expiry_reason(r) for r in reasons)
    assert not is_expiry_reason("budget") and not is_expiry_reason("expired: ") and not is_expiry_reason("")

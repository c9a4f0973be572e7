"""The rule-based memory classifier: one test per rule of its table, the seed's examples, and topics."""

import pytest

from stores.expiry import classify
from stores.expiry.classifier import NOT_HAPPENED, PROBLEM, preference_topics


def cls(text, role="customer", kind="message"):
    return classify(text, role, kind).cls


# --- one test per rule, in the table's order ------------------------------------------------------

def test_a_resolution_naming_a_pending_reference_is_episodic_with_that_reference():
    c = classify("Left earcup failed; RMA 5531 opened, replacement headset pending delivery.", "resolution")
    assert (c.cls, c.event) == ("episodic", "RMA 5531")


def test_any_other_resolution_record_is_incident():
    assert cls("Raised connect_timeout to 120s; nightly load succeeds.", "resolution") == "incident"


def test_anger_is_sentiment_even_when_the_message_also_reports_a_problem():
    c = classify("Third failed sync this month. Frankly this is unacceptable.", "customer")
    assert (c.cls, c.rule, c.cue) == ("sentiment", "sentiment: anger words", "unacceptable")


def test_a_threat_to_leave_is_sentiment_but_leaving_a_job_is_not():
    assert cls("If this happens again we are cancelling.") == "sentiment"
    assert cls("I'm leaving Nordhavn at the end of the month. Please delete my personal data.") != "sentiment"


def test_strong_delight_is_sentiment():
    assert cls("You're a lifesaver, thank you so much!") == "sentiment"


def test_an_agent_apology_is_sentiment():
    assert cls("I'm very sorry, Greg. I'm pulling the sync logs now.", "agent") == "sentiment"
    assert cls("Sorry to hear that, Priya. Is everyone affected?", "agent") == "sentiment"


def test_a_self_introduction_is_profile_even_when_it_names_a_plan():
    assert cls("I'm the ops lead at Hollis Retail; we have 14 stores.") == "profile"
    assert cls("I'm Sofia, the RevOps lead at Nordhavn Design.") == "profile"
    assert cls("We're Quarry Labs, on the Growth plan, and we do 2 million orders a year.") == "profile"


def test_words_after_im_that_are_not_names_do_not_introduce_anyone():
    assert cls("I'm Still waiting for the export.") != "profile"


def test_a_standing_contact_request_is_a_preference():
    c = classify("Quick note: please reach me by email, not phone. I can't take calls.", "customer")
    assert (c.cls, c.topics) == ("preference", (("contact_channel", "email"),))


def test_a_one_off_send_request_is_not_a_preference_but_a_standing_one_is():
    assert cls("Could you please send me last quarter's export?") != "preference"
    assert cls("Please send the weekly digest to ops@example.com.") == "preference"


def test_waiting_on_something_is_episodic_with_the_reference_it_names():
    c = classify("Opened RMA 5531 for a replacement headset; it ships once the courier collects the old one.",
                 "agent", "action")
    assert (c.cls, c.event) == ("episodic", "RMA 5531")


def test_a_shipping_date_or_an_rma_number_is_waiting_state():
    assert classify("The courier scan is in; the replacement ships Monday under RMA 5531.", "agent").event == "RMA 5531"
    assert cls("Order 60418 was due Monday and it still hasn't left your warehouse.") == "episodic"


def test_a_promised_callback_is_episodic():
    assert cls("I've escalated this to tier 2; they'll call you back by Friday.", "agent") == "episodic"


def test_pending_as_an_adjective_is_not_waiting():
    assert cls("Turned off photo sync and drained her pending photo queue to the web gallery.", "agent", "action") == "incident"


@pytest.mark.parametrize("text,topic", [
    ("We're on the Enterprise plan with 240 seats across 6 clinics.", "plan_tier"),
    ("Correct: Team plan, 45 seats, billed monthly on the 1st.", "plan_tier"),
    ("Your order #8812 shipped yesterday.", "order_status"),
    ("Your account balance is $120 overdue.", "balance"),
    ("Applied a one-month service credit to the account.", "balance"),
    ("You have 3 open tickets with us right now.", "open_tickets"),
])
def test_a_value_another_system_owns_is_system_owned_with_its_topic(text, topic):
    c = classify(text, "customer")
    assert (c.cls, c.topics) == ("system_owned", ((topic, ""),))


@pytest.mark.parametrize("text,topic", [
    ("We're on the Harbour Lite plan, so it's the one seat.", "plan_tier"),
    ("There are three cases open with your billing people already.", "open_tickets"),
    ("The portal shows 40 euros in credit on our account.", "balance"),
    ("We pay for the Studio Max tier, three editors.", "plan_tier"),
])
def test_a_value_another_system_owns_is_read_with_any_plan_name_or_number_word(text, topic):
    c = classify(text, "customer")
    assert (c.cls, c.topics) == ("system_owned", ((topic, ""),))


@pytest.mark.parametrize("text,topic", [
    ("The refund on my dashboard still reads 'pending'.", "order_status"),
    ("My parcel has been showing 'awaiting collection' since Monday.", "order_status"),
    ("The billing page says I'm £30 in credit, which can't be right.", "balance"),
    ("The app indicates my new lamp is 'on hold' for some reason.", "order_status"),
])
def test_a_status_a_page_shows_is_system_owned_before_waiting_or_problem_words(text, topic):
    c = classify(text, "customer")
    assert (c.cls, c.rule, c.topics) == ("system_owned", "system-owned: a status a page shows", ((topic, ""),))


def test_a_page_that_says_delivered_or_paid_is_a_dispute_not_a_status():
    assert classify("Tracking says delivered but the box never came.", "customer").rule != "system-owned: a status a page shows"
    assert classify("Your email says I paid twice.", "customer").rule != "system-owned: a status a page shows"
    assert classify("the app shows my table booking as cancelled and we're at the door", "customer").rule != (
        "system-owned: a status a page shows")


@pytest.mark.parametrize("text", [
    "Could all future statements come as PDFs? Nobody here opens the portal.",
    "Going forward, can the weekly reports go to my deputy instead?",
    "Receipts should go out in Welsh as well as English, please.",
    "Please loop our bookkeeper in on anything to do with refunds.",
    "Paper copies rather than emails for the contracts, please.",
])
def test_a_standing_request_is_a_preference_by_its_shape(text):
    c = classify(text, "customer")
    assert c.cls == "preference" and c.rule.startswith("preference: ")


@pytest.mark.parametrize("text", [
    "phone the home phone rather than the mobile, the mobile is always flat",
    "and the statements in Gaelic if possible, please",
    "receipts as CSV please, the links never open for me",
])
def test_a_channel_over_another_or_a_recurring_thing_in_a_format_with_a_please_is_a_preference(text):
    c = classify(text, "customer")
    assert (c.cls, c.rule) == ("preference", "preference: a standing request's shape")


def test_a_recurring_thing_in_a_format_without_a_please_is_not_a_standing_request():
    assert classify("the invoices as PDF look blurry on my laptop", "customer").cls != "preference"


@pytest.mark.parametrize("text", [
    "we're on the Harbour Plus package with four tablets",
    "The portal shows six of my eight staff licences taken.",
])
def test_a_named_package_or_licences_of_a_kind_are_system_owned(text):
    c = classify(text, "customer")
    assert (c.cls, c.topics) == ("system_owned", (("plan_tier", ""),))


def test_a_one_off_question_about_a_thing_is_not_a_standing_request():
    assert cls("Could you resend the invoice from March?") != "preference"
    assert cls("Why did the reports go to the wrong folder?") != "preference"


def test_stress_and_shopping_around_are_sentiment():
    assert cls("honestly this whole thing has me stressed out of my mind") == "sentiment"
    assert cls("We've started looking at other providers, to be honest.") == "sentiment"


@pytest.mark.parametrize("text", [
    "The repayment for the broken kettle came through on Friday.",
    "Your refund went back to my debit card this morning, thanks.",
    "The £18 refund has landed, cheers.",
])
def test_money_said_as_landed_is_system_owned(text):
    c = classify(text, "customer")
    assert (c.cls, c.rule, c.topics) == ("system_owned", "system-owned: money landed", (("balance", ""),))


def test_money_that_has_not_landed_is_not_a_landed_value():
    assert classify("The refund still hasn't come through.", "customer").rule != "system-owned: money landed"
    assert classify("No sign the payment went through yet.", "customer").rule != "system-owned: money landed"


@pytest.mark.parametrize("text", [
    "right, I'll keep an eye out for the courier on Monday",
    "We'll look out for the new keys in the post then.",
    "I'm still expecting the fitter to come and finish the job.",
])
def test_waiting_said_by_its_shape_is_episodic(text):
    c = classify(text, "customer")
    assert (c.cls, c.rule) == ("episodic", "episodic: a wait's shape")


@pytest.mark.parametrize("text", [
    "We've just taken on a third van for the deliveries.",
    "My daughter Priya is taking over the bookings from next month.",
    "my business partner, Ollie, now handles the accounts",
    "We've moved the bakery to Falmouth.",
    "so it's twelve chairs now in the salon",
    "my cousin Aled helping us with the ordering now",
])
def test_news_of_the_setup_or_the_people_is_profile(text):
    c = classify(text, "customer")
    assert (c.cls, c.rule) == ("profile", "profile: news of the setup or the people")


def test_news_that_reports_a_problem_or_a_purchase_is_not_profile_news():
    assert classify("we added a new user and the sync fails", "customer").rule == "incident: problem report"
    assert classify("I bought a length of cable from you yesterday.", "customer").rule != (
        "profile: news of the setup or the people")
    assert classify("My husband looks after the bills.", "customer").rule != "profile: news of the setup or the people"
    assert classify("We've taken on two new staff in Leeds, so Polish replies from now on, please.", "customer").rule != (
        "profile: news of the setup or the people")


@pytest.mark.parametrize("text", [
    "Honestly gutted, the whole batch went in the bin because of it.",
    "Really chuffed with how the new rota page turned out.",
    "Second time it's gone wrong this week and my patience is wearing thin.",
    "I'm losing my cool with this now, three orders gone astray.",
    "properly losing my temper here, two bookings vanished",
])
def test_a_feeling_said_in_passing_is_sentiment_before_problem_words(text):
    c = classify(text, "customer")
    assert (c.cls, c.rule) == ("sentiment", "sentiment: a feeling said in passing")


def test_setup_and_compliance_facts_are_profile():
    assert cls("Our warehouse is an X-Small that auto-suspends after 5 minutes.") == "profile"
    assert cls("Before anything else: patient data must stay in your US data region (HIPAA).") == "profile"
    assert cls("Only office staff use Okta SSO; our 180 drivers don't have accounts.") == "profile"


def test_a_problem_report_is_part_of_the_support_record():
    c = classify("The Monday export is missing the 'lease end' column.", "customer")
    assert (c.cls, c.rule) == ("incident", "incident: problem report")


@pytest.mark.parametrize("text", [
    "The monthly reminder texts didn't go out to any of our members.",
    "Nobody got the 3-day notice before the renewal.",
    "the scanner never synced overnight, so we counted by hand",
    "None of the drivers could sign in this morning.",
    "our weekly backup did not even upload on Sunday",
])
def test_a_problem_said_as_what_did_not_happen_is_a_problem_report(text):
    c = classify(text, "customer")
    assert (c.cls, c.rule) == ("incident", "incident: problem report")
    assert NOT_HAPPENED.search(c.cue) and not PROBLEM.search(text.lower())  # read by its shape, not the problem words


def test_what_has_not_arrived_yet_is_still_waited_for_and_a_step_that_did_not_help_is_still_a_step():
    assert classify("The replacement still hasn't arrived.", "customer").cls == "episodic"
    assert classify("I restarted it but that didn't help.", "customer").rule == "incident: the customer's account of a step"
    assert cls("I never got round to saying thanks, so thanks.") == "unclassified"


def test_a_step_the_customer_tried_and_how_it_went_is_part_of_the_support_record():
    assert classify("I restarted it but that did not help.", "customer").rule == "incident: the customer's account of a step"
    assert classify("Updated the app and it fixed it.", "customer").rule == "incident: the customer's account of a step"


def test_a_dead_device_or_a_late_delivery_is_a_problem_report():
    assert classify("The left earcup on my headset died this morning, no sound at all on that side.", "customer").rule == (
        "incident: problem report")


def test_anything_else_the_agent_said_or_did_is_incident():
    assert classify("Raised connect_timeout from 30s to 120s.", "agent", "action").rule == "incident: agent action"
    assert classify("Custom fields are opt-in per export.", "agent").rule == "incident: agent message"


def test_anything_else_the_customer_said_is_unclassified():
    assert cls("Perfect, thanks.") == "unclassified"


# --- the seed's examples ---------------------------------------------------------------------------

@pytest.mark.parametrize("text,role,expected", [
    ("I prefer email over phone.", "customer", "preference"),
    ("We're on the Pro plan.", "customer", "system_owned"),
    ("I'm really angry that the delivery is late again.", "customer", "sentiment"),
    ("I'm still waiting on the replacement unit, tracking pending.", "customer", "episodic"),
    ("Please don't call before 10am.", "customer", "preference"),
    ("Promised a callback from tier 2.", "agent", "episodic"),
    ("Awaiting replacement headset, RMA 5531 opened.", "agent", "episodic"),
    ("Can I get a refund for this?", "customer", "unclassified"),
    ("I mostly use the mobile app.", "customer", "unclassified"),
])
def test_the_seeds_examples_get_the_seeds_classes(text, role, expected):
    assert cls(text, role) == expected


def test_the_seeds_memory_record_names_its_closing_reference():
    assert classify("Awaiting replacement headset, RMA 5531 opened.", "agent").event == "RMA 5531"


# --- preference topics -----------------------------------------------------------------------------

def test_a_negated_clause_does_not_state_a_value():
    assert preference_topics("Please reach me by email, not phone.") == (("contact_channel", "email"),)
    assert dict(preference_topics("Please switch the weekly export to CSV instead of XLSX from now on."))["format:export"] == "csv"


def test_a_contact_preference_can_also_name_call_times():
    assert dict(preference_topics("Phone is fine now, ideally afternoons.")) == {
        "contact_channel": "phone", "call_times": "afternoon"}


def test_times_not_to_call_are_their_own_topic_and_no_channel():
    assert preference_topics("No maintenance calls on Monday mornings please.") == (("call_blackout", "monday morning"),)


def test_who_to_copy_and_where_a_thing_goes_are_read_with_their_values():
    assert dict(preference_topics("From now on please copy Maja Holm instead of Nils."))["cc"] == "maja holm"
    topics = dict(preference_topics("Please send all invoices to ap@arborfreight.com rather than to me."))
    assert topics == {"recipient:invoice": "ap@arborfreight.com"}


def test_a_language_preference_names_the_language():
    assert dict(preference_topics("Please reply in German from now on."))["language"] == "german"


def test_classification_is_pure():
    a = classify("Please reach me by email.", "customer")
    classify.cache_clear()
    assert classify("Please reach me by email.", "customer") == a


@pytest.mark.parametrize("text", ["This booking app drives me up the wall.", "Honestly seething about the double charge.",
                                  "It makes me mad, the clients wait and then leave."])
def test_anger_said_as_an_idiom_is_sentiment(text):
    assert classify(text, "customer").rule == "sentiment: anger words"


def test_leave_to_call_at_any_time_is_a_contact_preference():
    c = classify("Feel free to ring me any time, I'm home all week.", "customer")
    assert (c.cls, c.rule) == ("preference", "preference: standing request") and ("contact_channel", "phone") in c.topics


def test_someone_doing_a_job_from_now_on_is_news_of_the_people():
    for text in ("My daughter is doing the ordering from next month.", "my nephew will do the deliveries on Fridays"):
        assert classify(text, "customer").rule == "profile: news of the setup or the people", text


def test_a_named_plan_with_its_users_is_system_owned_but_a_day_with_users_is_not():
    c = classify("We're on Salon Premier, three logins.", "customer")
    assert (c.cls, c.topics) == ("system_owned", (("plan_tier", ""),))
    assert classify("We went on Monday, two users complained about the screen.", "customer").cls != "system_owned"

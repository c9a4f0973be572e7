"""The Decisions page, driven headless with AppTest over the fixture runs (which replay three
canonical decision scenarios through `session_state` and `per_message`)."""

from __future__ import annotations

from test_pages import open_page, no_exception, texts


def frames(at):
    return [d.value.data if hasattr(d.value, "data") else d.value for d in at.dataframe]


def test_decisions_shows_the_policy_leaderboard(app_runs):
    at = open_page("decisions")
    no_exception(at)
    board = frames(at)[0]
    assert list(board["policy"]) == ["session_state", "per_message"]
    assert board.loc[0, "decision accuracy"].startswith("100%")
    assert "failing" in board.loc[1, "no irreversible errors"]


def test_a_deep_link_opens_one_turn_with_its_signals_locker_card_and_rule(app_runs):
    at = open_page("decisions", scenario="decision-yes-three-meanings", turn="pkg1-yes")
    no_exception(at)
    assert at.query_params["turn"] == "pkg1-yes" and at.query_params["scenario"] == "decision-yes-three-meanings"
    said = texts(at)
    assert "affirmative_without_offer" in said  # session_state: the yes answers the lobby question
    assert any("Irreversible error: false transfer" in e.value for e in at.error)  # per_message transfers
    assert "`short_affirmative`" in said and "`answers_question`" in said
    assert "Locker before → after" in said


def test_the_overview_marks_mismatches_and_irreversible_errors(app_runs):
    at = open_page("decisions", scenario="decision-yes-three-meanings")
    overview = frames(at)[1]
    row = overview[overview["turn"] == "pkg1-yes"].iloc[0]
    assert row["session_state"] == "✓ continue" and row["per_message"] == "✗ transfer · false transfer"
    assert row["gold plan"] == "continue"
    styles = str(at.dataframe[1].proto.arrow_data.styler)
    assert "#f8d7da" in styles  # the irreversible errors are red


def test_a_mismatch_that_is_not_irreversible_is_amber(app_runs):
    at = open_page("decisions", scenario="decision-routing")
    overview = frames(at)[1]
    row = overview[overview["turn"] == "route-short"].iloc[0]
    assert row["per_message · route"] == "knowledge" and row["gold route"] == "recommendation"
    assert "#fff3cd" in str(at.dataframe[1].proto.arrow_data.styler)


def test_only_mismatches_keeps_the_turns_a_policy_got_wrong(app_runs):
    every = frames(open_page("decisions", scenario="decision-yes-three-meanings"))[1]
    wrong = frames(open_page("decisions", scenario="decision-yes-three-meanings", mismatch="1"))[1]
    assert 0 < len(wrong) < len(every)
    assert set(wrong["turn"]) == {"pkg1-yes", "pkg3-yes"}


def test_a_turn_during_the_outage_shows_the_locker_down(app_runs):
    at = open_page("decisions", scenario="decision-locker-down-mid-chat", turn="down-ask-2", policy="session_state")
    no_exception(at)
    said = texts(at)
    assert any("The locker is down at this turn" in w.value for w in at.warning)
    assert "unreadable (down)" in said and "locker_down" in said
    assert "locker down" in said  # the executor's log line


def test_an_act_during_the_outage_shows_fail_open_broken(app_runs):
    at = open_page("decisions", scenario="decision-locker-down-mid-chat", turn="down-yes")
    assert any("Fail open broken: `transfer`" in e.value for e in at.error)  # per_message transferred on a bare yes


def test_the_policy_choice_is_in_the_url(app_runs):
    at = open_page("decisions", scenario="decision-routing", policy="per_message")
    overview = frames(at)[1]
    assert "per_message" in overview.columns and "session_state" not in overview.columns
    assert at.query_params["policy"] == "per_message"


def test_a_failing_decision_case_links_from_failures_to_the_turn(app_runs):
    at = open_page("failures", case="per_message|decision-yes-three-meanings|pkg1-yes|irreversible_errors")
    no_exception(at)
    assert any("false transfer" in e.value for e in at.error)
    assert [b for b in at.button if b.label == "Open the turn on the Decisions page"]


def test_the_leaderboard_shows_the_decision_policies_apart_from_strategies(app_runs):
    at = open_page("leaderboard")
    no_exception(at)
    assert "Decision policies" in [s.value for s in at.subheader]
    totals = frames(at)[0]
    assert not set(totals["strategy"]) & {"session_state", "per_message"}

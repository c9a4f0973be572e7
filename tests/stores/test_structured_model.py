"""The typed memory: fields, validation, and a JSON round trip."""

from __future__ import annotations

import json
from datetime import datetime

import pytest
from helpers import at

from stores.structured.model import Memory, MemoryFormatError, render_memory, same_ticket


def attempt(**kw):
    base = dict(id="c1:ATTEMPT:x:update-application", customer_id="c1", type="ATTEMPT", text="Update application",
                created_at=at(0), updated_at=at(5), source_ids=("t1", "t7"), outcome="worked", product="Acme PDF Suite",
                incident_id="c1:INCIDENT:t1", key="update-application")
    base.update(kw)
    return Memory(**base)


def test_a_memory_survives_a_json_round_trip_unchanged():
    m = attempt(previous_outcomes=("failed",))
    again = Memory.from_dict(json.loads(json.dumps(m.to_dict())))
    assert again == m


@pytest.mark.parametrize("outcome", ["worked", "failed", "in_progress"])
def test_an_attempt_takes_each_outcome(outcome):
    assert attempt(outcome=outcome).outcome == outcome


def test_an_attempt_needs_an_outcome_and_an_incident_needs_a_status():
    with pytest.raises(MemoryFormatError, match="needs an outcome"):
        attempt(outcome=None)
    with pytest.raises(MemoryFormatError, match="needs a status"):
        attempt(type="INCIDENT", outcome=None)
    with pytest.raises(MemoryFormatError, match="only an ATTEMPT has an outcome"):
        attempt(type="PROFILE")


def test_unknown_types_and_times_going_backwards_are_refused():
    with pytest.raises(MemoryFormatError, match="type 'NOTE'"):
        attempt(type="NOTE")
    with pytest.raises(MemoryFormatError, match="before created_at"):
        attempt(created_at=at(9), updated_at=at(1))


def test_reading_back_names_the_bad_field():
    d = attempt().to_dict()
    with pytest.raises(MemoryFormatError, match="'created_at' is not an ISO 8601 time"):
        Memory.from_dict({**d, "created_at": "yesterday"})
    with pytest.raises(MemoryFormatError, match="'source_ids' must be a list of strings"):
        Memory.from_dict({**d, "source_ids": [1]})
    with pytest.raises(MemoryFormatError, match="unknown field"):
        Memory.from_dict({**d, "colour": "red"})
    with pytest.raises(MemoryFormatError, match="'text' must be a string"):
        Memory.from_dict({k: v for k, v in d.items() if k != "text"})


def test_a_rendered_memory_says_what_kind_of_knowledge_it_is():
    assert render_memory(attempt(), "App crashes on upload").endswith("known fix (worked): Update application (for: App crashes on upload)")
    assert "worked before, no longer helps" in render_memory(attempt(outcome="failed", previous_outcomes=("worked",)))
    incident = attempt(type="INCIDENT", outcome=None, status="open", text="App crashes on upload")
    assert render_memory(incident).endswith("incident, open: App crashes on upload")


def test_same_ticket_is_an_unheld_unmatched_attempt_of_a_session_where_a_memory_matches():
    t = datetime(2030, 1, 1)
    def mem(id, type, **kw):
        return Memory(id, "c1", type, id, t, t, (id,), **kw)
    mems = [mem("fix", "ATTEMPT", outcome="worked"), mem("retry", "ATTEMPT", outcome="failed"),
            mem("held", "ATTEMPT", outcome="failed", incident_id="inc"), mem("elsewhere", "ATTEMPT", outcome="failed"),
            mem("who", "PROFILE"), mem("loose", "ATTEMPT", outcome="failed")]
    sessions = ["s1", "s1", "s1", "s2", "s2", ""]
    relevance = [0.5, 0.0, 0.0, 0.0, 0.9, 0.0]
    assert same_ticket(mems, sessions, relevance) == [False, True, False, False, False, False]

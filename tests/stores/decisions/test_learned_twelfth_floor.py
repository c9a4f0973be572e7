"""The safety floor's twelfth round: a request read with the element head (`request_element_veto`)."""

from __future__ import annotations

from types import SimpleNamespace

import stores.decisions.learned as learned
from stores.decisions.learned import (REQUEST_ELEMENT_BAR, REQUEST_ELEMENT_WHOLE_BAR, floor_reading,
                                      request_element_veto)


class _Front:
    """A front end whose floor score, crisis / harm probabilities and element `harm` are given per text."""

    def __init__(self, read: dict[str, tuple[float, float, float]], harm: dict[str, float] | None,
                 threshold: float = 0.12):
        self.given, self.harm = read, harm
        self.heads = {"sensitive": SimpleNamespace(thresholds={"disclosure": threshold})}
        if harm is not None:
            self.heads["harm_element"] = None

    def summed(self, head, name, text):
        score, crisis, harm = self.given[text]
        return score, crisis + harm, 0.5, {"none": 1 - crisis - harm, "crisis": crisis, "harm": harm}

    def proba(self, head, text):
        assert head == "harm_element"
        return {"none": 1 - self.harm[text], "harm": self.harm[text]}


SAID = "I work nights on the ward so I'm half asleep by noon, can the courier ring the bell twice please"
NEWS = "I work nights on the ward"
TIRED = "I'm half asleep by noon"
ASK = "can the courier ring the bell twice please"


def _front(whole=REQUEST_ELEMENT_WHOLE_BAR - 0.07, news=(0.55, 0.30), tired=(0.35, 0.45)):
    """A message of three clauses (a job, a feeling, a request) the learned floor marks under the whole bar, with no
    clause at the request veto's low rest (so `request_veto` keeps it): (floor score, element harm) per clause."""
    read = {SAID: (whole, 0.0, 0.3), NEWS: (news[0], 0.0, 0.3), TIRED: (tired[0], 0.0, 0.3), ASK: (0.10, 0.0, 0.1)}
    harm = {SAID: 0.40, NEWS: news[1], TIRED: tired[1], ASK: 0.20}
    return _Front(read, harm)


def test_a_request_with_nothing_beside_it_read_as_a_disclosure_on_both_readings_is_no_disclosure():
    r = floor_reading(_front(), SAID)  # before the twelfth round: harm (its clauses over the request veto's rest bar)
    assert r.label == "none"
    assert (f"a closing request ('{ASK}'), the rest at most 0.35 on both the floor and its harm element ({TIRED!r}): under "
            f"{REQUEST_ELEMENT_BAR:.2f}, read as no disclosure") in r.describe()


def test_a_clause_read_as_a_disclosure_on_both_readings_keeps_the_request_marked():
    both = _front(tired=(REQUEST_ELEMENT_BAR + 0.05, REQUEST_ELEMENT_BAR + 0.1))
    assert floor_reading(both, SAID).label == "harm"
    floor_only = _front(tired=(0.95, REQUEST_ELEMENT_BAR - 0.1))  # one reading alone is not enough
    assert floor_reading(floor_only, SAID).label == "none"


def test_a_message_that_ends_with_a_question_closes_with_a_request():
    from stores.decisions.learned import closing_request

    asked = f"{NEWS} so {TIRED}, any chance the driver waits a minute? 🙏"  # a question in no shape `REQUEST` lists
    cs = (NEWS, TIRED, "any chance the driver waits a minute")
    assert closing_request(asked, cs) and not closing_request(f"{NEWS} so {TIRED}, the driver never waits", cs)
    front = _front()
    front.given.update({asked: front.given[SAID], cs[2]: (0.10, 0.0, 0.1)})
    front.harm.update({asked: 0.40, cs[2]: 0.20})
    assert floor_reading(front, asked).label == "none"  # before: harm (no veto reads a question in another shape)
    front.harm[cs[2]] = REQUEST_ELEMENT_BAR + 0.1
    front.given[cs[2]] = (REQUEST_ELEMENT_BAR + 0.1, 0.0, 0.3)
    assert floor_reading(front, asked).label == "harm"  # the question itself is read: it reads as a disclosure


def test_a_request_that_opens_the_message_is_not_read_so():
    opens = f"{ASK}, {NEWS} so {TIRED}"  # what follows a request is often what the customer came to say
    front = _front()
    front.given[opens], front.harm[opens] = front.given[SAID], front.harm[SAID]
    assert floor_reading(front, opens).label == "harm"


def test_the_request_element_veto_reads_only_under_its_whole_bar_and_only_beside_a_request():
    assert floor_reading(_front(whole=REQUEST_ELEMENT_WHOLE_BAR + 0.05), SAID).label == "harm"
    assert not request_element_veto(_front(), [((0.5, 0, 0, {}), NEWS), ((0.3, 0, 0, {}), TIRED)])[0]  # no request
    assert not request_element_veto(_front(), [((0.1, 0, 0, {}), ASK)])[0]  # a request and nothing else
    assert floor_reading(_Front(_front().given, None), SAID).label == "harm"  # no element head: no veto


def test_a_bar_of_zero_turns_the_request_element_veto_off(monkeypatch):
    monkeypatch.setattr(learned, "REQUEST_ELEMENT_BAR", 0.0)
    assert floor_reading(_front(), SAID).label == "harm"


def test_a_clause_the_element_head_reads_surely_keeps_the_request_marked():
    """Review: "he smashed my laptop, can you send a new charger?" was read as no disclosure (its clause's floor 0.38,
    element harm 0.89: the min of the two under the bar)."""
    from stores.decisions.learned import REQUEST_ELEMENT_HARM_ALONE, REQUEST_REST_BAR

    sure = _front(tired=(REQUEST_REST_BAR + 0.08, REQUEST_ELEMENT_HARM_ALONE + 0.04))
    assert floor_reading(sure, SAID).label == "harm"
    low_floor = _front(tired=(REQUEST_REST_BAR - 0.05, REQUEST_ELEMENT_HARM_ALONE + 0.1))  # the floor under its rest bar
    assert floor_reading(low_floor, SAID).label == "none"
    unsure = _front(tired=(0.45, REQUEST_ELEMENT_HARM_ALONE - 0.1))  # the context the veto was meant for keeps its reading
    assert floor_reading(unsure, SAID).label == "none"


def test_damage_or_a_raised_hand_told_before_a_closing_request_is_marked_with_the_learned_front_end():
    """Review's sentences and a few of the same shape (a person destroying property, a hand raised, a door kicked in,
    then a request): the learned floor must mark them."""
    from stores.frontend.model import front_end

    front = front_end()
    for text in ("he smashed my laptop, can you send a new charger?",  # before: none (the request element veto)
                 "he threw my phone at the wall, can I get a replacement?",
                 "he kicked the door in last night, can you change the delivery address?",
                 "he raised his hand to me again, can you cancel the joint account?"):
        assert floor_reading(front, text).label != "none", text

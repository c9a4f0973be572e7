"""Capability claims and hooks keep their protocols, for every registered strategy."""

from __future__ import annotations

from datetime import datetime
from typing import ClassVar

import pytest

from stores.protocol import CAPABILITIES, Strategy, contract_problems
from stores.registry import REGISTRY, SpecError, parse_spec, strategy_class
from stores.retrieval.history_stuffing import HistoryStuffing


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_every_registered_strategy_keeps_the_protocols_it_claims(name):
    cls = strategy_class(name)
    assert contract_problems(cls) == []
    assert cls.name == name  # its registry key is its name everywhere
    instance = cls()
    assert isinstance(instance, Strategy)
    for cap in cls.capabilities:
        assert isinstance(instance, CAPABILITIES[cap]), cap


class ClaimsHealthWithout(HistoryStuffing):
    capabilities: ClassVar[frozenset[str]] = frozenset({"health"})


class HealthTakesNoTime(HistoryStuffing):
    capabilities: ClassVar[frozenset[str]] = frozenset({"health", "handoff"})

    def health(self, subject):
        return None

    def handoff(self, request, budget_tokens=None):  # extra optional parameters are fine
        return None


class UnknownClaim(HistoryStuffing):
    capabilities: ClassVar[frozenset[str]] = frozenset({"telepathy"})


class BadHooks(HistoryStuffing):
    def prepare(self):
        pass

    def close(self, force):
        pass


class GoodHooks(HistoryStuffing):
    def open(self, scope):
        pass

    def close(self):
        pass

    def health(self, subject: str, now: datetime):  # defined but not claimed: never called, not checked
        return None


@pytest.mark.parametrize("cls, problems", [
    (ClaimsHealthWithout, ["ClaimsHealthWithout claims the 'health' capability but has no health()"]),
    (HealthTakesNoTime, ["HealthTakesNoTime claims the 'health' capability but health does not take (subject, now)"]),
    (UnknownClaim, ["UnknownClaim claims an unknown capability 'telepathy' (known: health, handoff, gold, memories, expiry)"]),
    (BadHooks, ["BadHooks defines the 'prepare' hook but prepare does not take (texts)",
                "BadHooks defines the 'close' hook but close does not take ()"]),
    (GoodHooks, []),
])
def test_a_claim_without_its_method_and_signature_is_named(cls, problems):
    assert contract_problems(cls) == problems


def test_the_registry_refuses_a_class_that_breaks_its_claims(monkeypatch, plugins):
    import fake_strategies

    monkeypatch.setattr(fake_strategies, "ClaimsHealthWithout", ClaimsHealthWithout, raising=False)
    plugins.strategy("claims_health", "fake_strategies:ClaimsHealthWithout")
    with pytest.raises(SpecError, match="does not keep the strategy protocol: ClaimsHealthWithout claims the 'health'"):
        parse_spec("claims_health")

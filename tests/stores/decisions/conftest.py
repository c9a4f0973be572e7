"""Lockers and policies for the decision tests: every locker-backed test runs on both lockers."""

from __future__ import annotations

import pytest

from stores.decisions.locker import MemoryLocker
from stores.decisions.params import SessionStateParams
from stores.decisions.signals import ProducerParams
from stores.decisions.session_state import SessionState


@pytest.fixture(params=["memory", "redis"])
def locker_kind(request):
    return request.param


@pytest.fixture
def new_locker(request, locker_kind):
    """A factory of fresh lockers of the test's kind (Redis: one real server per test)."""
    made = []

    def factory(namespace=None):
        namespace = namespace or f"test{len(made)}"  # each locker its own state unless asked to share
        if locker_kind == "memory":
            made.append(MemoryLocker())
        else:
            from stores.decisions.redis_locker import RedisLocker

            server = request.getfixturevalue("redis_server")
            made.append(RedisLocker(server.url, namespace=namespace))
        return made[-1]

    yield factory
    for lk in made:
        lk.close()


RULES = ProducerParams(front="rules")
"""The producers these tests read words with: the rules (a named variant). The executor, resolver
and card tests are about what a policy does with the signals, so the words are read by the
regular expressions they were written for; the learned front end (the default) is tested in
tests/stores/test_frontend.py and end to end on the canonical suite."""


@pytest.fixture
def session_state(new_locker):
    """A factory of `session_state` policies (any params; the rules' producers unless given) on the
    test's locker kind."""

    def factory(**params):
        params.setdefault("producers", RULES)
        return SessionState(SessionStateParams(**params), locker=new_locker())

    return factory

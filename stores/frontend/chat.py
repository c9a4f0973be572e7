"""The optional chat-model front end: an OpenAI-compatible endpoint reads the heads the learned
front end reads, with the same outputs, and the learned front end answers whenever it cannot.

Off by default. `front=chat` (decision signals: `producers.front=chat`; memory classes:
`expiry.classifier=chat`) asks the endpoint the reply engine already uses
(`SUPPORTBENCH_REPLY_URL`, the root such as `http://127.0.0.1:8000/v1`; `SUPPORTBENCH_REPLY_KEY`,
kept out of manifests; `SUPPORTBENCH_REPLY_MODEL`). One chat completion per text (temperature 0,
answers kept per process): the model is asked for one JSON object naming one allowed label per
head. A head whose label comes back is the model's (a `Reading` whose source is `chat:<model>`);
a head without a usable answer (no URL set, no answer, an HTTP error, a body that is not the JSON
asked for, a label outside the head's labels) is the learned front end's, and its reading says why.
The safety floor never depends on the endpoint: the learned head's severity stays in the union.
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import replace
from typing import Mapping

import httpx

from stores.frontend.model import FrontEnd, Reading
from stores.remote import wire
from stores.remote.wire import DEFAULT_MAX_BYTES, Limits, WireError
from stores.remote.chat_endpoint import chat_client, endpoint_settings

SYSTEM_PROMPT = (
    "You read one message from a customer-support conversation and label it. Answer with one JSON object "
    "and nothing else: for every head named, its one label, chosen from that head's allowed labels."
)

DESCRIPTIONS: dict[str, str] = {
    "sensitive": "crisis = the customer's own life at risk (self-harm); harm = abuse, threats, stalking, fraud, "
                 "account takeover, a legal threat, a minor at risk; near_miss = only sounds like one (a figure of speech, "
                 "a security question, leaving a plan, a person asked for); none = neither",
    "human_request": "yes when the customer asks for a person (in any words)",
    "hostile": "yes when the message insults or abuses the agent or company (with or without swearing)",
    "complexity": "yes when the case is not one for a bot (a chargeback, a data-protection request, a formal complaint)",
    "time_critical": "yes when time is really running out for the customer now (not a question about a date)",
    "resolved": "yes when the customer confirms the problem is fixed (sarcasm is not a confirmation)",
    "intent": "recommendation = asks what to play; retention = wants to cancel or leave; none = neither",
    "complaint": "yes when the message reports a problem",
    "affirmative": "yes when the message is a sincere yes or agreement (sarcasm is not)",
    "memory_class": "preference = a standing wish (channel, times, format); profile = who the customer is or their "
                    "setup; system_owned = a value another system owns (plan, balance, order status, refund); "
                    "episodic = waiting for something or a promise; sentiment = how the customer feels or an apology; "
                    "incident = a problem, a step tried or its outcome; unclassified = none of these",
    "outcome": "worked / failed = how the step the customer tried went; none = no outcome said",
}


class ChatFront:
    """Heads read by a chat-completions endpoint, the learned front end as fallback."""

    def __init__(self, url: str, *, model: str = "default", api_key: str | None = None,
                 transport: httpx.BaseTransport | None = None, timeout: float = 30.0) -> None:
        self.url = url.rstrip("/")
        self.model = model
        self.limits = Limits(deadline_s=timeout, max_bytes=DEFAULT_MAX_BYTES)
        """One reading's whole-call deadline and answer size cap (`stores.remote.wire`)."""
        self._http = chat_client(api_key, transport, self.limits)
        self._answers: dict[tuple[str, tuple[str, ...]], dict[str, str] | str] = {}
        self._lock = threading.Lock()

    @property
    def source(self) -> str:
        return f"chat:{self.model}"

    def ask(self, text: str, heads: Mapping[str, tuple[str, ...]]) -> dict[str, str] | str:
        """The endpoint's labels for `text` (head -> label), or why there are none."""
        key = (text, tuple(sorted(heads)))
        with self._lock:
            if key in self._answers:
                return self._answers[key]
        lines = [f"- {h}: one of {', '.join(labels)} ({DESCRIPTIONS.get(h, '')})" for h, labels in sorted(heads.items())]
        body = {"model": self.model, "temperature": 0, "messages": [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": "Heads:\n" + "\n".join(lines) + f"\n\nMessage: {text}"},
        ]}
        try:
            r = wire.request(self._http, "POST", f"{self.url}/chat/completions", self.limits, json=body)
        except WireError as e:  # no answer, past the deadline, too large, redirected
            answer: dict[str, str] | str = f"chat endpoint gave no usable answer ({e})"
        else:
            answer = _parse(r)
        with self._lock:
            self._answers[key] = answer
        return answer

    def read_all(self, heads: tuple[str, ...], text: str, learned: FrontEnd) -> dict[str, Reading]:
        """One reading per head: the endpoint's label, or the learned reading saying why not."""
        labels = {h: learned.heads[h].labels for h in heads}
        answer = self.ask(text, labels)
        fallback = learned.read_all(heads, text)
        out: dict[str, Reading] = {}
        for h in heads:
            if isinstance(answer, str):
                why = answer
            elif h not in answer:
                why = f"chat answer has no label for {h}"
            elif answer[h] not in labels[h]:
                why = f"chat label {answer[h]!r} for {h} is not one of {', '.join(labels[h])}"
            else:
                out[h] = Reading(h, answer[h], 1.0, 0.0, source=self.source)
                continue
            out[h] = replace(fallback[h], note=f"{why}: learned")
        return out

    def close(self) -> None:
        self._http.close()


def _parse(r: wire.Answer) -> dict[str, str] | str:
    if r.status >= 400:
        return f"chat endpoint answered HTTP {r.status}"
    try:
        content = r.json()["choices"][0]["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError):
        return "chat endpoint's answer had no choices[0].message.content"
    if not isinstance(content, str):
        return "chat endpoint's content is not text"
    m = re.search(r"\{.*\}", content, re.S)
    try:
        data = json.loads(m.group(0)) if m else None
    except ValueError:
        data = None
    if not isinstance(data, dict):
        return "chat endpoint's content is not a JSON object"
    return {str(k): str(v).strip().lower() for k, v in data.items()}


_FRONTS: dict[tuple[str, str, str], ChatFront] = {}


def chat_front(env: Mapping[str, str] | None = None, *, transport: httpx.BaseTransport | None = None) -> ChatFront | None:
    """The process's chat front end for the reply engine's settings, or None when no URL is set."""
    settings = endpoint_settings(env)
    if settings is None:
        return None
    url, model, api_key = settings
    key = (url, model, str(id(transport)) if transport is not None else "")
    if key not in _FRONTS:
        _FRONTS[key] = ChatFront(url, model=model, api_key=api_key, transport=transport)
    return _FRONTS[key]


def chat_readings(heads: tuple[str, ...], text: str, learned: FrontEnd) -> dict[str, Reading]:
    """The chat front end's readings, or the learned ones saying the endpoint is not set."""
    front = chat_front()
    if front is None:
        return {h: replace(r, note="SUPPORTBENCH_REPLY_URL is not set: learned") for h, r in learned.read_all(heads, text).items()}
    return front.read_all(heads, text, learned)

"""An optional reply engine that asks an OpenAI-compatible chat endpoint to word the reply.

Off by default: `reply_engine()` returns it only when `SUPPORTBENCH_REPLY_URL` is set (the
endpoint root, e.g. `http://127.0.0.1:8000/v1`; `SUPPORTBENCH_REPLY_KEY` the bearer key, kept out
of manifests; `SUPPORTBENCH_REPLY_MODEL` the model name). The audit metadata (known fixes,
failures, used memories, next steps, returning customer) always comes from the scripted engine,
so every engine is judged on the same facts; the endpoint only writes the text. When the endpoint
fails (no answer, an HTTP error, a body without a reply) the scripted engine's reply is returned
and `engine_note` says why (FR-08): a support reply is never lost to an outage.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Mapping, Sequence

from stores.protocol import Bundle, ContextRequest
from stores.redaction import redact_url, register, register_url
from stores.remote.chat_endpoint import chat_client, endpoint_settings
from stores.reply.engine import ScriptedEngine
from stores.reply.model import SupportReply
from stores.structured.model import Memory

if TYPE_CHECKING:  # the HTTP stack is imported by the first ChatEngine: the scripted engine, every run's
    import httpx  # default, never loads it (a tenth of a second of a run's start)

SYSTEM_PROMPT = (
    "You are a customer support agent. Answer the customer's latest message in at most four sentences. "
    "Use only the memory given. Lead with the known fix if there is one; never propose a step listed as a "
    "known failure; if the next step is escalation, say you are escalating with the full history."
)


class ChatEngine:
    """Replies worded by a chat-completions endpoint, with the scripted engine as fallback."""

    def __init__(self, url: str, *, model: str = "default", api_key: str | None = None,
                 transport: httpx.BaseTransport | None = None, timeout: float = 30.0,
                 max_bytes: int | None = None) -> None:
        """`max_bytes`: the answer size cap, `stores.remote.wire.DEFAULT_MAX_BYTES` when None."""
        from stores.remote.wire import DEFAULT_MAX_BYTES, Limits

        register_url(url)  # its credentials are scrubbed from every output (stores.redaction)
        register(api_key)
        self.url = url.strip().rstrip("/")
        """Endpoint root; requests go to `<url>/chat/completions`."""
        self.model = model
        """Model name sent with every request."""
        self.limits = Limits(deadline_s=timeout, max_bytes=DEFAULT_MAX_BYTES if max_bytes is None else max_bytes)
        """One reply's whole-call deadline and answer size cap (`stores.remote.wire`)."""
        key = (api_key or "").strip()
        self._http = chat_client(key, transport, self.limits)
        self.fallback = ScriptedEngine()
        """The engine whose metadata every reply carries, and whose text answers when the endpoint fails."""

    @property
    def name(self) -> str:
        return f"chat:{self.model}"

    def reply(self, request: ContextRequest, bundle: Bundle, memories: Sequence[Memory] | None = None) -> SupportReply:
        """The scripted reply's metadata with the endpoint's wording, or the scripted reply with the reason it answered."""
        from stores.remote import wire
        from stores.remote.wire import WireError

        draft = self.fallback.reply(request, bundle, memories)
        body = {
            "model": self.model,
            "temperature": 0,
            "messages": [
                {"role": "system", "content": SYSTEM_PROMPT},
                {"role": "user", "content": _prompt(request, bundle, draft)},
            ],
        }
        try:
            r = wire.request(self._http, "POST", f"{self.url}/chat/completions", self.limits, json=body)
        except WireError as e:  # no answer, past the deadline, too large, redirected
            return replace(draft, engine_note=f"scripted fallback: chat endpoint gave no usable answer ({e})")
        if r.status >= 400:
            return replace(draft, engine_note=f"scripted fallback: chat endpoint answered HTTP {r.status}")
        try:
            text = r.json()["choices"][0]["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError):
            return replace(draft, engine_note="scripted fallback: chat endpoint's answer had no choices[0].message.content")
        if not isinstance(text, str) or not text.strip():
            return replace(draft, engine_note="scripted fallback: chat endpoint returned an empty reply")
        return replace(draft, reply=text.strip(), engine=self.name,
                       engine_note=f"worded by {self.name} at {redact_url(self.url)}")

    def close(self) -> None:
        """Close the connection pool."""
        self._http.close()


def _prompt(request: ContextRequest, bundle: Bundle, draft: SupportReply) -> str:
    lines = [f"Customer message: {request.task}", "", "Memory shown to you:", bundle.text or "(none)", ""]
    lines.append(f"Returning customer: {'yes' if draft.is_returning_customer else 'no'}")
    lines.append(f"Known fixes: {', '.join(draft.known_fixes) or 'none'}")
    lines.append(f"Known failures (do not propose): {', '.join(draft.known_failures) or 'none'}")
    lines.append(f"Next step: {', '.join(draft.next_steps) or 'continue troubleshooting'}")
    return "\n".join(lines)


def reply_engine(env: Mapping[str, str] | None = None, *, transport: httpx.BaseTransport | None = None):
    """The engine the environment asks for: a `ChatEngine` when SUPPORTBENCH_REPLY_URL is set, else the scripted one."""
    settings = endpoint_settings(env)
    if settings is None:
        return ScriptedEngine()
    url, model, key = settings
    return ChatEngine(url, model=model, api_key=key, transport=transport)


__all__ = ["ChatEngine", "reply_engine", "SYSTEM_PROMPT"]

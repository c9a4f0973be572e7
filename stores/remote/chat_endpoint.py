"""Where an OpenAI-compatible chat endpoint is and how to talk to it: read by the reply engine
(`stores.reply.chat`) and the chat front end (`stores.frontend.chat`) alike, so both use the same
settings (`SUPPORTBENCH_REPLY_URL`, `_MODEL`, `_KEY`) and the same bounded client."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Mapping

if TYPE_CHECKING:  # httpx and the bounded client are imported when a client is made: a run that
    import httpx  # only asks whether an endpoint is set (the scripted reply engine) never loads them

    from stores.remote.wire import Limits


def chat_client(api_key: str | None, transport: httpx.BaseTransport | None, limits: Limits) -> httpx.Client:
    """The HTTP client of a chat endpoint (a bearer key when one is given), bounded by `limits`
    (`stores.remote.wire`: requests through `wire.request` get its whole-call deadline and size cap)."""
    from stores.remote.wire import make_client

    key = (api_key or "").strip()
    return make_client(headers={"Authorization": f"Bearer {key}"} if key else {}, limits=limits, transport=transport)


def endpoint_settings(env: Mapping[str, str] | None = None) -> tuple[str, str, str | None] | None:
    """(url, model, key) of the chat endpoint the environment names, or None when SUPPORTBENCH_REPLY_URL is not set."""
    env = os.environ if env is None else env
    url = env.get("SUPPORTBENCH_REPLY_URL", "").strip()
    if not url:
        return None
    return url, env.get("SUPPORTBENCH_REPLY_MODEL", "").strip() or "default", env.get("SUPPORTBENCH_REPLY_KEY") or None

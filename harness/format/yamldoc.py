"""Reading a scenario document: plain data plus the line of every document path.

Scenario files are read with YAML 1.2 scalars: only `true`/`false` are booleans (so the probe
key `on:` stays the string "on", not YAML 1.1's True) and timestamps stay strings (the loader
parses times itself, to refuse times without a timezone).

Hostile text is refused with a line, in bounded time and memory, before anything walks the
document: nesting deeper than `MAX_DEPTH`, aliases that would add more than `ALIAS_BUDGET` nodes
(a few hundred bytes of nested aliases otherwise expand to billions of paths), recursive aliases
and control characters. Aliases themselves stay allowed: reusing an anchored block is ordinary
YAML, and the budget is far above any honest reuse while far below what hurts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import yaml
from yaml.events import AliasEvent, CollectionEndEvent, CollectionStartEvent
from yaml.nodes import CollectionNode, MappingNode, Node, ScalarNode, SequenceNode

_BOOL = "tag:yaml.org,2002:bool"
_TIMESTAMP = "tag:yaml.org,2002:timestamp"
_MERGE = "tag:yaml.org,2002:merge"

Path = tuple[Any, ...]
"""A document path: mapping keys and sequence indexes from the root."""


MAX_DEPTH = 32
"""Deepest nesting of collections accepted (a scenario document needs about 8 levels)."""
ALIAS_BUDGET = 10_000
"""Most nodes that aliases may add to one document when expanded."""
_C_SAFE_DEPTH = 10_000
"""libyaml composes recursively in C: depth 20,000 composed fine, 50,000 crashed the interpreter
(SIGSEGV, measured). Below this bound the fast composer is safe; above it the depth is measured
on the event stream first (libyaml's parser keeps an explicit stack)."""


class _Refused(yaml.MarkedYAMLError):
    """Text refused before it is walked: too deep, an alias bomb, a recursive alias."""


class _GuardedComposer:
    """Composer hooks that refuse too-deep nesting and alias expansion past the budget, at the
    offending event's mark, while composing (so nothing large is ever built or walked)."""

    def compose_document(self):
        self._depth, self._open, self._added, self._sizes = 0, set(), 0, {}
        return super().compose_document()

    def compose_node(self, parent, index):
        if self.check_event(AliasEvent):
            event = self.peek_event()
            node = self.anchors.get(event.anchor)
            if node is not None:
                if event.anchor in self._open:
                    raise _Refused(None, None, f"alias *{event.anchor} refers to a node that contains it "
                                   "(recursive aliases are not allowed)", event.start_mark)
                self._added += expanded_size(node, self._sizes)
                if self._added > ALIAS_BUDGET:
                    raise _Refused(None, None, alias_budget_message(event.anchor, self._added), event.start_mark)
            return super().compose_node(parent, index)
        event = self.peek_event()
        if isinstance(event, CollectionStartEvent) and self._depth >= MAX_DEPTH:
            raise _Refused(None, None, depth_message(), event.start_mark)
        anchor = event.anchor
        self._depth += 1
        if anchor is not None:
            self._open.add(anchor)
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1
            self._open.discard(anchor)


def depth_message() -> str:
    return f"nested deeper than {MAX_DEPTH} levels (a scenario needs about 8); refused without reading further"


def alias_budget_message(anchor: str, added: int) -> str:
    return (f"alias *{anchor} takes alias expansion to {added:,} nodes, past the limit of {ALIAS_BUDGET:,} "
            "(nested aliases multiply); write the repeated part out instead")


def expanded_size(node: Node, memo: dict[int, int]) -> int:
    """Nodes in `node` with every alias under it expanded (memoized per node: linear in the
    distinct nodes, however large the expansion)."""
    size = memo.get(id(node))
    if size is None:
        size = 1
        if isinstance(node, SequenceNode):
            size += sum(expanded_size(child, memo) for child in node.value)
        elif isinstance(node, MappingNode):
            size += sum(expanded_size(k, memo) + expanded_size(v, memo) for k, v in node.value)
        memo[id(node)] = size
    return size


class ScenarioYamlLoader(_GuardedComposer, yaml.SafeLoader):
    """SafeLoader with YAML 1.2 booleans and timestamps left as strings, refusing hostile nesting."""


ScenarioYamlLoader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag not in (_BOOL, _TIMESTAMP)]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
ScenarioYamlLoader.add_implicit_resolver(
    _BOOL, re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)

_CLoader = getattr(yaml, "CSafeLoader", None) if getattr(yaml, "__with_libyaml__", False) else None
if _CLoader is not None:

    class _FastScenarioYamlLoader(_CLoader):  # type: ignore[misc, valid-type]
        """The same resolvers over libyaml's parser (marks included), about 10x faster."""

    _FastScenarioYamlLoader.yaml_implicit_resolvers = ScenarioYamlLoader.yaml_implicit_resolvers
else:  # PyYAML built without libyaml
    _FastScenarioYamlLoader = None  # type: ignore[assignment, misc]

_NON_PRINTABLE = yaml.reader.Reader.NON_PRINTABLE


class YamlSyntaxError(ValueError):
    """The text is not YAML (or not a single YAML document)."""

    def __init__(self, message: str, line: int | None):
        super().__init__(message)
        self.message = message
        self.line = line


@dataclass
class DuplicateKey:
    """A key given twice in one mapping (YAML would silently keep the last)."""

    path: Path
    line: int
    first_line: int


@dataclass
class YamlDoc:
    """A parsed document with the line of each path in it."""

    data: Any
    lines: dict[Path, int] = field(default_factory=dict)
    duplicate_keys: list[DuplicateKey] = field(default_factory=list)

    def line_of(self, path: Path) -> int | None:
        """The line of `path`, or of its nearest ancestor present in the document."""
        path = tuple(path)
        while path not in self.lines and path:
            path = path[:-1]
        return self.lines.get(path)


def read_yaml(text: str) -> YamlDoc:
    """Parse one YAML document; `YamlSyntaxError` (with a line) when it is not YAML.

    Well-formed text goes through libyaml's parser when PyYAML has it; anything it refuses (or
    that the guards refuse) is read again by the pure-Python loader, so error messages and their
    lines stay those of the Python loader.
    """
    if _FastScenarioYamlLoader is not None and not _NON_PRINTABLE.search(text) and _shallow(text):
        try:
            return _read(text, _FastScenarioYamlLoader, check_aliases="*" in text)
        except YamlSyntaxError:
            pass
    return _read(text, ScenarioYamlLoader)


def _shallow(text: str) -> bool:
    """True when nesting is at most `MAX_DEPTH`, so libyaml's recursive composer is safe.

    A cheap bound first: flow depth is at most the number of `[` and `{`, and block depth at
    most twice the longest line (each nested block collection starts further right, or at the
    same column once, for a sequence under a key). Only past the bound is the event stream read.
    """
    widest = max((len(line) for line in text.splitlines()), default=0)
    if text.count("[") + text.count("{") + 2 * (widest + 1) < _C_SAFE_DEPTH:
        return True
    depth = 0
    try:
        for event in yaml.parse(text, Loader=_CLoader):
            if isinstance(event, CollectionStartEvent):
                depth += 1
                if depth > MAX_DEPTH:
                    return False
            elif isinstance(event, CollectionEndEvent):
                depth -= 1
    except yaml.YAMLError:
        return False  # the Python loader reports it, with its line
    return True


def _aliases_within_budget(root: Node) -> bool:
    """After libyaml composed the graph: not too deep, no recursive alias, expansion within the
    budget (False sends the text to the Python loader, which says which and where)."""
    distinct: dict[int, Node] = {}
    stack: list[tuple[Node, bool, int]] = [(root, False, 0)]
    on_path: set[int] = set()
    while stack:  # iterative DFS: finds depth and cycles before the (recursive) sizes are computed
        node, done, depth = stack.pop()
        if done:
            on_path.discard(id(node))
            continue
        if id(node) in on_path or depth > MAX_DEPTH:
            return False
        if id(node) in distinct:
            continue
        distinct[id(node)] = node
        if isinstance(node, CollectionNode):
            on_path.add(id(node))
            stack.append((node, True, depth))
            children = node.value if isinstance(node, SequenceNode) else [x for kv in node.value for x in kv]
            stack.extend((child, False, depth + 1) for child in children)
    return expanded_size(root, {}) - len(distinct) <= ALIAS_BUDGET


def _read(text: str, loader_class: type, check_aliases: bool = False) -> YamlDoc:
    loader = None
    try:
        loader = loader_class(text)
        node = loader.get_single_node()
        if check_aliases and node is not None and not _aliases_within_budget(node):
            raise YamlSyntaxError("alias expansion refused", None)  # read again by the Python loader, for the line
        doc = YamlDoc(data=None)
        if node is not None:
            _index(node, doc, loader)
            doc.data = loader.construct_document(node)
        return doc
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or "invalid YAML"
        if exc.context:
            problem = f"{problem} ({exc.context})"
        what = "YAML error" if isinstance(exc, (yaml.constructor.ConstructorError, _Refused)) else "YAML syntax error"
        raise YamlSyntaxError(f"{what}: {problem}", mark.line + 1 if mark else None) from None
    except yaml.reader.ReaderError as exc:  # raised by the Python reader on a control character
        line = text.count("\n", 0, exc.position) + 1
        raise YamlSyntaxError(f"YAML error: control character #x{exc.character:04x} is not allowed "
                              "(only tab, newline and printable characters)", line) from None
    except yaml.YAMLError as exc:
        raise YamlSyntaxError(f"YAML error: {exc}", None) from None
    finally:
        if loader is not None:
            loader.dispose()


_NOT_WRITABLE = re.compile("[^\x09\x0a\x0d\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
"""What the reader refuses in the raw text, here found in a scalar's value after its escapes were
read (`"\\uD800"`, `"\\x1b"`): refused the same way, so `validate` never passes text that a run
cannot write (a lone surrogate has no UTF-8 form)."""


def _check_escaped(node: ScalarNode) -> None:
    value = node.value
    if not isinstance(value, str):
        return
    m = _NOT_WRITABLE.search(value)
    if m is None:
        return
    code = ord(m.group(0))
    what = ("a lone surrogate, which has no UTF-8 form" if 0xD800 <= code <= 0xDFFF
            else "a control character")
    raise YamlSyntaxError(f"YAML error: escaped character #x{code:04x} is not allowed ({what}; only tab, "
                          "newline and printable characters)", node.start_mark.line + 1)


def _index(root: Node, doc: YamlDoc, loader: yaml.SafeLoader) -> None:
    """Record the line of every path, depth first in document order (iterative: no recursion
    limit to hit); refuses nesting past `MAX_DEPTH`, which libyaml composes without complaint."""
    stack: list[tuple[Node, Path, bool]] = [(root, (), False)]
    active: set[int] = set()
    while stack:
        node, path, leaving = stack.pop()
        if leaving:
            active.discard(id(node))
            continue
        doc.lines.setdefault(path, node.start_mark.line + 1)
        if id(node) in active:  # a recursive alias; construction reports it if it matters
            continue
        if not isinstance(node, CollectionNode):
            if isinstance(node, ScalarNode):
                _check_escaped(node)
            continue
        if len(path) >= MAX_DEPTH:
            raise YamlSyntaxError(f"YAML error: {depth_message()}", node.start_mark.line + 1)
        active.add(id(node))
        stack.append((node, path, True))
        children: list[tuple[Node, Path]] = []
        if isinstance(node, MappingNode):
            first_seen: dict[Any, int] = {}
            for key_node, value_node in node.value:
                if key_node.tag == _MERGE or not isinstance(key_node, ScalarNode):
                    continue
                key = loader.construct_object(key_node)
                line = key_node.start_mark.line + 1
                if key in first_seen:
                    doc.duplicate_keys.append(DuplicateKey(path + (key,), line, first_seen[key]))
                    continue
                first_seen[key] = line
                doc.lines[path + (key,)] = line
                children.append((value_node, path + (key,)))
        else:
            children = [(item, path + (i,)) for i, item in enumerate(node.value)]
        stack.extend((child, child_path, False) for child, child_path in reversed(children))

"""Reading a scenario document: plain data plus the line of every document path.

Scenario files are read with YAML 1.2 scalars: only `true`/`false` are booleans (so the probe
key `on:` stays the string "on", not YAML 1.1's True) and timestamps stay strings (the loader
parses times itself, to refuse times without a timezone).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

_BOOL = "tag:yaml.org,2002:bool"
_TIMESTAMP = "tag:yaml.org,2002:timestamp"
_MERGE = "tag:yaml.org,2002:merge"

Path = tuple[Any, ...]
"""A document path: mapping keys and sequence indexes from the root."""


class ScenarioYamlLoader(yaml.SafeLoader):
    """SafeLoader with YAML 1.2 booleans and timestamps left as strings."""


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

    Well-formed text goes through libyaml's parser when PyYAML has it; anything it refuses is
    read again by the pure-Python loader, so error messages stay those of the Python loader.
    """
    if _FastScenarioYamlLoader is not None and not _NON_PRINTABLE.search(text):
        try:
            return _read(text, _FastScenarioYamlLoader)
        except YamlSyntaxError:
            pass
    return _read(text, ScenarioYamlLoader)


def _read(text: str, loader_class: type) -> YamlDoc:
    loader = loader_class(text)
    try:
        node = loader.get_single_node()
        doc = YamlDoc(data=None)
        if node is not None:
            _index(node, (), doc, loader, set())
            doc.data = loader.construct_document(node)
        return doc
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or "invalid YAML"
        if exc.context:
            problem = f"{problem} ({exc.context})"
        what = "YAML error" if isinstance(exc, yaml.constructor.ConstructorError) else "YAML syntax error"
        raise YamlSyntaxError(f"{what}: {problem}", mark.line + 1 if mark else None) from None
    except yaml.YAMLError as exc:
        raise YamlSyntaxError(f"YAML error: {exc}", None) from None
    finally:
        loader.dispose()


def _index(node: Node, path: Path, doc: YamlDoc, loader: yaml.SafeLoader, active: set[int]) -> None:
    doc.lines.setdefault(path, node.start_mark.line + 1)
    if id(node) in active:  # a recursive alias; construction reports it if it matters
        return
    active.add(id(node))
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
            _index(value_node, path + (key,), doc, loader, active)
    elif isinstance(node, SequenceNode):
        for i, item in enumerate(node.value):
            _index(item, path + (i,), doc, loader, active)
    active.discard(id(node))

"""Docs the code cites exist, links resolve, the README's layout table is the tree, and the
reference tables the docs show are generated from their declarations, never pasted."""

from __future__ import annotations

import fnmatch
import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
SOURCES = sorted(p for top in ("app.py", "pages", "harness", "stores", "bench", "tests")
                 for p in ([ROOT / top] if top.endswith(".py") else (ROOT / top).rglob("*.py")))
DOCS = sorted((ROOT / "docs").glob("*.md"))
CITED = re.compile(r"\bdocs/[A-Za-z0-9_./-]+\.md\b")
VAGUE = re.compile(r"REFERENCE\.md|CRITERIA\.md|SCENARIOS\.md|the criteria doc\b|the scenario format doc\b|the reference doc\b")
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


FIGURE = re.compile(r"\b\d[\d,]*\.\d+ ?(?:ms|µs|s|min|h|GiB|GB|MiB|MB|KiB|KB)\b|\b[01]\.\d\d \[")
"""A measured figure: a decimal time or size (`68.1 s`, `3.28 GiB`), or a score with its interval (`0.85 [`)."""

GENERATED_TABLES = [  # (generator, module printing it, its function, the docs that link it instead of pasting it)
    ("precedence", "stores.decisions.resolver", "precedence_table", ["decisions.md"]),
    ("signals", "stores.decisions.signals", "signals_table", ["scenario-format.md", "decisions.md"]),
]


def cited_docs(text: str) -> set[str]:
    return set(CITED.findall(text))


def test_every_docs_path_cited_in_the_code_or_the_readme_exists():
    cites = {(p.relative_to(ROOT).as_posix(), d) for p in (*SOURCES, README, *DOCS) for d in cited_docs(p.read_text())}
    assert {d for _, d in cites} >= {"docs/criteria.md", "docs/reference.md"}
    missing = sorted(f"{where} cites {d}" for where, d in cites if not (ROOT / d).is_file())
    assert not missing, missing


def test_the_code_cites_docs_by_path_not_by_a_name_outside_the_repository():
    found = [f"{p.relative_to(ROOT)}:{n}: {m.group(0)}" for p in SOURCES if p.name != "test_docs.py"
             for n, line in enumerate(p.read_text().splitlines(), 1) for m in [VAGUE.search(line)] if m]
    assert not found, found


def test_relative_links_in_the_readme_and_docs_resolve():
    broken = [f"{md.relative_to(ROOT)} -> {target}" for md in (README, *DOCS) for target in LINK.findall(md.read_text())
              if "://" not in target and not (md.parent / target).exists()]
    assert not broken, broken


def test_the_citation_check_finds_a_missing_doc():
    missing = "docs/" + "nope-1.md"  # spelled in two parts, or the scan of this file would find it
    assert cited_docs(f"see docs/criteria.md and ({missing})") == {"docs/criteria.md", missing}
    assert VAGUE.search('"""Ranked as in REFERENCE.md."""') and VAGUE.search("in the criteria doc's order")


def _layout_paths() -> list[str]:
    """The paths named in the first column of the README's Layout table."""
    section = README.read_text().split("\n## Layout\n", 1)[1].split("\n## ", 1)[0]
    rows = [line.split("|")[1] for line in section.splitlines() if line.startswith("| `")]
    return [p.rstrip("/") for row in rows for p in re.findall(r"`([^`]+)`", row)]


def _ignored(name: str) -> bool:
    patterns = [p.strip().rstrip("/") for p in (ROOT / ".gitignore").read_text().splitlines() if p.strip() and not p.startswith("#")]
    return any(fnmatch.fnmatch(name, p) for p in patterns)


def test_the_readme_layout_table_matches_the_tree():
    named = _layout_paths()
    assert not [p for p in named if not (ROOT / p).exists()], "named in the layout table but not in the tree"
    top = [p.name for p in ROOT.iterdir() if not _ignored(p.name) and (not p.name.startswith(".") or p.name == ".ci")]
    top = [t if t != ".ci" else ".ci/run" for t in top if t != "README.md"]
    packages = [p.parent.relative_to(ROOT).as_posix() for base in ("harness", "stores") for p in (ROOT / base).glob("*/__init__.py")]
    docs = [f"docs/{p.name}" for p in DOCS]
    unnamed = [t for t in top if not any(n == t or n.startswith(t + "/") for n in named)]
    unnamed += [p for p in packages if p not in named]
    assert not unnamed, f"in the tree but not in the README's layout table: {unnamed}"
    docs_row = next(line for line in README.read_text().split("\n## Layout\n", 1)[1].splitlines() if line.startswith("| `docs/`"))
    assert not [d for d in docs if f"`{d.removeprefix('docs/')}`" not in docs_row], "a doc missing from the layout table's docs row"


@pytest.mark.parametrize("name,module,table,docs", GENERATED_TABLES, ids=[g[0] for g in GENERATED_TABLES])
def test_a_reference_table_is_generated_from_its_declaration_and_linked_not_pasted(name, module, table, docs):
    """A new rule or signal edits its declaration only: `make results` writes docs/results/<name>.md
    from `python -m <module>`, and the docs link that page instead of carrying a copy to keep equal."""
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        from results import GENERATORS
    finally:
        sys.path.remove(str(ROOT / "bench"))
    (g,) = [g for g in GENERATORS if g.name == name]
    assert not g.heavy and [s.command for s in g.steps] == [f"python -m {module}"]
    expected = getattr(importlib.import_module(module), table)()
    printed = subprocess.run([sys.executable, "-m", module], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert printed.strip() == expected
    header = expected.splitlines()[0]
    for doc in docs:
        text = (ROOT / "docs" / doc).read_text()
        assert f"(results/{name}.md)" in text and header not in text, f"docs/{doc}: link results/{name}.md, do not paste it"


def figure_lines(text: str) -> list[tuple[int, str]]:
    """Lines of a table row or of a fenced block (a printout) that carry a measured figure."""
    found, fenced = [], False
    for n, line in enumerate(text.splitlines(), 1):
        if line.startswith("```"):
            fenced = not fenced
        elif (fenced or line.startswith("|")) and FIGURE.search(line):
            found.append((n, line))
    return found


def test_no_docs_page_carries_a_figure_table_or_printout_that_no_generator_writes():
    """Leaderboards and bench printouts live in docs/results/, written by `make results`; a page
    elsewhere links them instead of carrying a copy that goes stale."""
    pasted = [f"docs/{p.name}:{n}: {line[:120]}" for p in DOCS for n, line in figure_lines(p.read_text())]
    assert not pasted, pasted


def test_the_figure_check_finds_a_pasted_board_and_printout_and_passes_reference_tables():
    pasted = "| strategy | total |\n| --- | --- |\n| tfidf | 0.67 [0.60–0.74] |\n```\nload + validate   836 files   8.2 s\n```\n"
    assert [n for n, _ in figure_lines(pasted)] == [3, 5]
    reference = "| `retry_backoff_s` | 0.2 | 0-60 |\n| `max_response_bytes` | 16 MiB | 1 KiB - 1 GiB |\n"
    assert figure_lines(reference) == []


MACHINE_PATH = re.compile(r"(?<![\w.])/(?:tmp|home|root|work|var/folders|Users)/[\w.-]+")
"""An absolute path of the machine a page was written on (a temporary folder, a home folder)."""


def test_no_readme_or_docs_page_names_a_folder_of_the_machine_it_was_written_on():
    """Generated pages are written through temporary folders; what they print must not carry them."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    found = [(p.relative_to(ROOT).as_posix(), m.group(0)) for p in pages for m in MACHINE_PATH.finditer(p.read_text())]
    assert not found, found
    assert MACHINE_PATH.search("--out /tmp/supportbench-results-x/controls.md") and not MACHINE_PATH.search("docs/results/tmp")

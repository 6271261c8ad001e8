"""The import rules of the house (docs/architecture.md, "Layers"), read from the code.

Every import statement counts, including those inside functions: a lazy import is still
a dependency. ``TYPE_CHECKING`` blocks count too (they are part of the public surface)."""

from __future__ import annotations

import ast
import importlib.util
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
GRAPH_SCRIPT = ROOT / "scripts" / "gen_import_graph.py"


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


def _violations(
    package: str,
    forbidden: tuple[str, ...],
    allowed_roots: tuple[str, ...] = (),
    root: Path = ROOT,
) -> list[str]:
    out = []
    for path in sorted((root / package).rglob("*.py")):
        for name in _imports(path):
            top = name.split(".")[0]
            hit = any(name == f or name.startswith(f + ".") for f in forbidden)
            if allowed_roots and top not in allowed_roots and top not in sys.stdlib_module_names:
                hit = True
            if hit:
                out.append(f"{path.relative_to(root)} imports {name}")
    return out


def test_ledger_knows_nothing_of_aborist_or_cli() -> None:
    assert _violations("ledger", ("aborist", "cli")) == []


def test_aborist_never_imports_cli() -> None:
    assert _violations("aborist", ("cli",)) == []


def test_the_verifier_is_pure() -> None:
    """The verifier: the standard library, pydantic (its policy model), aborist.errors and
    ledger.canonical; nothing that reaches a database, the network or the pipeline."""
    forbidden = (
        "aborist.pipeline", "aborist.clients", "aborist.retrieval", "aborist.audit",
        "aborist.corpus", "aborist.repair", "aborist.projections", "aborist.settings",
        "ledger.store", "ledger.engine", "ledger.writer", "ledger.migrate",
    )  # fmt: skip
    allowed = ("aborist", "ledger", "pydantic")
    found = _violations("aborist/verify", forbidden, allowed)
    assert found == []
    for path in sorted((ROOT / "aborist" / "verify").rglob("*.py")):
        for name in _imports(path):
            if name.startswith("aborist.") and not name.startswith("aborist.verify"):
                assert name == "aborist.errors", f"{path.name} imports {name}"
            if name.startswith("ledger"):
                assert name == "ledger.canonical", f"{path.name} imports {name}"


@pytest.mark.parametrize(
    ("package", "forbidden"),
    [
        ("aborist/retrieval", ("aborist.pipeline", "aborist.audit", "aborist.clients")),
        ("aborist/clients", ("aborist.pipeline", "aborist.audit", "aborist.retrieval")),
        ("aborist/repair", ("aborist.pipeline", "aborist.audit", "aborist.retrieval")),
        ("aborist/corpus", ("aborist.pipeline", "aborist.audit", "aborist.verify")),
        ("aborist/pipeline", ("aborist.audit",)),
    ],
)
def test_dependencies_point_down(package: str, forbidden: tuple[str, ...]) -> None:
    assert _violations(package, forbidden) == []


def test_the_rule_bites(tmp_path: Path) -> None:
    """The checker itself: a lazy import of a forbidden name, or of a library outside the
    allowed roots, is caught."""
    (tmp_path / "ledger").mkdir()
    (tmp_path / "ledger" / "probe.py").write_text(
        "import json\ndef f():\n    from aborist.errors import InputError\n    import httpx\n",
        encoding="utf-8",
    )
    assert _violations("ledger", ("aborist",), root=tmp_path) == [
        "ledger/probe.py imports aborist.errors"
    ]
    assert sorted(_violations("ledger", (), ("ledger",), root=tmp_path)) == [
        "ledger/probe.py imports aborist.errors",
        "ledger/probe.py imports httpx",
    ]


def test_the_documented_import_graph_is_current() -> None:
    """docs/architecture.md embeds the room-to-room import graph read from the code."""
    spec = importlib.util.spec_from_file_location("gen_import_graph", GRAPH_SCRIPT)
    assert spec is not None and spec.loader is not None
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    doc = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    assert gen.embedded(doc) == gen.render(), (
        "docs/architecture.md's import graph is stale: run "
        "`python scripts/gen_import_graph.py --write`"
    )


def test_code_help_and_docs_cite_only_the_repository() -> None:
    """Code, help text and docs point at the project's own docs, never at planning notes,
    design seeds or issue numbers a reader of the repository does not have."""
    pattern = re.compile(
        r"(?-i:ARCHITECTURE\.md|HOUSE-PLAN)|seed map|\bseed 00\d|\bseeds/|\bissue \d+",
        re.IGNORECASE,
    )
    found = []
    for top in ("aborist", "ledger", "cli", "tests", "bench", "scripts", "docs"):
        for path in sorted((ROOT / top).rglob("*")):
            if path.suffix not in {".py", ".md", ".sh", ".toml"} or not path.is_file():
                continue
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if pattern.search(line) and path.name != "test_layering.py":
                    found.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()[:80]}")
    for name in ("README.md", "CHANGELOG.md", "pyproject.toml", "Makefile"):
        for n, line in enumerate((ROOT / name).read_text(encoding="utf-8").splitlines(), 1):
            if pattern.search(line):
                found.append(f"{name}:{n}: {line.strip()[:80]}")
    assert found == []

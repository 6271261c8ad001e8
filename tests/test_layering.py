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


_EVENT_LITERAL = re.compile(r"\bqa\.[a-z]+_[a-z_]+|\bqa\.[a-z]+\b(?=[^.]|$)")
#: Files allowed to still spell event types as literals while they are being rewritten
#: (none now). Each entry must still hold one (a stale entry fails below), so it only shrinks.
_LITERALS_PENDING: frozenset[str] = frozenset()


def _docstrings(tree: ast.AST) -> set[int]:
    """ids of the constant nodes that are docstrings (module, class, function)."""
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                out.add(id(body[0].value))
    return out


def _event_literals(path: Path, root: Path = ROOT) -> list[str]:
    """Every string constant of ``path`` (f-string parts included, docstrings not) that
    spells a ``qa.*`` event type."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = _docstrings(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
            for m in _EVENT_LITERAL.finditer(node.value):
                found.append(f"{path.relative_to(root)}:{node.lineno}: {m.group(0)}")
    return found


def _literal_files(root: Path = ROOT) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for top in ("aborist", "cli"):
        for path in sorted((root / top).rglob("*.py")):
            rel = path.relative_to(root).as_posix()
            if rel == "aborist/events.py" or "migrations" in path.parts:
                continue  # the types' one spelling; revisions are frozen history
            hits = _event_literals(path, root)
            if hits:
                out[rel] = hits
    return out


def test_event_types_are_spelled_only_in_events_py() -> None:
    """Event types are read as ``Model.TYPE`` (aborist.events), never re-spelled: a
    ``"qa.*"`` string outside aborist/events.py and the migrations is a second vocabulary."""
    found = _literal_files()
    stray = [hit for rel, hits in found.items() if rel not in _LITERALS_PENDING for hit in hits]
    assert stray == []
    stale = sorted(_LITERALS_PENDING - set(found))
    assert stale == [], f"no literal left in {stale}: drop them from _LITERALS_PENDING"


def test_the_literal_rule_bites(tmp_path: Path) -> None:
    (tmp_path / "aborist").mkdir()
    (tmp_path / "aborist" / "probe.py").write_text(
        '"""Reads ``qa.run_started`` (a docstring: allowed)."""\n'
        'A = "qa.run_started"\n'
        'def f(seq):\n    """qa.cache_checked"""\n'
        '    return f"seq {seq}: no qa.answer_labelled here"\n'
        'B = "qa"\nC = "aqa.x"\n',
        encoding="utf-8",
    )
    assert _event_literals(tmp_path / "aborist" / "probe.py", tmp_path) == [
        "aborist/probe.py:2: qa.run_started",
        "aborist/probe.py:5: qa.answer_labelled",
    ]


_TABLES = (
    "events|blobs|checkpoints|projection_positions|alembic_version|runs|providence_cache|"
    "run_dag_nodes"
)
#: SQL that names a ledger or projection table, or a table given at run time (``{}``).
_TABLE_SQL = re.compile(rf"\b(FROM|INTO|UPDATE|JOIN|TABLE)\s+(({_TABLES})\b|\{{\}})")
#: Files allowed to still hold table SQL while they are being moved (none now).
_SQL_PENDING: frozenset[str] = frozenset()
#: The read models' own modules: the fold that writes the tables and the queries that read
#: them. Nothing else in aborist/ or cli/ names a table.
_SQL_HOMES = frozenset({"aborist/projections.py", "aborist/projection_reads.py"})
#: SQL that changes a table: only the fold (aborist/projections.py) writes the read models.
_WRITE_SQL = re.compile(r"\b(INSERT\s+INTO|UPDATE\s+\w+\s+SET|DELETE\s+FROM|CREATE|DROP|ALTER)\b")


def _sql_text(node: ast.AST) -> str | None:
    """A string constant's text, or an f-string's with each placeholder as ``{}``."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(
            v.value if isinstance(v, ast.Constant) and isinstance(v.value, str) else "{}"
            for v in node.values
        )
    return None


def _table_sql(path: Path, root: Path = ROOT) -> list[str]:
    """SQL against the ledger's or the projections' tables in ``path``, and imports of
    SQLAlchemy's ``text`` / ``select`` (docstrings are prose, not SQL)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = _docstrings(tree)
    rel = path.relative_to(root).as_posix()
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("sqlalchemy"):
            found += [f"{rel}:{node.lineno}: imports {a.name}" for a in node.names
                      if a.name in ("text", "select")]  # fmt: skip
        if isinstance(node, ast.JoinedStr):
            skip.update(id(v) for v in node.values)
        text = _sql_text(node) if id(node) not in skip else None
        if text and (m := _TABLE_SQL.search(text)):
            found.append(f"{rel}:{node.lineno}: {m.group(0)}")
    return found


def _sql_files(root: Path = ROOT) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for top in ("aborist", "cli"):
        for path in sorted((root / top).rglob("*.py")):
            rel = path.relative_to(root).as_posix()
            if rel in _SQL_HOMES or "migrations" in path.parts:
                continue
            if hits := _table_sql(path, root):
                out[rel] = hits
    return out


def test_table_sql_only_in_the_ledger_and_projections() -> None:
    """SQL against the ledger's tables lives in ledger/, against the read models in
    aborist/projections.py (the fold) and aborist/projection_reads.py (the queries), and
    the migrations; everything else calls their functions."""
    found = _sql_files()
    stray = [hit for rel, hits in found.items() if rel not in _SQL_PENDING for hit in hits]
    assert stray == []
    stale = sorted(_SQL_PENDING - set(found))
    assert stale == [], f"no table SQL left in {stale}: drop them from _SQL_PENDING"


def _sql_strings(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = _docstrings(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            skip.update(id(v) for v in node.values)
        text = _sql_text(node) if id(node) not in skip else None
        if text:
            found.append((node.lineno, text))
    return found


def test_the_table_reads_only_read_and_know_no_pipeline() -> None:
    """aborist/projection_reads.py reads the tables the fold writes: no statement of it
    changes a table, and it imports neither the fold nor the pipeline (whose run grammar
    the fold checks), so a reader of the tables loads neither."""
    path = ROOT / "aborist" / "projection_reads.py"
    writes = [f"{n}: {m.group(0)}" for n, t in _sql_strings(path) if (m := _WRITE_SQL.search(t))]
    assert writes == []
    assert _table_sql(path) != []  # it is one of the homes: it does hold table SQL
    imports = sorted(
        name for name in _imports(path)
        if name.split(".")[0] == "aborist"
        and name not in ("aborist.errors", "aborist.events")
    )  # fmt: skip
    assert imports == []


def test_the_write_rule_bites() -> None:
    assert _WRITE_SQL.search("UPDATE runs SET status = :s")
    assert _WRITE_SQL.search("DELETE FROM {}")
    assert _WRITE_SQL.search("INSERT INTO runs (a) VALUES (:a)")
    assert not _WRITE_SQL.search("SELECT run_id, updated_at FROM runs ORDER BY run_id")


def test_the_sql_rule_bites(tmp_path: Path) -> None:
    (tmp_path / "aborist").mkdir()
    (tmp_path / "aborist" / "probe.py").write_text(
        '"""SELECT seq FROM events (a docstring: prose)."""\n'
        "from sqlalchemy import text\n"
        'A = "SELECT run_id FROM runs WHERE x"\n'
        'def f(t):\n    return f"SELECT a FROM {t}"\n'
        'B = "SELECT text FROM chunks"\nC = "runs from events"\n',
        encoding="utf-8",
    )
    assert _table_sql(tmp_path / "aborist" / "probe.py", tmp_path) == [
        "aborist/probe.py:2: imports text",
        "aborist/probe.py:3: FROM runs",
        "aborist/probe.py:5: FROM {}",
    ]


#: The most modules (``__init__.py`` counted) one package folder may hold: a reader finds
#: a room by its name, not by scanning a long list (docs/architecture.md).
MAX_MODULES_PER_FOLDER = 17


def test_no_package_folder_is_a_long_flat_list() -> None:
    crowded = {}
    for top in ("ledger", "aborist", "cli"):
        for folder in [ROOT / top, *(p for p in (ROOT / top).rglob("*") if p.is_dir())]:
            if "__pycache__" in folder.parts:
                continue
            n = len(list(folder.glob("*.py")))
            if n > MAX_MODULES_PER_FOLDER:
                crowded[str(folder.relative_to(ROOT))] = n
    assert not crowded, f"package folders over {MAX_MODULES_PER_FOLDER} modules: {crowded}"

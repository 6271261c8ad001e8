"""The public surfaces of ``ledger`` and ``aborist`` are locked: a name added or removed
here is a deliberate change (CHANGELOG), and every name resolves to what its module says."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

import aborist
import ledger

ROOT = Path(__file__).resolve().parents[1]

LEDGER_SURFACE = [
    "BlobNotFoundError", "Checkpoint", "ConcurrencyError", "ConfigurationError",
    "ConsistencyProof", "GENESIS_HASH", "ImmutabilityError", "InclusionProof", "Ledger",
    "LedgerError", "LedgerReport", "NewEvent", "NotMigratedError", "PayloadError",
    "Projection", "ProofError", "RecordedEvent", "UnavailableError", "canonical_json",
    "checkpoint", "prove_consistency", "prove_inclusion", "sha256_hex", "tree_root",
    "upgrade", "verify_consistency", "verify_inclusion", "verify_ledger",
]  # fmt: skip
ABORIST_SURFACE = [
    "AboristError", "AnthropicClient", "ChatClient", "CorpusError", "ExtractiveClient",
    "Governance", "InputError", "ModelError", "OpenAICompatibleClient", "ProjectionError",
    "ReplayReport", "RunResult", "Settings", "Verdict", "VerifierPolicy", "ask",
    "export_run", "ingest", "load_settings", "open_ledger", "query", "render_report",
    "replay", "verify_answer", "verify_bundle",
]  # fmt: skip


@pytest.mark.parametrize(
    ("package", "expected"), [(ledger, LEDGER_SURFACE), (aborist, ABORIST_SURFACE)]
)
def test_surface_is_locked_and_resolves(package: object, expected: list[str]) -> None:
    names = package.__all__  # type: ignore[attr-defined]
    assert sorted(names) == sorted(expected) and len(set(names)) == len(names)
    assert sorted(package._SURFACE) == sorted(names)  # type: ignore[attr-defined]
    for name in names:
        value = getattr(package, name)
        module = importlib.import_module(package._SURFACE[name])  # type: ignore[attr-defined]
        assert value is getattr(module, name)
        assert name in module.__all__, f"{module.__name__}.__all__ lacks {name}"
    with pytest.raises(AttributeError):
        package.no_such_name  # type: ignore[attr-defined]  # noqa: B018


def test_error_roots() -> None:
    for name in ABORIST_SURFACE:
        value = getattr(aborist, name)
        if isinstance(value, type) and issubclass(value, Exception):
            assert issubclass(value, aborist.AboristError), name
    for name in LEDGER_SURFACE:
        value = getattr(ledger, name)
        if isinstance(value, type) and issubclass(value, Exception):
            assert issubclass(value, ledger.LedgerError), name


def test_every_module_declares_all() -> None:
    missing = []
    for path in sorted([*ROOT.glob("ledger/*.py"), *ROOT.glob("aborist/**/*.py")]):
        if path.name == "__init__.py" or "migrations" in path.parts:
            continue  # revision scripts and env.py are Alembic's format
        tree = ast.parse(path.read_text(encoding="utf-8"))
        if not any(
            isinstance(n, ast.Assign) and any(getattr(t, "id", "") == "__all__" for t in n.targets)
            for n in tree.body
        ):
            missing.append(str(path.relative_to(ROOT)))
    assert missing == []


def test_a_part_loads_without_the_rest() -> None:
    """The surfaces are lazy: the verifier and canonical JSON load without SQLAlchemy."""
    code = (
        "import sys, ledger.canonical, aborist.verify.verify\n"
        "print(sorted(m for m in ('sqlalchemy', 'httpx', 'aborist.pipeline') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"

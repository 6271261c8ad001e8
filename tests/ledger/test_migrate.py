"""Opening a ledger checks its schema revision without Alembic; the constant it checks
against must be the head Alembic computes from the migration scripts."""

from __future__ import annotations

import subprocess
import sys

import pytest
from sqlalchemy import text

from ledger.engine import ledger_engine
from ledger.errors import NotMigratedError
from ledger.migrate import HEAD_REVISION, alembic_head, current_revision, stored_revision
from ledger.store import Ledger
from tests.conftest import migrate_url


def test_head_constant_is_alembics_head() -> None:
    assert alembic_head() == HEAD_REVISION


def test_stored_revision_agrees_with_alembic(empty_url: str) -> None:
    engine = ledger_engine(empty_url)
    try:
        with engine.connect() as conn:
            assert stored_revision(conn) is None
            assert current_revision(conn) is None
        migrate_url(empty_url)
        with engine.connect() as conn:
            assert stored_revision(conn) == current_revision(conn) == HEAD_REVISION
    finally:
        engine.dispose()


def test_an_older_revision_is_refused(ledger_url: str) -> None:
    engine = ledger_engine(ledger_url)
    try:
        with engine.begin() as conn:
            conn.execute(text("UPDATE alembic_version SET version_num = '0001_ledger'"))
    finally:
        engine.dispose()
    with pytest.raises(NotMigratedError, match="0001_ledger, expected 0002_projections"):
        Ledger.open(ledger_url)


def test_opening_a_ledger_does_not_import_alembic(ledger_url: str) -> None:
    code = (
        "import sys\n"
        "from ledger.store import Ledger\n"
        f"Ledger.open({ledger_url!r}).close()\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'alembic'))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"

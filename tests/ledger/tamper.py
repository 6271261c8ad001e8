"""Helpers that play the insider: drop the append-only triggers, then edit rows."""

from __future__ import annotations

from sqlalchemy import text

from ledger.store import Ledger

TRIGGERS = [f"{t}_no_{v}" for t in ("events", "blobs", "checkpoints") for v in ("update", "delete")]


def drop_triggers(lg: Ledger) -> None:
    with lg.engine.begin() as conn:
        if lg.engine.dialect.name == "postgresql":
            for table in ("events", "blobs", "checkpoints"):
                conn.execute(text(f"ALTER TABLE {table} DISABLE TRIGGER USER"))
        else:
            for name in TRIGGERS:
                conn.execute(text(f"DROP TRIGGER IF EXISTS {name}"))


def tamper(lg: Ledger, *statements: str, **params: object) -> None:
    drop_triggers(lg)
    with lg.engine.begin() as conn:
        for sql in statements:
            conn.execute(text(sql), params)

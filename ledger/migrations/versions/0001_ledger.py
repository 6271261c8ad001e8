"""Ledger tables (events, blobs, checkpoints, projection_positions) and the triggers that
make events, blobs and checkpoints append-only on SQLite and PostgreSQL.

Revision ID: 0001_ledger
Revises:
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001_ledger"
down_revision = None
branch_labels = None
depends_on = None

APPEND_ONLY = ("events", "blobs", "checkpoints")
SeqType = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "events",
        sa.Column("seq", SeqType, primary_key=True, autoincrement=False),
        sa.Column("event_id", sa.String(36), nullable=False, unique=True),
        sa.Column("stream", sa.String(400), nullable=False),
        sa.Column("stream_seq", sa.Integer, nullable=False),
        sa.Column("type", sa.String(200), nullable=False),
        sa.Column("type_version", sa.Integer, nullable=False),
        sa.Column("recorded_at", sa.String(32), nullable=False),
        sa.Column("payload", sa.Text, nullable=False),
        sa.Column("payload_hash", sa.String(64), nullable=False),
        sa.Column("prev_hash", sa.String(64), nullable=False),
        sa.Column("hash", sa.String(64), nullable=False),
        sa.UniqueConstraint("stream", "stream_seq", name="uq_events_stream_position"),
    )
    op.create_index("ix_events_type", "events", ["type"])
    op.create_table(
        "blobs",
        sa.Column("hash", sa.String(64), primary_key=True),
        sa.Column("size", sa.BigInteger, nullable=False),
        sa.Column("bytes", sa.LargeBinary, nullable=False),
    )
    op.create_table(
        "checkpoints",
        sa.Column("tree_size", SeqType, primary_key=True, autoincrement=False),
        sa.Column("root", sa.String(64), nullable=False),
        sa.Column("created_at", sa.String(32), nullable=False),
    )
    op.create_table(
        "projection_positions",
        sa.Column("name", sa.String(100), primary_key=True),
        sa.Column("position", sa.BigInteger, nullable=False),
    )

    if op.get_bind().dialect.name == "postgresql":
        op.execute(
            """
            CREATE FUNCTION ledger_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                RAISE EXCEPTION 'ledger: % on % refused: the table is append-only',
                    TG_OP, TG_TABLE_NAME USING ERRCODE = 'insufficient_privilege';
            END
            $$
            """
        )
        for table in APPEND_ONLY:
            op.execute(
                f"CREATE TRIGGER {table}_append_only BEFORE UPDATE OR DELETE ON {table} "
                "FOR EACH ROW EXECUTE FUNCTION ledger_refuse_change()"
            )
            op.execute(
                f"CREATE TRIGGER {table}_no_truncate BEFORE TRUNCATE ON {table} "
                "FOR EACH STATEMENT EXECUTE FUNCTION ledger_refuse_change()"
            )
    else:
        for table in APPEND_ONLY:
            for verb in ("UPDATE", "DELETE"):
                op.execute(
                    f"CREATE TRIGGER {table}_no_{verb.lower()} BEFORE {verb} ON {table} "
                    f"BEGIN SELECT RAISE(ABORT, 'ledger: {verb} on {table} refused: "
                    "the table is append-only'); END"
                )


def downgrade() -> None:
    raise RuntimeError("the ledger schema cannot be downgraded: history is append-only")

"""Read models folded from the ledger: providence_cache, run_dag_nodes, runs.

These tables are projections: `aborist-ledger rebuild` drops their rows and folds every
event again, so they carry no triggers.

Revision ID: 0002_projections
Revises: 0001_ledger
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002_projections"
down_revision = "0001_ledger"
branch_labels = ("aborist",)
depends_on = None


def upgrade() -> None:
    op.create_table(
        "providence_cache",
        sa.Column("cache_key", sa.String(64), primary_key=True),
        sa.Column("answer", sa.Text, nullable=False),
        sa.Column("audit_mode", sa.String(20), nullable=False),
        sa.Column("label", sa.String(40), nullable=False),
        sa.Column("run_id", sa.String(64), nullable=False),
        sa.Column("run_dag_root", sa.String(64), nullable=False),
        sa.Column("run_dag_blob", sa.Text, nullable=False),
        sa.Column("key_dimensions", sa.Text, nullable=False),
        sa.Column("created_at", sa.String(32), nullable=False),
        sa.Column("written_seq", sa.BigInteger, nullable=False),
        sa.Column("hit_count", sa.Integer, nullable=False),
        sa.Column("last_hit_at", sa.String(32), nullable=True),
    )
    op.create_table(
        "run_dag_nodes",
        sa.Column("run_id", sa.String(64), primary_key=True),
        sa.Column("ordinal", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("stage", sa.String(40), nullable=False),
        sa.Column("stage_hash", sa.String(64), nullable=False),
        sa.Column("node_hash", sa.String(64), nullable=False),
        sa.Column("parents", sa.Text, nullable=False),
    )
    op.create_table(
        "runs",
        sa.Column("run_id", sa.String(64), primary_key=True),
        sa.Column("kind", sa.String(10), nullable=False),
        sa.Column("question", sa.Text, nullable=False),
        sa.Column("mode", sa.String(20), nullable=False),
        sa.Column("status", sa.String(12), nullable=False),
        sa.Column("cache_key", sa.String(64), nullable=True),
        sa.Column("cache_hit", sa.Boolean, nullable=False),
        sa.Column("served_from_run_id", sa.String(64), nullable=True),
        sa.Column("audit_mode", sa.String(20), nullable=True),
        sa.Column("label", sa.String(40), nullable=True),
        sa.Column("run_dag_root", sa.String(64), nullable=True),
        sa.Column("started_seq", sa.BigInteger, nullable=False),
        sa.Column("last_seq", sa.BigInteger, nullable=False),
        sa.Column("last_event", sa.String(200), nullable=False),
        sa.Column("started_at", sa.String(32), nullable=False),
        sa.Column("finished_at", sa.String(32), nullable=True),
        sa.Column("failed_stage", sa.String(40), nullable=True),
        sa.Column("error", sa.Text, nullable=True),
    )
    op.create_index("ix_runs_started_seq", "runs", ["started_seq"])


def downgrade() -> None:
    for table in ("runs", "run_dag_nodes", "providence_cache"):
        op.drop_table(table)

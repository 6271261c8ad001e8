"""The Merkle tree stored incrementally, as tlog-tiles (c2sp.org/tlog-tiles): a row per
tile of 256 hashes at tile levels 1 and up (level 0, the leaf hashes, is read from the
events). A checkpoint or a proof then reads O(log n) rows instead of every event hash.

Tiles are derived data: ``aborist-ledger checkpoint`` integrates new events into them
first, ``aborist-ledger verify`` re-derives every tile from the events and reports a tile
that differs. A partial tile (the right edge) is rewritten as it grows, so the table is not
append-only. An existing ledger is caught up by its first checkpoint.

Revision ID: 0005_merkle_tiles
Revises: 0004_insert_guards
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005_merkle_tiles"
down_revision = "0004_insert_guards"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "merkle_tiles",
        sa.Column("level", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("idx", sa.BigInteger, primary_key=True, autoincrement=False),
        sa.Column("hashes", sa.LargeBinary, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("merkle_tiles")

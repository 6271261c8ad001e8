"""`runs` no longer tracks each run's latest event; it records where the run ended.

Until 0002 every append updated the run's `runs` row (`last_seq`, `last_event`), one more
page written per commit for a value the run's own stream already holds: the last event of
`run:<id>` is one indexed read away. `finished_seq` is the seq of the event that ended the
run (`qa.run_completed` or `qa.run_failed`), NULL while it runs or once it was interrupted.
`aborist runs` reads an incomplete run's last stage from its stream (docs/pipeline.md,
"Projections"). `runs` is a projection, so the values are copied where the old columns say
the run ended, and `aborist-ledger rebuild` reproduces them from the events either way.
The runs projection's position now counts only the event types it folds.

Revision ID: 0003_runs_finished_seq
Revises: 0002_projections
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003_runs_finished_seq"
down_revision = "0002_projections"
branch_labels = None
depends_on = None

# aborist.projections._FOLDED when this revision was written (a migration keeps its own
# copy: it must not change when the code does).
_FOLDED = ", ".join(
    f"'{t}'"
    for t in (
        "qa.run_started", "qa.cache_checked", "qa.answer_labelled", "qa.cache_written",
        "qa.run_completed", "qa.run_failed",
    )
)  # fmt: skip


def upgrade() -> None:
    op.add_column("runs", sa.Column("finished_seq", sa.BigInteger, nullable=True))
    op.execute(
        "UPDATE runs SET finished_seq = last_seq "
        "WHERE last_event IN ('qa.run_completed', 'qa.run_failed')"
    )
    with op.batch_alter_table("runs") as batch:
        batch.drop_column("last_event")
        batch.drop_column("last_seq")
    # The runs projection now follows only the types it folds (ledger/store.py
    # ``Projection``); its position becomes the last of those.
    op.execute(
        "UPDATE projection_positions SET position = COALESCE((SELECT MAX(seq) FROM events "
        f"WHERE type IN ({_FOLDED})), 0) WHERE name = 'aborist.runs'"
    )


def downgrade() -> None:
    """Back to 0002's columns. A run that was still going, or interrupted, gets its start
    as its last event; `aborist-ledger rebuild` on the older version restores the exact
    values from the events."""
    with op.batch_alter_table("runs") as batch:
        batch.add_column(sa.Column("last_seq", sa.BigInteger, nullable=True))
        batch.add_column(sa.Column("last_event", sa.String(200), nullable=True))
    op.execute(
        "UPDATE runs SET last_seq = COALESCE(finished_seq, started_seq), "
        "last_event = CASE status WHEN 'completed' THEN 'qa.run_completed' "
        "WHEN 'failed' THEN 'qa.run_failed' ELSE 'qa.run_started' END"
    )
    with op.batch_alter_table("runs") as batch:
        batch.alter_column("last_seq", existing_type=sa.BigInteger, nullable=False)
        batch.alter_column("last_event", existing_type=sa.String(200), nullable=False)
        batch.drop_column("finished_seq")

"""Append-only against conflict clauses: an insert may never replace an existing row.

On SQLite, ``INSERT OR REPLACE`` and ``REPLACE INTO`` resolve a key conflict by deleting
the old row, and that delete fires no ``DELETE`` trigger (recursive triggers are off), so
the triggers of 0001 let a run's events or a recorded checkpoint be swapped for other,
correctly hashed rows. A ``BEFORE INSERT`` trigger runs before conflict resolution, so it
sees the existing row: on ``events`` (every unique key: ``seq``, ``event_id``,
``(stream, stream_seq)``, the last worded as its constraint so a stale writer still reads as
a concurrency conflict) and ``checkpoints`` it aborts the statement; on ``blobs``, which
are content-addressed and stored idempotently (``INSERT OR IGNORE``), it turns any insert
over an existing hash into a no-op, so the stored bytes never change.

PostgreSQL has no replacing insert: a duplicate key is a unique violation, and
``INSERT … ON CONFLICT DO UPDATE`` fires the ``BEFORE UPDATE`` trigger of 0001, which
refuses it. Nothing is added there; tests hold every conflict clause on both backends.

Revision ID: 0004_insert_guards
Revises: 0001_ledger
"""

from __future__ import annotations

from alembic import op

revision = "0004_insert_guards"
down_revision = "0001_ledger"
branch_labels = ("ledger",)
depends_on = None

_REFUSE = "SELECT RAISE(ABORT, 'ledger: INSERT over an existing {key} of {table} refused: the table is append-only')"  # noqa: E501


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        return
    op.execute(
        "CREATE TRIGGER events_no_replace BEFORE INSERT ON events WHEN "
        "EXISTS (SELECT 1 FROM events WHERE seq = NEW.seq) "
        "OR EXISTS (SELECT 1 FROM events WHERE event_id = NEW.event_id) "
        f"BEGIN {_REFUSE.format(key='seq or event_id', table='events')}; END"
    )
    # Worded as the unique constraint is, so a stale writer still reads as a concurrency
    # conflict (ledger.store.translate_errors), not as tampering.
    op.execute(
        "CREATE TRIGGER events_no_replace_position BEFORE INSERT ON events WHEN "
        "EXISTS (SELECT 1 FROM events WHERE stream = NEW.stream "
        "AND stream_seq = NEW.stream_seq) "
        "BEGIN SELECT RAISE(ABORT, 'ledger: events.stream, events.stream_seq already "
        "recorded: the position belongs to an earlier event'); END"
    )
    op.execute(
        "CREATE TRIGGER checkpoints_no_replace BEFORE INSERT ON checkpoints WHEN "
        "EXISTS (SELECT 1 FROM checkpoints WHERE tree_size = NEW.tree_size) "
        f"BEGIN {_REFUSE.format(key='tree_size', table='checkpoints')}; END"
    )
    op.execute(
        "CREATE TRIGGER blobs_no_replace BEFORE INSERT ON blobs WHEN "
        "EXISTS (SELECT 1 FROM blobs WHERE hash = NEW.hash) "
        "BEGIN SELECT RAISE(IGNORE); END"
    )


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        return
    for name in (
        "events_no_replace", "events_no_replace_position", "checkpoints_no_replace",
        "blobs_no_replace",
    ):  # fmt: skip
        op.execute(f"DROP TRIGGER {name}")

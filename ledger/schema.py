"""Table definitions shared by the store and the Alembic migrations.

``payload`` is TEXT on every backend (never JSONB): the stored bytes are what is hashed.
"""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Column,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
)

metadata = MetaData()

# On SQLite an INTEGER PRIMARY KEY is the rowid itself: the fastest possible key.
SeqType = BigInteger().with_variant(Integer(), "sqlite")

events = Table(
    "events",
    metadata,
    Column("seq", SeqType, primary_key=True, autoincrement=False),
    Column("event_id", String(36), nullable=False, unique=True),
    Column("stream", String(400), nullable=False),
    Column("stream_seq", Integer, nullable=False),
    Column("type", String(200), nullable=False),
    Column("type_version", Integer, nullable=False),
    Column("recorded_at", String(32), nullable=False),
    Column("payload", Text, nullable=False),
    Column("payload_hash", String(64), nullable=False),
    Column("prev_hash", String(64), nullable=False),
    Column("hash", String(64), nullable=False),
    UniqueConstraint("stream", "stream_seq", name="uq_events_stream_position"),
)

blobs = Table(
    "blobs",
    metadata,
    Column("hash", String(64), primary_key=True),
    Column("size", BigInteger, nullable=False),
    Column("bytes", LargeBinary, nullable=False),
)

checkpoints = Table(
    "checkpoints",
    metadata,
    Column("tree_size", SeqType, primary_key=True, autoincrement=False),
    Column("root", String(64), nullable=False),
    Column("created_at", String(32), nullable=False),
)

projection_positions = Table(
    "projection_positions",
    metadata,
    Column("name", String(100), primary_key=True),
    Column("position", BigInteger, nullable=False),
)

APPEND_ONLY_TABLES = ("events", "blobs", "checkpoints")

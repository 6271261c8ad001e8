"""The corpus layer: read, canonicalize, chunk and store documents as versioned shards
(docs/corpus.md)."""

from aborist.corpus.canonicalize import CANONICALIZATION_VERSION
from aborist.corpus.chunking import CHUNKING_VERSION
from aborist.corpus.ingest import (
    IngestReport,
    SkippedFile,
    ingest,
    shard_ingested_payload,
    shard_stream,
)
from aborist.corpus.shard import ShardInfo, list_shards, resolve_shard, shard_path

__all__ = [
    "CANONICALIZATION_VERSION",
    "CHUNKING_VERSION",
    "IngestReport",
    "ShardInfo",
    "SkippedFile",
    "ingest",
    "list_shards",
    "resolve_shard",
    "shard_ingested_payload",
    "shard_path",
    "shard_stream",
]

"""Read-only access to shards for retrieval: FTS5 matching, counts, chunk rows, IDF.

Everything retrieval asks of a shard file goes through :class:`ShardReader`, so the SQL
lives next to the schema (:mod:`aborist.corpus.shard`) and retrieval keeps only its
decisions (:mod:`aborist.retrieval.retriever`). Every driver error becomes a
:class:`~aborist.errors.CorpusError` naming the shard.
"""

from __future__ import annotations

import json
import math
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aborist.concepts.store import load_concepts
from aborist.concepts.table import ConceptTable
from aborist.corpus.lexicon import edit_distance
from aborist.corpus.shard import SHARD_SUFFIX, list_shards, open_shard, resolve_shard
from aborist.errors import CorpusError

__all__ = ["ShardReader", "ShardRef", "open_readers"]

_DETAIL_SQL = (
    "SELECT rowid, doc_pos, section, chunk_index, chunk_hash, n_bytes, sentence_keys, text "
    "FROM chunks WHERE rowid IN ({marks})"
)
_DOCS_SQL = "SELECT doc_pos, doc_id, source_uri, title, source_role FROM documents"
_EXISTS_SQL = "SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ? LIMIT ?"
_VOCABULARY_SQL = (
    "SELECT key, df FROM key_stats WHERE key >= ? AND key < ? AND length(key) BETWEEN ? AND ?"
)
_MATCH_SQL = (
    "SELECT rowid, bm25(chunks_fts, {w}) FROM chunks_fts WHERE chunks_fts MATCH ? "
    "ORDER BY bm25(chunks_fts, {w}) LIMIT ?"
)


@dataclass(frozen=True)
class ShardRef:
    """Which shard version a retrieval read: name, file and Merkle source root."""

    name: str
    path: str
    source_root: str
    canonicalization_version: str
    chunking_version: str

    def to_dict(self) -> dict[str, str]:
        return {
            "name": self.name,
            "path": self.path,
            "source_root": self.source_root,
            "canonicalization_version": self.canonicalization_version,
            "chunking_version": self.chunking_version,
        }


class ShardReader:
    """One shard opened read-only."""

    def __init__(self, path: Path) -> None:
        self.conn = open_shard(path)
        try:
            meta = dict(self.conn.execute("SELECT key, value FROM meta").fetchall())
            self.ref = ShardRef(
                name=meta.get("name", path.name.removesuffix(SHARD_SUFFIX)),
                path=str(path),
                source_root=meta["source_root"],
                canonicalization_version=meta["canonicalization_version"],
                chunking_version=meta["chunking_version"],
            )
            # rowids are 1..N in document/chunk order, so MAX is the count, in O(log N)
            self._docs: dict[int, tuple[str, str, str, str]] = {
                int(pos): (doc_id, uri, title, role)
                for pos, doc_id, uri, title, role in self.conn.execute(_DOCS_SQL)
            }
            self.n_chunks = int(
                self.conn.execute("SELECT MAX(rowid) FROM chunks").fetchone()[0] or 0
            )
        except (sqlite3.Error, KeyError) as e:
            self.conn.close()
            raise CorpusError(f"{path} is not a complete shard: {e}") from e

    def close(self) -> None:
        self.conn.close()

    def _rows(self, sql: str, params: Sequence[Any]) -> list[Any]:
        try:
            return self.conn.execute(sql, params).fetchall()
        except sqlite3.Error as e:
            raise CorpusError(f"shard {self.ref.name}: query failed: {e}") from e

    def match(self, expr: str, limit: int, weights: Sequence[float]) -> list[tuple[int, float]]:
        """Top ``limit`` (rowid, FTS5 bm25) for an FTS5 expression; lower bm25 is better."""
        sql = _MATCH_SQL.format(w=", ".join(str(float(w)) for w in weights))
        return [(int(r), float(s)) for r, s in self._rows(sql, (expr, limit))]

    def count(self, expr: str, limit: int) -> int:
        """Chunks matching ``expr``, counted up to ``limit`` without ranking (a doclist
        intersection, not a BM25 pass)."""
        return len(self._rows(_EXISTS_SQL, (expr, limit)))

    def details(self, rowids: Iterable[int]) -> list[tuple[Any, ...]]:
        """(rowid, doc_id, source_uri, title, section, source_role, chunk_index,
        chunk_hash, n_bytes, sentence_keys, text) per chunk; the documents' fields come
        from memory (read once when the shard is opened)."""
        ids = tuple(rowids)
        if not ids:
            return []
        out = []
        for rowid, pos, section, index, chunk_hash, n_bytes, keys, text in self._rows(
            _DETAIL_SQL.format(marks=", ".join("?" * len(ids))), ids
        ):
            doc_id, uri, title, role = self._docs[pos]
            out.append(
                (rowid, doc_id, uri, title, section, role, index, chunk_hash, n_bytes, keys, text)
            )
        return out

    def locators(self, rowids: Iterable[int]) -> dict[int, dict[str, Any]]:
        """The stored locator of each chunk (docs/corpus.md, "Locators"), by rowid."""
        ids = tuple(rowids)
        if not ids:
            return {}
        sql = f"SELECT rowid, locator FROM chunks WHERE rowid IN ({', '.join('?' * len(ids))})"
        out: dict[int, dict[str, Any]] = {}
        for rowid, text in self._rows(sql, ids):
            try:
                value = json.loads(text)
            except (ValueError, TypeError, RecursionError) as e:  # a row edited by hand
                raise CorpusError(f"shard {self.ref.name}: chunk {rowid} has a bad locator") from e
            if not isinstance(value, dict):
                raise CorpusError(f"shard {self.ref.name}: chunk {rowid} has a bad locator")
            out[int(rowid)] = value
        return out

    def near_keys(self, key: str, max_distance: int) -> list[tuple[str, int, int]]:
        """(key, distance, df) of every key of this shard with the same first letter as
        ``key`` and at most ``max_distance`` edits away (:func:`edit_distance`)."""
        if not key:
            return []
        first = key[0]
        upper = chr(ord(first) + 1)
        rows = self._rows(
            _VOCABULARY_SQL, (first, upper, len(key) - max_distance, len(key) + max_distance)
        )
        letters = set(key)
        out = []
        for other, df in rows:
            # each edit changes the set of letters by at most two: a cheap necessary test
            if len(letters ^ set(other)) > 2 * max_distance:
                continue
            distance = edit_distance(key, other, max_distance)
            if distance <= max_distance and other != key:
                out.append((str(other), distance, int(df)))
        return out

    def key_weights(self, keys: Iterable[str]) -> dict[str, float]:
        """BM25's IDF, ln(1 + (N - df + 0.5) / (df + 0.5)), of each key this shard holds.
        Keys no chunk holds are left out: they cannot tell one chunk from another."""
        ordered = sorted(set(keys))
        if not ordered:
            return {}
        marks = ", ".join("?" * len(ordered))
        df = dict(self._rows(f"SELECT key, df FROM key_stats WHERE key IN ({marks})", ordered))
        n = self.n_chunks
        return {k: math.log(1 + (n - df[k] + 0.5) / (df[k] + 0.5)) for k in ordered if k in df}


def open_readers(
    shards: Sequence[Path | str], shards_dir: Path
) -> tuple[list[ShardReader], ConceptTable]:
    """Open the named shards (all of ``shards_dir`` when empty) and merge their concept
    tables."""
    if shards:
        paths = [resolve_shard(s, shards_dir) for s in shards]
    else:
        paths = [info.path for info in list_shards(shards_dir)]
        if not paths:
            raise CorpusError(
                f"no shards in {shards_dir}; run `aborist ingest PATH --shard NAME` first"
            )
    readers: list[ShardReader] = []
    table = ConceptTable()
    try:
        for path in dict.fromkeys(p.resolve() for p in paths):
            reader = ShardReader(path)
            readers.append(reader)
            load_concepts(reader.conn, table)
    except BaseException:
        for r in readers:
            r.close()
        raise
    return readers, table

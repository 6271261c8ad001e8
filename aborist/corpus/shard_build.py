"""Writing a shard file: its schema and :func:`build_shard` (docs/corpus.md, "Shard file").

The tables (:mod:`aborist.corpus.shard` describes the layout and everything around a
shard file: names, the lock, listing and reading) are created here, filled from the
built documents in document/chunk order, and written to a temporary file beside the
shard; :meth:`PendingShard.commit` swaps it in with :func:`os.replace`, so a failed ingest
leaves the previous shard untouched and readers never see a half-written file.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from aborist.concepts.extract import Relation
from aborist.concepts.store import CONCEPTS_DDL, write_concepts
from aborist.corpus.chunking import Chunk
from aborist.corpus.lexicon import light_stem, sentence_keys, tokens
from ledger.tlog.merkle import merkle_root

__all__ = [
    "FTS_TOKENIZER",
    "SCHEMA_VERSION",
    "BuiltDocument",
    "PendingShard",
    "build_shard",
    "locator_json",
    "merkle_root_hex",
]

SCHEMA_VERSION = "4"
FTS_TOKENIZER = "porter unicode61 remove_diacritics 2"

_DDL = (
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID",
    """CREATE TABLE documents (
        doc_pos INTEGER PRIMARY KEY,
        doc_id TEXT NOT NULL UNIQUE,
        source_uri TEXT NOT NULL UNIQUE,
        file_name TEXT NOT NULL,
        title TEXT NOT NULL,
        source_role TEXT NOT NULL,
        format TEXT NOT NULL,
        raw_sha256 TEXT NOT NULL,
        raw_text TEXT NOT NULL,
        canonical_text TEXT NOT NULL,
        doc_root TEXT NOT NULL,
        n_chunks INTEGER NOT NULL
    )""",
    """CREATE TABLE chunks (
        rowid INTEGER PRIMARY KEY,
        doc_pos INTEGER NOT NULL REFERENCES documents(doc_pos),
        chunk_index INTEGER NOT NULL,
        section TEXT NOT NULL,
        chunk_hash TEXT NOT NULL,
        n_bytes INTEGER NOT NULL,
        sentence_keys TEXT NOT NULL,
        text TEXT NOT NULL,
        raw_text TEXT NOT NULL,
        locator TEXT NOT NULL,
        UNIQUE (doc_pos, chunk_index)
    )""",
    "CREATE TABLE key_stats (key TEXT PRIMARY KEY, df INTEGER NOT NULL) WITHOUT ROWID",
    f"""CREATE VIRTUAL TABLE chunks_fts USING fts5(
        title, section, body, content='', tokenize='{FTS_TOKENIZER}'
    )""",
    CONCEPTS_DDL,
)


@dataclass(frozen=True)
class BuiltDocument:
    """A document ready to be written: canonical chunks and its provenance."""

    source_uri: str
    doc_id: str
    file_name: str
    title: str
    source_role: str
    format: str
    raw_sha256: str
    raw_text: str
    canonical_text: str
    chunks: tuple[Chunk, ...]

    @property
    def doc_root(self) -> str:
        return merkle_root_hex([c.hash for c in self.chunks])


def locator_json(locator: dict[str, object]) -> str:
    """A chunk locator as stored: compact JSON, keys sorted (RFC 8785 for these plain
    values: strings, small integers and lists of strings)."""
    return json.dumps(locator, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def merkle_root_hex(chunk_hashes: Sequence[str]) -> str:
    """RFC 9162 MTH over the raw 32-byte chunk hashes, as lower-case hex."""
    return merkle_root([bytes.fromhex(h) for h in chunk_hashes]).hex()


@dataclass
class PendingShard:
    """A complete shard in its temporary file; :meth:`commit` swaps it in,
    :meth:`discard` removes it. Until then the previous shard is untouched."""

    tmp: Path
    path: Path
    source_root: str
    concepts: int

    def commit(self) -> None:
        os.replace(self.tmp, self.path)
        with contextlib.suppress(OSError):
            dir_fd = os.open(self.path.parent, os.O_RDONLY)
            try:
                os.fsync(dir_fd)
            finally:
                os.close(dir_fd)

    def discard(self) -> None:
        self.tmp.unlink(missing_ok=True)


def build_shard(
    path: Path,
    *,
    name: str,
    documents: Sequence[BuiltDocument],
    relations: Sequence[tuple[str, Relation]],
    canonicalization_version: str,
    chunking_version: str,
) -> PendingShard:
    """Write a complete shard to a temporary file beside ``path`` (not yet swapped in).

    ``documents`` must already be in ``source_uri`` order.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.unlink(missing_ok=True)
    chunk_hashes = [c.hash for d in documents for c in d.chunks]
    source_root = merkle_root_hex(chunk_hashes)
    try:
        conn = sqlite3.connect(tmp)
        try:
            conn.execute("PRAGMA journal_mode = OFF")
            conn.execute("PRAGMA synchronous = OFF")
            with conn:
                for ddl in _DDL:
                    conn.execute(ddl)
                _insert_rows(conn, documents)
                n_concepts = write_concepts(conn, relations)
                conn.executemany(
                    "INSERT INTO meta (key, value) VALUES (?, ?)",
                    [
                        ("schema_version", SCHEMA_VERSION),
                        ("name", name),
                        ("canonicalization_version", canonicalization_version),
                        ("chunking_version", chunking_version),
                        ("source_root", source_root),
                    ],
                )
            conn.execute("INSERT INTO chunks_fts (chunks_fts) VALUES ('optimize')")
            conn.commit()
        finally:
            conn.close()
        with open(tmp, "rb") as fh:
            os.fsync(fh.fileno())
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return PendingShard(tmp=tmp, path=path, source_root=source_root, concepts=n_concepts)


def _insert_rows(conn: sqlite3.Connection, documents: Sequence[BuiltDocument]) -> None:
    rowid = 0
    df: Counter[str] = Counter()
    for pos, doc in enumerate(documents, start=1):
        conn.execute(
            "INSERT INTO documents (doc_pos, doc_id, source_uri, file_name, title, source_role,"
            " format, raw_sha256, raw_text, canonical_text, doc_root, n_chunks)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                pos, doc.doc_id, doc.source_uri, doc.file_name, doc.title, doc.source_role,
                doc.format, doc.raw_sha256, doc.raw_text, doc.canonical_text, doc.doc_root,
                len(doc.chunks),
            ),
        )  # fmt: skip
        chunk_rows = []
        fts_rows = []
        for chunk in doc.chunks:
            rowid += 1
            heading = f"{doc.title} {chunk.section}"
            df.update({light_stem(t) for t in (*tokens(chunk.text), *tokens(heading))})
            chunk_rows.append(
                (rowid, pos, chunk.index, chunk.section, chunk.hash,
                 len(chunk.text.encode("utf-8")), sentence_keys(chunk.text), chunk.text,
                 chunk.raw, locator_json(chunk.locator.to_dict()))
            )  # fmt: skip
            fts_rows.append((rowid, doc.title, chunk.section, chunk.text))
        conn.executemany(
            "INSERT INTO chunks (rowid, doc_pos, chunk_index, section, chunk_hash, n_bytes,"
            " sentence_keys, text, raw_text, locator) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            chunk_rows,
        )
        conn.executemany(
            "INSERT INTO chunks_fts (rowid, title, section, body) VALUES (?, ?, ?, ?)",
            fts_rows,
        )
    conn.executemany("INSERT INTO key_stats (key, df) VALUES (?, ?)", sorted(df.items()))

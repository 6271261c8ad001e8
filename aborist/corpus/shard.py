"""The shard file: one SQLite database per shard, built beside the old one and swapped in.

Layout (docs/corpus.md, "Shard file"):

* ``meta``: shard name, schema version, ``canonicalization_version``,
  ``chunking_version``, ``source_root``;
* ``documents``: one row per source file, in ``source_uri`` order, with the raw text
  beside the canonical text and the document's own Merkle root (``doc_root``);
* ``chunks``: in document/chunk order (``rowid``), with the sha256 ``chunk_hash``, the
  text's UTF-8 size (``n_bytes``) and, for retrieval's filter and rerank, the distinct
  light-stemmed keys of each sentence (``sentence_keys``: one line per sentence, padded
  with spaces so that ``" key " in sentence_keys`` is a membership test; derived data,
  :mod:`aborist.corpus.lexicon`);
* ``key_stats``: how many chunks hold each key in their body, title or section (``df``),
  for the IDF weights of the rerank features;
* ``chunks_fts``: a contentless FTS5 index (``title``, ``section``, ``body``) whose
  rowids are the chunk rowids, Porter-stemmed ``unicode61`` tokens;
* ``concepts``: the shard's synonym / rivalry relations (:mod:`aborist.concepts.store`).

``source_root`` is the RFC 6962 / RFC 9162 Merkle root (:func:`ledger.tlog.merkle.merkle_root`)
over the raw 32-byte chunk hashes in document/chunk order; ``doc_root`` is the same over
one document's chunks. A shard is written to a temporary file in the same directory
(:func:`build_shard`) and moved over the old one with :func:`os.replace` (atomic on POSIX)
only when everything else has succeeded (:meth:`PendingShard.commit`), so a failed ingest
leaves the previous shard untouched and readers never see a half-written file.
Writers of one shard take turns under :func:`shard_lock`.

The schema and the writing (:func:`build_shard`, :class:`PendingShard`) live in
:mod:`aborist.corpus.shard_build` and are re-exported here; this module holds the rest of
a shard file's life: its name and path, the lock, opening, reading, listing and deleting.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import sqlite3
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from aborist.corpus.shard_build import (
    SCHEMA_VERSION,
    BuiltDocument,
    PendingShard,
    build_shard,
    locator_json,
    merkle_root_hex,
)
from aborist.errors import CorpusError, InputError
from ledger.tlog.merkle import merkle_root

__all__ = [
    "LOCK_TIMEOUT_S",
    "SCHEMA_VERSION",
    "SHARD_SUFFIX",
    "BuiltDocument",
    "DocumentInfo",
    "PendingShard",
    "ShardInfo",
    "StoredSource",
    "build_shard",
    "chunk_root",
    "delete_shard",
    "list_shards",
    "locator_json",
    "merkle_root_hex",
    "open_shard",
    "read_documents",
    "read_shard_info",
    "read_sources",
    "remove_stale_temps",
    "resolve_shard",
    "shard_lock",
    "shard_lock_path",
    "shard_path",
    "survey_shards",
    "validate_shard_name",
]

SHARD_SUFFIX = ".shard.sqlite"
_HEX64 = re.compile(r"[0-9a-f]{64}")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
LOCK_TIMEOUT_S = 600.0
"""How long an ingest waits for another ingest of the same shard before giving up: long
enough for a large corpus to finish, short enough that a stuck writer is reported."""
_LOCK_POLL_S = 0.05


@dataclass(frozen=True)
class StoredSource:
    """What a rebuild needs from an existing shard to re-derive a document."""

    source_uri: str
    file_name: str
    source_role: str
    format: str
    raw_text: str


@dataclass(frozen=True)
class ShardInfo:
    name: str
    path: Path
    documents: int
    chunks: int
    source_root: str
    canonicalization_version: str
    chunking_version: str
    roles: tuple[str, ...]

    def to_dict(self) -> dict[str, object]:
        return {
            "name": self.name,
            "path": str(self.path),
            "documents": self.documents,
            "chunks": self.chunks,
            "source_root": self.source_root,
            "canonicalization_version": self.canonicalization_version,
            "chunking_version": self.chunking_version,
            "roles": list(self.roles),
        }


def validate_shard_name(name: str) -> str:
    if not _NAME.match(name):
        raise InputError(
            f"shard name {name!r} is not allowed: use 1-64 letters, digits, '.', '_' or '-', "
            "starting with a letter or digit"
        )
    return name


def shard_path(shards_dir: Path, name: str) -> Path:
    return shards_dir / f"{validate_shard_name(name)}{SHARD_SUFFIX}"


def resolve_shard(shard: Path | str, shards_dir: Path) -> Path:
    """A shard given by name (looked up in ``shards_dir``) or by path to its file."""
    text = str(shard)
    as_path = Path(text)
    if text.endswith(SHARD_SUFFIX) or os.sep in text or (os.altsep and os.altsep in text):
        if not _is_file(as_path):
            raise CorpusError(f"no shard file at {as_path}")
        return as_path
    path = shard_path(shards_dir, text)
    if not _is_file(path):
        known = ", ".join(p.name.removesuffix(SHARD_SUFFIX) for p in _shard_files(shards_dir))
        raise CorpusError(
            f"no shard named {text!r} in {shards_dir}"
            + (f" (known: {known})" if known else "; run `aborist ingest PATH --shard NAME`")
        )
    return path


def _is_file(path: Path) -> bool:
    try:
        return path.is_file()
    except OSError as e:  # a name too long, a directory above not searchable
        raise CorpusError(f"cannot look at {path}: {e.strerror or e}") from e


def _shard_files(shards_dir: Path) -> list[Path]:
    try:  # a name too long, a directory above not searchable: one line, not a traceback
        if not shards_dir.is_dir():
            return []
        return sorted(p for p in shards_dir.iterdir() if p.name.endswith(SHARD_SUFFIX))
    except OSError as e:
        raise CorpusError(f"cannot read the shard directory {shards_dir}: {e.strerror or e}") from e


def open_shard(path: Path) -> sqlite3.Connection:
    """Open a shard read-only and check its schema version."""
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
        row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    except sqlite3.Error as e:
        raise CorpusError(f"{path} is not a readable shard: {e}") from e
    if row is None or row[0] != SCHEMA_VERSION:
        conn.close()
        found = row[0] if row else "none"
        raise CorpusError(
            f"{path}: shard schema version {found}, expected {SCHEMA_VERSION}; re-ingest it"
        )
    return conn


@contextlib.contextmanager
def _reading(path: Path) -> Iterator[sqlite3.Connection]:
    """A read-only connection to the shard at ``path``; a table or column it lacks (a
    damaged or hand-edited file) is a :class:`CorpusError`, not a ``sqlite3`` traceback."""
    conn = open_shard(path)
    try:
        yield conn
    except sqlite3.Error as e:
        raise CorpusError(f"{path} is not a complete shard: {e}") from e
    finally:
        conn.close()


def read_shard_info(path: Path) -> ShardInfo:
    with _reading(path) as conn:
        meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
        n_docs = conn.execute("SELECT COUNT(*) FROM documents").fetchone()[0]
        n_chunks = conn.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
        roles = [r[0] for r in conn.execute("SELECT DISTINCT source_role FROM documents")]
    try:
        return ShardInfo(
            name=meta["name"],
            path=path,
            documents=int(n_docs),
            chunks=int(n_chunks),
            source_root=meta["source_root"],
            canonicalization_version=meta["canonicalization_version"],
            chunking_version=meta["chunking_version"],
            roles=tuple(sorted(str(r) for r in roles)),
        )
    except KeyError as e:
        raise CorpusError(f"{path} is not a complete shard: its meta table has no {e}") from e


def chunk_root(path: Path) -> str:
    """The RFC 9162 root over the ``chunk_hash`` column of the shard file at ``path``, in
    ``rowid`` (document/chunk) order: the root its chunks really have, whatever its
    ``meta`` table says. O(chunks); callers cache it by file identity."""
    with _reading(path) as conn:
        try:
            hashes = [r[0] for r in conn.execute("SELECT chunk_hash FROM chunks ORDER BY rowid")]
        except sqlite3.Error as e:
            raise CorpusError(f"{path} is not a complete shard: {e}") from e
    for h in hashes:
        if not isinstance(h, str) or not _HEX64.fullmatch(h):
            raise CorpusError(f"{path}: chunk_hash {h!r} is not a lower-case hex sha256")
    return merkle_root([bytes.fromhex(h) for h in hashes]).hex()


def list_shards(shards_dir: Path) -> list[ShardInfo]:
    """Every shard in ``shards_dir``, by name."""
    return [read_shard_info(p) for p in _shard_files(shards_dir)]


def survey_shards(shards_dir: Path) -> tuple[list[ShardInfo], list[str]]:
    """Every shard in ``shards_dir`` that can be read, by name, and one line for each that
    cannot (why, as :func:`read_shard_info` says it): a listing names the broken shard
    instead of failing on it."""
    infos: list[ShardInfo] = []
    broken: list[str] = []
    for p in _shard_files(shards_dir):
        try:
            infos.append(read_shard_info(p))
        except (CorpusError, InputError) as e:
            broken.append(str(e))
    return infos, broken


def read_sources(path: Path) -> list[StoredSource]:
    """The raw sources of an existing shard, so a rebuild can re-derive them."""
    with _reading(path) as conn:
        rows = conn.execute(
            "SELECT source_uri, file_name, source_role, format, raw_text FROM documents "
            "ORDER BY doc_pos"
        ).fetchall()
    return [StoredSource(*row) for row in rows]


def shard_lock_path(path: Path) -> Path:
    """The lock file beside a shard file: ``.<name>.shard.sqlite.lock`` (hidden, kept)."""
    return path.with_name(f".{path.name}.lock")


@contextlib.contextmanager
def shard_lock(path: Path, *, timeout: float = LOCK_TIMEOUT_S) -> Iterator[None]:
    """Hold the exclusive write lock of the shard file ``path`` (``fcntl.flock``).

    An ingest reads the current shard, builds the next one from it and swaps it in; two
    ingests doing that at once would both build on the same old shard and the later swap
    would silently drop the other's documents. Holding this lock across
    read-build-append-swap makes the second build on the first's result. The lock file
    is never deleted (unlinking it would let a waiter lock an orphaned inode), and the
    kernel releases the lock when the process ends, however it ends. Polling with
    ``LOCK_NB`` rather than blocking gives the wait a deadline and a clear message.
    """
    lock = shard_lock_path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    except OSError as e:
        raise CorpusError(f"cannot create the shard lock {lock}: {e.strerror or e}") from e
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise CorpusError(
                        f"shard {path.name.removesuffix(SHARD_SUFFIX)!r} is being written by "
                        f"another ingest (waited {timeout:g} s for {lock}); try again when "
                        "it has finished"
                    ) from None
                time.sleep(_LOCK_POLL_S)
        yield
    finally:
        os.close(fd)


def remove_stale_temps(path: Path) -> list[Path]:
    """Delete the temporary files an interrupted ingest of shard file ``path`` left
    (``.<name>.shard.sqlite.<pid>.tmp``). Call only while holding :func:`shard_lock`:
    every ingest of the shard writes its temporary file under that lock, so while it is
    held any such file belongs to a process that was killed before it could clean up."""
    removed = []
    for tmp in sorted(path.parent.glob(f".{path.name}.*.tmp")):
        middle = tmp.name[len(path.name) + 2 : -len(".tmp")]
        if middle.isdigit():
            with contextlib.suppress(FileNotFoundError):
                tmp.unlink()
                removed.append(tmp)
    return removed


@dataclass(frozen=True)
class DocumentInfo:
    """One document of a shard, as ``aborist documents`` lists it."""

    source_uri: str
    file_name: str
    title: str
    source_role: str
    format: str
    n_chunks: int
    doc_root: str

    def to_dict(self) -> dict[str, object]:
        return {
            "source_uri": self.source_uri,
            "file_name": self.file_name,
            "title": self.title,
            "source_role": self.source_role,
            "format": self.format,
            "chunks": self.n_chunks,
            "doc_root": self.doc_root,
        }


def read_documents(path: Path) -> list[DocumentInfo]:
    """The documents of a shard, in shard (``source_uri``) order."""
    with _reading(path) as conn:
        try:
            rows = conn.execute(
                "SELECT source_uri, file_name, title, source_role, format, n_chunks, doc_root "
                "FROM documents ORDER BY doc_pos"
            ).fetchall()
        except sqlite3.Error as e:
            raise CorpusError(f"{path} is not a readable shard: {e}") from e
    return [DocumentInfo(*row) for row in rows]


def delete_shard(path: Path, *, timeout: float = LOCK_TIMEOUT_S) -> ShardInfo | None:
    """Remove the shard file ``path`` (and stale temporary files beside it) under the
    shard lock, so an ingest in progress finishes first. Returns what the shard was
    (``None`` when its file was unreadable). The lock file stays (see
    :func:`shard_lock`)."""
    with shard_lock(path, timeout=timeout):
        if not path.is_file():
            raise CorpusError(f"no shard file at {path}")
        try:
            info: ShardInfo | None = read_shard_info(path)
        except CorpusError:
            info = None
        remove_stale_temps(path)
        try:
            path.unlink()
        except OSError as e:
            raise CorpusError(f"cannot delete {path}: {e.strerror or e}") from e
    return info

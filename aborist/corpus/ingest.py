"""``ingest()``: files and directories → one shard, recorded as ``corpus.shard_ingested``.

Semantics (docs/corpus.md, "What is read", "Re-ingest semantics"):

* Paths are files or directories (walked recursively, sorted; dot-files and
  dot-directories skipped). A missing path or a symlink loop is an error before
  anything is read.
* Supported files are read (:func:`.readers.read_source_bytes`: regular files only, at
  most ``MAX_FILE_BYTES``), decoded (:mod:`.canonicalize`) or, for PDF and DOCX,
  extracted (:func:`.readers.extract_source`), parsed (:mod:`.readers`) and chunked
  (:mod:`.chunking`). Unsupported types, non-regular files, symlink loops,
  oversized, unreadable, binary, non-UTF-8 and empty files and unreadable directories
  are *skipped* and listed in the report by their path as given (bytes of a file name
  that are not UTF-8 shown as ``\\xff``); if nothing is left, nothing is written and
  :class:`CorpusError` says why.
* The shard is upserted by ``source_uri`` (the file's absolute ``file://`` URI, with
  any byte of the name that is not UTF-8 percent-encoded, so it is lossless): files
  ingested again replace their earlier version, other documents already in the shard
  are kept and re-derived from their stored raw text with the current versions.
  ``replace=True`` drops documents not named in this ingest. The same files ingested
  twice give the same ``source_root`` and no duplicates.
* The new shard is built beside the old one; the ledger event is appended; only then is
  the new file swapped in. A failure at any step leaves the previous shard as it was.
  Reading the old shard, building, appending and swapping happen under the shard's
  lock (:func:`.shard.shard_lock`), so concurrent ingests into one shard take turns and
  none loses the other's documents. Under that lock the temporary files an interrupted
  ingest of the shard left are removed first, and ``prune`` drops the documents whose
  files are gone (listed as ``pruned`` in the event).

Finding, reading and building the files (the walk/skip listing) is
:mod:`aborist.corpus.sources`; this module holds the shard write around it and the
ingest event.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from aborist.concepts.extract import Relation
from aborist.corpus.canonicalize import CANONICALIZATION_VERSION
from aborist.corpus.chunk_list import encode_chunk_hashes
from aborist.corpus.chunking import CHUNKING_VERSION
from aborist.corpus.readers import MAX_FILE_BYTES, SourceFileSkipped
from aborist.corpus.shard import (
    LOCK_TIMEOUT_S,
    BuiltDocument,
    StoredSource,
    build_shard,
    read_shard_info,
    read_sources,
    remove_stale_temps,
    shard_lock,
    shard_path,
    validate_shard_name,
)
from aborist.corpus.sources import (
    IngestProgress,
    SkippedFile,
    Source,
    build_document,
    check_paths,
    read_and_build,
    still_there,
)
from aborist.errors import CorpusError, InputError

__all__ = [
    "EVENT_TYPE",
    "DocumentReport",
    "IngestProgress",
    "IngestReport",
    "SkippedFile",
    "check_paths",
    "ingest",
    "record_ingest",
    "shard_ingested_payload",
    "shard_stream",
]

EVENT_TYPE = "corpus.shard_ingested"
DEFAULT_ROLE = "primary"
_ROLE = re.compile(r"^[a-z][a-z0-9_-]{0,31}$")


class _LedgerLike(Protocol):
    def append(self, stream: str, events: Sequence[Any], *, blobs: Sequence[bytes] = ()) -> Any: ...


@dataclass(frozen=True)
class DocumentReport:
    source_uri: str
    title: str
    doc_root: str
    n_chunks: int
    source_role: str


@dataclass(frozen=True)
class IngestReport:
    shard: str
    path: Path
    source_root: str
    previous_root: str | None
    canonicalization_version: str
    chunking_version: str
    role: str
    documents: tuple[DocumentReport, ...]
    ingested: tuple[str, ...]
    skipped: tuple[SkippedFile, ...]
    concepts: int = 0
    n_chunks: int = 0
    notes: tuple[SkippedFile, ...] = ()
    """Files ingested with a caveat (a PDF with pages that have no text layer)."""
    pruned: tuple[str, ...] = ()
    """``source_uri`` of the documents dropped by ``prune`` because their file is gone."""
    stale_temps_removed: int = 0
    """Temporary files of an interrupted earlier ingest of this shard, removed."""
    #: Every chunk's sha256 in document/chunk order: the leaves of ``source_root``.
    chunk_hashes: tuple[str, ...] = field(default=(), repr=False)

    @property
    def chunk_hashes_blob(self) -> bytes:
        """The chunk-hash list as the ledger stores it (:mod:`.chunk_list`)."""
        return encode_chunk_hashes(self.chunk_hashes)

    @property
    def changed(self) -> bool:
        return self.source_root != self.previous_root

    def to_dict(self) -> dict[str, Any]:
        return {
            "shard": self.shard,
            "path": str(self.path),
            "source_root": self.source_root,
            "previous_root": self.previous_root,
            "changed": self.changed,
            "canonicalization_version": self.canonicalization_version,
            "chunking_version": self.chunking_version,
            "role": self.role,
            "documents": len(self.documents),
            "chunks": self.n_chunks,
            "concepts": self.concepts,
            "ingested": list(self.ingested),
            "skipped": [s.to_dict() for s in self.skipped],
            "notes": [n.to_dict() for n in self.notes],
            "pruned": list(self.pruned),
            "stale_temps_removed": self.stale_temps_removed,
        }


def record_ingest(ledger: _LedgerLike, report: IngestReport) -> None:
    """Append ``corpus.shard_ingested`` for ``report`` to the shard's stream, with its
    chunk-hash list as a blob in the same transaction."""
    from ledger.envelope import NewEvent

    ledger.append(
        shard_stream(report.shard),
        [NewEvent(type=EVENT_TYPE, payload=shard_ingested_payload(report))],
        blobs=[report.chunk_hashes_blob],
    )


def shard_stream(shard: str) -> str:
    """The ledger stream of a shard's ingest events."""
    return f"shard:{shard}"


def shard_ingested_payload(report: IngestReport) -> dict[str, Any]:
    """The ``corpus.shard_ingested`` payload: enough to tie any later answer to this exact
    corpus version (every document's root, both pipeline versions), the documents an
    ``--prune`` dropped (``pruned``, present only then) and, through the chunk-hash list it
    references (``chunk_hashes_blob``, stored beside the event by :func:`record_ingest`),
    to prove without the shard file that a chunk is a leaf of ``source_root``. Pure."""
    return {
        "shard": report.shard,
        "source_root": report.source_root,
        "chunk_hashes_blob": hashlib.sha256(report.chunk_hashes_blob).hexdigest(),
        "canonicalization_version": report.canonicalization_version,
        "chunking_version": report.chunking_version,
        "role": report.role,
        "documents": [
            {
                "source_uri": d.source_uri,
                "title": d.title,
                "doc_root": d.doc_root,
                "n_chunks": d.n_chunks,
            }
            for d in report.documents
        ],
        "skipped": [s.to_dict() for s in report.skipped],
        **({"pruned": list(report.pruned)} if report.pruned else {}),
    }


def _previous(path: Path, *, replace: bool) -> tuple[str | None, list[StoredSource]]:
    """The current shard's root and (unless replacing) its sources. A shard that cannot
    be read blocks an extending ingest but not a replacing one."""
    if not path.exists():
        return None, []
    try:
        root = read_shard_info(path).source_root
        return root, ([] if replace else read_sources(path))
    except CorpusError as e:
        if replace:
            return None, []
        raise CorpusError(
            f"{e}; the existing shard cannot be extended (re-ingest with --replace)"
        ) from e


def _nothing_ingested(shard: str, skipped: list[SkippedFile]) -> CorpusError:
    reasons = "; ".join(f"{s.path}: {s.reason}" for s in skipped[:5])
    more = f" (and {len(skipped) - 5} more)" if len(skipped) > 5 else ""
    return CorpusError(
        f"nothing ingested into shard {shard!r}: every file was skipped: {reasons}{more}"
        if skipped
        else f"nothing ingested into shard {shard!r}: no files found"
    )


def _documents(built: list[BuiltDocument]) -> tuple[DocumentReport, ...]:
    return tuple(
        DocumentReport(d.source_uri, d.title, d.doc_root, len(d.chunks), d.source_role)
        for d in built
    )


def _keep_stored(
    stored: Iterable[StoredSource],
    sources: dict[str, Source],
    prune: bool,
    built: list[BuiltDocument],
    relations: list[tuple[str, Relation]],
    skipped: list[SkippedFile],
    pruned: list[str],
) -> None:
    """Rebuild the shard's stored documents that this ingest does not replace into
    ``built`` (and their relations), dropping those ``prune`` finds gone (into ``pruned``)
    and those the current readers refuse (into ``skipped``)."""
    for old in stored:
        if old.source_uri in sources:
            continue
        if prune and not still_there(old.source_uri):
            pruned.append(old.source_uri)
            continue
        again = Source(old.source_uri, old.file_name, old.source_role, old.format, old.raw_text)
        try:
            kept = build_document(again)
        except SourceFileSkipped as e:
            # a stored document the current readers refuse leaves the shard
            skipped.append(SkippedFile(old.source_uri, f"dropped from the shard: {e}"))
            continue
        if kept is not None:
            built.append(kept[0])
            relations.extend(kept[1])


def _sort_relations(built: list[BuiltDocument], relations: list[tuple[str, Relation]]) -> None:
    """Relations in the order of the documents (``built``, sorted) whose chunks hold them."""
    order = {d.source_uri: i for i, d in enumerate(built)}
    chunk_owner = {c.hash: d.source_uri for d in built for c in d.chunks}
    relations.sort(key=lambda hr: (order[chunk_owner[hr[0]]], hr[1].kind, hr[1].a, hr[1].b))


def ingest(
    paths: Iterable[Path | str],
    shard: str,
    role: str = DEFAULT_ROLE,
    *,
    shards_dir: Path,
    ledger: _LedgerLike | None = None,
    replace: bool = False,
    max_file_bytes: int = MAX_FILE_BYTES,
    lock_timeout: float = LOCK_TIMEOUT_S,
    prune: bool = False,
    progress: Callable[[IngestProgress], None] | None = None,
) -> IngestReport:
    """Ingest ``paths`` into shard ``shard`` under ``shards_dir``; see the module doc.

    The named files are read and built before the shard lock is taken (that work does
    not depend on the shard), so a concurrent ingest waits only for the rebuild and swap.
    ``prune`` also drops the shard's documents whose files no longer exist (``paths``
    may then be empty). ``progress`` is called after each file is read and built.
    """
    validate_shard_name(shard)
    if not _ROLE.match(role):
        raise InputError(
            f"role {role!r} is not allowed: use a lower-case word such as primary, "
            "secondary or commentary"
        )
    given = list(paths)
    path_list = check_paths(given) if given or not prune else []
    skipped: list[SkippedFile] = []
    notes: list[SkippedFile] = []
    sources, built, relations, ingested = read_and_build(
        path_list, role, skipped, notes, max_file_bytes, progress
    )
    if not built and given:
        raise _nothing_ingested(shard, skipped)
    target = shard_path(shards_dir, shard)
    pruned: list[str] = []
    with shard_lock(target, timeout=lock_timeout):
        stale = remove_stale_temps(target)
        if not given and not target.exists():
            raise CorpusError(f"no shard named {shard!r} in {shards_dir}: nothing to prune")
        previous_root, stored = _previous(target, replace=replace)
        if not replace:
            _keep_stored(stored, sources, prune, built, relations, skipped, pruned)
        if not built:
            raise CorpusError(
                f"shard {shard!r} would be left empty: the files of all its "
                f"{len(pruned)} document(s) are gone; delete it with "
                f"`aborist delete-shard {shard}`"
            )
        built.sort(key=lambda d: d.source_uri)
        _sort_relations(built, relations)

        pending = build_shard(
            target,
            name=shard,
            documents=built,
            relations=relations,
            canonicalization_version=CANONICALIZATION_VERSION,
            chunking_version=CHUNKING_VERSION,
        )
        try:
            report = IngestReport(
                shard=shard, path=target, source_root=pending.source_root,
                previous_root=previous_root, canonicalization_version=CANONICALIZATION_VERSION,
                chunking_version=CHUNKING_VERSION, role=role, documents=_documents(built),
                ingested=tuple(sorted(ingested)), skipped=tuple(skipped), notes=tuple(notes),
                pruned=tuple(pruned), stale_temps_removed=len(stale), concepts=pending.concepts,
                n_chunks=sum(len(d.chunks) for d in built),
                chunk_hashes=tuple(c.hash for d in built for c in d.chunks),
            )  # fmt: skip
            if ledger is not None:
                record_ingest(ledger, report)
            pending.commit()
        except BaseException:
            pending.discard()
            raise
    return report

"""Each run's corpus bound to the ledger (docs/replay.md, "corpus"; docs/corpus.md).

A run names the shards it read and their source roots in ``qa.cache_checked``
(``shards: {name: source_root}``). Two things are checked, from the ledger alone:

1. *Recorded.* Each root was recorded by a ``corpus.shard_ingested`` event before the run
   (lower ``seq``). A root nothing recorded is a divergence, unless the run's own
   ``qa.cache_checked`` lists the shard under ``unrecorded_shards`` (the caller passed
   ``--allow-unrecorded-shards``): then the run is flagged "corpus not recorded", which is
   not tampering but means no ingest vouches for its evidence.
2. *Included* (``--deep``). Every evidence chunk's hash is a leaf of the source root of the
   shard it came from (the shard its selected retrieval candidate names): an RFC 9162
   inclusion proof built from the chunk-hash list the ingest stored as a blob
   (``chunk_hashes_blob``) verifies against the recorded root. The list itself must be
   the blob its hash names and hash to that root, or the ingest event diverges. An ingest
   recorded before chunk lists were kept cannot prove anything: its chunks are listed as
   not re-executed, not as divergences.

The shard files are never opened: a shard edited, replaced or deleted after the run changes
nothing here. The ingest events are read once per replay (one indexed query), and each
chunk list is fetched and its tree built once, then shared by every run that names it.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from aborist.audit.checks.evidence_link import EVIDENCE_EVENTS
from aborist.audit.checks.run_events import RunEvents, parse_payload
from aborist.audit.checks.type_versions import unread_version
from aborist.audit.findings import CorpusNotRecorded, Divergence, NotReexecuted, ReplayReport, clip
from aborist.corpus.chunk_list import ChunkTree, decode_chunk_hashes
from aborist.events import CacheChecked, RetrievalCompleted
from ledger.envelope import RecordedEvent
from ledger.errors import LedgerError
from ledger.store import Ledger

__all__ = ["INGEST_EVENT", "CorpusRecords", "check_corpus"]

INGEST_EVENT = "corpus.shard_ingested"
KIND = "corpus"


@dataclass(frozen=True, slots=True)
class IngestRecord:
    seq: int
    shard: str
    source_root: str
    chunk_hashes_blob: str | None
    #: sha256 of the payload this record was read from (to hold it to the chain's read).
    digest: str = ""


_HEX64 = re.compile(r"[0-9a-f]{64}")


def _is_hex64(value: object) -> bool:
    return isinstance(value, str) and _HEX64.fullmatch(value) is not None


class CorpusRecords:
    """The ingest events of a ledger up to ``head`` by source root, and their chunk trees."""

    def __init__(
        self, ledger: Ledger, head: int, since: int = 0, *, bound_to_pass: bool = False
    ) -> None:
        self.ledger = ledger
        self.head = head
        self._by_root: dict[str, list[IngestRecord]] | None = None
        self._trees: dict[int, ChunkTree | str] = {}  # ingest seq -> tree, or why not
        self._reported: set[int] = set()
        #: ``bound_to_pass``: the caller (replay) notes each ingest event its pass read
        #: (:meth:`note`, by payload digest), and a record binds a run only if it was read
        #: from that very payload. The ingests up to ``since`` are not in the pass
        #: (``--since``), and are taken as read.
        self.bound = bound_to_pass
        self.since = since
        self.seen: dict[int, str] = {}

    def note(self, ev: RecordedEvent, digest: str | None = None) -> None:
        """An ingest event as the replay's pass (the rows the chain checks) read it."""
        if digest is None:
            digest = hashlib.sha256(ev.payload.encode("utf-8", "surrogatepass")).hexdigest()
        self.seen[ev.seq] = digest

    def read_in_pass(self, record: IngestRecord) -> bool:
        if not self.bound or record.seq <= self.since:
            return True
        return self.seen.get(record.seq) == record.digest

    def by_root(self) -> dict[str, list[IngestRecord]]:
        if self._by_root is None:
            found: dict[str, list[IngestRecord]] = {}
            for ev in self.ledger.read(lte=self.head, types=[INGEST_EVENT]):
                if unread_version(ev) is not None:
                    continue  # a version this code does not read: no record (an envelope finding)
                try:
                    data = parse_payload(ev.payload)
                except (ValueError, RecursionError):
                    continue  # the chain and blob checks report a payload that is not JSON
                if not isinstance(data, dict) or not _is_hex64(data.get("source_root")):
                    continue
                blob = data.get("chunk_hashes_blob")
                shard = data.get("shard")
                digest = hashlib.sha256(ev.payload.encode("utf-8", "surrogatepass")).hexdigest()
                found.setdefault(data["source_root"], []).append(
                    IngestRecord(ev.seq, shard if isinstance(shard, str) else "?",
                                 data["source_root"], blob if _is_hex64(blob) else None,
                                 digest)
                )  # fmt: skip
            self._by_root = found
        return self._by_root

    def before(self, root: str, seq: int, *, read: bool = True) -> list[IngestRecord]:
        """The ingests recording ``root`` before ``seq``, latest first: those the replay's
        pass read as they are (``read=False``: those it did not, the database's answer to
        another read only)."""
        return sorted(
            (
                r
                for r in self.by_root().get(root, ())
                if r.seq < seq and self.read_in_pass(r) is read
            ),
            key=lambda r: -r.seq,
        )

    def tree(self, record: IngestRecord, report: ReplayReport) -> ChunkTree | None:
        """The chunk tree of ``record``'s list; None (and one divergence at the ingest
        event, reported once) when the list is missing, malformed or of another root."""
        assert record.chunk_hashes_blob is not None
        known = self._trees.get(record.seq)
        if known is None:
            known = self._trees[record.seq] = self._build(record)
        if isinstance(known, ChunkTree):
            return known
        if record.seq not in self._reported:
            self._reported.add(record.seq)
            report.diverge(
                Divergence(KIND, record.seq, None, "ingest",
                           f"the chunk-hash list of source root {record.source_root}",
                           known, f"corpus.shard_ingested of shard {clip(record.shard)}")
            )  # fmt: skip
        return None

    def _build(self, record: IngestRecord) -> ChunkTree | str:
        h = record.chunk_hashes_blob
        assert h is not None
        try:
            data = self.ledger.get_blobs([h])[h]
        except LedgerError as e:
            return clip(f"no chunk-hash list: {e}")
        if hashlib.sha256(data).hexdigest() != h:
            return f"a blob under {h} that does not hash to it"
        leaves = decode_chunk_hashes(data)
        if leaves is None:
            return f"a blob of {len(data)} bytes, not a list of 32-byte hashes"
        tree = ChunkTree(leaves)
        if tree.root.hex() != record.source_root:
            return f"a list of {tree.size} chunk hashes with root {tree.root.hex()}"
        return tree


def _selected_shards(payload: Any) -> list[Any] | None:
    """The ``shard`` of each selected candidate of a ``qa.retrieval_completed`` payload."""
    retrieval = payload.get("retrieval") if isinstance(payload, dict) else None
    candidates = retrieval.get("candidates") if isinstance(retrieval, dict) else None
    if not isinstance(candidates, list):
        return None
    return [
        c.get("shard")
        for c in candidates
        if isinstance(c, dict) and c.get("decision") == "selected"
    ]


def _shards_of(payload: Any) -> tuple[dict[str, str], list[str]] | None:
    if not isinstance(payload, dict):
        return None
    shards = payload.get("shards")
    allowed = payload.get("unrecorded_shards", [])
    if not isinstance(shards, dict) or not isinstance(allowed, list):
        return None
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in shards.items()):
        return None
    return shards, [a for a in allowed if isinstance(a, str)]


def check_corpus(run: RunEvents, corpus: CorpusRecords, report: ReplayReport, *,
                 deep: bool) -> None:  # fmt: skip
    """Checks 1 and (with ``deep``) 2 of the module doc for ``run``, into ``report``."""
    checked = run.last(CacheChecked.TYPE)
    if checked is None:
        return  # the run ended before it chose a corpus: it read none
    rid = run.run_id
    named = _shards_of(run.data(checked))
    if named is None:
        report.diverge(Divergence(KIND, checked.seq, rid, "cache",
                                  "shards {name: source_root} as the pipeline records them",
                                  "another shape", CacheChecked.TYPE))  # fmt: skip
        return
    shards, allowed = named
    bound: dict[str, IngestRecord | None] = {}  # name -> the ingest to prove against
    for name, root in sorted(shards.items()):
        records = corpus.before(root, checked.seq)
        if records:
            bound[name] = next((r for r in records if r.chunk_hashes_blob), records[0])
        elif name in allowed:
            report.unrecorded(CorpusNotRecorded(checked.seq, rid, name, root))
            bound[name] = None
        else:
            later = [r.seq for r in corpus.by_root().get(root, ()) if r.seq > checked.seq]
            unread = corpus.before(root, checked.seq, read=False)
            found = (
                f"an ingest at seq {unread[-1].seq} the chain did not read (the database "
                "answered another read with it)"
                if unread
                else f"first recorded at seq {min(later)}, after the run"
                if later
                else "none"
            )
            report.diverge(Divergence(
                KIND, checked.seq, rid, "cache",
                f"a corpus.shard_ingested recording source root {root} before seq "
                f"{checked.seq}", found,
                f"shard {clip(name)}: not recorded, and {CacheChecked.TYPE} does not list it "
                "under unrecorded_shards"))  # fmt: skip
    if len(bound) == len(shards) and all(r is not None for r in bound.values()):
        report.corpus_runs += 1
    if deep:
        _check_inclusion(run, shards, bound, corpus, report)


def _pointer(record: dict[str, Any], i: int) -> str:
    return clip(record.get("pointer_id", f"#{i + 1}"))


def _evidence_event(run: RunEvents) -> Any:
    for type_ in EVIDENCE_EVENTS:
        ev = run.last(type_)
        if ev is not None:
            return ev
    return None


def _check_inclusion(
    run: RunEvents,
    shards: dict[str, str],
    bound: dict[str, IngestRecord | None],
    corpus: CorpusRecords,
    report: ReplayReport,
) -> None:
    retrieval = run.last(RetrievalCompleted.TYPE)
    evidence = _evidence_event(run)
    if retrieval is None or evidence is None:
        return  # a cache hit, or a run that stopped before its evidence: no chunk to prove
    rid = run.run_id
    stage = EVIDENCE_EVENTS[evidence.type]
    from_shards = _selected_shards(run.data(retrieval)) or []
    payload = run.data(evidence)
    items: Sequence[Any] = payload.get("evidence", []) if isinstance(payload, dict) else []
    if not isinstance(items, list):
        return  # the evidence link reports a list that is not one
    only = next(iter(shards)) if len(shards) == 1 else None
    legacy: dict[str, int] = {}  # shard -> seq of its ingest without a chunk list
    for i, item in enumerate(items):
        record = item if isinstance(item, dict) else {}
        chunk = record.get("evidence_hash")
        name = from_shards[i] if i < len(from_shards) else None
        if not isinstance(name, str) or name not in shards:  # ask: the document names it
            name = only
        if name is None:
            report.diverge(Divergence(
                KIND, evidence.seq, rid, stage, f"a chunk of a shard {CacheChecked.TYPE} names",
                clip(from_shards[i] if i < len(from_shards) else None),
                f"evidence {_pointer(record, i)}"))  # fmt: skip
            continue
        ingest = bound.get(name)
        if ingest is None:
            continue  # unrecorded (flagged above, or a divergence): no list to prove from
        if ingest.chunk_hashes_blob is None:
            legacy[name] = ingest.seq
            continue
        tree = corpus.tree(ingest, report)
        if tree is None:
            continue
        root = shards[name]
        index = None
        if isinstance(chunk, str) and _is_hex64(chunk):
            index = tree.proves(bytes.fromhex(chunk), bytes.fromhex(root))
        if index is None:
            report.diverge(Divergence(
                KIND, evidence.seq, rid, stage, f"a leaf of source root {root}", clip(chunk),
                f"evidence {_pointer(record, i)}: no inclusion proof in the chunk-hash list "
                f"of shard {clip(name)} recorded at seq {ingest.seq}"))  # fmt: skip
        else:
            report.corpus_chunks += 1
    for name, seq in sorted(legacy.items()):
        report.skip(NotReexecuted(
            rid, "corpus", f"shard {clip(name)} was ingested (seq {seq}) before chunk-hash "
            "lists were recorded: re-ingest it to prove its chunks"))  # fmt: skip

"""The blobs a run references, and the check that each exists and hashes to its address
(docs/ledger-format.md, "Blobs": a run stays replayable only while its blobs are intact).

A blob is content-addressed, so its hash *is* its name: bytes that no longer hash to the
name were changed after the fact, and a name with no bytes was deleted. A row that holds
a value of another type (SQLite keeps the TEXT an ``UPDATE ... CAST(bytes AS TEXT)``
writes, once the triggers are dropped) was altered too, and is reported as such ("stored
as TEXT, not bytes") rather than hashed through a conversion or failed on.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from aborist.audit.checks.run_events import RunEvents
from aborist.audit.findings import Divergence, ReplayReport
from aborist.events import (
    EVIDENCE_STAGE,
    AnswerRepaired,
    AnswerVerified,
    ModelAnswered,
    PromptBuilt,
    RepromptAttempted,
)
from ledger.canonical import sha256_hex
from ledger.envelope import RecordedEvent
from ledger.errors import BlobNotFoundError
from ledger.store import Ledger, stored_type

__all__ = [
    "BLOB_FIELDS",
    "EVIDENCE_STAGE",  # aborist.events' one table, re-exported for the audit's readers
    "BlobCache",
    "BlobRef",
    "BlobSource",
    "check_blob",
    "check_blobs",
    "read_blobs",
    "referenced_blobs",
]

#: Bytes :class:`BlobCache` keeps between batches before it starts afresh.
CACHE_BUDGET = 64 * 1024 * 1024

#: Payload fields that hold a blob address, per event type: (stage, field).
BLOB_FIELDS: dict[str, tuple[tuple[str, str], ...]] = {
    PromptBuilt.TYPE: (("prompt", "prompt_blob"),),
    ModelAnswered.TYPE: (("raw_answer", "raw_answer_blob"),),
    AnswerVerified.TYPE: (("verify", "answer_blob"),),
    AnswerRepaired.TYPE: (
        ("repair", "original_answer_blob"),
        ("repair", "repaired_answer_blob"),
    ),
    RepromptAttempted.TYPE: (("repair", "prompt_blob"), ("repair", "raw_answer_blob")),
}


class BlobSource(Protocol):
    """Where blob bytes come from: a :class:`~ledger.store.Ledger`, or an export bundle's
    blobs read with no database (:mod:`aborist.audit.bundle`). ``get_blob`` raises
    :class:`~ledger.errors.BlobNotFoundError` for an unknown address."""

    def get_blob(self, blob_hash: str) -> bytes: ...


@dataclass(frozen=True, slots=True)
class BlobRef:
    """One reference to a blob: which run's which event (and stage) names it."""

    blob: str
    seq: int
    run: str
    stage: str


def _payload(ev: RecordedEvent) -> dict[str, Any]:
    return ev.data


def referenced_blobs(
    run_id: str,
    events: Iterable[RecordedEvent],
    data: Callable[[RecordedEvent], Any] | None = None,
) -> list[BlobRef]:
    """Every blob address in ``run_id``'s events, in event order. ``data`` parses a
    payload (a caller that already parsed them passes its cache; a
    :class:`~aborist.audit.checks.run_events.RunEvents` brings its own)."""
    if data is None and isinstance(events, RunEvents) and events.run_id == run_id:
        if events.blob_refs is None:
            events.blob_refs = _references(run_id, events, events.data)
        return list(events.blob_refs)
    return _references(run_id, events, data or _payload)


def _references(
    run_id: str, events: Iterable[RecordedEvent], data: Callable[[RecordedEvent], Any]
) -> list[BlobRef]:
    refs: list[BlobRef] = []
    for ev in events:
        if ev.type not in EVIDENCE_STAGE and ev.type not in BLOB_FIELDS:
            continue
        payload = data(ev)
        if not isinstance(payload, dict):  # a JSON value but no object: names no blob
            continue
        if ev.type in EVIDENCE_STAGE:
            items = payload.get("evidence")
            for item in items if isinstance(items, list) else []:
                if isinstance(item, dict) and isinstance(item.get("text_blob"), str):
                    refs.append(BlobRef(item["text_blob"], ev.seq, run_id, EVIDENCE_STAGE[ev.type]))
        for stage, name in BLOB_FIELDS.get(ev.type, ()):
            value = payload.get(name)
            if isinstance(value, str):
                refs.append(BlobRef(value, ev.seq, run_id, stage))
    return refs


def read_blobs(ledger: Ledger, hashes: Iterable[str]) -> dict[str, bytes | str]:
    """The blobs of ``hashes`` that exist; a row holding no bytes maps to the SQL type it
    holds (:meth:`ledger.reads.LedgerReads.read_blobs`)."""
    return ledger.read_blobs(list(hashes))


class BlobCache:
    """A :class:`BlobSource` over a ledger that reads blobs in bulk: replay calls
    :meth:`prefetch` with every address a batch of runs references (one query per few
    hundred distinct blobs instead of one per run), then the runs read from memory.

    It also remembers which of the bytes it holds :func:`check_blob` found to hash to
    their address (:attr:`hashed`): a blob referenced by a thousand runs is read and
    hashed once per replay, not once per run, and every reference to it is still checked
    against that result. Bytes that hash elsewhere are never remembered, so each run that
    references them is reported. A blob absent from the table stays absent
    (:class:`~ledger.errors.BlobNotFoundError`), and so does one whose row holds no bytes
    (:attr:`mistyped`). Past :data:`CACHE_BUDGET` bytes the cache (bytes and hashes)
    starts afresh at the next prefetch, so memory stays bounded."""

    def __init__(self, ledger: Ledger, budget: int = CACHE_BUDGET) -> None:
        self.ledger = ledger
        self.budget = budget
        self.blobs: dict[str, bytes] = {}
        self.missing: set[str] = set()
        #: Addresses whose row holds another SQL type than bytes, with that type.
        self.mistyped: dict[str, str] = {}
        #: Addresses whose bytes (as held in :attr:`blobs`) hash to the address.
        self.hashed: set[str] = set()
        self.size = 0

    def prefetch(self, hashes: Iterable[str]) -> None:
        if self.size > self.budget:
            self.blobs.clear()
            self.missing.clear()
            self.mistyped.clear()
            self.hashed.clear()
            self.size = 0
        wanted = [h for h in dict.fromkeys(hashes) if h not in self.blobs]
        if not wanted:
            return
        found = read_blobs(self.ledger, wanted)
        for h in wanted:
            data = found.get(h)
            if data is None:
                self.missing.add(h)
            elif isinstance(data, str):
                self.mistyped[h] = data
            else:
                self.blobs[h] = data
                self.size += len(data)

    def get_blob(self, blob_hash: str) -> bytes:
        data = self.blobs.get(blob_hash)
        if data is not None:
            return data
        if blob_hash in self.missing:
            raise BlobNotFoundError(f"no blob with hash {blob_hash}")
        kind = self.mistyped.get(blob_hash)
        if kind is not None:
            raise BlobNotFoundError(_mistyped(blob_hash, kind))
        self.prefetch([blob_hash])  # one read, typed: a row of another type is named
        return self.get_blob(blob_hash)


def _divergence(ref: BlobRef, found: str, detail: str) -> Divergence:
    return Divergence("blob", ref.seq, ref.run, ref.stage, ref.blob, found, detail)


def _mistyped(blob: str, kind: str) -> str:
    return f"blob {blob} is stored as {kind}, not bytes"


def check_blob(source: BlobSource, ref: BlobRef) -> tuple[bytes | None, Divergence | None]:
    """Fetch ``ref``'s bytes; a divergence if they are missing, stored as another type
    than bytes, or hash elsewhere. From a :class:`BlobCache`, bytes it already found to
    hash to their address are not hashed again (the cache holds those very bytes). A
    :class:`~ledger.store.Ledger` is read through a cache of one blob, whose typed read
    tells a row of another type from a missing one."""
    if isinstance(source, Ledger):
        source = BlobCache(source)
        source.prefetch([ref.blob])
    try:
        data = source.get_blob(ref.blob)
    except BlobNotFoundError:
        kind = source.mistyped.get(ref.blob) if isinstance(source, BlobCache) else None
        if kind is not None:
            return None, _divergence(ref, kind, _mistyped(ref.blob, kind))
        return None, _divergence(ref, "no blob", f"blob {ref.blob} is missing")
    cache = source if isinstance(source, BlobCache) else None
    if cache is not None and ref.blob in cache.hashed:
        return data, None
    actual = sha256_hex(data)
    if actual != ref.blob:
        return None, _divergence(ref, actual, f"blob {ref.blob} bytes hash elsewhere")
    if cache is not None and cache.blobs.get(ref.blob) is data:
        cache.hashed.add(ref.blob)
    return data, None


def check_blobs(
    ledger: Ledger, refs: Sequence[BlobRef], report: ReplayReport, *, scan_all: bool
) -> set[str]:
    """Check every referenced blob; with ``scan_all`` also every other blob (one pass over
    the table instead of one query per blob). Returns the addresses that failed."""
    first: dict[str, BlobRef] = {}
    for ref in refs:
        first.setdefault(ref.blob, ref)
    bad: set[str] = set()
    if scan_all:
        seen: set[str] = set()
        for stored, data in ledger.iter_blobs():
            seen.add(stored)
            report.blobs_checked += 1
            kind = stored_type(data)
            actual = sha256_hex(data) if isinstance(data, bytes) else str(kind)
            if actual != stored:
                bad.add(stored)
                why = (f"blob {stored} bytes hash elsewhere" if kind is None
                       else _mistyped(stored, str(kind)))  # fmt: skip
                owner = first.get(stored)
                if owner is None:
                    report.diverge(Divergence("blob", None, None, None, stored, actual, why))
                else:
                    report.diverge(_divergence(owner, actual, why))
        for blob, ref in first.items():
            if blob not in seen:
                bad.add(blob)
                report.diverge(_divergence(ref, "no blob", f"blob {blob} is missing"))
        return bad
    for ref in first.values():
        report.blobs_checked += 1
        _, failure = check_blob(ledger, ref)
        if failure is not None:
            bad.add(ref.blob)
            report.diverge(failure)
    return bad

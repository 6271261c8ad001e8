"""``aborist-ledger replay``: confirm every transition from the ledger's own bytes
(docs/replay.md).

Every row is read once, in ``seq`` order and in pages, and its payload hashed once; each
page then feeds four checks:

1. the chain (:class:`ledger.chain.ChainVerifier`: payload hashes, event hashes,
   ``prev_hash`` links, gapless ``seq`` and stream positions); with ``since`` the suffix
   after that seq is checked, linked to the hash of the event at ``since``; recorded
   checkpoints, and a checkpoint the auditor kept (``checkpoint=``), are checked with a
   consistency proof from their size to the current head (:mod:`aborist.audit.checks.checkpoints`);
2. each run's DAG (:mod:`aborist.audit.checks.dags`), as soon as the run's last event passes,
   from the payload digests the chain computed;
3. with ``deep``, each run's deterministic stages re-executed (:mod:`aborist.audit.deep`),
   a batch of finished runs at a time so that their blobs are read in one query, in this
   process or in a forked worker (:mod:`aborist.audit.deep_batches`);
4. the projections, folded page by page into a scratch database and compared row for row
   with the live tables (:mod:`aborist.audit.checks.projections_check`).

Checks 1 and 4, with the envelope check, can run on a pass of their own in a forked
process (:mod:`aborist.audit.checks.ledger_pass`) while this one checks the runs.

A run's payloads are parsed once (:class:`~aborist.audit.checks.run_events.RunEvents`) and shared
by the DAG, blob and deep checks. Blobs are checked too (:mod:`aborist.audit.checks.blobs`):
every blob when the whole ledger is replayed, the blobs of the runs in scope otherwise.

Each run is read through its history (:class:`~aborist.pipeline.history.RunHistory`): the
first event that breaks the run grammar is a ``history`` divergence, and the checks read
the events before it. Runs are checked as they complete and then forgotten, so memory
stays flat however long the ledger is; only each run's id (so that events appended after
its end are checked against the grammar and the run is never counted twice), its
recomputed root and its cache entry are kept, to check the cache hits served from it. Of
each kind of divergence the report keeps the one with the lowest ``seq``
(:meth:`~aborist.audit.findings.ReplayReport.diverge`), whatever order the checks ran in.
"""

from __future__ import annotations

import gc
import multiprocessing
from collections.abc import Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from hashlib import sha256
from typing import Any

from aborist.audit.checks.blobs import (
    BLOB_FIELDS,
    EVIDENCE_STAGE,
    BlobCache,
    BlobRef,
    check_blobs,
    referenced_blobs,
)
from aborist.audit.checks.cache_binding import (
    CacheEntry,
    HitClaim,
    cache_entry,
    check_cache_binding,
    check_hit,
    hit_claim,
)
from aborist.audit.checks.checkpoints import check_checkpoints, parse_checkpoint
from aborist.audit.checks.corpus_binding import INGEST_EVENT, CorpusRecords, check_corpus
from aborist.audit.checks.dags import TERMINAL_EVENTS, check_run, history_divergence
from aborist.audit.checks.evidence_link import LINK_EVENT_TYPES, run_evidence_link
from aborist.audit.checks.ledger_pass import RUN_PREFIX
from aborist.audit.checks.ledger_pass import check_envelopes as _envelope
from aborist.audit.checks.ledger_pass import ledger_wide as _ledger_wide
from aborist.audit.checks.ledger_pass import ledger_wide_forked as _ledger_wide_forked
from aborist.audit.checks.projections_check import ProjectionCheck, read_live
from aborist.audit.checks.run_events import RunEvents, payload_problem
from aborist.audit.checks.tiles_check import check_tiles
from aborist.audit.checks.type_versions import READ_VERSIONS, version_divergence
from aborist.audit.deep import EvidenceMemo
from aborist.audit.deep_batches import SHAPE_ERRORS, DeepBatches, DeepWorker, unreadable_run
from aborist.audit.findings import KINDS, Divergence, ReplayReport, clip
from aborist.audit.forked import Forked, can_fork
from aborist.errors import InputError
from aborist.events import (
    AnswerLabelled,
    AnswerRendered,
    CacheChecked,
    CacheWritten,
    RunCompleted,
    RunStarted,
    run_stream,
)
from aborist.pipeline.history import RunHistory
from ledger.chain import ChainReport, ChainVerifier
from ledger.envelope import GENESIS_HASH, RecordedEvent
from ledger.envelope_check import EnvelopeCheck
from ledger.errors import ProofError
from ledger.store import Ledger
from ledger.tlog.tiles import TILE_WIDTH
from ledger.verify import off_chain_failure

__all__ = ["chain_and_dags", "parse_checkpoint", "replay"]

_RUN_PREFIX = RUN_PREFIX
_SHAPE_ERRORS = SHAPE_ERRORS
#: From this many events on, the chain and projection checks run in a second process.
FORK_MIN_EVENTS = 20_000
#: Finished runs re-executed together under ``--deep`` (their blobs read in one go; with a
#: worker process, the unit of work shared between it and the replay's process).
_DEEP_BATCH = 250
#: Payloads a check parses anyway: the DAG's and the run grammar's, those naming blobs
#: (when blobs are checked), the rendering's and the retrieval record (``--deep`` reads
#: the version of the one and links the other to the evidence). The others are only
#: validated as JSON objects.
_PARSED_DAG = frozenset(
    {RunStarted.TYPE, CacheChecked.TYPE, AnswerLabelled.TYPE, CacheWritten.TYPE,
     RunCompleted.TYPE}
)  # fmt: skip
_PARSED_BLOBS = _PARSED_DAG | set(BLOB_FIELDS) | set(EVIDENCE_STAGE)
_PARSED_DEEP = _PARSED_BLOBS | {AnswerRendered.TYPE} | LINK_EVENT_TYPES


def _fork_pays(events: int, parallel: bool | None) -> bool:
    """Whether checks 1 and 4 run in a forked process, alongside the run checks in this
    one (and, under ``--deep``, a second forked process shares the re-execution).
    ``parallel`` decides when given; by default, on a ledger of :data:`FORK_MIN_EVENTS`
    events or more when this process can fork and may use two CPUs (below that size,
    starting the processes costs more than the work they take over). Either way the report
    is the same (``tests/audit/test_replay_parallel.py``)."""
    if parallel is not None:
        return parallel and "fork" in multiprocessing.get_all_start_methods()
    return events >= FORK_MIN_EVENTS and can_fork()


def _deep_worker(ledger: Ledger, head: tuple[int, str]) -> DeepWorker | None:
    """A forked process for ``--deep`` batches (None if it cannot be started: the replay
    then re-executes every batch itself)."""
    try:
        return DeepWorker(ledger.engine.url, head)
    except Exception:
        return None


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector for the replay, and restore it after.

    A replay allocates millions of short-lived objects (parsed payloads, rows) that form no
    reference cycles, so reference counting frees them all; the collector would only
    rescan the live heap again and again as they pass (a fifth of a replay's time on a
    10,000-run ledger, ``bench/replay.py``). Whatever cyclic garbage a replay leaves (a
    few hundred objects) is collected once the collector runs again."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


class _Replay:
    def __init__(
        self, ledger: Ledger, run_id: str | None, since: int, deep: bool,
        checkpoint: tuple[int, str] | None, *, projections: bool = True, blobs: bool = True,
        parallel: bool | None = None, tiles: bool = True,
    ) -> None:  # fmt: skip
        self.ledger = ledger
        self.tiles = tiles and since == 0  # the stored tiles, re-derived from event 1
        self.run_id = run_id
        self.since = since
        self.deep = deep
        self.checkpoint = checkpoint
        self.projections = projections
        self.blobs = blobs
        self.parallel = parallel
        self.full = run_id is None and since == 0
        self.report = ReplayReport(
            scope={"run": run_id, "since": since, "deep": deep,
                   "checkpoint": checkpoint[0] if checkpoint else None}
        )  # fmt: skip
        self.pending: dict[str, RunEvents] = {}
        self.roots: dict[str, str] = {}
        self.served: list[tuple[str, int, str, str]] = []
        #: Runs already checked and counted: events of theirs that come later (after the
        #: terminal event) are checked against the run grammar only, and never counted as
        #: another run.
        self.done: set[str] = set()
        #: Each caching run's cache entry, and every hit's claim of what it served.
        self.entries: dict[str, CacheEntry] = {}
        self.hits: list[HitClaim] = []
        self.refs: list[BlobRef] = []
        self.batch: list[tuple[RunEvents, str]] = []  # (run, status) awaiting --deep
        #: Where the run checks report: the replay's report, or under ``--deep`` the part
        #: of the batch being gathered (merged before that batch's deep findings).
        self.sink = ReplayReport() if deep else self.report
        self.parse = _PARSED_DEEP if deep else _PARSED_BLOBS if blobs else _PARSED_DAG
        self.deep_batches = DeepBatches(self.report, BlobCache(ledger), EvidenceMemo())
        self.envelope = EnvelopeCheck()
        #: The recorded checkpoints, read before the head: a checkpoint a writer records
        #: while replay runs is not in this list, so one past the head read next is a
        #: truncation, never a checkpoint of later appends.
        self.checkpoints = ledger.checkpoints()
        self.head, self.live_tables, self.live = read_live(ledger, run_id)
        #: Each run's corpus against the ingests (:mod:`aborist.audit.checks.corpus_binding`),
        #: in every replay but the bench's bare chain-and-DAG pass.
        self.corpus = (
            CorpusRecords(ledger, self.head[0], since, bound_to_pass=True)
            if deep or blobs
            else None
        )

    # -- the pass ------------------------------------------------------------------------

    def check_pages(
        self, chain: ChainVerifier | None, head: int, projection: ProjectionCheck | None
    ) -> None:
        """One pass over the events in scope: every run as its stream ends, and the
        chain and the projection fold when they run in this process (``chain`` and
        ``projection`` given); their payload digests are then computed once for both."""
        pending, scope = self.pending, self.run_id
        for page in self.ledger.event_pages(gt=self.since, lte=head):
            finished: list[RunEvents] = []
            digests: Sequence[str | None] = [None] * len(page)
            parsed: Sequence[Any] = digests
            if chain is not None:
                hashed = [sha256(ev.payload.encode("utf-8")).hexdigest() for ev in page]
                chain.check_page(page, hashed)  # a no-op past the first failure
                parsed = _envelope(self.envelope, page, self.report, self.parse)
                digests = hashed
            for ev, digest, data in zip(page, digests, parsed, strict=True):
                stream = ev.stream
                if ev.type_version != READ_VERSIONS.get(ev.type, ev.type_version):
                    self.version_finding(ev)
                if not stream.startswith(_RUN_PREFIX):
                    if ev.type == INGEST_EVENT and self.corpus is not None:
                        self.corpus.note(ev, digest)  # what binds runs is what this read
                    continue
                rid = stream[4:]
                if scope is not None and rid != scope:
                    continue
                run = pending.get(rid)
                if run is None:
                    run = pending[rid] = RunEvents(rid)
                run.append(ev, digest, data)
                if ev.type in TERMINAL_EVENTS:
                    finished.append(pending.pop(rid))
            if projection is not None:
                projection.fold(page)
            for run in finished:
                self._finish(run)
                if len(self.batch) >= _DEEP_BATCH:
                    self._deep_batch()

    def version_finding(self, ev: RecordedEvent) -> None:
        """An event recorded under a ``type_version`` this code does not read
        (:mod:`aborist.audit.checks.type_versions`), as an ``envelope`` divergence."""
        run = ev.stream[4:] if ev.stream.startswith(_RUN_PREFIX) else None
        found = version_divergence(ev, run)
        if found is not None:
            self.report.diverge(found)

    def _finish(self, run: RunEvents) -> None:
        rid = run.run_id
        if run[0].stream_seq != 1:  # begun before --since, or after its end: read it all
            whole = RunEvents(rid, self.ledger.read_stream(run_stream(rid)))
            if rid in self.done:  # its history was checked: these events come after it
                history = RunHistory.read(rid, whole, whole.data)
                broke = history_divergence(history)
                if broke is not None:
                    self.sink.diverge(broke)
                return
            run = whole
        self.done.add(rid)
        try:
            status, run = self._check(run)
        except _SHAPE_ERRORS as e:  # a payload that is not what the pipeline records
            unreadable_run(self.sink, run, e)
            return
        if self.deep:
            self.batch.append((run, status))
        else:
            self.report.runs[status] = self.report.runs.get(status, 0) + 1

    def _check(self, run: RunEvents) -> tuple[str, RunEvents]:
        """The run's history and DAG (and its blob references); returns its status and
        its history's events, which the later checks read."""
        bad = run.unreadable(self.parse)
        if bad is not None:
            raise ValueError(
                f"the payload of seq {bad.seq} is refused: {payload_problem(bad.payload)}"
            )
        rid = run.run_id
        check = check_run(rid, run, self.live)
        assert check.run is not None
        run = check.run
        sink = self.sink
        if check.dag is not None:
            sink.dags_checked += 1
            sink.stages_checked += check.stages_checked
            self.roots[rid] = check.dag.root
        for d in check.divergences:
            sink.diverge(d)
        if self.deep:  # here, not in the worker: it is not sent the retrieval record
            for d in run_evidence_link(run):
                sink.diverge(d)
        if self.corpus is not None:
            check_corpus(run, self.corpus, sink, deep=self.deep)
        if check.served is not None:
            self.served.append((rid, *check.served))
        for d in check_cache_binding(run):
            sink.diverge(d)
        entry = cache_entry(run)
        if entry is not None:
            self.entries[rid] = entry
        claim = hit_claim(run)
        if claim is not None:
            self.hits.append(claim)
        if not self.deep and self.blobs:
            self.refs.extend(referenced_blobs(rid, run))
        return check.status, run

    def _deep_batch(self) -> None:
        """Re-execute the finished runs waiting in :attr:`batch`, in the order they
        finished (:mod:`aborist.audit.deep_batches`: here or in the worker)."""
        batch, self.batch = self.batch, []
        dag, self.sink = self.sink, ReplayReport()
        self.deep_batches.submit(batch, dag)

    # -- after the pass ------------------------------------------------------------------

    def check_served(self) -> None:
        """A cache hit's ``run_dag_root`` is the recomputed root of the run it served, and
        its claim is that run's cache entry. After a full pass every run was read with the
        chain, so one it did not give is none: reading it again would take the database's
        second answer (under ``--run`` / ``--since`` the run served may lie outside)."""
        for rid, seq, source, recorded in self.served:
            root = self.roots.get(source)
            if root is None and not self.full:  # a full pass read every run: none again
                events = self.ledger.read_stream(run_stream(source))
                try:
                    dag = check_run(source, events, None).dag if events else None
                except _SHAPE_ERRORS:
                    dag = None
                root = dag.root if dag is not None else None
            if root is None:
                self.report.diverge(Divergence("dag", seq, rid, "complete",
                                               f"a completed run {source} to serve from",
                                               "none", "served_from_run_id"))  # fmt: skip
            elif root != recorded:
                self.report.diverge(Divergence("dag", seq, rid, "complete", root, recorded,
                                               f"run_dag_root of served run {source}"))  # fmt: skip

        for claim in self.hits:
            source = claim.served_from
            if source in self.entries or self.full:  # a full pass read every run already
                entry: CacheEntry | None = self.entries.get(source)
            else:
                stream = RunEvents(source, self.ledger.read_stream(run_stream(source)))
                history = RunHistory.read(source, stream, stream.data)
                try:
                    entry = cache_entry(stream.prefix(len(history.accepted)))
                except _SHAPE_ERRORS:
                    entry = None
            for d in check_hit(claim, entry):
                self.report.diverge(d)

    def run(self) -> ReplayReport:
        with _collector_paused():
            return self._run()

    def _run(self) -> ReplayReport:
        report = self.report
        head_seq = self.head[0]
        if self.since > head_seq:
            raise InputError(f"--since {self.since} is past the last event ({head_seq})")
        prev = GENESIS_HASH
        if self.since > 0:
            before = self.ledger.read(gt=self.since - 1, lte=self.since)
            if not before:
                raise InputError(f"no event {self.since} to chain --since from; replay in full")
            prev = before[0].hash
            self.envelope.last_recorded_at = before[0].recorded_at
        live = self.live_tables if self.projections else None
        roots_at, seed = self.tree_sizes()
        every = TILE_WIDTH if self.tiles else 0  # the tile check's read is held to these
        wide = (self.since, prev, head_seq, self.run_id, live, self.full,
                self.envelope.last_recorded_at, roots_at, seed, every)  # fmt: skip
        with ExitStack() as stack:
            stack.callback(self.deep_batches.close)
            if _fork_pays(head_seq, self.parallel):
                if self.deep:
                    self.deep_batches.worker = _deep_worker(self.ledger, self.head)
                if self.deep_batches.worker is not None:
                    # The worker parses what it re-executes; here the payloads no run
                    # check reads are only validated (the same verdict either way).
                    self.parse = _PARSED_DAG | LINK_EVENT_TYPES
                forked = stack.enter_context(
                    Forked("replay ledger checks", _ledger_wide_forked, self.ledger.engine.url,
                           *wide)
                )  # fmt: skip
                self.check_pages(None, head_seq, None)
                self.finish_pending()
                try:
                    chain, part = forked.result()
                except Exception:  # the child could not do it (e.g. connect): do it here
                    chain, part = _ledger_wide(self.ledger, *wide)
            else:
                verifier = ChainVerifier(start_seq=self.since + 1, start_prev_hash=prev,
                                         roots_at=roots_at, roots_every=every,
                                         seed=seed)  # fmt: skip
                local = ProjectionCheck(self.run_id, live) if live is not None else None
                if local is not None:
                    stack.callback(local.scratch.close)
                    local.scratch.projection.memo = self.envelope.canonical
                self.check_pages(verifier, head_seq, local if self.full else None)
                self.finish_pending()
                chain, part = verifier.report, None
                if local is not None:
                    if not self.full:  # the pass saw part of the ledger; the fold needs all
                        for page in self.ledger.event_pages(lte=head_seq):
                            local.fold(page)
                    part = local.finish()
        if part is not None:
            report.absorb(part)
        self.chain_result(chain)
        self.check_event_ids()
        self.check_served()
        check_checkpoints(
            self.ledger, self.head[0], self.checkpoint, report, chain.roots, self.checkpoints,
            since=self.since,
        )  # fmt: skip
        if self.tiles:
            check_tiles(self.ledger, report, chain.roots)
        if not self.deep and self.blobs:
            check_blobs(self.ledger, self.refs, report, scan_all=self.full)
        ran = {
            # held only when one was confirmed: one held to the stored hashes alone is not
            "checkpoint": report.checkpoints_confirmed > 0 or "checkpoint" in report.divergences,
            "deep": self.deep,
            "corpus": self.corpus is not None,
            "blob": self.blobs,
            "projection": self.projections,
            "tile": report.tiles_checked > 0 or "tile" in report.divergences,
        }
        report.checks = {
            kind: "skipped" if not ran.get(kind, True) else
            "diverged" if report.first(kind) else "held"
            for kind in KINDS
        }  # fmt: skip
        return report

    def tree_sizes(self) -> tuple[frozenset[int], list[bytes]]:
        """The tree sizes whose roots the chain check folds from the hashes it verifies
        (every checkpoint's, recorded or given, and the head's), and the hashes of the
        events before ``--since`` it takes as given; none when there is no checkpoint to
        hold them against (:mod:`aborist.audit.checks.checkpoints`)."""
        sizes = {
            cp.tree_size
            for cp in self.checkpoints
            if type(cp.tree_size) is int and cp.tree_size >= 1  # others: named as malformed
        }
        if self.checkpoint is not None:
            sizes.add(self.checkpoint[0])
        if not sizes:
            return frozenset(), []
        try:
            seed = self.ledger.event_hashes(self.since) if self.since else []
        except ProofError:  # a hash that is not hex: the checkpoint check names it
            return frozenset(), []
        return frozenset(sizes | {self.head[0]}), seed

    def finish_pending(self) -> None:
        """The runs still open at the head (interrupted, or cut by ``--run``'s scope), and
        the last batch of ``--deep``."""
        for _, run in sorted(self.pending.items()):
            self._finish(run)
        self.pending.clear()
        if self.deep:
            if self.batch:
                self._deep_batch()
            self.deep_batches.finish()
            self.report.merge(self.sink)  # run checks after the last batch (none, so far)
            self.sink = self.report

    def check_event_ids(self) -> None:
        """Every event id held by one event only (the ``UNIQUE`` constraint an insider can
        drop): a repeat is an ``envelope`` divergence at the later holder's seq, in scope
        (after ``--since``), ``detail`` ``event_id``."""
        seqs = self.ledger.repeated_event_id(self.head[0], after=self.since)
        if not seqs:
            return
        later = [q for q in seqs[1:] if type(q) is int and q > self.since]
        if not later:
            return
        at = self.ledger.read(gt=later[0] - 1, lte=later[0])
        stream = at[0].stream if at else None
        run = stream[4:] if type(stream) is str and stream.startswith(_RUN_PREFIX) else None
        eid = clip(at[0].event_id) if at else "?"
        why = f"an event id no other event holds (seq {seqs[0]} holds {eid})"
        found = f"{len(seqs)} events hold it (seq {', '.join(map(str, seqs[:5]))})"
        self.report.diverge(Divergence("envelope", later[0], run, None, why, found, "event_id"))

    def chain_result(self, chain: ChainReport) -> None:
        report = self.report
        report.events_checked = chain.events_checked
        report.head_seq, report.head_hash = self.head
        if chain.ok and chain.head_seq == self.head[0] and chain.head_hash != self.head[1]:
            # the head read with the projections is not the event the chain verified: the
            # database answered two reads differently; the head shown is the verified one
            report.head_hash = chain.head_hash
            why = "head hash (read with the projections)"
            report.diverge(Divergence("chain", self.head[0], None, None, chain.head_hash,
                                      clip(self.head[1]), why))  # fmt: skip
        if chain.failure is not None:
            f = chain.failure
            at = self.ledger.read(gt=f.seq - 1, lte=f.seq) if f.seq is not None else []
            run = (
                at[0].stream[len(_RUN_PREFIX) :]
                if at and at[0].stream.startswith(_RUN_PREFIX)
                else None
            )
            report.diverge(Divergence("chain", f.seq, run, None, f.expected, f.found, f.check))
        else:  # every row at or below the head must be one the chain read, once
            stray = self.ledger.off_chain_row(chain.head_seq)
            if stray is not None:
                f = off_chain_failure(stray, chain.head_seq)
                st = stray.stream
                run = (
                    st[len(_RUN_PREFIX) :]
                    if type(st) is str and st.startswith(_RUN_PREFIX)
                    else None
                )
                # no seq: the events 1..head the chain verified still hold (and stay covered)
                report.diverge(Divergence("chain", None, run, None, f.expected, f.found,
                                          "a row the chain's pass does not read"))  # fmt: skip


def replay(
    ledger: Ledger,
    *,
    run_id: str | None = None,
    since: int = 0,
    deep: bool = False,
    checkpoint: Mapping[str, Any] | None = None,
    parallel: bool | None = None,
) -> ReplayReport:
    """Replay ``ledger`` (every run, or ``run_id``; events after ``since``) and report
    what held and the first divergence of each kind. ``checkpoint`` is a checkpoint kept
    outside the database (``{"tree_size", "root"}``). ``parallel`` runs the chain and
    projection checks in a second process (True), in this one (False), or decides by the
    ledger's size and the CPUs at hand (None); the report is the same either way."""
    if since < 0:
        raise InputError(f"--since must be 0 or more, not {since}")
    cp = parse_checkpoint(checkpoint) if checkpoint is not None else None
    if run_id is not None:
        run_id = run_id.strip()
        if not ledger.read_stream(run_stream(run_id)):
            raise InputError(f"no run {run_id!r} in the ledger")
    return _Replay(ledger, run_id, since, deep, cp, parallel=parallel).run()


def chain_and_dags(ledger: Ledger, *, parallel: bool | None = None) -> ReplayReport:
    """Checks 1 and 2 alone, over the whole ledger, exactly as :func:`replay` runs them
    (the chain, recorded checkpoints, every run's DAG against its events and the live
    projection rows); blobs and the scratch projection are skipped. For
    ``bench/replay.py``, which times them against a raw re-hash of the same rows."""
    return _Replay(
        ledger,
        None,
        0,
        False,
        None,
        projections=False,
        blobs=False,
        parallel=parallel,
        tiles=False,
    ).run()

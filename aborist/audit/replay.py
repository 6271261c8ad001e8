"""``aborist-ledger replay``: confirm every transition from the ledger's own bytes
(ARCHITECTURE.md, "Replay"; issue 7 items 1–4).

One pass over the events, in ``seq`` order, feeds four checks:

1. the chain (:func:`ledger.chain.verify_chain`: payload hashes, event hashes,
   ``prev_hash`` links, gapless ``seq`` and stream positions); with ``since`` the suffix
   after that seq is checked, linked to the hash of the event at ``since``; recorded
   checkpoints, and a checkpoint the auditor kept (``checkpoint=``), are checked with a
   consistency proof from their size to the current head;
2. each run's DAG (:mod:`aborist.audit.dags`), as soon as the run's last event passes;
3. with ``deep``, each run's deterministic stages re-executed (:mod:`aborist.audit.deep`);
4. the projections, folded into a scratch database and compared row for row with the
   live tables (:mod:`aborist.audit.projections_check`).

Blobs are checked too (:mod:`aborist.audit.blobs`): every blob when the whole ledger is
replayed, the blobs of the runs in scope otherwise.

Runs are checked as they complete and then forgotten, so memory stays flat however long
the ledger is; only each run's recomputed root is kept, to check the cache hits served
from it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

from aborist.audit.blobs import BlobRef, check_blobs, referenced_blobs
from aborist.audit.dags import TERMINAL_EVENTS, check_run
from aborist.audit.deep import reexecute_run
from aborist.audit.findings import KINDS, Divergence, ReplayReport
from aborist.audit.projections_check import ScratchProjection, compare_tables, read_live
from aborist.errors import InputError
from aborist.events import run_stream
from ledger import merkle
from ledger.chain import verify_chain
from ledger.envelope import GENESIS_HASH, RecordedEvent
from ledger.store import Ledger

__all__ = ["parse_checkpoint", "replay"]

_RUN_PREFIX = "run:"
_SHAPE_ERRORS = (KeyError, TypeError, ValueError, AttributeError)
_PAGE = 2000


def parse_checkpoint(data: object) -> tuple[int, str]:
    """``(tree_size, root)`` from a checkpoint as ``aborist-ledger checkpoint --json``
    prints it; :class:`InputError` for anything else."""
    if not isinstance(data, Mapping):
        raise InputError("a checkpoint must be a JSON object with tree_size and root")
    size, root = data.get("tree_size"), data.get("root")
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise InputError(f"checkpoint tree_size must be a positive integer, found {size!r}")
    if not isinstance(root, str) or len(root) != 64 or not _is_hex(root):
        raise InputError(f"checkpoint root must be 64 hex digits, found {root!r}")
    return size, root.lower()


def _unreadable(events: list[RecordedEvent]) -> RecordedEvent | None:
    """The first event whose payload is not a JSON object (edited bytes can do that)."""
    for ev in events:
        try:
            if not isinstance(json.loads(ev.payload), dict):
                return ev
        except ValueError:
            return ev
    return None


def _is_hex(s: str) -> bool:
    return all(c in "0123456789abcdefABCDEF" for c in s)


class _Replay:
    def __init__(
        self, ledger: Ledger, run_id: str | None, since: int, deep: bool,
        checkpoint: tuple[int, str] | None,
    ) -> None:  # fmt: skip
        self.ledger = ledger
        self.run_id = run_id
        self.since = since
        self.deep = deep
        self.checkpoint = checkpoint
        self.full = run_id is None and since == 0
        self.report = ReplayReport(
            scope={"run": run_id, "since": since, "deep": deep,
                   "checkpoint": checkpoint[0] if checkpoint else None}
        )  # fmt: skip
        self.pending: dict[str, list[RecordedEvent]] = {}
        self.roots: dict[str, str] = {}
        self.served: list[tuple[str, int, str, str]] = []
        self.refs: list[BlobRef] = []
        self.head, self.live_tables, self.live = read_live(ledger, run_id)

    # -- the pass ------------------------------------------------------------------------

    def events(self, head: int, scratch: ScratchProjection | None) -> Iterator[RecordedEvent]:
        """The events in scope, with every run checked when its stream ends."""
        page: list[RecordedEvent] = []
        for ev in self.ledger.iter_events(gt=self.since, lte=head):
            yield ev
            if scratch is not None:
                page.append(ev)
                if len(page) >= _PAGE:
                    self._fold(scratch, page)
                    page = []
            if not ev.stream.startswith(_RUN_PREFIX):
                continue
            rid = ev.stream[len(_RUN_PREFIX) :]
            if self.run_id is not None and rid != self.run_id:
                continue
            self.pending.setdefault(rid, []).append(ev)
            if ev.type in TERMINAL_EVENTS:
                self._finish(rid, self.pending.pop(rid))
        if scratch is not None:
            self._fold(scratch, page)

    def _fold(self, scratch: ScratchProjection, page: list[RecordedEvent]) -> None:
        if scratch.events_folded < 0:
            return  # an earlier page could not be folded; that was reported
        try:
            scratch.fold(page)
        except Exception:
            self._fold_failure(scratch, page)

    def _fold_failure(self, scratch: ScratchProjection, page: list[RecordedEvent]) -> None:
        """Fold ``page`` one event at a time to name the event the projection rejects."""
        for ev in page:
            try:
                scratch.fold([ev])
            except Exception as e:
                run = ev.stream[len(_RUN_PREFIX) :] if ev.stream.startswith(_RUN_PREFIX) else None
                msg = str(e).splitlines()[0] if str(e) else ""
                self.report.diverge(
                    Divergence("projection", ev.seq, run, None,
                               f"an event {ev.type} that folds into the projections",
                               f"{type(e).__name__}: {msg}", "fold")
                )  # fmt: skip
                break
        scratch.events_folded = -1

    def _finish(self, rid: str, events: list[RecordedEvent]) -> None:
        if events[0].stream_seq != 1:  # begun before --since: read the whole stream
            events = self.ledger.read_stream(run_stream(rid))
        try:
            self._check(rid, events)
        except _SHAPE_ERRORS as e:  # a payload that is not what the pipeline records
            bad = _unreadable(events)
            self.report.runs["unreadable"] = self.report.runs.get("unreadable", 0) + 1
            self.report.diverge(
                Divergence("dag", bad.seq if bad else None, rid, None,
                           "payloads as the pipeline records them",
                           f"{type(e).__name__}: {e}", bad.type if bad else "")
            )  # fmt: skip

    def _check(self, rid: str, events: list[RecordedEvent]) -> None:
        bad = _unreadable(events)
        if bad is not None:
            raise ValueError(f"the payload of seq {bad.seq} is not a JSON object")
        check = check_run(rid, events, self.live)
        if check.dag is not None:
            self.report.dags_checked += 1
            self.report.stages_checked += check.stages_checked
            self.roots[rid] = check.dag.root
        for d in check.divergences:
            self.report.diverge(d)
        if check.served is not None:
            self.served.append((rid, *check.served))
        if self.deep:
            reexecute_run(self.ledger, rid, events, self.report)
        else:
            self.refs.extend(referenced_blobs(rid, events))
        self.report.runs[check.status] = self.report.runs.get(check.status, 0) + 1

    # -- after the pass ------------------------------------------------------------------

    def check_served(self) -> None:
        """A cache hit's ``run_dag_root`` is the recomputed root of the run it served."""
        for rid, seq, source, recorded in self.served:
            root = self.roots.get(source)
            if root is None:
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

    def check_checkpoints(self) -> None:
        recorded = [(cp.tree_size, cp.root, "recorded checkpoint") for cp in
                    self.ledger.checkpoints()]  # fmt: skip
        if self.checkpoint is not None:
            recorded.append((*self.checkpoint, "checkpoint file"))
        if not recorded:
            return
        hashes = self.ledger.event_hashes(self.head[0])
        n = len(hashes)
        root = merkle.merkle_root(hashes) if n else b""
        for size, cp_root, what in recorded:
            self.report.checkpoints_checked += 1
            if size > n:
                why = f"{what} of size {size}: history was truncated"
                want = f"at least {size} events"
                self.report.diverge(
                    Divergence("checkpoint", size, None, None, want, f"{n} events", why)
                )
                continue
            proof = merkle.consistency_proof(hashes, size, n)
            if not merkle.verify_consistency(size, n, proof, bytes.fromhex(cp_root), root):
                now = merkle.merkle_root(hashes[:size]).hex()
                self.report.diverge(Divergence(
                    "checkpoint", size, None, None, cp_root, now,
                    f"{what}: no consistency proof from size {size} to {n}; "
                    "the first events were rewritten"))  # fmt: skip

    def run(self) -> ReplayReport:
        report = self.report
        head_seq, head_hash = self.head
        if self.since > head_seq:
            raise InputError(f"--since {self.since} is past the last event ({head_seq})")
        prev = GENESIS_HASH
        if self.since > 0:
            before = self.ledger.read(gt=self.since - 1, lte=self.since)
            if not before:
                raise InputError(f"no event {self.since} to chain --since from; replay in full")
            prev = before[0].hash
        with ScratchProjection() as scratch:
            stream = self.events(head_seq, scratch if self.full else None)
            chain = verify_chain(stream, start_seq=self.since + 1, start_prev_hash=prev)
            for _ in stream:  # keep checking runs past a broken link
                pass
            for rid, events in sorted(self.pending.items()):
                self._finish(rid, events)
            if not self.full:
                page: list[RecordedEvent] = []
                for ev in self.ledger.iter_events(lte=head_seq):
                    page.append(ev)
                    if len(page) >= _PAGE:
                        self._fold(scratch, page)
                        page = []
                self._fold(scratch, page)
            if scratch.events_folded >= 0:
                compare_tables(scratch.tables(self.run_id), self.live_tables, report)
        report.events_checked = chain.events_checked
        report.head_seq, report.head_hash = head_seq, head_hash
        if chain.failure is not None:
            f = chain.failure
            at = self.ledger.read(gt=f.seq - 1, lte=f.seq)
            run = (
                at[0].stream[len(_RUN_PREFIX) :]
                if at and at[0].stream.startswith(_RUN_PREFIX)
                else None
            )
            report.diverge(Divergence("chain", f.seq, run, None, f.expected, f.found, f.check))
        self.check_served()
        self.check_checkpoints()
        if not self.deep:
            check_blobs(self.ledger, self.refs, report, scan_all=self.full)
        ran = {"checkpoint": report.checkpoints_checked > 0, "deep": self.deep}
        report.checks = {
            kind: "skipped" if not ran.get(kind, True) else
            "diverged" if report.first(kind) else "held"
            for kind in KINDS
        }  # fmt: skip
        return report


def replay(
    ledger: Ledger,
    *,
    run_id: str | None = None,
    since: int = 0,
    deep: bool = False,
    checkpoint: Mapping[str, Any] | None = None,
) -> ReplayReport:
    """Replay ``ledger`` (every run, or ``run_id``; events after ``since``) and report
    what held and the first divergence of each kind. ``checkpoint`` is a checkpoint kept
    outside the database (``{"tree_size", "root"}``)."""
    if since < 0:
        raise InputError(f"--since must be 0 or more, not {since}")
    cp = parse_checkpoint(checkpoint) if checkpoint is not None else None
    if run_id is not None:
        run_id = run_id.strip()
        if not ledger.read_stream(run_stream(run_id)):
            raise InputError(f"no run {run_id!r} in the ledger")
    return _Replay(ledger, run_id, since, deep, cp).run()

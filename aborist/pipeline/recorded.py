"""A run read back from the ledger: its history (:class:`~aborist.pipeline.history.
RunHistory`: the events that keep the run grammar), and the inputs each deterministic stage
consumed (evidence texts and the raw answer from blobs). ``aborist show``, ``aborist
inspect`` and the audit report start here, so they read a run as replay does: events past a
break of the grammar are not part of it (``broken`` names the first).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypeVar

from aborist.errors import InputError
from aborist.events import (
    EVIDENCE_STAGE,
    EventPayload,
    ModelAnswered,
    RunCompleted,
    RunFailed,
    RunStarted,
    parse_event,
    run_stream,
)
from aborist.pipeline.history import GrammarBreak, RunHistory
from aborist.projections import run_ids_with_prefix
from aborist.verify.evidence import EvidenceObject
from ledger.envelope import RecordedEvent
from ledger.store import Ledger

__all__ = ["RecordedRun", "load_run"]

M = TypeVar("M", bound=EventPayload)


@dataclass
class RecordedRun:
    """``events``: the run's history (the prefix of its stream that keeps the grammar);
    ``broken``: the first event past it, if any, and ``ignored`` how many events that
    leaves out."""

    run_id: str
    events: list[RecordedEvent]
    broken: GrammarBreak | None = None
    ignored: int = 0

    @classmethod
    def of(cls, run_id: str, stream: list[RecordedEvent]) -> RecordedRun:
        h = RunHistory.read(run_id, stream)
        return cls(run_id, h.accepted, h.broken, h.ignored)

    def first(self, type_: type[EventPayload] | str) -> RecordedEvent | None:
        """The history's event of this type (the only one, but for the repair events)."""
        t = type_ if isinstance(type_, str) else type_.TYPE
        return next((e for e in self.events if e.type == t), None)

    def payload(self, type_: type[EventPayload] | str) -> dict[str, Any] | None:
        """The payload of :meth:`first` as a dict (prefer :meth:`get`, the typed read)."""
        ev = self.first(type_)
        return ev.data if ev is not None else None

    def get(self, model: type[M]) -> M | None:
        """The history's event of ``model``'s type, read as that model (None when the run
        has none; :class:`~aborist.events.InvalidEventPayload` when it does not fit)."""
        ev = self.first(model)
        if ev is None:
            return None
        parsed = parse_event(ev)
        assert isinstance(parsed, model)
        return parsed

    @property
    def started(self) -> RunStarted:
        p = self.get(RunStarted)
        if p is None:
            raise InputError(f"run {self.run_id} has no {RunStarted.TYPE} event")
        return p

    @property
    def question(self) -> str:
        return self.started.question

    @property
    def mode(self) -> str:
        return self.started.mode

    @property
    def status(self) -> str:
        """completed | cached | failed | incomplete (started, never finished)."""
        last = self.events[-1] if self.events else None
        if last is not None and last.type == RunCompleted.TYPE:
            return "cached" if last.data.get("cache_hit") else "completed"
        if last is not None and last.type == RunFailed.TYPE:
            return "failed"
        return "incomplete"

    def evidence_records(self) -> list[dict[str, Any]]:
        for ev in self.events:
            if ev.type in EVIDENCE_STAGE:
                return list(ev.data["evidence"])
        return []

    def evidence(self, ledger: Ledger) -> list[EvidenceObject]:
        """Evidence objects rebuilt from their blobs; a blob that no longer matches its
        recorded hash raises :class:`InputError` naming the pointer."""
        out = []
        for r in self.evidence_records():
            text = ledger.get_blob(r["text_blob"]).decode("utf-8")
            out.append(
                EvidenceObject(
                    pointer_id=r["pointer_id"], text=text, source_uri=r["source_uri"],
                    title=r["title"], source_role=r["source_role"],
                    evidence_hash=r["evidence_hash"],
                )
            )  # fmt: skip
        return out

    def raw_answer(self, ledger: Ledger) -> str | None:
        p = self.get(ModelAnswered)
        return None if p is None else ledger.get_blob(p.raw_answer_blob).decode("utf-8")


#: The shortest run id prefix ``aborist show`` / ``inspect`` resolve (as git's short hashes).
_MIN_PREFIX = 6


def load_run(ledger: Ledger, run_id: str) -> RecordedRun:
    run_id = run_id.strip()
    events = ledger.read_stream(run_stream(run_id))
    if not events:
        matches = _by_prefix(ledger, run_id)
        if len(matches) == 1:
            return load_run(ledger, matches[0])
        if len(matches) > 1:
            raise InputError(f"run id prefix {run_id!r} is ambiguous ({len(matches)} runs)")
        short = len(run_id) < _MIN_PREFIX and all(c in "0123456789abcdef" for c in run_id)
        hint = f" (a run id prefix needs at least {_MIN_PREFIX} characters)" if short else ""
        raise InputError(f"no run {run_id!r} in the ledger{hint}")
    return RecordedRun.of(run_id, events)


def _by_prefix(ledger: Ledger, prefix: str) -> list[str]:
    if len(prefix) < _MIN_PREFIX or not all(c in "0123456789abcdef" for c in prefix):
        return []
    return run_ids_with_prefix(ledger, prefix, limit=3)

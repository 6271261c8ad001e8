"""How a run's events end: its status, and whether a list of its events stops inside a
transaction the pipeline commits whole (docs/pipeline.md, "Events of a run").

An export bundle (:mod:`aborist.audit.bundle`) holds a run's events, each proved to be in
the bundle's checkpoint; but an inclusion proof shows an event *is* in the tree, never
that no other event of the stream is. A bundle cut short at the end keeps every other
check green. What the pipeline's transactions allow to be proven from the events alone:

- ``qa.run_started`` is committed together with ``qa.cache_checked`` (or, when the corpus
  cannot even be resolved, ``qa.run_failed``): a run never ends at its start;
- a cache hit's ``qa.cache_checked`` (``hit: true``) is committed with its
  ``qa.run_completed``;
- ``qa.answer_labelled`` is committed with ``qa.cache_written`` (when the run caches) and
  ``qa.run_completed``: a labelled run is always a completed run.

So a run whose events stop at one of those points was truncated (its terminal event, or
its whole closing batch, removed). Every other stage commits on its own, and so does
``qa.run_failed`` after a stage: a run that stops there is ``incomplete``, honestly (an
interrupt) or because its later events were left out, and nothing in its events tells
which. Only the ledger, or a later bundle, can show the stream went on.

Pure: the run's events in, a :class:`RunEnd` out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from aborist.audit.checks.run_events import as_run_events
from aborist.events import (
    AnswerLabelled,
    CacheChecked,
    CacheWritten,
    RunCompleted,
    RunFailed,
    RunStarted,
)
from aborist.pipeline.history import RunHistory
from ledger.envelope import RecordedEvent

__all__ = ["RunEnd", "run_end"]


@dataclass(frozen=True)
class RunEnd:
    """``status`` (completed | cached | failed | incomplete), the last event, and
    ``truncated``: why the events cannot be all of the run, or None."""

    status: str
    last_seq: int
    last_type: str
    truncated: str | None = None
    expected: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "last_event": {"seq": self.last_seq, "type": self.last_type},
            "truncated": self.truncated,
        }

    def describe(self) -> str:
        """One line for a reader: the status and what it rests on."""
        at = f"{self.last_type} at seq {self.last_seq}"
        if self.truncated is not None:
            return f"truncated: the events end at {at}; {self.truncated}"
        if self.status == "incomplete":
            return (
                f"incomplete: the events end at {at}, a stage the pipeline commits on its "
                "own (an interrupted run, or later events left out: a bundle cannot show "
                "which)"
            )
        return f"{self.status} ({at})"


def run_end(events: Sequence[RecordedEvent]) -> RunEnd:
    """How ``events`` (one run's, in stream order, at least one) end: how the run's
    history (:class:`aborist.pipeline.history.RunHistory`, the prefix of the events that
    keeps the run grammar) ends; events past a break of the grammar are not part of it
    (the ``history`` check names them). Raises what parsing a payload that is not the
    pipeline's raises (``KeyError``, ``TypeError``, ...)."""
    whole = as_run_events("", events)
    history = RunHistory.read(whole.run_id, whole, whole.data)
    run = whole.prefix(max(len(history.accepted), 1))
    last = run[-1]
    status = history.status
    why: str | None = None
    expected = ""
    data = run.data(last)
    if last.type == RunStarted.TYPE:
        why = (
            f"{RunStarted.TYPE} is committed together with {CacheChecked.TYPE} or {RunFailed.TYPE}"
        )
        expected = f"{CacheChecked.TYPE} or {RunFailed.TYPE} after {RunStarted.TYPE}"
    elif last.type == CacheChecked.TYPE and isinstance(data, dict) and data.get("hit"):
        why = (
            f"a cache hit's {CacheChecked.TYPE} is committed together with its {RunCompleted.TYPE}"
        )
        expected = f"{RunCompleted.TYPE} after the cache hit"
    elif run.first(AnswerLabelled.TYPE) is not None and run.first(RunCompleted.TYPE) is None:
        why = (
            f"{AnswerLabelled.TYPE} is committed together with {CacheWritten.TYPE} (when the run "
            f"caches) and {RunCompleted.TYPE}"
        )
        expected = f"{RunCompleted.TYPE} after {AnswerLabelled.TYPE}"
    return RunEnd(status, last.seq, last.type, why, expected)

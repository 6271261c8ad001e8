"""The ``type_version`` of every event type this code reads (docs/replay.md, "envelope").

An event's ``type_version`` names the schema of its payload. Every payload model of
:mod:`aborist.events` has one version (``VERSION``); an event of one of those types
recorded under another version (a later schema, or a forger's) is not read as the version
this code knows: it is an ``envelope`` finding at its seq, a run's history stops before
it, and an ingest of another version records no corpus. Types this code does not define
are the run grammar's business (in a run) or nobody's (on a stream of their own)."""

from __future__ import annotations

from collections.abc import Sequence

from aborist.audit.findings import Divergence, clip, clip_typed
from aborist.events import EVENT_TYPES
from ledger.envelope import RecordedEvent

__all__ = [
    "READ_VERSIONS",
    "cut_divergence",
    "first_unread",
    "unread_version",
    "version_divergence",
]

#: The version of each event type this code reads.
READ_VERSIONS: dict[str, int] = {t: model.VERSION for t, model in EVENT_TYPES.items()}


def unread_version(ev: RecordedEvent) -> int | None:
    """The version this code reads ``ev``'s type at, if ``ev`` records another; else None."""
    want = READ_VERSIONS.get(ev.type) if type(ev.type) is str else None
    return want if want is not None and ev.type_version != want else None


def version_divergence(ev: RecordedEvent, run: str | None) -> Divergence | None:
    """``ev``'s version as an ``envelope`` divergence, or None. A ``type_version`` that is
    no integer is the envelope check's own finding, not repeated here."""
    want = unread_version(ev)
    tv = ev.type_version
    if want is None or type(tv) is not int:
        return None
    return Divergence("envelope", ev.seq, run, None,
                      f"{want} (the version of {clip(ev.type)} this code reads)",
                      str(tv), "type_version")  # fmt: skip


def first_unread(events: Sequence[RecordedEvent]) -> int | None:
    """The position of the first of ``events`` whose version this code does not read."""
    return next((i for i, ev in enumerate(events) if unread_version(ev) is not None), None)


def cut_divergence(run_id: str, events: Sequence[RecordedEvent], at: int) -> Divergence:
    """The run's history cut before ``events[at]``, as a ``history`` divergence."""
    ev = events[at]
    later = len(events) - at - 1
    rest = (
        f"; it and {later} later event(s) are not part of the run"
        if later
        else ("; it is not part of the run")
    )
    return Divergence("history", ev.seq, run_id, ev.type,
                      f"type_version {unread_version(ev)}", clip_typed(ev.type_version),
                      f"type_version {clip_typed(ev.type_version)} of {clip(ev.type)} is not one "
                      f"this code reads{rest}")  # fmt: skip

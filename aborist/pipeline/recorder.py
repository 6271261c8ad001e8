"""The run's recorder: appends one run's events to its stream (``run:<run_id>``) in order,
with the stream position checked optimistically, and keeps each stage's hash for the run
DAG (docs/pipeline.md, "The run DAG")."""

from __future__ import annotations

from collections.abc import Sequence

from aborist.events import EventPayload, run_stream
from aborist.pipeline.dag import STAGE_EVENTS, stages_for
from ledger.envelope import RecordedEvent
from ledger.store import Ledger

__all__ = ["RunRecorder"]


class RunRecorder:
    """Appends one run's events in order, tracking the stream position and stage hashes."""

    def __init__(self, ledger: Ledger, run_id: str, mode: str) -> None:
        self.ledger = ledger
        self.run_id = run_id
        self.mode = mode
        self.stream = run_stream(run_id)
        self.position = 0
        self.stage_hashes: dict[str, str] = {}
        self.stage = "start"
        self.pending: list[EventPayload] = []
        self.recorded: list[RecordedEvent] = []  # every event appended, in order
        self.blobs: list[bytes] = []  # every blob appended with them
        self._stage_of = {
            STAGE_EVENTS[s]: s for s in stages_for(mode, repaired=True) if s != "final_label"
        }

    def defer(self, payload: EventPayload) -> None:
        """Hold ``payload`` back to be appended with the next recorded event."""
        self.pending.append(payload)

    def record(self, payload: EventPayload, blobs: Sequence[bytes] = ()) -> RecordedEvent:
        return self.record_all([payload], blobs)[-1]

    def record_all(
        self, payloads: Sequence[EventPayload], blobs: Sequence[bytes] = ()
    ) -> list[RecordedEvent]:
        events = self.ledger.append(
            self.stream,
            [p.to_event() for p in [*self.pending, *payloads]],
            expected_stream_seq=self.position,
            blobs=blobs,
        )
        self.pending.clear()
        self.position += len(events)
        self.recorded.extend(events)
        self.blobs.extend(blobs)
        for event in events:
            stage = self._stage_of.get(event.type)
            if stage is not None:
                self.stage_hashes[stage] = event.payload_hash
        return events[len(events) - len(payloads) :]

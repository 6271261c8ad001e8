"""One run's events as the replay checks read them: each payload parsed at most once, each
payload's sha256 computed at most once, the first and last event of each type found
without a scan.

Replay reads every row once and hands the run to several checks (the DAG, the blobs it
references, the deep re-execution); parsing JSON is the dearest thing they do, so they
share one :class:`RunEvents` instead of parsing the same payloads again.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Iterator, Sequence
from hashlib import sha256
from typing import Any, overload

from ledger.envelope import RecordedEvent
from ledger.envelope_check import CANONICAL_OBJECT
from ledger.jsonsafe import JSONRefusedError, check_bounds, parse_canonical
from ledger.rawtext import UndecodableText

__all__ = ["RunEvents", "as_run_events", "is_json_object", "parse_payload", "payload_problem"]


class _Object:
    """What the validating decoder makes of every JSON object (it builds no dicts)."""


_OBJECT = _Object()
_VALIDATOR = json.JSONDecoder(object_pairs_hook=lambda _pairs: _OBJECT)
# The C scanner behind ``JSONDecoder.raw_decode`` (``scan_once(text, index)``).
_validate_once = _VALIDATOR.scan_once  # type: ignore[attr-defined]


def parse_payload(text: str) -> Any:
    """``text`` parsed by the ledger's one bounded parse
    (:func:`ledger.jsonsafe.parse_canonical`): a payload that is too large, nests too
    deep, is not JSON, repeats a key or is not its own RFC 8785 form raises
    :class:`~ledger.jsonsafe.JSONRefusedError` (a ``ValueError``) naming why."""
    return parse_canonical(text)


def is_json_object(text: str) -> bool:
    """Whether ``text`` is one JSON object (RFC 8259), checked by the stdlib's C scanner
    without building the object: for the payloads no check needs parsed. The size and
    depth bounds of :func:`ledger.jsonsafe.check_bounds` come first."""
    try:
        check_bounds(text)
    except JSONRefusedError:
        return False
    try:
        value, end = _validate_once(text, 0)
        if end != len(text):
            value = _VALIDATOR.decode(text)
    except StopIteration:
        try:
            value = _VALIDATOR.decode(text)
        except ValueError:
            return False
    except ValueError:
        return False
    return value is _OBJECT


def payload_problem(text: str) -> str:
    """Why ``text`` is not a payload the pipeline records: the bounded parse's reason (not
    JSON, not in its own RFC 8785 form, a duplicate key, too large or too deep, not
    UTF-8), else that it is not a JSON object."""
    if isinstance(text, UndecodableText):
        return f"payload is {text.reason}"
    try:
        value = parse_payload(text)
    except ValueError as e:
        return str(e)
    return "payload is a JSON value but not an object" if type(value) is not dict else "none"


class RunEvents(Sequence[RecordedEvent]):
    """``run_id``'s events, in stream order, with per-event work cached.

    :meth:`append` may carry the payload's sha256 when the caller computed it already (the
    chain check computes every one); others are hashed on demand. The caches are keyed by
    the event object (which the run holds), never by ``seq``, so a bundle that repeats a
    ``seq`` cannot make one event's payload stand in for another's.
    """

    __slots__ = ("_by_type", "_data", "_digests", "_objects", "blob_refs", "events", "run_id")

    def __init__(self, run_id: str, events: Iterable[RecordedEvent] = ()) -> None:
        self.run_id = run_id
        self.events: list[RecordedEvent] = list(events)
        self._digests: dict[int, str] = {}
        self._data: dict[int, Any] = {}
        #: Events whose payload the caller showed to be a JSON object without parsing it.
        self._objects: set[int] = set()
        self._by_type: dict[str, tuple[RecordedEvent, RecordedEvent]] | None = None
        #: The run's blob references once :func:`aborist.audit.checks.blobs.referenced_blobs`
        #: listed them (replay's blob prefetch and the deep re-execution both need them).
        self.blob_refs: list[Any] | None = None

    def prefix(self, n: int) -> RunEvents:
        """The first ``n`` events as a run of their own, sharing this run's parsed
        payloads and digests (a run's history is a prefix of its stream)."""
        if n >= len(self.events):
            return self
        out = RunEvents(self.run_id, self.events[:n])
        out._data = self._data
        out._digests = self._digests
        out._objects = self._objects
        return out

    def append(self, ev: RecordedEvent, digest: str | None = None, data: Any = None) -> None:
        """Add ``ev``; ``digest`` its payload's sha256 and ``data`` its payload parsed by
        :func:`parse_payload`, when the caller has them already (replay's chain and
        envelope checks compute both for every event)."""
        self.events.append(ev)
        if digest is not None:
            self._digests[id(ev)] = digest
        if data is CANONICAL_OBJECT:  # shown a JSON object, not parsed: read on demand
            self._objects.add(id(ev))
        elif data is not None:
            self._data[id(ev)] = data
        self._by_type = None
        self.blob_refs = None

    # -- Sequence ------------------------------------------------------------------------

    @overload
    def __getitem__(self, i: int) -> RecordedEvent: ...

    @overload
    def __getitem__(self, i: slice) -> Sequence[RecordedEvent]: ...

    def __getitem__(self, i: int | slice) -> RecordedEvent | Sequence[RecordedEvent]:
        return self.events[i]

    def __len__(self) -> int:
        return len(self.events)

    def __iter__(self) -> Iterator[RecordedEvent]:
        return iter(self.events)

    # -- cached work ---------------------------------------------------------------------

    def data(self, ev: RecordedEvent) -> Any:
        """``ev``'s payload parsed (:func:`parse_payload`), once; raises ``ValueError``
        for a payload it refuses. Any JSON value comes back: the callers check the shape."""
        key = id(ev)
        try:
            return self._data[key]
        except KeyError:
            value = self._data[key] = parse_payload(ev.payload)
            return value

    def parsed(self, ev: RecordedEvent) -> bool:
        return id(ev) in self._data

    def digest(self, ev: RecordedEvent) -> str:
        """sha256 of ``ev``'s payload bytes (the stage hash of most DAG nodes)."""
        found = self._digests.get(id(ev))
        if found is None:
            found = self._digests[id(ev)] = sha256(ev.payload.encode("utf-8")).hexdigest()
        return found

    def _index(self) -> dict[str, tuple[RecordedEvent, RecordedEvent]]:
        if self._by_type is None:
            index: dict[str, tuple[RecordedEvent, RecordedEvent]] = {}
            for ev in self.events:
                found = index.get(ev.type)
                index[ev.type] = (ev, ev) if found is None else (found[0], ev)
            self._by_type = index
        return self._by_type

    def first(self, type_: str) -> RecordedEvent | None:
        found = self._index().get(type_)
        return found[0] if found is not None else None

    def last(self, type_: str) -> RecordedEvent | None:
        found = self._index().get(type_)
        return found[1] if found is not None else None

    def unreadable(self, parse: Collection[str] = ()) -> RecordedEvent | None:
        """The first event whose payload is not a JSON object (edited bytes can do that).
        Payloads of the types in ``parse`` are parsed (and kept for the checks that read
        them), the others only validated; payloads parsed already are looked at."""
        data = self._data
        for ev in self.events:
            key = id(ev)
            if key not in data and ev.type in parse:
                try:
                    data[key] = parse_payload(ev.payload)
                except ValueError:
                    return ev
            if key in data:
                if type(data[key]) is not dict:
                    return ev
            elif key not in self._objects and not is_json_object(ev.payload):
                return ev
        return None


def as_run_events(run_id: str, events: Sequence[RecordedEvent]) -> RunEvents:
    """``events`` as a :class:`RunEvents` (itself if it is one already)."""
    return events if isinstance(events, RunEvents) else RunEvents(run_id, events)

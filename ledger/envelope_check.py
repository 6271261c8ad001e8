"""Envelope validation, pure: every field of every event against docs/ledger-format.md
("The event envelope"), beside the chain check.

The chain shows the rows were not edited since they were hashed; it says nothing about
what was hashed. A row written by raw SQL with correct hashes can still carry a
``recorded_at`` of "last tuesday", a stream name with an escape sequence, an ``event_id``
that is no UUID, or a payload two JSON parsers read differently. Each such field is an
:class:`EnvelopeFinding` naming the seq and the field; unlike the chain, the check goes
on past the first one, so one bad row does not hide the next.

Rules (the same ones :meth:`ledger.store.Ledger.append` writes by):

* ``seq``, ``stream_seq``: integers ≥ 1; ``type_version``: an integer ≥ 1;
* ``event_id``: a lower-case UUID version 4, ``xxxxxxxx-xxxx-4xxx-[89ab]xxx-xxxxxxxxxxxx``;
* ``stream``: :func:`ledger.envelope.validate_stream`; ``type``:
  :func:`ledger.envelope.validate_type`;
* ``recorded_at``: RFC 3339 UTC, ``YYYY-MM-DDTHH:MM:SS.ffffffZ``, a real date and time;
  and **never earlier than the previous event's** (the clock rule: time may stand still
  between events, never run backwards);
* ``payload``: a JSON object that is its own RFC 8785 serialization, within the bounds
  of :mod:`ledger.jsonsafe`;
* ``payload_hash``, ``prev_hash``, ``hash``: text (their values are the chain's to check).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from ledger.envelope import RecordedEvent, validate_stream, validate_type
from ledger.errors import PayloadError
from ledger.jsonsafe import CanonicalMemo, JSONRefusedError, parse_canonical
from ledger.rawtext import UndecodableText

__all__ = [
    "CANONICAL_OBJECT",
    "LISTED",
    "EnvelopeCheck",
    "EnvelopeFinding",
    "check_event_id",
    "check_recorded_at",
]


class _CanonicalObject:
    """See :data:`CANONICAL_OBJECT`."""

    def __repr__(self) -> str:
        return "CANONICAL_OBJECT"


#: What :meth:`EnvelopeCheck.check` returns, when asked not to parse, for a payload it has
#: shown to be a JSON object in its own RFC 8785 form before: valid, and not parsed.
CANONICAL_OBJECT: Any = _CanonicalObject()
#: How many findings a report lists (all are counted).
LISTED = 20
_UUID4 = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")
_RFC3339 = (
    r"\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])T(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d\.\d{6}Z"
)
_RFC3339_UTC = re.compile(_RFC3339)
#: Many ids, many timestamps, one a line (for :meth:`EnvelopeCheck.fields_hold`).
_UUID4_LINES = re.compile(f"(?:{_UUID4.pattern}\n)*{_UUID4.pattern}")
_RFC3339_LINES = re.compile(f"(?:{_RFC3339}\n)*{_RFC3339}", re.ASCII)
#: Valid streams and types remembered (runs repeat their stream, types are few).
_REMEMBER = 4096
_CLIP = 120
#: The text fields but the payload (which :meth:`EnvelopeCheck._payload` checks).
_TEXT_FIELDS = ("event_id", "stream", "type", "recorded_at", "payload_hash", "prev_hash", "hash")


def _show(value: object) -> str:
    s = repr(value)
    return s if len(s) <= _CLIP else s[: _CLIP - 1] + "…"


@dataclass(frozen=True, slots=True)
class EnvelopeFinding:
    """One field of one event that breaks the envelope's rules."""

    seq: int | None
    field: str
    expected: str
    found: str

    def message(self) -> str:
        return f"seq {self.seq}: {self.field}: expected {self.expected}, found {self.found}"

    def to_dict(self) -> dict[str, Any]:
        return {"seq": self.seq, "field": self.field, "expected": self.expected,
                "found": self.found}  # fmt: skip


def check_event_id(value: object) -> str | None:
    """None if ``value`` is an event id as the ledger writes them, else what is wrong."""
    if type(value) is not str or not _UUID4.fullmatch(value):
        return "a lower-case UUID version 4 (xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx)"
    return None


def check_recorded_at(value: object, known_day: str | None = None) -> str | None:
    """None if ``value`` is an RFC 3339 UTC timestamp as the ledger writes them (a real
    date: the calendar is consulted unless the day is ``known_day``, checked already)."""
    want = "RFC 3339 UTC as YYYY-MM-DDTHH:MM:SS.ffffffZ"
    if type(value) is not str or not _RFC3339_UTC.fullmatch(value):
        return want
    if value[:10] != known_day:
        try:
            date.fromisoformat(value[:10])
        except ValueError:
            return f"{want}, a real date"
    return None


def _positive_int(value: object) -> bool:
    return type(value) is int and value >= 1


@dataclass(slots=True)
class EnvelopeCheck:
    """The envelope rules over events in ``seq`` order, one event or page at a time.

    ``last_recorded_at`` is the ``recorded_at`` of the event before the first one checked
    (a suffix check: ``replay --since``). :meth:`check` returns the event's payload parsed
    when it is valid (callers that need it need not parse it again), else None."""

    last_recorded_at: str | None = None
    #: Payload texts shown canonical in this check (see :meth:`_payload`).
    canonical: CanonicalMemo = field(default_factory=CanonicalMemo, repr=False)
    events_checked: int = 0
    count: int = 0
    findings: list[EnvelopeFinding] = field(default_factory=list)
    #: What :meth:`check` found in the event it checked last (every finding, unlisted too).
    current: list[EnvelopeFinding] = field(default_factory=list)
    _valid: set[tuple[str, str]] = field(default_factory=set, repr=False)

    @property
    def ok(self) -> bool:
        return self.count == 0

    def _find(self, seq: object, name: str, expected: str, found: object) -> None:
        self.count += 1
        at = seq if type(seq) is int else None
        shown = found if name == "payload" and isinstance(found, str) else _show(found)
        finding = EnvelopeFinding(at, name, expected, shown)
        self.current.append(finding)
        if len(self.findings) < LISTED:
            self.findings.append(finding)

    def _remember(self, key: tuple[str, str]) -> None:
        if len(self._valid) >= _REMEMBER:
            self._valid.clear()
        self._valid.add(key)

    def check_page(self, events: Iterable[RecordedEvent]) -> None:
        page = events if isinstance(events, Sequence) else list(events)
        fields = not self.fields_hold(page)
        for ev in page:
            self.check(ev, fields=fields)

    def fields_hold(self, events: Sequence[RecordedEvent]) -> bool:
        """Whether every field but the payload of every one of ``events`` (in ``seq``
        order, following the events checked so far) is as the ledger writes it, checked
        page-wide in a few passes in C: the positions are integers >= 1, the event ids
        joined by newlines match one pattern of UUIDs (and hold no newline of their own),
        the timestamps likewise, never earlier than the one before (a sorted list is its
        own sort) and on real dates, the streams and types valid, the hashes text. If so,
        the page counts as checked up to its payloads (:meth:`check` with ``fields``
        false) and the clock moves to its last event; if not, nothing changed and each
        event is checked field by field, which names what is wrong."""
        n = len(events)
        if not n:
            return True
        try:
            ints = [e.seq for e in events] + [e.stream_seq for e in events]
            ints += [e.type_version for e in events]
            if set(map(type, ints)) != {int} or min(ints) < 1:
                return False
            texts = [e.payload_hash for e in events] + [e.prev_hash for e in events]
            texts += [e.hash for e in events] + [e.stream for e in events]
            texts += [e.type for e in events] + [e.payload for e in events]
            ids, ats = [e.event_id for e in events], [e.recorded_at for e in events]
            if set(map(type, texts + ids + ats)) != {str}:
                return False
            joined_ids, joined_ats = "\n".join(ids), "\n".join(ats)
            if (
                joined_ids.count("\n") != n - 1 or joined_ats.count("\n") != n - 1
                or _UUID4_LINES.fullmatch(joined_ids) is None
                or _RFC3339_LINES.fullmatch(joined_ats) is None
            ):  # fmt: skip
                return False
            last = self.last_recorded_at
            if (last is not None and ats[0] < last) or ats != sorted(ats):
                return False
            for day in {a[:10] for a in ats} - {last[:10] if last else ""}:
                date.fromisoformat(day)
            valid = self._valid
            for kind, names, rule in (("s", {e.stream for e in events}, validate_stream),
                                      ("t", {e.type for e in events}, validate_type)):  # fmt: skip
                for name in names:
                    if (kind, name) not in valid:
                        rule(name)
                        self._remember((kind, name))
        except (ValueError, TypeError):  # PayloadError too: a field for the long way
            return False
        self.last_recorded_at = ats[-1]
        return True

    def check_events(
        self, page: Sequence[RecordedEvent], parse: Collection[str] | None = None
    ) -> tuple[list[Any], list[tuple[int, EnvelopeFinding]]]:
        """:meth:`check` of every event of ``page`` (its fields page-wide first,
        :meth:`fields_hold`), ``want`` true for the types in ``parse`` (every type when
        None): the payloads, and each finding with the index of its event. A payload of
        another type already shown canonical, on a page whose fields hold, is taken here
        without the calls (what :meth:`check` returns for it, the loop every replayed
        row takes)."""
        out: list[Any] = []
        found: list[tuple[int, EnvelopeFinding]] = []
        fields = not self.fields_hold(page)
        shown = self.canonical.texts
        for i, ev in enumerate(page):
            want = parse is None or ev.type in parse
            if not (want or fields):
                payload = ev.payload
                # A canonical JSON text that begins with "{" is an object.
                if payload.__class__ is str and payload in shown and payload[:1] == "{":
                    self.events_checked += 1
                    out.append(CANONICAL_OBJECT)
                    continue
            out.append(self.check(ev, want, fields))
            if self.current:
                found.extend([(i, f) for f in self.current])
        self.current = []
        return out, found

    def check(self, ev: RecordedEvent, want: bool = True, fields: bool = True) -> Any:
        """The envelope rules for ``ev``; its payload parsed, or None if refused. With
        ``want`` false, a payload text already shown canonical in this check that is an
        object comes back as :data:`CANONICAL_OBJECT` instead, unparsed (for a caller
        that reads only some payloads)."""
        if self.current:
            self.current = []
        self.events_checked += 1
        if not fields:  # shown by fields_hold
            return self._checked_payload(ev, want)
        # The common case in one expression: every field as the ledger writes it, the
        # stream and type already seen valid, and the timestamp on the previous event's
        # day and not before it (so the calendar was consulted for that day already).
        # Anything else takes the field-by-field check, which names what is wrong.
        seq, sseq, tv, eid = ev.seq, ev.stream_seq, ev.type_version, ev.event_id
        at, last, valid = ev.recorded_at, self.last_recorded_at, self._valid
        if (
            type(seq) is int and seq >= 1 and type(sseq) is int and sseq >= 1
            and type(tv) is int and tv >= 1 and type(eid) is str
            and _UUID4.fullmatch(eid) is not None
            and ev.stream.__class__ is str and ev.type.__class__ is str
            and ("s", ev.stream) in valid and ("t", ev.type) in valid
            and type(at) is str and last is not None and at >= last
            and at[:10] == last[:10] and _RFC3339_UTC.fullmatch(at) is not None
            and type(ev.payload_hash) is str and type(ev.prev_hash) is str
            and type(ev.hash) is str
        ):  # fmt: skip
            self.last_recorded_at = at
        else:
            self._fields(ev)
        return self._checked_payload(ev, want)

    def _checked_payload(self, ev: RecordedEvent, want: bool) -> Any:
        if not want:
            payload = ev.payload
            # A canonical JSON text that begins with "{" is an object.
            if type(payload) is str and payload in self.canonical.texts and payload[:1] == "{":
                return CANONICAL_OBJECT
        return self._payload(ev)

    def _fields(self, ev: RecordedEvent) -> None:
        """Every field but the payload, one by one."""
        seq = ev.seq
        for name in _TEXT_FIELDS:
            value = getattr(ev, name)
            if isinstance(value, UndecodableText):  # stored bytes the driver could not read
                self._find(seq, name, "UTF-8 text", value.reason)
        for name in ("seq", "stream_seq", "type_version"):
            value = getattr(ev, name)
            if not _positive_int(value):
                self._find(seq, name, "an integer >= 1", value)
        why = check_event_id(ev.event_id)
        if why is not None:
            self._find(seq, "event_id", why, ev.event_id)
        valid = self._valid
        stream, type_ = ev.stream, ev.type
        if ("s", stream) not in valid:
            try:
                validate_stream(stream)
                self._remember(("s", stream))
            except PayloadError as e:
                self._find(seq, "stream", str(e), stream)
        if ("t", type_) not in valid:
            try:
                validate_type(type_)
                self._remember(("t", type_))
            except PayloadError:
                self._find(seq, "type", "a dotted lower-case name such as qa.run_started", type_)
        at = ev.recorded_at
        last = self.last_recorded_at
        why = check_recorded_at(at, last[:10] if last is not None else None)
        if why is not None:
            self._find(seq, "recorded_at", why, at)
        else:
            if last is not None and at < last:
                self._find(seq, "recorded_at", f"not before the previous event's ({last})", at)
            self.last_recorded_at = at
        for name in ("payload_hash", "prev_hash", "hash"):
            value = getattr(ev, name)
            if type(value) is not str:
                self._find(seq, name, "text", value)

    def _payload(self, ev: RecordedEvent) -> Any:
        """The payload parsed if it is a JSON object in its own RFC 8785 form, else None
        (and a finding).

        A text shown canonical once in this check is not shown again (see
        :class:`~ledger.jsonsafe.CanonicalMemo`: the memo holds the texts themselves, so
        its verdict depends on nothing else, the chain included). Runs repeat many
        payloads: the same question's cache check, prompt, answer and verdict."""
        payload = ev.payload
        if isinstance(payload, UndecodableText):
            self._find(ev.seq, "payload", "a JSON object in its own RFC 8785 form, UTF-8",
                       payload.reason)  # fmt: skip
            return None
        try:
            data = parse_canonical(payload, memo=self.canonical)
        except JSONRefusedError as e:
            self._find(ev.seq, "payload", "a JSON object in its own RFC 8785 form", e.reason)
            return None
        if type(data) is not dict:
            kind = {list: "array", str: "string", bool: "boolean"}.get(type(data), "number")
            self._find(ev.seq, "payload", "a JSON object", "null" if data is None else f"a {kind}")
            return None
        return data

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "events_checked": self.events_checked,
            "count": self.count,
            "findings": [f.to_dict() for f in self.findings],
        }

"""The fast paths replay takes on every row give what the general code gives: the row
constructor (:func:`ledger.reads.row_to_event`), the positional header hash
(:func:`ledger.envelope.header_hash`) and the float pre-check of the canonical proof
(:func:`ledger.jsonsafe._odd_float`)."""

from __future__ import annotations

from hashlib import sha256

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ledger.canonical import canonical_json
from ledger.envelope import EVENT_HASH_DOMAIN, RecordedEvent, event_hash, header_hash
from ledger.errors import PayloadError
from ledger.jsonsafe import _odd_float
from ledger.reads import row_to_event

ROW = (7, "e1", "run:x", 2, "qa.run_started", 1, "2026-12-01T00:00:00Z", "{}", "a", "b", "c")


def test_an_honest_row_is_taken_as_it_is() -> None:
    ev = row_to_event(ROW)
    assert ev == RecordedEvent(*ROW)
    assert [type(v) for v in ev.to_dict().values()] == [type(v) for v in ROW]


@pytest.mark.parametrize(
    ("at", "value", "want"),
    [(0, "12", 12), (3, "abc", "abc"), (5, 1.5, 1.5), (7, None, "None"), (10, 5, "5")],
)
def test_a_row_of_other_types_goes_the_long_way(at: int, value: object, want: object) -> None:
    row = list(ROW)
    row[at] = value
    ev = row_to_event(tuple(row))
    got = list(ev.to_dict().values())
    assert got[at] == want and type(got[at]) is type(want)
    assert got[:at] + got[at + 1 :] == list(ROW[:at] + ROW[at + 1 :])


NAMES = ("seq", "event_id", "stream", "stream_seq", "type", "type_version", "recorded_at",
         "payload_hash", "prev_hash")  # fmt: skip
strings = st.text(st.characters(exclude_categories=("Cs",)), max_size=20)
ints = st.integers(min_value=-(2**60), max_value=2**60)


@settings(max_examples=300)
@given(ints, strings, strings, ints, strings, ints, strings, strings, strings)
def test_header_hash_is_the_jcs_of_the_header(
    seq: int, eid: str, stream: str, sseq: int, type_: str, tv: int, at: str, ph: str, prev: str
) -> None:
    fields = (seq, eid, stream, sseq, type_, tv, at, ph, prev)
    header = dict(zip(NAMES, fields, strict=True))
    try:
        want = sha256(EVENT_HASH_DOMAIN + canonical_json(header)).hexdigest()
    except PayloadError:
        with pytest.raises(PayloadError):
            header_hash(*fields)
        return
    assert header_hash(*fields) == want
    assert event_hash(
        seq=seq, event_id=eid, stream=stream, stream_seq=sseq, type=type_, type_version=tv,
        recorded_at=at, payload_hash=ph, prev_hash=prev,
    ) == want  # fmt: skip


def _odd_float_plain(text: str) -> bool:
    """The test without the one-character pre-checks."""
    return (
        "e-" in text or "e+" in text
        or (".0" in text and (".0," in text or ".0]" in text or ".0}" in text
                              or text.endswith(".0")))
    )  # fmt: skip


@settings(max_examples=500)
@given(st.text('e+-.0,]}1a"', max_size=12))
def test_odd_float_pre_checks_change_no_verdict(text: str) -> None:
    assert _odd_float(text) == _odd_float_plain(text)


def test_odd_float_finds_each_kind() -> None:
    assert _odd_float('{"a":1e-7}') and _odd_float("[1e+20]") and _odd_float('{"a":1.0}')
    assert not _odd_float('{"a":"a-run","b":1.05,"c":"x+y"}')

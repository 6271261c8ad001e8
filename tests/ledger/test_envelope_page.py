"""The page-wide envelope check (``EnvelopeCheck.fields_hold``) passes a page only when
checking its events one by one finds nothing: hostile fields, alone or in a page of good
ones, always send the page the long way, which names them."""

from __future__ import annotations

import uuid
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from ledger.envelope import RecordedEvent
from ledger.envelope_check import EnvelopeCheck

GOOD_ID = "0f8fad5b-d9cb-469f-a165-70867728950e"
GOOD_AT = "2026-11-29T19:35:33.123456Z"

_ids = st.one_of(
    st.uuids(version=4).map(str),
    st.sampled_from([GOOD_ID.upper(), GOOD_ID + "\n" + GOOD_ID, "not-a-uuid", "",
                     str(uuid.uuid1()), GOOD_ID + "\n", 7, None]),
)  # fmt: skip
_ats = st.one_of(
    st.datetimes().map(lambda d: d.strftime("%Y-%m-%dT%H:%M:%S.%fZ")),
    st.sampled_from(["2026-02-30T10:00:00.000000Z", "2026-11-29T19:35:33Z", "last tuesday",
                     GOOD_AT + "\n" + GOOD_AT, "٢٠٢٦-11-29T19:35:33.123456Z",
                     "2026-11-29T24:00:00.000000Z", "1999-12-31T23:59:59.999999Z", 0]),
)  # fmt: skip
_ints = st.one_of(st.integers(-2, 3), st.sampled_from([True, "1", 1.0, None]))
_names = st.sampled_from(["run:abc", "corpus", "Not.A.Valid TYPE!", "qa.run_started",
                          "line\nbreak", "\x1b[31m", "", "qa.x"])  # fmt: skip
_hashes = st.sampled_from(["a" * 64, "", 1, None])


@st.composite
def _event(draw: Any) -> RecordedEvent:
    good = draw(st.booleans())
    if good:
        return RecordedEvent(
            draw(st.integers(1, 9)), draw(st.uuids(version=4).map(str)), "run:abc",
            draw(st.integers(1, 9)), "qa.run_started", 1, draw(st.sampled_from(
                [GOOD_AT, "2026-11-29T19:35:34.000000Z", "2026-11-30T00:00:00.000000Z"])),
            "{}", "a" * 64, "b" * 64, "c" * 64,
        )  # fmt: skip
    return RecordedEvent(
        draw(_ints), draw(_ids), draw(_names), draw(_ints), draw(_names), draw(_ints),
        draw(_ats), "{}", draw(_hashes), draw(_hashes), draw(_hashes),
    )  # fmt: skip


@settings(max_examples=600)
@given(
    st.lists(_event(), min_size=1, max_size=6),
    st.sampled_from([None, GOOD_AT, "2026-12-01T00:00:00.000000Z"]),
)
def test_a_page_passes_only_when_no_event_has_a_finding(
    page: list[RecordedEvent], last: str | None
) -> None:
    fast, slow = EnvelopeCheck(last_recorded_at=last), EnvelopeCheck(last_recorded_at=last)
    held = fast.fields_hold(page)
    for ev in page:
        slow.check(ev)
    if held:
        assert slow.count == 0, slow.findings
        assert fast.last_recorded_at == slow.last_recorded_at == page[-1].recorded_at
    else:
        assert fast.last_recorded_at == last  # nothing changed: the long way decides
    # Either way check_page reports what the long way does.
    via_page = EnvelopeCheck(last_recorded_at=last)
    via_page.check_page(page)
    assert [f.to_dict() for f in via_page.findings] == [f.to_dict() for f in slow.findings]


def test_a_good_page_passes_and_a_newline_joined_id_does_not() -> None:
    def ev(seq: int, eid: str, at: str = GOOD_AT) -> RecordedEvent:
        return RecordedEvent(seq, eid, "run:abc", seq, "qa.run_started", 1, at, "{}",
                             "a" * 64, "b" * 64, "c" * 64)  # fmt: skip

    ids = [str(uuid.uuid4()) for _ in range(3)]
    assert EnvelopeCheck().fields_hold([ev(i + 1, x) for i, x in enumerate(ids)])
    # Two ids in one field, one field short: the joined text still reads as ids.
    joined = [ev(1, ids[0] + "\n" + ids[1]), ev(2, ids[2])]
    check = EnvelopeCheck()
    assert not check.fields_hold(joined)
    check.check_page(joined)
    assert [f.field for f in check.findings] == ["event_id"]
    back = [ev(1, ids[0], "2026-11-29T19:35:34.000000Z"), ev(2, ids[1], GOOD_AT)]
    check = EnvelopeCheck()
    assert not check.fields_hold(back)
    check.check_page(back)
    assert [f.field for f in check.findings] == ["recorded_at"]

"""The fixed-shape serializers are RFC 8785 byte for byte: one string
(:func:`ledger.canonical.canonical_string`) and the event header
(:func:`ledger.envelope.event_hash`, which appends and replay both use), against
:func:`ledger.canonical.canonical_json` and the ``rfc8785`` package. Also the fast paths
of ``canonical_json`` itself (the one-pass scan, the shared C encoder)."""

from __future__ import annotations

import dataclasses
import hashlib
import math
from typing import Any

import pytest
import rfc8785
from hypothesis import given, settings
from hypothesis import strategies as st

from ledger.canonical import canonical_json, canonical_string
from ledger.chain import ChainVerifier, event_hash_of, verify_chain
from ledger.envelope import EVENT_HASH_DOMAIN, RecordedEvent
from ledger.errors import PayloadError

#: Any text: control characters, quotes, backslashes, astral and BMP characters (no lone
#: surrogates: UTF-8 cannot carry them).
texts = st.text(
    st.one_of(
        st.characters(exclude_categories=("Cs",)),
        st.sampled_from(['"', "\\", "\x00", "\x1f", "\x7f", "\u2028", "\ud7ff", "\U0001f600"]),
    ),
    max_size=40,
)
safe_ints = st.integers(min_value=-(2**53) + 1, max_value=2**53 - 1)


@settings(max_examples=500)
@given(texts)
def test_canonical_string_is_jcs(s: str) -> None:
    assert canonical_string(s).encode("utf-8") == canonical_json(s) == rfc8785.dumps(s)


headers = st.builds(
    RecordedEvent,
    seq=safe_ints,
    event_id=texts,
    stream=texts,
    stream_seq=safe_ints,
    type=texts,
    type_version=safe_ints,
    recorded_at=texts,
    payload=st.just("{}"),
    payload_hash=texts,
    prev_hash=texts,
    hash=st.just(""),
)


def _jcs_hash(ev: RecordedEvent) -> str:
    """The event hash as docs/ledger-format.md defines it, through the rfc8785 package."""
    header = {
        "event_id": ev.event_id, "payload_hash": ev.payload_hash, "prev_hash": ev.prev_hash,
        "recorded_at": ev.recorded_at, "seq": ev.seq, "stream": ev.stream,
        "stream_seq": ev.stream_seq, "type": ev.type, "type_version": ev.type_version,
    }  # fmt: skip
    return hashlib.sha256(EVENT_HASH_DOMAIN + rfc8785.dumps(header)).hexdigest()


@settings(max_examples=500)
@given(headers)
def test_the_fixed_shape_event_hash_is_jcs(ev: RecordedEvent) -> None:
    assert event_hash_of(ev) == ev.expected_hash() == _jcs_hash(ev)


@pytest.mark.parametrize("field", ["seq", "stream_seq", "type_version"])
@pytest.mark.parametrize("bad", [2**53, -(2**53), 10**20])
def test_event_hash_of_refuses_what_jcs_refuses(field: str, bad: int) -> None:
    ev = dataclasses.replace(
        RecordedEvent(1, "e", "s", 1, "t.x", 1, "now", "{}", "p" * 64, "0" * 64, ""),
        **{field: bad},
    )
    with pytest.raises(PayloadError):
        ev.expected_hash()
    # The verifier's view: a header JCS refuses has no hash, so it matches no stored one.
    assert event_hash_of(ev).startswith("(no hash: ")


def test_check_page_agrees_with_check_one_at_a_time() -> None:
    """A break anywhere in a page is found at the same seq as event by event."""
    events = []
    prev = "0" * 64
    for i in range(1, 9):
        payload = f'{{"i":{i}}}'
        ev = RecordedEvent(i, f"e{i}", f"s{i % 2}", (i + 1) // 2, "t.x", 1, "now", payload,
                           _sha(payload), prev, "")  # fmt: skip
        ev = dataclasses.replace(ev, hash=event_hash_of(ev))
        events.append(ev)
        prev = ev.hash
    for broken in range(len(events)):
        bad = list(events)
        bad[broken] = dataclasses.replace(bad[broken], recorded_at="later")
        whole = ChainVerifier()
        whole.check_page(bad, [_sha(e.payload) for e in bad])
        one = verify_chain(bad)
        assert whole.report.failure == one.failure
        assert whole.report.failure is not None and whole.report.failure.seq == broken + 1
        assert whole.report.events_checked == one.events_checked == broken


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# -- canonical_json's own fast paths --------------------------------------------------

floats = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([1.0, -3.0, 2.5e-5, 1e-4, 1e16, 1e21, 0.1]),
)
values = st.recursive(
    st.one_of(st.none(), st.booleans(), safe_ints, floats, texts),
    lambda inner: st.one_of(
        st.lists(inner, max_size=5),
        st.tuples(inner, inner),
        st.dictionaries(texts, inner, max_size=5),
    ),
    max_leaves=30,
)


@settings(max_examples=1000)
@given(values)
def test_canonical_json_agrees_with_rfc8785(value: Any) -> None:
    expected = rfc8785.dumps(_as_lists(value))
    assert canonical_json(value) == expected


def _as_lists(value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return [_as_lists(v) for v in value]
    if isinstance(value, dict):
        return {k: _as_lists(v) for k, v in value.items()}
    return value


@pytest.mark.parametrize(
    ("value", "path"),
    [({"a": [1, {"b": math.nan}]}, "$.a[1].b"), ({"a": {1: 2}}, "$.a"), ([2**60], "$[0]")],
)
def test_errors_still_name_the_path(value: Any, path: str) -> None:
    with pytest.raises(PayloadError, match=path.replace("$", r"\$").replace("[", r"\[")):
        canonical_json(value)

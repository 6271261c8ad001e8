"""canonical_json is RFC 8785 exactly: its fast path agrees with the rfc8785 package."""

from __future__ import annotations

import math

import pytest
import rfc8785
from hypothesis import given, settings
from hypothesis import strategies as st

from ledger.canonical import canonical_json
from ledger.errors import PayloadError

floats = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([0.0, -0.0, 1.0, -2.0, 1e-4, 9.9999e-5, 1e16, 1e15 + 0.5, 1e21, 5e-324, 0.1]),
)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**53) + 1, max_value=2**53 - 1),
    floats,
    st.text(),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=5), st.dictionaries(st.text(), inner, max_size=5)
    ),
    max_leaves=25,
)


@settings(max_examples=500)
@given(values)
def test_agrees_with_rfc8785(value: object) -> None:
    assert canonical_json(value) == rfc8785.dumps(value)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ({"b": 1, "a": [1.0, -0.0, 0.5]}, b'{"a":[1,0,0.5],"b":1}'),
        ({"\u20ac": 1, "\U0001f600": 2, "\ufb01": 3}, '{"€":1,"😀":2,"ﬁ":3}'.encode()),
        ({"k": '\u2028\x7f\x01"\\'}, b'{"k":"\xe2\x80\xa8\x7f\\u0001\\"\\\\"}'),
        ([1e21, 1e-7, 123456789012345680.0], b"[1e+21,1e-7,123456789012345680]"),
    ],
)
def test_known_bytes(value: object, expected: bytes) -> None:
    assert canonical_json(value) == expected


@pytest.mark.parametrize("bad", [math.nan, [math.inf], {"x": {2: 1}}, {"x": object()}, 2**53])
def test_rejects_what_json_cannot_hold(bad: object) -> None:
    with pytest.raises(PayloadError):
        canonical_json(bad)


@pytest.mark.parametrize(
    "value", [{"a": "\ud800"}, {"a": ["ok", "x\udfff"]}, {"k\ud800": 1}, {"f": 0.1, "s": "\ud801"}]
)
def test_a_lone_surrogate_is_a_payload_error_not_a_codec_error(value: object) -> None:
    from ledger.errors import PayloadError

    with pytest.raises(PayloadError, match="lone surrogate"):
        canonical_json(value)

"""The fast proof of RFC 8785 form (``ledger.jsonsafe._shown_by_orjson``): every byte form
its argument relies on is checked here against JCS, and whatever it shows canonical is
canonical by the rfc8785 package, for honest and hostile texts alike."""

from __future__ import annotations

import json
import random
import struct
from typing import Any

import orjson
import pytest
import rfc8785
from hypothesis import given, settings
from hypothesis import strategies as st

from ledger.canonical import canonical_string
from ledger.jsonsafe import (
    _UNSHOWN,
    MAX_DEPTH,
    CanonicalMemo,
    JSONRefusedError,
    _beyond_max_depth,
    _depth,
    _jcs_int,
    _nesting,
    _odd_float,
    _shown_by_orjson,
    parse_canonical,
)

_OPTS = orjson.OPT_SORT_KEYS | orjson.OPT_STRICT_INTEGER
_LOW = st.characters(max_codepoint=0xD7FF)


def _jcs(value: Any) -> str | None:
    try:
        return rfc8785.dumps(value).decode("utf-8")
    except (rfc8785.CanonicalizationError, ValueError, TypeError):
        return None


def test_strings_are_escaped_as_jcs_escapes_them_for_every_code_point() -> None:
    every = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000)
    assert orjson.dumps(every).decode("utf-8") == canonical_string(every)
    assert _jcs(every) == canonical_string(every)


@settings(max_examples=300)
@given(st.dictionaries(st.text(_LOW, max_size=4), st.integers(0, 3), max_size=8))
def test_members_are_sorted_as_jcs_sorts_them_below_u_d800(d: dict[str, int]) -> None:
    assert orjson.dumps(d, option=_OPTS).decode("utf-8") == _jcs(d)


@pytest.mark.parametrize("n", [2**53, -(2**53), 2**53 + 1, 2**63, -(2**63)])
def test_an_integer_past_i_json_does_not_serialize(n: int) -> None:
    with pytest.raises(TypeError):
        orjson.dumps(n, option=_OPTS)


def _float_agrees(x: float) -> None:
    """A float orjson writes with no exponent and not as ``N.0`` is written as JCS does."""
    form = orjson.dumps(x).decode("ascii")
    if not _odd_float(form):
        assert form == _jcs(x), x


@settings(max_examples=2000)
@given(st.floats(allow_nan=False, allow_infinity=False))
def test_floats_outside_the_guard_are_written_as_jcs_writes_them(x: float) -> None:
    _float_agrees(x)


def test_floats_of_every_magnitude_agree() -> None:
    """Random bit patterns (every exponent) and decimals near the notation thresholds."""
    rng = random.Random(8785)
    for _ in range(20_000):
        x = struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))[0]
        if x == x and abs(x) != float("inf"):
            _float_agrees(x)
    for exp in range(-8, 23):
        for _ in range(200):
            _float_agrees(rng.random() * 10.0**exp)
            _float_agrees(round(rng.random(), rng.randint(1, 9)) * 10.0**exp)


values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-(2**60), 2**60),
              st.floats(allow_nan=False, allow_infinity=False), st.text()),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=15,
)  # fmt: skip


def _with_duplicate(text: str) -> str:
    """``text`` with its first object's first member repeated (other value, same key)."""
    i = text.find('{"')
    if i < 0:
        return text
    j = text.find(":", i)
    return text[: i + 1] + text[i + 1 : j] + ":0," + text[i + 1 :]


_MUTATIONS = [
    lambda t: t,
    lambda t: t.replace(",", ", ", 1),
    lambda t: t.replace("/", "\\/", 1),
    lambda t: t.replace("é", "\\u00e9", 1),
    lambda t: t.replace("\\u001f", "\\u001F", 1),
    lambda t: t.replace("\\n", "\\u000a", 1),
    lambda t: t.replace("0.5", "5e-1", 1),
    lambda t: t.replace("1,", "1.0,", 1),
    lambda t: t.replace("1,", "1E0,", 1),
    lambda t: t.replace(":0", ":-0", 1),
    lambda t: t.replace(":1", ":01", 1),
    _with_duplicate,
]
hostile = st.one_of(
    values.map(lambda v: json.dumps(v, ensure_ascii=False, sort_keys=True, separators=(",", ":"))),
    values.map(lambda v: orjson.dumps(v, option=orjson.OPT_SORT_KEYS).decode("utf-8")
               if _jcs(v) is not None else "null"),
    values.map(json.dumps),
    st.tuples(values, st.sampled_from(_MUTATIONS)).map(
        lambda t: t[1](_jcs(t[0]) or "null")),
    st.tuples(st.text(_LOW, max_size=3),
              st.sampled_from(["1.0", "-0", "0.00001", "1e-05", "1E2", "10000000000000000",
                               "9007199254740993", "9007199254740992", "1.5", "-1.25e+30",
                               "123456789012345678", "1e+21", "0.0", "-0.0", "5e-324",
                               "1e-7", "0.000001", "100.0"])).map(
        lambda t: f'{{"{t[0]}":{t[1]}}}'),
    st.text(max_size=20),
)  # fmt: skip


@settings(max_examples=1500)
@given(hostile)
def test_what_the_fast_path_shows_canonical_is_canonical(text: str) -> None:
    """The oracle: a text the fast path accepts is the rfc8785 package's serialization of
    the value it hands back, and that value is what the stdlib reads (so the exact path
    would have handed back the same). Texts with characters at or above U+D800 never
    reach it (:func:`parse_canonical` sends them to the exact path): checked whole."""
    if any(ord(c) >= 0xD800 for c in text):
        try:
            value = parse_canonical(text)
        except JSONRefusedError:
            return
        assert _jcs(value) == text
        return
    shown = _shown_by_orjson(text)
    if shown is _UNSHOWN:
        return
    assert _jcs(shown) == text
    # Integers past I-JSON read as doubles, as JCS reads them; types compared too.
    assert repr(json.loads(text, parse_int=_jcs_int)) == repr(shown)
    assert repr(parse_canonical(text)) == repr(shown)


@settings(max_examples=500)
@given(values)
def test_honest_payloads_take_the_fast_path_when_they_can(value: Any) -> None:
    """No float in the exponent or ``N.0`` form and nothing at or above U+D800: shown."""
    text = _jcs(value)
    if text is None or _odd_float(text) or any(ord(c) >= 0xD800 for c in text):
        return
    try:
        orjson.dumps(orjson.loads(text), option=_OPTS)
    except TypeError:  # digits past I-JSON (a double JCS writes as an integer)
        return
    assert _shown_by_orjson(text) is not _UNSHOWN


@pytest.mark.parametrize(
    "text",
    ['{"a":0.000001}', '{"a":1e-7}', '{"a":1.5e+300}', '{"a":[1,0.5,1e+21]}',
     '{"a":"1e-7","b":0.000006}', '{"a":-5e-324,"b":1.7976931348623157e+308}'],
)  # fmt: skip
def test_floats_orjson_writes_otherwise_are_shown_in_their_jcs_form(text: str) -> None:
    shown = _shown_by_orjson(text)
    assert shown is not _UNSHOWN and _jcs(shown) == text


def test_a_string_holding_such_a_float_is_left_to_the_exact_path() -> None:
    """The rewrite cannot tell a string's content from a number: a string holding
    orjson's form of such a float is rewritten too, the result then differs from the
    text (whose string it is), and the exact path decides; nothing is accepted wrongly."""
    assert _shown_by_orjson('{"a":"0.000006","b":0.000006}') is not _UNSHOWN
    assert _shown_by_orjson('{"a":"6e-6","b":0.000006}') is _UNSHOWN
    assert parse_canonical('{"a":"6e-6","b":0.000006}') == {"a": "6e-6", "b": 6e-6}
    assert _shown_by_orjson('{"a":"0.000006","b":6e-6}') is _UNSHOWN
    with pytest.raises(JSONRefusedError):
        parse_canonical('{"a":"0.000006","b":6e-6}')


@pytest.mark.parametrize(
    "text",
    ['{"b":1,"a":2,"a":3}', '{"a":2,"a":3}', '{"a":1.0}', '{"a":9007199254740993}',
     '{"a":9007199254740992}', '{"a":1e16}', '{"a":1E-7}', '{"a":1e-07}', '{"a":"\\/"}',
     '{"a":"\\u00e9"}',
     '{"a": 1}', '{"a":-0}', '{"a":"\\ud800"}', '{"a":1e400}', '{"a":01}', "[1,]"],
)  # fmt: skip
def test_known_non_canonical_or_uncertain_forms_are_not_shown(text: str) -> None:
    assert _shown_by_orjson(text) is _UNSHOWN


@settings(max_examples=300)
@given(values)
def test_the_depth_counted_on_the_value_is_the_depth_of_the_text(value: Any) -> None:
    text = json.dumps(value)
    assert _nesting(json.loads(text)) == _depth(text)


@settings(max_examples=200)
@given(st.integers(0, 300), st.sampled_from(["[", '{"a":', '["x",{"k":']), st.booleans())
def test_the_indentation_tells_whether_a_value_nests_too_deep(
    depth: int, opener: str, empty: bool
) -> None:
    closer = {"[": "]", '{"a":': "}", '["x",{"k":': "}]"}[opener]
    inner = "[]" if empty else '"a\\n  b"'
    value = json.loads(opener * depth + inner + closer * depth)
    assert _beyond_max_depth(value) == (_nesting(value) > MAX_DEPTH)


@pytest.mark.parametrize("inner", ['"a"', "1", "null", '{"k": "v"}'])
def test_scalars_at_the_deepest_allowed_level_are_not_too_deep(inner: str) -> None:
    """A container at exactly MAX_DEPTH holds its scalar members on lines indented as far
    as a deeper container would start: that alone must not refuse the value."""
    opener, closer = ("[" * (MAX_DEPTH - 1), "]" * (MAX_DEPTH - 1))
    if inner.startswith("{"):  # the dict itself is level MAX_DEPTH
        value = json.loads(opener + inner + closer)
    else:
        value = json.loads(opener + "[" + inner + "]" + closer)
    assert _nesting(value) == MAX_DEPTH
    assert _beyond_max_depth(value) is False


@pytest.mark.parametrize("depth", [MAX_DEPTH, MAX_DEPTH + 1, 1024, 1025])
def test_the_depth_limit_holds_on_the_fast_path_and_past_orjsons_own(depth: int) -> None:
    text = '{"a":' * depth + "1" + "}" * depth
    if depth <= MAX_DEPTH:
        assert parse_canonical(text) is not None
    else:
        with pytest.raises(JSONRefusedError, match=f"nests {depth} levels deep"):
            parse_canonical(text)


def test_a_memo_serves_only_texts_the_proof_accepted_each_as_a_value_of_its_own() -> None:
    memo = CanonicalMemo()
    text = '{"a":[1,2],"b":"x"}'
    first = parse_canonical(text, memo=memo)
    assert memo.texts == {text}
    again = parse_canonical(text, memo=memo)
    assert again == first and again is not first and again["a"] is not first["a"]
    for bad in ('{"b":"x","a":[1,2]}', '{"a":[1,2],"b":"x","a":3}', '{"a":[1,2], "b":"x"}'):
        with pytest.raises(JSONRefusedError):
            parse_canonical(bad, memo=memo)
    assert memo.texts == {text}
    # A text only the exact path accepts (2**53: digits JCS reads as a double) is not
    # remembered (orjson would read it back as an integer).
    assert repr(parse_canonical('{"a":9007199254740992}', memo=memo)) == repr({"a": 2.0**53})
    assert memo.texts == {text}


def test_a_full_memo_starts_over() -> None:
    memo = CanonicalMemo(max_text=20, max_chars=20)
    for t in ('{"a":1}', '{"b":2}', '{"c":3}', '{"d":4}', '{"e":"' + "x" * 30 + '"}'):
        parse_canonical(t, memo=memo)
    # Seven characters each: the third starts it over; the last is too long to keep.
    assert memo.texts == {'{"c":3}', '{"d":4}'} and memo.chars == 14

"""The one bounded JSON parse: payloads are read only in their own RFC 8785 form (the
fast check agrees with the rfc8785 package), and nothing read can raise RecursionError."""

from __future__ import annotations

import json
from typing import Any

import pytest
import rfc8785
from hypothesis import given, settings
from hypothesis import strategies as st

from ledger.canonical import canonical_text
from ledger.jsonsafe import MAX_DEPTH, JSONRefusedError, parse_canonical, parse_json

values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-(2**53) + 1, 2**53 - 1),
              st.floats(allow_nan=False, allow_infinity=False), st.text()),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=15,
)  # fmt: skip


def _jcs(value: Any) -> str | None:
    try:
        return rfc8785.dumps(value).decode("utf-8")
    except (rfc8785.CanonicalizationError, ValueError, TypeError):
        return None


@settings(max_examples=500)
@given(values)
def test_a_canonical_text_parses_back_to_its_value(value: Any) -> None:
    """What the ledger writes, it reads back; what it refuses to write, it refuses to read."""
    text = _jcs(value)
    try:
        ours = canonical_text(value)
    except ValueError:  # a lone surrogate, an integral float past 2**53
        if text is not None:
            with pytest.raises(JSONRefusedError):
                parse_canonical(text)
        return
    assert ours == text
    assert _jcs(parse_canonical(text)) == text


@settings(max_examples=500)
@given(values, st.sampled_from([{"indent": 1}, {"sort_keys": False}, {"ensure_ascii": True}]))
def test_any_other_text_is_refused(value: Any, options: dict[str, Any]) -> None:
    text = json.dumps(value, **options)
    if _jcs(value) == text:
        assert _jcs(parse_canonical(text)) == text
    else:
        with pytest.raises(JSONRefusedError):
            parse_canonical(text)


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 5000, 200_000])
@pytest.mark.parametrize("opener", ["[", '{"a":'])
def test_deep_nesting_is_refused_not_a_recursion_error(depth: int, opener: str) -> None:
    closer = "]" if opener == "[" else "}"
    text = opener * depth + "1" + closer * depth
    for parse in (parse_canonical, parse_json):
        with pytest.raises(JSONRefusedError, match="levels deep"):
            parse(text)


def test_the_depth_limit_itself_is_accepted() -> None:
    text = "[" * MAX_DEPTH + "]" * MAX_DEPTH
    assert parse_json(text) is not None and parse_canonical(text) is not None


def test_brackets_inside_strings_do_not_count() -> None:
    text = '{"a":"' + "[{" * 5000 + '"}'
    assert parse_canonical(text) == {"a": "[{" * 5000}


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ('{"b":1,"a":2,"a":3}', "the key 'a' twice"),
        ('{"a":1.0}', "RFC 8785 form"),
        ('{"a":"\\ud800"}', "lone surrogate"),
        ('{"a":9007199254740993}', "RFC 8785 form"),  # 2**53 + 1: no double is written so
        ('{"a":1e400}', "the number 1e400"),
        ('{"a":NaN}', "not valid JSON"),
        ("{", "not valid JSON"),
        (" {}", "not valid JSON"),
    ],
)
def test_refusals_say_why(text: str, why: str) -> None:
    with pytest.raises(JSONRefusedError, match=why.replace("(", r"\(")):
        parse_canonical(text)


def test_a_number_past_i_json_is_read_as_the_double_jcs_wrote() -> None:
    """JCS numbers are IEEE doubles: the float 1e16 is written in digits."""
    assert parse_canonical(canonical_text({"a": 1e16})) == {"a": 1e16}
    assert parse_canonical('{"a":9007199254740992}') == {"a": 2.0**53}


def test_files_may_not_repeat_a_key_but_may_have_whitespace() -> None:
    assert parse_json(' {"a": [1, 2]}\n') == {"a": [1, 2]}
    with pytest.raises(JSONRefusedError, match="duplicate key 'a'"):
        parse_json('{"a":1,"a":2}')
    with pytest.raises(JSONRefusedError, match="bytes"):
        parse_json('"' + "x" * 100 + '"', max_bytes=50)


_NUMBERS = st.sampled_from([
    "1.0", "1e400", "-0", "0.00001", "1e-05", "1E2", "10000000000000000", "9007199254740993",
    "1.5", "-1.25e+30", "123456789012345678", "1e+21", "1e21", "0.0",
])  # fmt: skip
near_json = st.one_of(
    values.map(json.dumps),
    values.map(lambda v: json.dumps(v, ensure_ascii=False, sort_keys=True, separators=(",", ":"))),
    st.tuples(st.text(max_size=3), _NUMBERS).map(lambda t: f'{{"{t[0]}":{t[1]}}}'),
    st.text(max_size=40),
)


@settings(max_examples=500)
@given(near_json)
def test_what_is_accepted_is_exactly_its_rfc8785_form(text: str) -> None:
    """The oracle: any text is refused (JSONRefusedError, nothing else) or parses to a
    value whose RFC 8785 serialization (the rfc8785 package) is the text itself."""
    try:
        value = parse_canonical(text)
    except JSONRefusedError:
        return
    assert rfc8785.dumps(value).decode("utf-8") == text

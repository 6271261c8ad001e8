""":mod:`aborist.audit.checks.run_events`: a payload is parsed as ``json.loads`` parses it when it
is its own RFC 8785 form and refused otherwise, the validating scan agrees with
``json.loads`` on what is a JSON object, and a run's caches never mix two events up."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aborist.audit.checks.run_events import RunEvents, is_json_object, parse_payload
from ledger.canonical import canonical_text
from ledger.envelope import RecordedEvent

json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text()),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(), inner, max_size=4)
    ),
    max_leaves=15,
)
#: Texts near JSON: valid documents, with whitespace around, cut short, with extra data.
texts = st.one_of(
    json_values.map(json.dumps),
    st.tuples(json_values.map(json.dumps), st.sampled_from(["", " ", "\n", "x", "}", ",1"])).map(
        lambda t: t[0] + t[1]
    ),
    json_values.map(lambda v: " " + json.dumps(v)),
    json_values.map(lambda v: json.dumps(v)[:-1]),
    st.text(max_size=30),
    st.sampled_from(["\ufeff{}", "NaN", '{"a":Infinity}', "", "{}{}", "[{}]"]),
)


def _loads(text: str) -> tuple[str, Any]:
    try:
        return "ok", json.loads(text)
    except ValueError as e:
        return "error", type(e)


def _parse(text: str) -> tuple[str, Any]:
    try:
        return "ok", parse_payload(text)
    except ValueError as e:
        return "error", type(e)


def canonical_or_none(value: Any) -> str | None:
    try:
        return canonical_text(value)
    except ValueError:
        return None


def _jcs_int(s: str) -> int | float:
    n = int(s)
    return n if abs(n) <= 2**53 - 1 else float(s)  # JCS numbers are doubles


def _canonical(text: str) -> tuple[str, Any]:
    """What parse_payload must do: json.loads's value (numbers past I-JSON as doubles) for
    a text that is its own RFC 8785 form, an error for any other."""
    try:
        found: tuple[str, Any] = ("ok", json.loads(text, parse_int=_jcs_int))
    except ValueError as e:
        found = ("error", type(e))
    if found[0] != "ok":
        return found
    try:
        return found if canonical_text(found[1]) == text else ("error", None)
    except ValueError:  # NaN, an integer outside I-JSON, a lone surrogate
        return "error", None


@settings(max_examples=1000)
@given(st.one_of(texts, json_values.map(canonical_or_none)))
def test_parse_and_validate_agree_with_json_loads(text: str | None) -> None:
    if text is None:
        return
    expected = _canonical(text)
    got = _parse(text)
    assert got[0] == expected[0]
    if expected[0] == "ok":
        assert json.dumps(got[1]) == json.dumps(expected[1])  # NaN-safe equality
    loaded = _loads(text)
    assert is_json_object(text) == (loaded[0] == "ok" and isinstance(loaded[1], dict))


def ev(seq: int, type_: str, payload: str) -> RecordedEvent:
    return RecordedEvent(seq, f"e{seq}", "run:r", seq, type_, 1, "t", payload, "", "", "")


def test_run_events_caches_per_event_not_per_seq() -> None:
    """Two events with one seq (a forged bundle can have that) keep their own payloads."""
    a, b = ev(1, "qa.run_started", '{"n":1}'), ev(1, "qa.run_started", '{"n":2}')
    run = RunEvents("r", [a, b])
    assert run.data(a) == {"n": 1} and run.data(b) == {"n": 2}
    assert run.digest(a) != run.digest(b)
    assert run.first("qa.run_started") is a and run.last("qa.run_started") is b


@pytest.mark.parametrize(
    ("payloads", "bad"), [(['{"a":1}', "[1]", "{}"], 1), (['{"a":1}', "{", "x"], 1), (["{}"], None)]
)
def test_unreadable_names_the_first_non_object(payloads: list[str], bad: int | None) -> None:
    events = [ev(i, "qa.thing_done", p) for i, p in enumerate(payloads)]
    run = RunEvents("r", events)
    run.data(events[0])  # a parsed one and unparsed ones alike
    found = run.unreadable()
    assert (found.seq if found else None) == bad

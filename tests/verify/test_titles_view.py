"""The heading view of an evidence object (aborist.verify.rules.titles) is derived once
and kept on the object; the answer is the same on the first call, on later calls, and on
a fresh object built from the same text."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from aborist.verify.evidence import build_evidence
from aborist.verify.rules.titles import stops_inside_heading

TEXT = (
    "**PEP 492** - Coroutines with async and await syntax The proposal that made "
    'coroutines a proper standalone concept.\nHandling Errors\nSee "The with statement" '
    "for the details."
)


def test_a_piece_of_a_heading_is_named_and_a_whole_one_is_not() -> None:
    (ev,) = build_evidence([TEXT])
    assert stops_inside_heading("Coroutines with async", [ev])
    assert stops_inside_heading("Coroutines with async", [ev])  # the kept view
    assert stops_inside_heading("Coroutines with async and await syntax", [ev]) == ""
    assert stops_inside_heading("The with statement", [ev]) == ""
    assert stops_inside_heading("Handling Errors", [ev]) == ""


words = st.sampled_from(
    ["Coroutines", "with", "async", "and", "await", "syntax", "Handling", "Errors", "the"]
)


@settings(max_examples=60, deadline=None)
@given(st.lists(words, min_size=1, max_size=6))
def test_the_kept_view_answers_as_a_fresh_object_does(quote: list[str]) -> None:
    q = " ".join(quote)
    (kept,) = build_evidence([TEXT])
    first = stops_inside_heading(q, [kept])
    (fresh,) = build_evidence([TEXT])
    assert stops_inside_heading(q, [kept]) == first == stops_inside_heading(q, [fresh])

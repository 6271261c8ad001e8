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


#: A paper's title with characters canonicalization rewrites (a U+2010 hyphen, a curly
#: apostrophe, emphasis marks), longer than a short heading line: the title is taken out
#: of the text in the same canonical form, so a quotation of only its first words is
#: still a piece of it.
PAPER = (
    "Species\u2010specific *clinical* features of the virus\u2019s infection among "
    "otherwise healthy adolescents and adults"
)


def test_a_title_with_rewritten_characters_is_still_a_heading() -> None:
    from aborist.verify.policy import DEFAULT_POLICY
    from aborist.verify.verify import verify_answer

    (ev,) = build_evidence([{"pointer_id": "E1", "title": PAPER, "text": PAPER}])
    piece = "Species-specific clinical features of the virus's infection"
    assert stops_inside_heading(piece, [ev])
    rest = " among otherwise healthy adolescents and adults"
    assert stops_inside_heading(piece + rest, [ev]) == ""
    q = "What is the title of the paper?"
    cut = verify_answer(f'"{piece}"', [ev], DEFAULT_POLICY, question=q, mode="quote")
    assert cut.label != "VERIFIED"
    whole = verify_answer(f'"{piece}{rest}"', [ev], DEFAULT_POLICY, question=q, mode="quote")
    assert whole.label == "VERIFIED"

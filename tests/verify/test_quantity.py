"""Quantities (docs/verifier.md §19.13): a number's sign is part of its value, and a
claim's number must stand beside the words it stands beside in its sentence."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from aborist.verify.evidence import build_evidence
from aborist.verify.text.quantity import misplaced_number, signed_tokens, signs_agree
from aborist.verify.text.textcanon import tokens
from aborist.verify.verify import verify_answer

VOUCHED = {"VERIFIED", "SUPPORTED"}
PROPS = settings(max_examples=60, deadline=None)


def _label(answer: str, *evidence: str, question: str | None = None) -> str:
    return verify_answer(answer, build_evidence(list(evidence)), question=question).label


# --- signed_tokens / signs_agree ---------------------------------------------------------


def test_signed_tokens_align_with_tokens() -> None:
    text = 'Raising 10**-3 gives "0.001"; x-1, the range 1990-1995 and -7 (or (-2)) differ.'
    signed = signed_tokens(text)
    assert [t.lstrip("-") for t in signed] == tokens(text)
    assert "-3" in signed and "-7" in signed and "-2" in signed
    # a minus glued to a word or a number is not a sign
    assert "1" in signed and "1995" in signed and "-1995" not in signed


def test_typographic_minus_is_a_sign() -> None:
    assert signed_tokens("it was \u22125 degrees")[2] == "-5"


def test_signs_agree_tells_a_sign_from_none() -> None:
    passage = 'The expression "-4**2" evaluates to "-16".'
    assert not signs_agree('"-4**2" evaluates to "16"', passage)
    assert signs_agree('"-4**2" evaluates to "-16"', passage)
    assert signs_agree("evaluates to", passage)  # no number: nothing to tell
    assert signs_agree("something else entirely", passage)  # not there at all: not ours


# --- misplaced_number ------------------------------------------------------------------


def test_a_number_from_elsewhere_in_the_sentence_is_misplaced() -> None:
    sentence = "Adding 3 and 4 gives the total 7, which is the sum."
    assert misplaced_number("Adding 3 and 4 gives the total 7.", sentence) == ""
    assert "beside" in misplaced_number("Adding 3 and 4 gives the total 4.", sentence)


def test_a_reference_number_is_not_the_quantity() -> None:
    sentence = "The loop in Figure 6-6 adds 30 to every cell."
    assert misplaced_number("The loop in Figure 6-6 adds 30 to every cell.", sentence) == ""
    assert misplaced_number("The loop in Figure 6-6 adds 6 to every cell.", sentence) != ""


def test_a_number_beside_a_comparative_counts_the_comparative() -> None:
    sentence = "The tank holds 90 litres, which is more than 60 percent of its size."
    assert misplaced_number("The tank holds 60 litres.", sentence) != ""
    assert misplaced_number("The tank holds more than 60 percent of its size.", sentence) == ""


def test_moved_adverbial_and_dates_keep_their_numbers() -> None:
    assert misplaced_number("In 1990, Ada founded the club.", "Ada founded the club in 1990.") == ""
    assert misplaced_number("It opened on 5 March 1990.", "It opened on March 5, 1990.") == ""
    assert misplaced_number("seven days", "A week has 7 days.") == ""


def test_sign_mismatch_is_reported_either_way() -> None:
    assert "sign" in misplaced_number("The offset is 8 bytes.", "The offset is -8 bytes.")
    assert "sign" in misplaced_number("The offset is -8 bytes.", "The offset is 8 bytes.")
    # a number the passage lacks altogether is left to the anchor check
    assert misplaced_number("The offset is 9 bytes.", "The offset is 8 bytes.") == ""


# --- end to end --------------------------------------------------------------------------


def test_a_quoted_result_with_the_sign_dropped_is_not_verified() -> None:
    ev = 'Because unary minus binds more loosely, "-3**2" evaluates to "-9" in this language.'
    assert _label('"-3**2" evaluates to "-9"', ev) == "VERIFIED"
    assert _label('"-3**2" evaluates to "9"', ev) not in VOUCHED
    assert _label("-3**2 evaluates to 9 in this language.", ev) not in VOUCHED


def test_a_count_moved_to_another_slot_is_not_vouched() -> None:
    ev = "Consider 12 + 30, an expression that evaluates to the value 42."
    assert _label("12 + 30 is an expression that evaluates to the value 42.", ev) in VOUCHED
    assert _label("12 + 30 is an expression that evaluates to the value 30.", ev) not in VOUCHED


NOUNS = ["museum", "library", "theatre", "harbour", "bridge", "school"]
UNITS = ["rooms", "doors", "windows", "towers", "stairs", "gates"]


@PROPS
@given(
    st.sampled_from(NOUNS),
    st.lists(st.sampled_from(UNITS), min_size=2, max_size=2, unique=True),
    st.lists(st.integers(2, 900), min_size=2, max_size=2, unique=True),
)
def test_property_two_counts_trading_places_are_never_vouched(
    noun: str, units: list[str], counts: list[int]
) -> None:
    (u1, u2), (a, b) = units, counts
    sentence = f"The old {noun} had {a} {u1} and {b} {u2} when it opened."
    assert _label(sentence, sentence) == "VERIFIED"
    swapped = f"The old {noun} had {b} {u1} and {a} {u2} when it opened."
    assert _label(swapped, sentence) not in VOUCHED


@PROPS
@given(st.sampled_from(NOUNS), st.integers(1, 900), st.booleans())
def test_property_a_flipped_sign_is_never_vouched(noun: str, n: int, negative_first: bool) -> None:
    signed, plain = f"-{n}", f"{n}"
    ev_num, claim_num = (signed, plain) if negative_first else (plain, signed)
    sentence = f"Inside the {noun} the thermometer read {ev_num} degrees at noon."
    claim = f"Inside the {noun} the thermometer read {claim_num} degrees at noon."
    assert _label(sentence, sentence) == "VERIFIED"
    assert _label(claim, sentence) not in VOUCHED

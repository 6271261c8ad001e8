"""A verbatim piece that stops short of its sentence: a symbol word, a list cut short
(docs/verifier.md §19.15)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from aborist.verify.evidence import build_evidence
from aborist.verify.rules.cutoff import cut_reason, cuts_list, symbols_agree
from aborist.verify.verify import verify_answer

NEVER = "Because the arm can never finish, the checker decides that the result is u8."
LIST = "The tool may only be run in a folder that holds Cargo.toml, setup.py, or another manifest."


def label(answer: str, evidence: list[str]) -> str:
    return verify_answer(answer, build_evidence(evidence)).label


def test_a_symbol_word_must_be_in_the_sentence() -> None:
    assert not symbols_agree("the checker decides that the result is !.", NEVER)
    assert symbols_agree("the checker decides that the result is u8.", NEVER)
    assert symbols_agree("what the ? operator does", "Read what the ? operator does here.")
    assert symbols_agree("plain words only", "Some plain words only.")
    assert label("The checker decides that the result is !.", [NEVER]) == "UNSUPPORTED"
    assert label("The checker decides that the result is u8.", [NEVER]) == "VERIFIED"


def test_a_list_cut_short() -> None:
    cut = "The tool may only be run in a folder that holds Cargo.toml."
    assert cuts_list(cut, LIST)
    assert not cuts_list(LIST, LIST)
    assert not cuts_list("The program stops.", "The program stops, and the caller handles it.")
    assert not cuts_list("It may be run in a folder", LIST)  # not sentence-shaped
    assert cuts_list("It returns a Result.", "It returns a Result or an Option.")
    assert cut_reason(cut, [LIST]).startswith("ANCHOR_MISMATCH")
    assert label(cut, [LIST]) == "UNSUPPORTED"
    assert label(LIST, [LIST]) == "VERIFIED"


def test_a_list_cut_short_without_an_exclusive_word_is_not_strict() -> None:
    ev = ["The tool can be run in a folder that holds Cargo.toml, setup.py, or another manifest."]
    cut = "The tool can be run in a folder that holds Cargo.toml."
    assert cut_reason(cut, ev) == ""
    assert label(cut, ev) != "VERIFIED"


_ITEM = st.sampled_from(["Cargo.toml", "setup.py", "Makefile", "go.mod", "pom.xml"])


@settings(max_examples=60, deadline=None)
@given(
    items=st.lists(_ITEM, min_size=3, max_size=4, unique=True),
    joiner=st.sampled_from(["or", "and"]),
)
def test_no_prefix_that_ends_inside_the_list_is_strict(items: list[str], joiner: str) -> None:
    """Any prefix of the sentence that ends at an item before the last is not VERIFIED;
    the whole sentence is."""
    body = ", ".join(items[:-1]) + f", {joiner} {items[-1]}"
    sentence = f"The tool may only be run in a folder that holds {body}."
    assert label(sentence, [sentence]) == "VERIFIED"
    for k in range(1, len(items) - 1):
        cut = "The tool may only be run in a folder that holds " + ", ".join(items[:k]) + "."
        assert label(cut, [sentence]) != "VERIFIED"


def test_a_piece_of_an_identifier_is_no_occurrence() -> None:
    from aborist.verify.rules.cutoff import inside_identifier

    sentence = "The value sits in the config_max variable, and max is never read."
    assert not inside_identifier("max", sentence)  # a whole word "max" stands there too
    only = "The value sits in the config_max variable."
    assert inside_identifier("max", only)
    assert not inside_identifier("config_max", only)
    assert inside_identifier("init", "Define __init_subclass__ on the base.")
    assert not inside_identifier("__init__", "Define __init__ on the class.")
    assert not inside_identifier("max", "No identifier here: max.")


def test_a_bare_span_inside_an_identifier_is_not_verbatim() -> None:
    from aborist.verify.evidence import build_evidence
    from aborist.verify.verify import verify_answer

    ev = build_evidence(["Listing 6-6 matches on an Option<u8> value in the config_max variable."])
    q = "What is the name of the variable Listing 6-6 matches on?"
    assert verify_answer("max", ev, question=q).label == "UNSUPPORTED"  # 2.5.0: VERIFIED
    assert verify_answer("config_max", ev, question=q).label == "VERIFIED"

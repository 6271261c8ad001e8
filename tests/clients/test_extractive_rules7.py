"""The extractive/7 rule of the offline answerer: of the candidates stating the question's
relation, those in the section whose heading names the question's words (and nothing
else but category nouns and language names) come first. Pure functions of (question,
evidence, mode)."""

from __future__ import annotations

from aborist.clients.extractive import _titles, extract
from aborist.clients.terms import text_keys
from aborist.prompts import CANNOT_ANSWER

MODE = "claim-lattice"

ASIDE = ("E1", "A slice is a kind of reference, so it does not have ownership.")
DEFINITION = "Slices let you reference a contiguous sequence of elements in a collection."


def first_line(question: str, *evidence: tuple[str, str]) -> str:
    return extract(question, evidence, MODE).splitlines()[0]


def test_a_definition_in_the_section_about_x_comes_first() -> None:
    # both define "slice"; only the second is in the section about slices
    section = ("E2", f"The Slice Type\n\n{DEFINITION}")
    assert first_line("What is a slice?", ASIDE, section) == f"{DEFINITION} [E2]"


def test_without_the_heading_the_adjacent_pair_decides() -> None:
    # "A slice" holds the question's pair (a, slice): it ranks first when no heading decides
    bare = ("E2", DEFINITION)
    assert first_line("What is a slice?", ASIDE, bare) == f"{ASIDE[1]} [E1]"


def test_a_heading_naming_more_than_x_is_not_the_section_about_x() -> None:
    wider = ("E2", f"Slices and Their Uses in Collections\n\n{DEFINITION}")
    assert first_line("What is a slice?", ASIDE, wider) == f"{ASIDE[1]} [E1]"


def test_the_heading_ranks_only_candidates_in_relation() -> None:
    # "Can a slice be empty?" asks for no relation: the heading "Empty Slices" does not put
    # the sentence under it before the one holding more of the question's word pairs
    titled = ("E1", "Empty Slices\n\nAn empty slice holds no elements at all.")
    plain = ("E2", "A slice can be empty when the range starts where it ends.")
    assert first_line("Can a slice be empty?", titled, plain) == f"{plain[1]} [E2]"


def test_the_heading_lifts_nothing_over_the_gate() -> None:
    # the heading names "slice", the sentence under it holds none of the question
    section = ("E1", "The Slice Type\n\nThis chapter ends with a short summary of the rules.")
    assert extract("What is a slice?", (section,), MODE).startswith(CANNOT_ANSWER)


def test_titles_category_nouns_and_languages_aside() -> None:
    core = text_keys("slice")
    assert _titles(frozenset(text_keys("The Slice Type")), core)
    assert _titles(frozenset(text_keys("Rust Slices")), core)
    assert not _titles(frozenset(text_keys("Extending Slices with Methods")), core)
    assert not _titles(frozenset(), core)

"""Where the question's frame puts another filler than the span (docs/verifier.md §19.17):
a reversed direction, the question's type word on another token, the same frame with
another filler. Each test has its control: the rule switched off, or the right filler."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from aborist.verify.evidence import build_evidence
from aborist.verify.policy import VerifierPolicy
from aborist.verify.rules.frames import (
    asked_type,
    named_elsewhere,
    outside_list,
    reversed_direction,
    same_frame,
    typed_elsewhere,
)
from aborist.verify.rules.locality import build_sentences, question_anchors
from aborist.verify.rules.rival import name_initials
from aborist.verify.text.textcanon import tokens
from aborist.verify.verify import verify_answer

OFF = VerifierPolicy(answer_directions=False, answer_type_words=False, answer_frames=False)
NO_INITIALS = VerifierPolicy(answer_initials=False)


def rung(answer: str, evidence: list[str], **kw: object) -> int:
    return verify_answer(answer, build_evidence(evidence), **kw).rung  # type: ignore[arg-type]


GROUPING = (
    "Operators in the same box group left to right (except for exponentiation and "
    "conditional expressions, which group from right to left). Note that comparisons, "
    "membership tests, and identity tests all have the same precedence and have a "
    "left-to-right chaining feature."
)
TERMINATION = (
    "The main function may return any types that implement the std::process::Termination "
    "trait, which contains a function report that returns an ExitCode."
)
ADDRESSES = (
    "The first is home, and it has the value V4 as its kind with associated address data "
    "of 127.0.0.1. The second instance is loopback. It has the other variant as its kind "
    "value, V6, and has address ::1 associated with it."
)


def test_ordered_pairs_and_their_reversal() -> None:
    q = "Which operators group from right to left?"
    assert reversed_direction(q, ["a left-to-right chaining feature"]) == "right to left"
    assert reversed_direction(q, ["they group from left to right"]) == "right to left"
    # the sentence states the question's order too: nothing reversed
    assert reversed_direction(q, ["left to right, except these, from right to left"]) == ""
    assert reversed_direction(q, ["they group from right to left"]) == ""
    assert reversed_direction("Which operators bind tightest?", ["left to right"]) == ""


def test_a_reversed_direction_is_not_the_answer() -> None:
    q = "Which operators in the same box group from right to left?"
    span = "comparisons, membership tests, and identity tests"
    assert rung(span, [GROUPING], question=q) == 3
    assert rung(span, [GROUPING], question=q, policy=OFF) == 1  # the control
    assert rung("exponentiation and conditional expressions", [GROUPING], question=q) == 1
    # a yes/no question is no direction asked for
    polar = "Do comparisons group from right to left?"
    assert rung("comparisons", [GROUPING], question=polar) == rung(
        "comparisons", [GROUPING], question=polar, policy=OFF
    )


def test_the_asked_type() -> None:
    assert asked_type("Which trait must the return type of main implement?") == "trait"
    assert asked_type("Which type enables multiple ownership?") == "type"
    assert asked_type("Which city is the capital?") == "city"
    # a longer noun phrase, a name, or no noun: no single type word
    assert asked_type("from which hip hop record executive?") == ""
    assert asked_type("in which New York county?") == ""
    assert asked_type("What is the title of PEP 484?") == ""


def test_the_type_word_on_another_token() -> None:
    q = "Which trait must the return type of main implement?"
    assert typed_elsewhere(q, "ExitCode", [TERMINATION]) == "std::process::Termination"
    assert typed_elsewhere(q, "std::process::Termination", [TERMINATION]) == ""
    assert rung("ExitCode", [TERMINATION], question=q) == 3
    assert rung("ExitCode", [TERMINATION], question=q, policy=OFF) == 1  # the control
    assert rung("std::process::Termination", [TERMINATION], question=q) == 1


def test_a_list_before_the_type_word_types_each_item() -> None:
    q = "Which trait must the type implement?"
    s = "The type must implement the Display and Debug traits."
    assert typed_elsewhere(q, "Display", [s]) == ""
    assert typed_elsewhere(q, "Debug", [s]) == ""


def test_a_modifier_or_the_subject_is_not_typed() -> None:
    # "a British film director": an adjective before the noun names no director
    q = "Which director is from Great Britain?"
    s = "Alex Cox is a British director and screenwriter."
    assert typed_elsewhere(q, "Alex Cox", [s]) == ""
    # the question's own subject, typed by the noun, is not a rival
    q2 = "Which method does the Iterator trait require?"
    s2 = "The Iterator trait requires one method: next."
    assert typed_elsewhere(q2, "next", [s2]) == ""


ITER = (
    "For example, the code in Listing 13-10 creates an iterator over the items in the "
    "vector v1 by calling the iter method defined on Vec<T>."
)
OVERREAD = (
    "In C, attempting to read beyond the end of a data structure is undefined behavior. "
    "You might get whatever is at the location in memory. "
    "This is called a buffer overread and can let an attacker read data stored after the "
    "data structure."
)


def test_a_plain_word_names_a_thing_for_a_code_like_span() -> None:
    q = "Which method creates an iterator over the items of the vector v1?"
    assert typed_elsewhere(q, "Vec<T>", [ITER]) == "iter"
    assert rung("Vec<T>", [ITER], question=q) == 3
    assert rung("Vec<T>", [ITER], question=q, policy=OFF) == 1  # the control
    assert rung("iter", [ITER], question=q) == 1
    # a plain span has no code-like kind: "the capital city" names no city
    q2 = "Which city is the largest?"
    assert typed_elsewhere(q2, "Paris", ["Paris is the capital city and the largest."]) == ""


def test_the_evidence_names_what_it_describes() -> None:
    q = "What is reading memory beyond the end of a data structure called?"
    sents = OVERREAD.split(". ")
    assert named_elsewhere(q, "undefined behavior", sents[:1], sents[1:]) == "a buffer overread"
    assert named_elsewhere(q, "a buffer overread", sents[2:], []) == ""
    assert named_elsewhere(q, "buffer overread", sents[2:], []) == ""
    # not a question about a name; a naming not led by a demonstrative
    assert (
        named_elsewhere("What does reading do?", "undefined behavior", sents[:1], sents[1:]) == ""
    )
    assert named_elsewhere(q, "x", ["It reads."], ["Rust is called safe."]) == ""
    assert rung("undefined behavior", [OVERREAD], question=q) == 3
    assert rung("undefined behavior", [OVERREAD], question=q, policy=OFF) == 1  # the control
    assert rung("a buffer overread", [OVERREAD], question=q) == 1


def test_the_same_frame_with_another_filler() -> None:
    q = "In Listing 6-1, what address data is associated with the home instance?"
    sents = build_sentences(ADDRESSES)
    anchors = question_anchors(q, tokens("::1"))
    why = same_frame("::1", q, anchors, sents, [1, 2])
    assert "127.0.0.1" in why
    assert same_frame("127.0.0.1", q, question_anchors(q, tokens("127.0.0.1")), sents, [0]) == ""
    assert rung("::1", [ADDRESSES], question=q) == 3
    assert rung("::1", [ADDRESSES], question=q, policy=OFF) == 1  # the control
    assert rung("127.0.0.1", [ADDRESSES], question=q) == 1


def test_a_plain_phrase_or_a_name_has_no_frame_test() -> None:
    q = "Who designed the home instance?"
    sents = build_sentences("Anna Holm designed the home. Erik Berg designed the home instance.")
    anchors = question_anchors(q, tokens("Anna Holm"))
    assert same_frame("Anna Holm", q, anchors, sents, [0]) == ""
    assert same_frame("the old one", q, anchors, sents, [0]) == ""


WORDS = ["left", "right", "top", "bottom", "front", "back", "inside", "outside"]
PROPS = settings(max_examples=60, deadline=None)


@PROPS
@given(
    st.sampled_from(WORDS),
    st.sampled_from(WORDS),
    st.sampled_from(["from {a} to {b}", "{a} to {b}", "{a}-to-{b}"]),
    st.sampled_from(["from {a} to {b}", "{a} to {b}", "{a}-to-{b}"]),
)
def test_a_direction_is_reversed_only_when_the_sentence_never_states_it(
    a: str, b: str, asked: str, stated: str
) -> None:
    q = "Which lists are read " + asked.format(a=a, b=b) + "?"
    forward = "Plain lists are read " + stated.format(a=a, b=b) + "."
    backward = "Plain lists are read " + stated.format(a=b, b=a) + "."
    assert reversed_direction(q, [forward]) == ""
    assert reversed_direction(q, [forward + " " + backward]) == ""
    assert bool(reversed_direction(q, [backward])) == (a != b)


SPANS = ["ExitCode", "::1", "127.0.0.1", "comparisons", "Termination", "Vec<T>", "iter", "C"]


@PROPS
@given(
    st.sampled_from([GROUPING, TERMINATION, ADDRESSES, ITER, OVERREAD]),
    st.sampled_from(SPANS),
    st.sampled_from(
        [
            "Which trait must the return type of main implement?",
            "what address data is associated with the home instance?",
            "Which operators group from right to left?",
            "Which value is associated with it?",
            "Which method creates an iterator?",
            "What is reading memory beyond the end called?",
        ]
    ),
)
def test_the_frame_tests_only_take_rungs_away(ev: str, span: str, q: str) -> None:
    assert rung(span, [ev], question=q) >= rung(span, [ev], question=q, policy=OFF)


POPEYE = (
    "On January 1, 2009, 70 years since the death of his creator, Popeye became public "
    "domain in most countries, but remains under copyright in the United States. "
    "Popeye will enter the public domain in the U.S. on January 1, 2025, assuming no "
    "amendments to U.S. copyright law before that date."
)


def test_a_name_abbreviated_by_its_initials() -> None:
    pats = name_initials("When will Popeye enter the public domain in the United States?")
    assert [sorted(stems) for _, stems in pats] == [["stat", "unit"]]
    pat = pats[0][0]
    assert pat.search("in the U.S. on") and pat.search("the US army")
    assert pat.search("made in the US.")
    assert not pat.search("use us") and not pat.search("the U.S.S.R.")
    # the question's first word is capitalized whatever it is: no run with it
    assert name_initials("When Popeye entered") == []
    q = "When will Popeye enter the public domain in the United States?"
    assert rung("January 1, 2009", [POPEYE], question=q) == 3
    assert rung("January 1, 2009", [POPEYE], question=q, policy=NO_INITIALS) == 1  # control
    assert rung("January 1, 2025", [POPEYE], question=q) == 1


def test_an_abbreviation_of_the_questions_name_is_no_rival() -> None:
    ev = (
        "In 1986, DCP was incorporated under its first executive director Barack Obama. "
        "Barack Hussein Obama II is an American politician who served as the 44th "
        "President of the United States."
    )
    q = "The Developing Communities Project's first executive director was which President?"
    assert rung("Barack Hussein Obama II", [ev], question=q) == 1


ABORTING = (
    "By default, when a panic occurs, the program starts unwinding, which means Rust walks "
    "back up the stack and cleans up the data from each function it encounters. Rust "
    "therefore allows you to choose the alternative of immediately aborting, which ends "
    "the program without cleaning up. Memory that the program was using will then need to "
    "be cleaned up by the operating system."
)


def test_the_relations_agent_phrase_is_a_rival_whatever_the_circumstance() -> None:
    q = "After aborting, who cleans up the memory the program was using?"
    assert rung("Rust", [ABORTING], question=q) == 3
    assert rung("Rust", [ABORTING], question=q, policy=VerifierPolicy(answer_agents=False)) == 1
    assert rung("the operating system", [ABORTING], question=q) == 1


def test_an_agent_phrase_naming_the_span_is_no_rival() -> None:
    ev = (
        "Throne of Glass is a young adult high fantasy novel series by American author "
        "Sarah J. Maas, beginning with the inaugural entry of the same name. Sarah Janet "
        "Maas (born 5 March 1986) is a bestselling American fantasy author."
    )
    q = "Throne of Glass is a high fantasy novel series by which bestselling American author?"
    assert rung("Sarah Janet Maas", [ev], question=q) == 1


GOF = (
    "The book Design Patterns: Elements of Reusable Object-Oriented Software by Erich "
    "Gamma, Richard Helm, Ralph Johnson, and John Vlissides (Addison-Wesley, 1994), "
    "colloquially referred to as The Gang of Four book, is a catalog of design patterns."
)


def test_the_remaining_item_of_a_list_the_question_names() -> None:
    q = "Who wrote Design Patterns with Richard Helm, Ralph Johnson, and John Vlissides?"
    assert outside_list(q, "Addison-Wesley", [GOF]) == "John Vlissides, Ralph Johnson, Richard Helm"
    assert outside_list(q, "Erich Gamma", [GOF]) == ""
    assert rung("Addison-Wesley", [GOF], question=q) == 3
    assert rung("Addison-Wesley", [GOF], question=q, policy=VerifierPolicy(answer_lists=False)) == 1
    assert rung("Erich Gamma", [GOF], question=q) == 1


def test_a_list_the_question_restates_whole_or_not_by_name_is_no_list_asked() -> None:
    # every item named: the question describes the answer with the sentence's list
    ev = "Ricky Gervais (born 25 June 1961) is an English Comedian, Actor and Writer."
    q = "Ricky Gervais, an English Comedian, Actor and Writer, was born on which date?"
    assert outside_list(q, "25 June 1961", [ev]) == ""
    # items that are no names ("x1, x2")
    ev2 = "It is a call with M+4 positional arguments x1, x2, y1, x3, x4."
    assert outside_list("How many arguments has f(x1, x2, y, x3, x4)?", "M+4", [ev2]) == ""
    # one name twice is one name
    ev3 = "It stands in Wichita, Kansas, Sedgwick County, Kansas, United States."
    assert outside_list("Which building in Kansas?", "Wichita", [ev3]) == ""


def test_a_type_word_before_a_name_types_the_whole_name() -> None:
    from aborist.verify.rules.frames import typed_elsewhere

    sentence = (
        "On September 6, Stuyvesant sent lawyer Johannes de Decker and five other "
        "delegates to sign the official Articles of Capitulation."
    )
    q = "Which lawyer was sent to sign the Articles of Capitulation?"
    assert typed_elsewhere(q, "Stuyvesant", [sentence]) == "Johannes de Decker"  # 2.5.0: ""
    assert typed_elsewhere(q, "Johannes de Decker", [sentence]) == ""
    # a list after the type word types its first item only
    listed = "The option adds the respective prefix '0b', '0o', or '0x' to the value."
    assert typed_elsewhere("Which prefix does it add?", "'0o'", [listed]) == "0b"


RELEASE = (
    "Both models were announced for a simultaneous worldwide release: November 11, 2006, "
    "for Japan and November 17, 2006, for North America and Europe."
)
BLOOD = (
    "The RNA was readily detected in the blood (6 of 57 patients) and the anal swabs (11 of "
    "28 patients)."
)


def test_a_value_said_of_something_else_does_not_answer() -> None:
    from aborist.verify.rules.frames import qualified_elsewhere

    q = "When was the PS3 released in North America?"
    assert qualified_elsewhere(q, "November 11, 2006", [RELEASE]) == (
        "for japan",
        "november 17 2006 for north america",
    )
    assert qualified_elsewhere(q, "November 17, 2006", [RELEASE]) is None
    assert (
        qualified_elsewhere("When was it released in Japan?", "November 11, 2006", [RELEASE])
        is None
    )
    counts = "In how many of the 57 patients was viral RNA found in the blood?"
    assert qualified_elsewhere(counts, "11", [BLOOD]) == ("of 28 patients", "6 of 57 patients")
    assert qualified_elsewhere(counts, "6", [BLOOD]) is None
    # a span with no qualifier of its own is not judged
    assert (
        qualified_elsewhere(
            "Where was she born?", "Svelvik", ["She was born in Svelvik, Vestfold."]
        )
        is None
    )


def test_the_qualifier_rule_takes_the_rung_and_can_be_switched_off() -> None:
    ev = build_evidence([RELEASE])
    q = "When was the PS3 released in North America?"
    assert verify_answer("November 11, 2006", ev, question=q).label == "PARTIAL"
    assert verify_answer("November 17, 2006", ev, question=q).label == "VERIFIED"
    off = VerifierPolicy(answer_qualifiers=False)
    assert verify_answer("November 11, 2006", ev, off, question=q).label == "VERIFIED"


def test_a_rust_macro_is_a_code_token_the_type_word_can_type() -> None:
    from aborist.verify.rules.frames import typed_elsewhere
    from aborist.verify.rules.rival import span_kind

    assert span_kind("println!") == "code"  # 2.5.0: "" (no rival test ran at all)
    sentence = (
        "The standard library provides the eprintln! macro that prints to the standard "
        "error stream, so let's change the two places we were calling println! to use "
        "eprintln! instead."
    )
    q = "Which macro prints to the standard error stream?"
    assert typed_elsewhere(q, "println!", [sentence]) == "eprintln!"
    assert typed_elsewhere(q, "eprintln!", [sentence]) == ""
    ev = build_evidence([sentence])
    assert verify_answer("println!", ev, question=q).label == "PARTIAL"
    assert verify_answer("eprintln!", ev, question=q).label == "VERIFIED"

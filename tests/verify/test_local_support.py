"""Local support, rule by rule (docs/verifier.md §19): sentences, passages, polarity both
ways, anchors (numbers, ordinals, months, direction words, names), quote frames, whole
titles, bare spans and the question, multi-sentence parts, the rung."""

from __future__ import annotations

import pytest

from aborist.verify.evidence import build_evidence
from aborist.verify.policy import VerifierPolicy
from aborist.verify.rules.locality import (
    anchor_keys,
    claim_parts,
    is_negated,
    question_anchors,
    split_sentences,
    stem,
)
from aborist.verify.verify import verify_answer

RUST = (
    "Some languages have garbage collection that regularly looks for no-longer-used memory "
    "as the program runs; in other languages, the programmer must explicitly allocate and "
    "free the memory. Rust uses a third approach: memory is managed through a system of "
    "ownership with a set of rules that the compiler checks. If any of the rules are "
    "violated, the program won't compile."
)


def rung(answer: str, evidence: list[str], **kw: object) -> int:
    return verify_answer(answer, build_evidence(evidence), **kw).rung  # type: ignore[arg-type]


# -- sentences ------------------------------------------------------------------------


def test_sentences_split_at_ends_not_at_abbreviations_or_initials() -> None:
    text = (
        "It was written in the 19th century.First for Women is a magazine. Gen. Robert E. Lee "
        "led it, e.g. at Gettysburg. The U.S. Army followed.\n\n# Heading\nNext part"
    )
    assert split_sentences(text) == [
        "It was written in the 19th century.",
        "First for Women is a magazine.",
        "Gen. Robert E. Lee led it, e.g. at Gettysburg.",
        "The U.S. Army followed.",
        "# Heading",
        "Next part",
    ]


def test_a_hard_wrapped_paragraph_stays_one_sentence() -> None:
    assert split_sentences("Memory is managed through\na system of ownership.") == [
        "Memory is managed through a system of ownership."
    ]


def test_stem_meets_inflections_only() -> None:
    assert stem("approved") == stem("approve") == stem("approves")
    assert stem("languages") == stem("language")
    assert stem("running") == stem("run") or stem("running") == "runn"
    assert stem("wrote") != stem("written")
    assert stem("1902") == "1902"


# -- support is local -----------------------------------------------------------------


def test_words_from_two_sentences_do_not_support_a_claim() -> None:
    # "garbage collection" is in sentence 1, "Rust uses" in sentence 2
    assert rung("Rust uses garbage collection.", [RUST]) == 4
    assert rung("Rust uses garbage collection. [E1]", [RUST], mode="claim-lattice") == 4


def test_a_paraphrase_inside_one_sentence_is_supported() -> None:
    answer = (
        "Memory is managed by a system of ownership in Rust, through rules the compiler checks."
    )
    assert rung(answer, [RUST]) == 2


def test_the_window_is_a_policy_field() -> None:
    evidence = ["Anna Holm was born in Bergen. She founded the museum in 1902."]
    claim = "Anna Holm founded the museum in 1902 in Bergen."
    assert rung(claim, evidence) >= 3
    wide = VerifierPolicy(support_window_sentences=2)
    assert rung(claim, evidence, policy=wide) == 2


# -- polarity -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    ["It is not here.", "It won't compile.", "It never runs.", "Made without salt.",
     "It fails to start.", "It cannot be.", "No one came.", "Neither works."],
)  # fmt: skip
def test_negation_cues(text: str) -> None:
    assert is_negated(text)


def test_a_hyphenated_no_is_not_a_cue() -> None:
    assert not is_negated("It looks for no-longer-used memory.")


def test_a_dropped_negation_is_caught_both_modes() -> None:
    wrong = "If any of the rules are violated, the program will compile."
    assert rung(wrong, [RUST]) == 4
    assert rung(wrong + " [E1]", [RUST], mode="claim-lattice") == 4
    assert rung("If any of the rules are violated, the program won't compile.", [RUST]) == 1


def test_an_added_negation_is_caught_both_modes() -> None:
    evidence = ['"I Miss You" is a song that was released in the United States in 2004.']
    wrong = '"I Miss You" is a song that was not released in the United States.'
    assert rung(wrong, evidence) >= 3
    assert rung(wrong + " [E1]", evidence, mode="claim-lattice") >= 3


def test_a_verbatim_fragment_that_leaves_the_negation_out_is_a_polarity_mismatch() -> None:
    evidence = build_evidence(["The museum was not opened in 1902 in Bergen."])
    v = verify_answer("It was opened in 1902 in Bergen.", evidence)
    assert v.rung == 4
    assert "POLARITY_MISMATCH" in {x.code for x in v.violations}
    # a paraphrase of the other polarity names the same code
    v2 = verify_answer("The museum opened in 1902 in Bergen.", evidence)
    assert "POLARITY_MISMATCH" in {x.code for x in v2.violations}


# -- anchors --------------------------------------------------------------------------


def test_anchor_keys_equate_digits_and_words() -> None:
    assert anchor_keys("seven hotels") == anchor_keys("7 hotels")
    assert "n:30847" in anchor_keys("30,847 nucleotides")
    assert anchor_keys("the fifth album") == {"o:5"} == anchor_keys("the 5th album")
    assert "m:3" in anchor_keys("in March")
    assert "w:outermost" in anchor_keys("the outermost scope")
    assert "s:rust" in anchor_keys("Rust is fast")


@pytest.mark.parametrize(
    ("claim", "why"),
    [
        ("The genome contains thirty thousand nucleotides.", "number"),
        ("It is the fifth album by Alanis Morissette.", "ordinal"),
        ("The names refer to bindings in the outermost enclosing scope.", "direction"),
        ("Python is larger than the standard library of C.", "comparative"),
    ],
)
def test_quantities_ordinals_and_direction_words_must_match(claim: str, why: str) -> None:
    evidence = [
        "The bovine coronavirus genome contains a sequence counting 30,847 nucleotides.",
        "Under Rug Swept is the first album by Alanis Morissette that she produced alone.",
        "The names refer to bindings in the nearest enclosing scope.",
        "Python is smaller than the standard library of C.",
    ]
    assert rung(claim, evidence) >= 3, why


def test_digits_and_number_words_support_each_other() -> None:
    evidence = ["The group runs 31 hotels in seven countries across Asia."]
    assert rung("The group runs thirty-one hotels in 7 countries across Asia.", evidence) >= 3
    assert rung("The group runs hotels in 7 countries across Asia.", evidence) == 2


def test_a_swapped_name_is_caught_even_under_the_coverage_threshold() -> None:
    evidence = ["Arnold was the publisher and editorial director of the home video magazine."]
    claim = "Smith was the publisher and editorial director of the home video magazine."
    assert rung(claim, evidence) >= 3


# -- quotations -----------------------------------------------------------------------


def test_the_text_outside_a_quotation_is_a_claim_of_its_own() -> None:
    answer = (
        'According to the book, "Ownership is a set of rules", which is why Rust programs run '
        "slower than C++ programs and need a garbage collector."
    )
    evidence = ["Ownership is a set of rules that govern how a Rust program manages memory."]
    v = verify_answer(answer, build_evidence(evidence))
    assert v.rung == 4
    assert "FRAME_UNSUPPORTED" in {x.code for x in v.violations}


def test_an_attribution_to_the_source_stays_strict() -> None:
    evidence = ["Ownership is a set of rules that govern how a Rust program manages memory."]
    assert rung('According to the book, "Ownership is a set of rules".', evidence) == 1
    assert rung('It says "Ownership is a set of rules".', evidence) == 1


def test_an_attribution_verb_does_not_vouch_for_a_relation() -> None:
    evidence = [
        '"Louie Louie" is a song written by Richard Berry in 1955. '
        "The Kingsmen recorded a version in 1963."
    ]
    assert rung('"The Kingsmen" wrote the song.', evidence) == 4
    assert rung('"Richard Berry" wrote the song in 1955.', evidence) >= 3  # wrote != written


def test_a_quoted_title_must_be_whole() -> None:
    evidence = ["Under Rug Swept is the fifth studio album by Alanis Morissette."]
    v = verify_answer('The album by Alanis Morissette is "Rug Swept".', build_evidence(evidence))
    assert "QUOTE_FRAGMENT" in {x.code for x in v.violations}
    assert rung('"Under Rug Swept"', evidence) == 1
    # a nickname inside a name is not a title fragment: the unit puts the name around it
    nick = ['Emrich "Imi" Lichtenfeld founded Krav Maga.']
    assert rung('Emrich "Imi" Lichtenfeld', nick) == 1


# -- bare spans answer the question ---------------------------------------------------


def test_question_anchors_leave_out_question_words_and_the_answer() -> None:
    assert question_anchors("Who wrote the script?", ["frank", "abagnale"]) == {
        stem("wrote"),
        stem("script"),
    }


def test_a_bare_span_is_strict_only_beside_the_questions_terms() -> None:
    evidence = [
        "Catch Me If You Can is based on the life of Frank Abagnale. "
        "The script was written by Jeff Nathanson."
    ]
    q = "Who wrote the script?"
    wrong = verify_answer("Frank Abagnale", build_evidence(evidence), question=q)
    assert (wrong.rung, wrong.audit_mode) == (3, "HYBRID")
    assert "NOT_ANSWER_ANCHORED" in {x.code for x in wrong.violations}
    assert rung("Jeff Nathanson", evidence, question=q) == 1
    assert rung("Frank Abagnale", evidence) == 1  # no question: nothing to answer
    lattice = verify_answer(
        "Frank Abagnale [E1]", build_evidence(evidence), question=q, mode="claim-lattice"
    )
    assert lattice.rung == 3


# -- multi-sentence support -----------------------------------------------------------


def test_a_conditional_is_never_cut_into_parts() -> None:
    # "the program will compile" is true elsewhere; under the condition it is false
    assert claim_parts("If any of the rules are violated, the program will compile.") == [
        "If any of the rules are violated the program will compile."
    ]
    evidence = [RUST + " Once the borrow checker is satisfied, the program will compile."]
    wrong = "If any of the rules are violated, the program will compile. [E1]"
    assert rung(wrong, evidence, mode="claim-lattice") == 4


def test_claim_parts() -> None:
    assert claim_parts("A keen tennis player, he lives in Leicestershire with his wife.") == [
        "A keen tennis player",
        "he lives in Leicestershire with his wife.",
    ]


def test_each_part_supported_by_its_own_sentence_reaches_rung_2() -> None:
    evidence = [
        "I live in Leicestershire with my wife and two children.",
        "I am a keen tennis player.",
    ]
    claim = "A keen tennis player, he lives in Leicestershire with his wife and two children."
    v = verify_answer(claim, build_evidence(evidence))
    assert v.rung == 2
    assert "multi-sentence" in v.units[0].reasons[0]
    # one part without support: not vouched
    assert rung("A keen golf player, he lives in Leicestershire with his wife.", evidence) >= 3


# -- the rung -------------------------------------------------------------------------


def test_every_verdict_carries_its_rung() -> None:
    v = verify_answer("Rust uses a third approach.", build_evidence([RUST]))
    assert v.to_dict()["rung"] == v.rung == 1


def test_the_stricter_bare_span_knobs() -> None:
    evidence = ["Beowulf is a film directed by Robert Zemeckis and written by Neil Gaiman."]
    q = "Beowulf was directed by who?"
    assert rung("Neil Gaiman", evidence, question=q) == 3  # the agent of "directed" is Zemeckis
    no_roles = VerifierPolicy(answer_roles=False)
    assert rung("Neil Gaiman", evidence, question=q, policy=no_roles) == 1  # shares "directed"
    near = VerifierPolicy(question_anchor_distance=3, answer_roles=False)
    assert rung("Neil Gaiman", evidence, question=q, policy=near) == 3
    assert rung("Robert Zemeckis", evidence, question=q, policy=near) == 1
    two = ["Beowulf is a film directed by Robert Zemeckis. Neil Gaiman wrote about Beowulf."]
    # the first sentence states the relation with a rival name (§19.14)
    assert rung("Neil Gaiman", two, question=q) == 3
    loose = VerifierPolicy(answer_rivals=False)
    assert rung("Neil Gaiman", two, question=q, policy=loose) == 1  # shares "Beowulf"
    share = VerifierPolicy(question_anchor_share=1.0, answer_rivals=False)  # as the best one
    assert rung("Neil Gaiman", two, question=q, policy=share) == 3
    assert rung("Robert Zemeckis", two, question=q, policy=share) == 1

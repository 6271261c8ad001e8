"""Verifier 2.1 rules, one test each (docs/verifier.md §19.9–§19.11): a bare span's role in
its sentence, choice questions, the subject bridge, substitutions and role swaps, times,
flattened lists, whole titles by case and connector, glued sentence ends."""

from __future__ import annotations

import pytest

from aborist.verify.evidence import build_evidence
from aborist.verify.policy import VerifierPolicy
from aborist.verify.rules.locality import anchor_keys, split_sentences, stem, substitution
from aborist.verify.rules.roles import lemma, other_alternative, question_frame, role_conflict
from aborist.verify.text.textcanon import tokens
from aborist.verify.verify import verify_answer

NO_ROLES = VerifierPolicy(answer_roles=False)


def rung(answer: str, evidence: list[str], **kw: object) -> int:
    return verify_answer(answer, build_evidence(evidence), **kw).rung  # type: ignore[arg-type]


# -- the question's frame -----------------------------------------------------------------


def test_question_frame_reads_the_slot_asked_for() -> None:
    assert question_frame("Beowulf was directed by whom?").agent_of == {lemma("directed")}
    assert lemma("wrote") == lemma("written") == lemma("write")
    assert lemma("write") in question_frame("Who wrote the script?").agent_of
    assert lemma("gives") in question_frame("Which argument gives the count?").agent_of
    assert lemma("published") in question_frame("Which company has published it?").agent_of
    # a be-form makes the wh-phrase the patient: no agent asked for
    assert question_frame("Which film was released second?").agent_of == frozenset()
    assert question_frame("What does the call to lock block?").object_of == lemma("block")
    # "have in common" does not end in a verb
    assert question_frame("What city do X and Y have in common?").object_of == ""
    assert question_frame("Who was the first king?").who
    assert question_frame("How many rooms has it?").quantity
    assert not question_frame("Which integer type was used?").quantity
    frame = question_frame("Which statement binds names excluding globals?")
    assert lemma("global") in frame.excluded


# -- each role conflict, with the knob off as the control ----------------------------------


@pytest.mark.parametrize(
    ("evidence", "question", "wrong", "right"),
    [
        # agent: the question's relation is stated for someone else
        (
            "Beowulf is a film directed by Robert Zemeckis and written by Neil Gaiman.",
            "Beowulf was directed by who?",
            "Neil Gaiman",
            "Robert Zemeckis",
        ),
        (
            "They shift the first argument to the left by the number of bits given by the "
            "second argument.",
            "Which argument gives the number of bits to shift by?",
            "the first argument",
            "the second argument",
        ),
        # object: the question asks for the object of its verb
        (
            "Lambda expressions (sometimes called lambda forms) are used to create anonymous "
            "functions.",
            "What do lambda expressions create?",
            "lambda forms",
            "anonymous functions",
        ),
        # contrast: the object of "behind" is the other party
        (
            "Target is the second-largest discount retailer in the United States, behind Walmart.",
            "What retailer is the second-largest in the United States?",
            "Walmart",
            "Target",
        ),
        # place: "who" is not answered by the object of a place preposition
        (
            "Badr Hari is a kickboxer from Amsterdam, fighting out of Mike's Gym in Oostzaan.",
            "Who is a kickboxer from Amsterdam?",
            "Mike's Gym",
            "Badr Hari",
        ),
        # type: the evidence types another name as the kind asked for
        (
            "Butters thinks up schemes that have been performed on The Simpsons, in an "
            'episode of the American animated television series "South Park".',
            "Which American animated television series has Butters think up schemes?",
            "The Simpsons",
            "South Park",
        ),
        # excluded: the question rules the span out itself
        (
            "The nonlocal statement binds names in the nearest enclosing scope excluding the "
            "global scope.",
            "Which statement binds names in the nearest enclosing scope excluding globals?",
            "global",
            "nonlocal",
        ),
        # number: a quantity does not answer a question that asks for no quantity
        (
            "The u32 type is an unsigned integer type that takes up 32 bits of space.",
            "Which integer type is unsigned?",
            "32 bits",
            "u32",
        ),
    ],
)
def test_a_span_in_another_slot_is_not_strict(
    evidence: str, question: str, wrong: str, right: str
) -> None:
    assert rung(wrong, [evidence], question=question) == 3
    assert rung(right, [evidence], question=question) == 1
    assert rung(wrong, [evidence], question=question, policy=NO_ROLES) == 1  # the control


def test_a_sentence_holding_every_question_term_outranks_the_span_s_own() -> None:
    evidence = [
        'A "break" statement executed in the first suite terminates the loop without '
        'executing the else clause. A "continue" statement executed in the first suite '
        "skips the rest of the suite."
    ]
    q = "Which statement executed in the first suite terminates the loop?"
    assert rung("continue", evidence, question=q) == 3
    assert rung("break", evidence, question=q) == 1


def test_role_conflict_needs_a_question_and_names_its_reason() -> None:
    s = "Beowulf is a film directed by Robert Zemeckis and written by Neil Gaiman."
    assert role_conflict("Neil Gaiman", None, s) == ""
    assert role_conflict("Neil Gaiman", "Directed by whom?", s).startswith("agent")
    assert role_conflict("Robert Zemeckis", "Directed by whom?", s) == ""
    # a contrast word the question uses itself is no conflict
    t = "Target is the second-largest retailer, behind Walmart."
    assert role_conflict("Walmart", "Which retailer is Target behind?", t) == ""


# -- choice questions and the subject bridge -----------------------------------------------


def test_the_other_alternative_of_a_choice_is_not_an_anchor() -> None:
    q = "Who is older, Glenn Hughes or Ross Lynch?"
    assert other_alternative(q, tokens("Glenn Hughes")) >= {stem("ross"), stem("lynch")}
    assert other_alternative(q, tokens("Ross Lynch")) >= {stem("glenn"), stem("hughes")}
    assert other_alternative("Who is older?", tokens("Ross Lynch")) == frozenset()
    evidence = ["Glenn Hughes is an English rock bassist. Ross Lynch is an American actor."]
    # the neighbouring sentence names only the other candidate: nothing says "older"
    assert (
        rung(
            "Glenn Hughes",
            evidence,
            question=q,
            policy=VerifierPolicy(question_anchor_neighbours=1),
        )
        == 3
    )
    born = ["Glenn Hughes was born in 1951, before Ross Lynch."]
    assert (
        rung("Glenn Hughes", born, question="Who was born first, Glenn Hughes or Ross Lynch?") == 1
    )


def test_a_subject_span_reaches_the_pronoun_led_sentence_after_it() -> None:
    evidence = [
        "Walter Coy (1909-1974) was an American actor. He was best known for narrating the "
        "series Frontier."
    ]
    q = "Who narrated Frontier?"
    assert rung("Walter Coy", evidence, question=q) == 1
    off = VerifierPolicy(answer_subject_bridge=0)
    assert rung("Walter Coy", evidence, question=q, policy=off) == 3
    # not the subject: no bridge
    other = ["The film starred Walter Coy. He was best known for narrating the series Frontier."]
    assert rung("Walter Coy", other, question=q) == 3


# -- substitutions and role swaps ----------------------------------------------------------


def test_a_substituted_word_is_not_support() -> None:
    sentence = (
        "It terminates the nearest enclosing loop, skipping the else clause if the loop has one."
    )
    claim = (
        "It terminates the nearest enclosing function, skipping the else clause if the loop "
        "has one."
    )
    assert "stands where" in substitution(tokens(claim), tokens(sentence))
    assert rung(claim, [sentence]) == 4
    # the same words with one added word is what the coverage slack is for
    added = "It terminates the nearest enclosing loop quickly, skipping the else clause."
    assert substitution(tokens(added), tokens(sentence)) == ""
    assert rung(added, [sentence]) == 2


def test_two_words_trading_places_is_a_role_swap() -> None:
    sentence = "Modules let us organize code within a crate for readability and easy reuse."
    claim = "Crates let us organize code within a module for readability and easy reuse."
    assert substitution(tokens(claim), tokens(sentence)).startswith("roles swapped")
    assert rung(claim, [sentence]) == 4
    assert rung(claim + " [E1]", [sentence], mode="claim-lattice") == 4


def test_a_passive_paraphrase_is_not_a_swap() -> None:
    sentence = "The handbook states that annual leave must be approved by a line manager."
    claim = "A line manager must approve annual leave."
    assert substitution(tokens(claim), tokens(sentence)) == ""
    assert rung(claim, [sentence]) == 2


def test_times_are_anchors() -> None:
    assert "x:1" in anchor_keys("It is evaluated once.")
    assert "x:2" in anchor_keys("It is evaluated twice.")
    sentence = "The expression is evaluated once; it should yield an iterable object."
    assert (
        rung("The expression is evaluated twice; it should yield an iterable object.", [sentence])
        == 4
    )


# -- sentences and titles ------------------------------------------------------------------


def test_a_flattened_list_splits_into_items() -> None:
    text = "- Race conditions, in which threads race - Deadlocks, in which two threads wait"
    assert split_sentences(text) == [
        "- Race conditions, in which threads race",
        "Deadlocks, in which two threads wait",
    ]
    assert rung("Race conditions, in which two threads wait.", [text]) == 4


def test_glued_sentence_ends_after_numbers_and_brackets() -> None:
    assert split_sentences("He died in 1989.James Miller was a singer.") == [
        "He died in 1989.",
        "James Miller was a singer.",
    ]
    assert split_sentences("It is run by the agency (GCHQ).The office is large.") == [
        "It is run by the agency (GCHQ).",
        "The office is large.",
    ]
    # a decimal number and an initialism stay whole
    assert split_sentences("Python 3.5 was released. The U.S.A is large.") == [
        "Python 3.5 was released.",
        "The U.S.A is large.",
    ]
    assert len(split_sentences("He got his Ph. D. at Northwestern University.")) == 1


def test_a_title_quotation_is_matched_with_its_capitals_and_connectors() -> None:
    data = 'We covered them in the "Data Types" section. The types covered are small.'
    assert rung('They were covered in the "Types" section.', [data]) == 4
    assert rung('They were covered in the "Data Types" section.', [data]) <= 2
    gof = "The book is colloquially referred to as The Gang of Four book."
    assert rung('The book is referred to as "Four book".', [gof]) == 4
    assert rung('The book is referred to as "The Gang of Four book".', [gof]) <= 2


def test_a_span_reaches_the_question_through_its_sentence_s_subject() -> None:
    evidence = [
        "The stone is on display at the Adams Museum in Deadwood. Deadwood is a city in "
        "South Dakota and the county seat of Lawrence County."
    ]
    q = "The stone is on display at a museum in what county?"
    assert rung("Lawrence County", evidence, question=q) == 1
    off = VerifierPolicy(answer_entity_bridge=False)
    assert rung("Lawrence County", evidence, question=q, policy=off) == 3
    # the subject must be named beside the question's terms
    apart = [
        "The stone is on display at the Adams Museum. Deadwood is the seat of Lawrence County."
    ]
    assert rung("Lawrence County", apart, question=q) == 3


def test_a_copula_complement_reaches_the_pronoun_led_sentence_after_it() -> None:
    evidence = ["Peggy Seeger is an American folksinger. She was married to James Miller."]
    q = "What nationality was James Miller's wife?"
    assert rung("American", evidence, question=q) == 1
    assert (
        rung("American", evidence, question=q, policy=VerifierPolicy(answer_subject_bridge=0)) == 3
    )


def test_a_pronoun_led_sentence_reaches_back_to_the_sentence_naming_its_subject() -> None:
    evidence = [
        "Junkers was a major German aircraft manufacturer. It produced airplanes in Dessau."
    ]
    q = "The German aircraft manufacturer was based in which city?"
    assert rung("Dessau", evidence, question=q) == 1
    off = VerifierPolicy(answer_subject_bridge=0)
    assert rung("Dessau", evidence, question=q, policy=off) == 3
    # two pronoun-led sentences: the one before names no subject, so no reach
    chain = [
        "Junkers was founded long ago. It was a major German aircraft manufacturer. It "
        "produced airplanes in Dessau."
    ]
    assert rung("Dessau", chain, question=q) == 3

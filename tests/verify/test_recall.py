"""§19.18: when a short verbatim unit is shown to answer the question. One test per rule
with its switch on and off, and the guards that keep each rule from vouching for a span
in another relation."""

from __future__ import annotations

import pytest

from aborist.verify.evidence import build_evidence
from aborist.verify.policy import VerifierPolicy
from aborist.verify.rules.locality import build_sentences, question_anchors
from aborist.verify.rules.recall import (
    continues_after_fronted,
    definite_reach,
    demonstrative_back,
    first_hop,
    restates_question,
    same_filler,
    whole_sentence,
)
from aborist.verify.rules.roles import question_frame, role_conflict, verb_base
from aborist.verify.text.textcanon import tokens
from aborist.verify.verify import verify_answer


def label(answer: str, evidence: list[str], question: str, **off: bool) -> str:
    policy = VerifierPolicy(**off)  # type: ignore[arg-type]
    return verify_answer(answer, build_evidence(evidence), policy, question=question).label


# (switch, evidence, question, answer): VERIFIED with the switch on, PARTIAL with it off
CASES = [
    (
        "answer_whole_sentences",
        "Queues keep arrival order. Note that re-adding an item does not move it. Removed "
        "items are gone.",
        "Does re-adding an item change a queue's order?",
        "Queues keep arrival order. Note that re-adding an item does not move it.",
    ),
    (
        "answer_whole_sentences",
        "- Stop: Has no payload - Send: Holds one String",
        "What does each command of the Signal type carry?",
        "Send: Holds one String",
    ),
    (
        "answer_restated_question",
        "Each pass adds one, so count holds the value 3.",
        "After the loop finishes, what value does count hold?",
        "count holds the value 3",
    ),
    (
        "answer_role_clauses",
        'We mark it by using the null byte as the last value of the buffer, as the section "The '
        'Buffer Type" shows.',
        "What do we use as the last value when the buffer should stop?",
        "the null byte",
    ),
    (
        "answer_role_clauses",
        'The logger writes every message to the file, except when the level is "DEBUG".',
        "When does the logger not write a message to the file?",
        'when the level is "DEBUG"',
    ),
    (
        "question_relation_verbs",
        "In the test, we check what happens when the tracker is told to store a large value. "
        "We call the store_value method on the tracker with a value of 80.",
        "What value is store_value called with in the test?",
        "80",
    ),
    (
        "answer_demonstrative_bridge",
        "A function can hand an error back to its caller instead of handling it. This is known "
        "as passing the error upward.",
        "What is it called when a function hands an error back to its caller instead of "
        "handling it?",
        "Passing the error upward.",
    ),
    (
        "answer_fronted_subject",
        "Ole Hansen was the mayor of Vik. A Liberal from Bergen, he also served in parliament.",
        "Was the mayor of Vik a Liberal or a Conservative?",
        "Liberal",
    ),
    (
        "answer_entity_pronoun",
        "Lena Berg (born 1960) is a historian of shipping. She received her Ph.D. at Nordvik "
        "University. Nordvik University is a public university based in Hamar, Norway.",
        "In what city did Lena Berg earn her doctorate?",
        "Hamar, Norway",
    ),
    (
        "answer_definite_reference",
        "The Institute of Coastal Studies is a research body in Tromsø. Dr. Eva Moe, the sister "
        "of the mayor of Vik, is Director of the Institute.",
        "The sister of the mayor of Vik is the director of what organisation?",
        "Institute of Coastal Studies",
    ),
    (
        "answer_first_hop",
        "The Harbour Commission, known as the Lund Commission after its chairman Per Lund, was "
        "set up in 1950. Per Olav Lund (4 May 1901 - 9 June 1980) was a Norwegian engineer.",
        "What year did the chairman of the Lund Commission die?",
        "1980",
    ),
    (
        "answer_rival_same_stem",
        "Jon Dahl (born in Aarhus, Denmark) is an Icelandic sailor and a member of the Vik "
        "Sailing Club. The Vik Sailing Club is a yacht club based in Reykjavik, Iceland.",
        "From what country are both Jon Dahl and the Vik Sailing Club?",
        "Iceland",
    ),
]


FILM = "The film stars Ada Holm and Tor Lie. He also voiced the fox in the Forest series."


@pytest.mark.parametrize(("switch", "evidence", "question", "answer"), CASES)
def test_each_rule_recovers_its_answer_and_only_with_its_switch(
    switch: str, evidence: str, question: str, answer: str
) -> None:
    assert label(answer, [evidence], question, **{switch: True}) == "VERIFIED"
    assert label(answer, [evidence], question, **{switch: False}) == "PARTIAL"
    assert label(answer, [evidence], question) == (
        "PARTIAL" if switch in OFF_BY_DEFAULT else "VERIFIED"
    )


#: the §19.18 rules that are off by default: each vouches, when on, for a wrong answer
#: that the other checks would have refused (the cases below)
OFF_BY_DEFAULT = frozenset(
    [
        "answer_whole_sentences",
        "answer_restated_question",
        "answer_first_hop",
        "answer_rival_same_stem",
        "answer_definite_reference",
    ]
)

# (switch, evidence, question, wrong answer): vouched for with the switch on, refused by
# the default policy — why the switch is off
WRONG_WHEN_ON = [
    (
        "answer_restated_question",
        "The variable total holds the value 7. After the loop, count holds the value 3.",
        "After the loop finishes, what value does count hold?",
        "total holds the value 7",
    ),
    (
        "answer_whole_sentences",
        "Tokyo hosted in 1964. Paris hosted in 1924 and 2024.",
        "Which city hosted the 2024 Olympics?",
        "Tokyo hosted in 1964.",
    ),
    (
        "answer_first_hop",
        "The Lund Commission was set up in 1920 in Oslo by its chairman Per Lund. Per Olav "
        "Lund (1870 - 1990) was an engineer.",
        "What year did the chairman of the Lund Commission in Oslo die?",
        "1870",
    ),
    (
        "answer_rival_same_stem",
        "Jon Dahl is an Icelandic sailor who lives in Norway. Jon Dahl was born in Reykjavik, "
        "Iceland.",
        "In what country does the sailor Jon Dahl live?",
        "Iceland",
    ),
    (
        "answer_definite_reference",
        "The Institute of Coastal Studies is a research body in Tromsø. Unlike the Institute, "
        "the Nordic Marine Centre is directed by Dr. Eva Moe.",
        "Dr. Eva Moe is the director of what organisation?",
        "Institute of Coastal Studies",
    ),
]


@pytest.mark.parametrize(("switch", "evidence", "question", "answer"), WRONG_WHEN_ON)
def test_a_switch_that_is_off_would_vouch_for_a_wrong_answer(
    switch: str, evidence: str, question: str, answer: str
) -> None:
    assert switch in OFF_BY_DEFAULT
    assert label(answer, [evidence], question, **{switch: True}) in {"VERIFIED", "SUPPORTED"}
    assert label(answer, [evidence], question) not in {"VERIFIED", "SUPPORTED"}


@pytest.mark.parametrize(
    ("evidence", "question", "answer"),
    [
        # the main clause's verb is "use": the quoted title is not its object
        (CASES[3][1], CASES[3][2], '"The Buffer Type"'),
        # the rival names the commission through no question noun: it stands
        (CASES[10][1], "What year was the Lund Commission set up?", "1980"),
        # a he-sentence after names that are not their sentence's subject reaches neither
        (FILM, "Who voiced the fox in the Forest series?", "Ada Holm"),
        (FILM, "Who voiced the fox in the Forest series?", "Tor Lie"),
        # "This allows …" is no copula: the span does not reach the sentence before
        (
            'The "with" statement wraps a block with methods defined by a context manager. '
            'This allows common "try" and "finally" patterns to be reused.',
            "What defines the methods that the with statement uses?",
            '"finally"',
        ),
    ],
)
def test_the_guards_keep_a_span_in_another_relation_refused(
    evidence: str, question: str, answer: str
) -> None:
    assert label(answer, [evidence], question) == "PARTIAL"


def test_whole_sentence_needs_every_token_and_the_same_ending() -> None:
    (s,) = build_sentences("Queues keep arrival order.")
    toks = tokens("Queues keep arrival order")
    assert whole_sentence("Queues keep arrival order.", toks, s, 3)
    assert not whole_sentence("Queues keep arrival order", toks, s, 3)
    assert not whole_sentence("Queues keep arrival.", tokens("Queues keep arrival"), s, 3)
    (h,) = build_sentences("# Queue Order Rules")
    assert not whole_sentence("Queue Order Rules", tokens("Queue Order Rules"), h, 3)
    (short,) = build_sentences("Queues wait.")
    assert not whole_sentence("Queues wait.", tokens("Queues wait"), short, 3)


def test_restates_question_needs_the_which_noun_another_word_and_a_filler() -> None:
    q = "After the loop finishes, what value does count hold?"
    assert restates_question(q, tokens("count holds the value 3"))
    assert not restates_question(q, tokens("the value 3"))  # one question word only
    assert not restates_question(q, tokens("count holds the value"))  # no filler
    assert not restates_question(q, tokens("count holds 3"))  # not the which-noun
    # the question's names are not its relation
    who = "Which value did Kirk Kerkorian hold?"
    assert not restates_question(who, tokens('Kerkor "Kirk" Kerkorian'))
    assert not restates_question("Who was born first?", tokens("born first in 1917"))


def test_demonstrative_back_reaches_only_after_a_copula() -> None:
    sents = build_sentences("It hands the error back. This is known as passing it upward.")
    assert demonstrative_back(sents, 1) == 0
    sents = build_sentences("It hands the error back. This allows passing it upward.")
    assert demonstrative_back(sents, 1) == 1
    sents = build_sentences("Does it hand the error back? This is known as passing it.")
    assert demonstrative_back(sents, 1) == 1
    assert demonstrative_back(sents, 0) == 0


def test_a_fronted_phrase_before_the_subject() -> None:
    before, after = build_sentences(
        "Ole Hansen was the mayor of Vik. A Liberal from Bergen, he also served in parliament."
    )
    assert continues_after_fronted(before.toks, after)
    _, other = build_sentences("Ole Hansen was the mayor of Vik. A Liberal from Bergen, Vik grew.")
    assert not continues_after_fronted(before.toks, other)
    center, renamed = build_sentences(
        "The Blaisdell Center is a community center in Honolulu. Constructed in 1964 on the "
        "Ward Estate, the center was renamed after a mayor."
    )
    assert continues_after_fronted(center.toks, renamed)


def test_definite_reach() -> None:
    sents = build_sentences(
        "The Institute of Coastal Studies is in Tromsø. Eva Moe is Director of the Institute."
    )
    assert definite_reach("Institute of Coastal Studies", sents, 0) == 2
    sents = build_sentences(
        "The Institute of Coastal Studies is in Tromsø. Eva Moe is Director of the Institute "
        "of Technology."
    )
    assert definite_reach("Institute of Coastal Studies", sents, 0) == 0
    sents = build_sentences("The film stars Ada Holm and Tor Lie. He also sang.")
    assert definite_reach("Tor Lie", sents, 0) == 0  # not the subject, no "the <head>"
    sents = build_sentences("Nordvik University is in Hamar. Ships of the University sail.")
    assert definite_reach("Nordvik University", sents, 0) == 2
    assert definite_reach("Nordvik University", sents, 1) == 0  # no sentence after the last
    assert definite_reach("Hamar", sents, 0) == 0  # one word: any sentence's first word


def test_first_hop_and_same_filler() -> None:
    hop, own = build_sentences(
        "The Lund Commission is named after its chairman Per Lund. Per Olav Lund (1901 - 1980) "
        "was an engineer."
    )
    q = "What year did the chairman of the Lund Commission die?"
    anchors = question_anchors(q, tokens("1980"))
    assert first_hop(q, anchors, own, hop)
    q2 = "What year was the Lund Commission named?"
    assert not first_hop(q2, question_anchors(q2, tokens("1980")), own, hop)
    (icelandic,) = build_sentences("Jon Dahl is an Icelandic sailor.")
    assert same_filler(tokens("Iceland"), icelandic)
    assert not same_filler(tokens("Norway"), icelandic)
    assert not same_filler(tokens("South Iceland"), icelandic)  # one word only


def test_role_clauses_read_the_main_verb_and_the_negated_question() -> None:
    q = "What do we use as the code for the arm when nothing should happen?"
    assert question_frame(q).object_word == "use"
    assert question_frame(q, clauses=False).object_word == "happen"
    assert question_frame("What does the call block?").object_word == "block"
    assert question_frame("When doesn't it print the trace?").negated
    assert not question_frame("When does it print the trace?").negated
    assert verb_base("use") == verb_base("using") == verb_base("used") == verb_base("uses")
    assert verb_base("pass") == verb_base("passes") != verb_base("pas")
    sentence = "It prints a trace, except when the exception is SystemExit."
    span, negated = "when the exception is SystemExit", "When does it not print a trace?"
    assert role_conflict(span, negated, sentence) == ""
    assert role_conflict(span, negated, sentence, clauses=False).startswith("governor")
    assert role_conflict(span, "When does it print a trace?", sentence).startswith("governor")


def test_a_naming_word_before_a_preposition_is_a_term() -> None:
    anchors = question_anchors("What value is store_value called with in the test?", ["80"])
    assert "call" in anchors
    plain = question_anchors("What is it called when a function returns early?", ["early"])
    assert "call" not in plain
    off = question_anchors("What value is f called with?", ["80"], relation_verbs=False)
    assert "call" not in off


def test_a_label_of_three_words_is_not_a_statement_of_its_own() -> None:
    # a whole evidence "sentence" of three words ("Private field names.") is a label: it
    # answers only as any bare span does, and here the question's terms stand elsewhere
    ev = (
        '"__*" Private field names. Names of this kind are hidden from callers of the class. '
        '"*__" Public field names, informally known as open names. Names of this kind are '
        "shown to every caller."
    )
    q = "What's the informal name for *__ field names?"
    on = {"answer_whole_sentences": True}
    assert label("Private field names.", [ev], q, **on) == "PARTIAL"
    assert label("Private field names.", [ev], q, **on, answer_whole_min_tokens=3) == "VERIFIED"
    assert label("Open names.", [ev], q, **on) == "VERIFIED"

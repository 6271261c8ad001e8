"""The extractive/6 rules of the offline answerer: a section heading's category noun is
context for the sentences under it, and "when does X <verb>" asks for a condition or a
time. Pure functions of (question, evidence, mode)."""

from __future__ import annotations

from aborist.clients.extractive import extract, question_relation
from aborist.corpus.lexicon import light_stem
from aborist.prompts import CANNOT_ANSWER

MODE = "claim-lattice"


def refused(answer: str) -> bool:
    return answer.startswith(CANNOT_ANSWER)


# ---------------------------------------------------------------------------------------
# A heading's category noun


RETURN_SECTION = (
    "E1",
    'The "return" statement\n\n'
    '"return" leaves the current function call with the expression list as return value.',
)
RETURN_VALUE = ("E2", 'The return value of a function is set by the last "return" statement.')


def test_a_heading_category_noun_is_held_by_the_sentences_under_it() -> None:
    # the sentence under "The "return" statement" is of the return statement: it defines it
    # (before, it held half the question and the sentence naming both words answered)
    answer = extract("What does the return statement do?", (RETURN_VALUE, RETURN_SECTION), MODE)
    assert answer.splitlines()[0] == (
        '"return" leaves the current function call with the expression list as return value. [E1]'
    )


def test_without_the_heading_the_sentence_does_not_pass_the_gate() -> None:
    bare = ("E1", RETURN_SECTION[1].split("\n\n")[1])
    answer = extract("What does the return statement do?", (bare,), MODE)
    assert refused(answer)


def test_a_heading_word_that_is_not_a_category_noun_is_not_held() -> None:
    # the heading names "del"; a sentence under it about a variable is not about del
    note = (
        "E1",
        'The "del" statement\n\n'
        "Previously it was illegal to drop a name if it occurs as a free variable in a block.",
    )
    assert refused(extract("What does del do to a variable name?", (note,), MODE))


# ---------------------------------------------------------------------------------------
# "When does X run"


FOR_ELSE = (
    "E1",
    'The "for" statement\n\n'
    'A "break" statement executed in the first suite terminates the loop without executing '
    'the "else" clause’s suite.\n\n'
    'When the iterator is exhausted, the suite in the "else" clause, if present, is executed, '
    "and the loop terminates.",
)


def test_when_asks_for_a_condition_and_its_closing_verb_is_optional() -> None:
    rel = question_relation("When does the else block of a for loop run?")
    assert rel.kind == "condition"
    assert rel.optional == {light_stem("run")}
    assert rel.anchor == (("the", "else", "block", "of", "a", "for", "loop"),)
    # after a function word the last word is a noun, not the verb: it stays required
    assert question_relation("When does Rust drop a value?").optional == frozenset()
    # "when would I use X" still asks what X is used for
    assert question_relation("When would I use Box<T>?").kind == "definition"


def test_a_when_question_is_answered_by_the_sentence_stating_when() -> None:
    # "run" is in neither sentence; the one saying "when" answers
    answer = extract("When does the else clause of a for loop run?", (FOR_ELSE,), MODE)
    assert answer == (
        'When the iterator is exhausted, the suite in the "else" clause, if present, is '
        "executed, and the loop terminates. [E1]"
    )


def test_the_optional_verb_still_ranks_a_sentence_holding_it_first() -> None:
    plain = ("E1", "The default value is computed when the module is imported.")
    stated = ("E2", "Default values are evaluated once, when the function definition runs.")
    answer = extract("When are default values evaluated?", (plain, stated), MODE)
    assert answer.splitlines()[0].endswith("[E2]")


def test_a_when_question_with_no_sentence_stating_a_time_is_refused() -> None:
    topic = ("E1", 'The "else" clause of a "for" loop is a suite of statements of its own.')
    assert refused(extract("When does the else clause of a for loop run?", (topic,), MODE))
    # the same sentence answers a question that does not ask when
    assert not refused(extract("What is the else clause of a for loop?", (topic,), MODE))


# ---------------------------------------------------------------------------------------
# An answer says something the question does not


def test_a_sentence_that_only_restates_the_question_is_no_answer() -> None:
    question = "How do I update Rust to a newer version?"
    restated = ("E1", "Update to a newer Rust version.")
    assert refused(extract(question, (restated,), MODE))
    # one word the question does not say is enough to be an answer
    said = ("E1", "Update to a newer Rust version with rustup.")
    assert extract(question, (said,), MODE) == "Update to a newer Rust version with rustup. [E1]"

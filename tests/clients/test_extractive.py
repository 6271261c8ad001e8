"""The offline extractive answerer: which sentences it picks, in which order, and when it
declines. Pure functions of (question, evidence, mode)."""

from __future__ import annotations

from aborist.clients.extractive import ExtractiveClient, extract
from aborist.prompts import CANNOT_ANSWER, MODE_QUOTE, build_messages
from aborist.verify.evidence import build_evidence

FOR_LOOP = (
    (
        "E1",
        'When "break" passes control out of a "try" statement with a "finally" clause, '
        'that "finally" clause is executed before really leaving the loop.',
    ),
    (
        "E2",
        'When the iterator is exhausted, the suite in the "else" clause, if present, is '
        "executed, and the loop terminates.",
    ),
)


def test_word_pairs_break_ties_on_coverage() -> None:
    # Both sentences cover every content word of the question (clause, loop, executed);
    # only the second holds the pair "else clause", which is what the question asks about.
    answer = extract("When is the else clause of a for loop executed?", FOR_LOOP, "claim-lattice")
    lines = answer.splitlines()
    assert lines[0].endswith("[E2]") and "iterator is exhausted" in lines[0]
    assert lines[1].endswith("[E1]")


def test_rare_stopwords_outweigh_common_ones() -> None:
    # Every sentence covers the one content word and none holds a question pair; E1 shares
    # more of the question's words ("of", "a"), E2 shares the rarer "with", which wins.
    evidence = (
        ("E1", "A statement of a unit is one of a kind."),
        ("E2", "With care the statement ends."),
        ("E3", "Of a kind, a statement is of a unit."),
    )
    answer = extract("statement with of a", evidence, "claim-lattice")
    assert answer.splitlines()[0].endswith("[E2]")


def test_coverage_comes_before_any_tie_break() -> None:
    evidence = (
        ("E1", "The else clause is a clause of the loop."),
        ("E2", "The else clause runs when the loop is exhausted and the iterator is done."),
    )
    # "exhausted" is only in E2: higher coverage wins whatever the pairs say.
    answer = extract("When does the else clause run after the loop is exhausted?", evidence, "x")
    assert answer.splitlines()[0].endswith("[E2]")


def test_declines_below_min_coverage() -> None:
    evidence = (("E1", "The Silverrun River is 412 kilometres long."),)
    assert extract("Who founded the Glass Lake monastery?", evidence, "claim-lattice") == (
        CANNOT_ANSWER
    )


def test_quote_mode_wraps_sentences_without_quotes() -> None:
    evidence = (("E1", "The Silverrun River is 412 kilometres long."),)
    answer = extract("How long is the Silverrun River?", evidence, MODE_QUOTE)
    assert answer == '"The Silverrun River is 412 kilometres long." [E1]'


def test_same_prompt_same_bytes_through_the_client() -> None:
    ev = build_evidence([{"text": t, "source_uri": f"doc{i}"} for i, (_, t) in enumerate(FOR_LOOP)])
    messages = build_messages("When is the else clause of a for loop executed?", ev, "quote")
    first = ExtractiveClient().complete(messages)
    second = ExtractiveClient().complete(messages)
    assert first.text == second.text
    assert first.model == "extractive/3"
    assert "iterator is exhausted" in first.text.splitlines()[0]


def test_a_sentence_that_opens_with_the_pair_comes_first() -> None:
    evidence = (
        ("E1", 'The "try" statement and the "with" statement provide ways to do this.'),
        ("E2", 'The "with" statement is used to wrap the execution of a block.'),
    )
    answer = extract("What does the with statement do?", evidence, "claim-lattice")
    assert answer.splitlines()[0].endswith("[E2]")

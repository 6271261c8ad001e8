"""Three rules of the offline answerer that a sentence merely sharing the question's words
cannot pass: a count, an expansion or a reason must be stated; an operator the question
names must be in the answer; and "what happens" / "how does X work" are frames, not words
an answer must repeat. Pure functions of (question, evidence, mode)."""

from __future__ import annotations

import pytest

from aborist.clients.extractive import extract
from aborist.prompts import CANNOT_ANSWER

MODE = "claim-lattice"


@pytest.mark.parametrize(
    ("question", "evidence", "stated"),
    [
        (
            "How many moons does Zorbel have?",
            ("Zorbel has bright moons that rise at dusk.", "Zorbel has four moons."),
            "Zorbel has four moons.",
        ),
        (
            "What does QRT stand for?",
            (
                "The QRT runs every night and the QRT logs each run.",
                "QRT stands for quiet relay task.",
            ),
            "QRT stands for quiet relay task.",
        ),
        (
            "Why does the relay pause at night?",
            (
                "The relay can pause at night.",
                "The relay pauses at night because the line is cold.",
            ),
            "The relay pauses at night because the line is cold.",
        ),
    ],
)
def test_a_closed_question_is_answered_only_by_a_sentence_stating_it(
    question: str, evidence: tuple[str, str], stated: str
) -> None:
    # With the stating sentence, only it answers; without it, the other sentence (which
    # covers the question's words) does not say how many, what it stands for, or why.
    both = (("E1", evidence[0]), ("E2", evidence[1]))
    assert extract(question, both, MODE) == f"{stated} [E2]"
    answer = extract(question, both[:1], MODE)
    assert answer.startswith(CANNOT_ANSWER), answer


def test_an_operator_the_question_names_must_be_in_the_answer() -> None:
    evidence = (
        ("E1", "We could add two integers with a loop."),
        ("E2", 'The "//" operator divides two integers and floors the result.'),
        ("E3", "The sum x + y of two integers is an integer."),
    )
    assert extract("What does // do with two integers?", evidence, MODE) == (
        'The "//" operator divides two integers and floors the result. [E2]'
    )
    answer = extract("What does // do with two integers?", evidence[::2], MODE)
    assert answer.startswith(CANNOT_ANSWER), answer
    # "+" is an operator of E3, not the "//" asked about; a question mark closing the
    # question and a dash between words are not operators asked about
    lines = extract("Two integers - what are they?", evidence, MODE).splitlines()
    assert sorted(line[-4:] for line in lines) == ["[E1]", "[E2]", "[E3]"]


@pytest.mark.parametrize(
    "question",
    ["What happens when a generator returns?", "How does a generator return work?"],
)
def test_what_happens_and_how_it_works_are_frames(question: str) -> None:
    evidence = (("E1", "When a generator returns, StopIteration is raised."),)
    assert extract(question, evidence, MODE) == (
        "When a generator returns, StopIteration is raised. [E1]"
    )


def test_work_and_happen_stay_content_outside_the_frame() -> None:
    # "work" in the middle of the question is what it asks about: a sentence without it
    # does not cover the question
    evidence = (("E1", "A generator returns values."),)
    answer = extract("How do work queues of a generator return values?", evidence, MODE)
    assert answer.startswith(CANNOT_ANSWER), answer

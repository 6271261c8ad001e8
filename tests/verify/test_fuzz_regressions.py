"""Regressions found by fuzzing (tests/verify/test_fuzz_robustness.py): inputs on which a
search scanned all the text once per boundary or per start position, so the time grew with
the square of the input (about a second on 10 KB, minutes on 100 KB). Each test checks the
result and runs under the same generous hang guard (no timing assertion)."""

from __future__ import annotations

import pytest

from aborist.clients.candidates import whole_sentences
from aborist.clients.extractive import _frame_keys, extract
from aborist.clients.relation import _QUALIFIER, question_relation
from aborist.errors import InputError
from aborist.verify.evidence import build_evidence
from aborist.verify.rules.rival import _CODE, relation_terms
from aborist.verify.text.sentences import split_sentences
from aborist.verify.verify import verify_answer
from tests.verify.test_fuzz_robustness import hang_guard

N = 100_000


def test_sentence_split_over_many_skipped_initials_is_linear() -> None:
    # each "A." is an initial, not a sentence end: the head before a boundary grew over
    # all of them and the last word was searched for from its start
    text = "A. " * (N // 3) + "Then it ended. Next one."
    with hang_guard():
        out = split_sentences(text)
    assert out[-1] == "Next one."
    assert out[0].startswith("A. A. ") and out[0].endswith("Then it ended.")


def test_whole_sentences_over_many_skipped_initials_is_linear() -> None:
    text = "A. " * (N // 3) + "Then it ended. Next one."
    with hang_guard():
        out = whole_sentences(text)
    assert out[-1] == "Next one."
    assert out[0].endswith("Then it ended.")


def test_last_word_reading_keeps_abbreviations_and_openers() -> None:
    assert whole_sentences("See (e.g. the list) here. Done now.") == [
        "See (e.g. the list) here.",
        "Done now.",
    ]
    assert whole_sentences('He said "Dr. Holm came." Then left.') == [
        'He said "Dr. Holm came."',
        "Then left.",
    ]
    assert split_sentences("Ask Mr. Holm. He knows.") == ["Ask Mr. Holm.", "He knows."]


def test_language_qualifier_after_a_long_whitespace_run() -> None:
    question = "how do loops work" + " \t" * (N // 2) + "in Python?"
    with hang_guard():
        keys = _frame_keys(question)
        relation = question_relation(question)
    assert keys == _frame_keys("how do loops work in Python?")
    assert relation == question_relation("how do loops work in Python?")
    assert _QUALIFIER.sub("", "a for loop   in a Rust program") == "a for loop"


def test_code_tokens_in_a_long_token_question() -> None:
    with hang_guard():
        assert _CODE.findall("a" * N + " " + "x.y" * (N // 3) + " " + "a::" * (N // 3)) == []
        assert relation_terms("Which " + "a" * N + "?", frozenset({"which"})) == {"which"}
    # a start inside a token a letter begins is covered by the match from that letter (the
    # look-behinds only skip such starts: the matches are the ones the pattern always had)
    assert _CODE.findall("Vec::new() ::new() 9abc() x.9abc() a::b::<c<d>> __init__") == [
        "Vec::new()",
        "new()",
        "abc()",
        "x.9abc()",
        "c<d>",
        "__init__",
    ]


def test_hostile_question_and_evidence_end_to_end() -> None:
    evidence = ["The Museum opened in 1902. " + "A. " * 3_000 + "Anna Holm founded it."]
    question = "Who founded the Museum " + "A" * 10_000 + " " * 10_000 + "in Rust?"
    with hang_guard():
        answer = extract(question, (("E1", evidence[0]),), "quote")
        verdict = verify_answer(answer, build_evidence(evidence), question=question)
    assert verdict.label in {"VERIFIED", "SUPPORTED", "PARTIAL", "UNSUPPORTED"}


@pytest.mark.parametrize("bad", ["\udc80", "\ud800", "a\udfffb"])
def test_lone_surrogate_in_evidence_is_an_input_error(bad: str) -> None:
    # it has no UTF-8 bytes, so no sha256 content address: refused as input (as the batch
    # reader and `aborist verify` refuse it), not a UnicodeEncodeError from deep inside
    with pytest.raises(InputError, match="lone surrogate"):
        build_evidence(["The Museum opened. " + bad])


def test_a_sentence_repeated_many_times_is_found_in_each_window_once() -> None:
    # occurrences() looked each (first, last) up in the list of those found so far: with
    # 12,500 repeats of the answer's sentence in 400 KB, a second and more (1 MB: 43 s)
    sentence = "Tuples are immutable sequences. "
    (ev,) = build_evidence([sentence * 12_500])
    with hang_guard():
        found = ev.passage.occurrences(["tuples", "are", "immutable", "sequences"], 1)
        verdict = verify_answer("Tuples are immutable sequences.", [ev])
    assert found == [(i, i) for i in range(12_500)]
    assert verdict.label == "VERIFIED"
    two = ev.passage.occurrences(["sequences", "tuples"], 2)  # across each boundary, once
    assert two == [(i, i + 1) for i in range(12_499)]

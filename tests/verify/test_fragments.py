"""A quoted title cut short of the evidence's own quotation, a bare span listed beside
its rival, a verbatim piece that stops inside a list (docs/verifier.md §19.15)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aborist.verify.evidence import build_evidence
from aborist.verify.policy import VerifierPolicy
from aborist.verify.rules.rival import asked_phrases, list_siblings
from aborist.verify.support import whole_title
from aborist.verify.verify import verify_answer

NO_RIVALS = VerifierPolicy(answer_rivals=False)
CHAPTER = (
    "Recall from “Handling Potential Failure with Result” in Chapter 2 that the Result "
    "enum is defined as having two variants."
)


def codes(answer: str, evidence: list[str], **kw: object) -> set[str]:
    verdict = verify_answer(answer, build_evidence(evidence), **kw)  # type: ignore[arg-type]
    return {v.code for v in verdict.violations}


def test_a_title_inside_a_longer_evidence_quotation_is_a_fragment() -> None:
    ev = build_evidence([CHAPTER])
    assert not whole_title("Handling Potential Failure", ev)
    assert whole_title("Handling Potential Failure with Result", ev)
    assert "QUOTE_FRAGMENT" in codes("“Handling Potential Failure”", [CHAPTER])
    assert verify_answer("“Handling Potential Failure with Result”", ev).label == "VERIFIED"


ANTHEM = "It was originally called `` Defence of Fort M'Henry '' in 1814."


@pytest.mark.parametrize("cut", ["Defence of Fort", "Fort M'Henry"])
def test_a_word_with_an_inner_apostrophe_is_one_word_beside_a_title(cut: str) -> None:
    # "M'Henry" is one capitalized word, not the stopword "m" and "Henry"
    ev = build_evidence([ANTHEM])
    assert whole_title("Defence of Fort M'Henry", ev)
    assert not whole_title(cut, ev)


def test_a_title_cut_before_a_word_with_an_apostrophe_is_not_verified() -> None:
    ev = build_evidence([ANTHEM])
    q = "What was it originally called in 1814?"
    assert verify_answer('"Defence of Fort M\'Henry"', ev, question=q).label == "VERIFIED"
    assert verify_answer('"Defence of Fort"', ev, question=q).label != "VERIFIED"


def test_a_subtitle_cut_off_inside_the_quotation_is_a_fragment() -> None:
    ev = ["The behavior we discussed in the “Stack-Only Data: Copy” section would apply."]
    assert "QUOTE_FRAGMENT" in codes("The “Stack-Only Data” section.", ev)


def test_the_whole_evidence_quotation_is_whole_before_a_connector() -> None:
    # "in Chapter 18" after the closing mark does not extend the marked title
    ev = build_evidence(["We talk about it in “Using Trait Objects” in Chapter 18."])
    assert whole_title("Using Trait Objects", ev)
    assert not whole_title("Using Trait", ev)


_WORD = st.sampled_from(["Handling", "Potential", "Failure", "Result", "Shared", "Values"])
_LOWER = st.sampled_from(["with", "over", "from", "into"])


@settings(max_examples=60, deadline=None)
@given(
    words=st.lists(_WORD, min_size=2, max_size=4, unique=True),
    joiner=_LOWER,
    tail=_WORD,
    cut=st.integers(min_value=1, max_value=3),
)
def test_any_quoted_piece_of_a_marked_title_is_a_fragment(
    words: list[str], joiner: str, tail: str, cut: int
) -> None:
    """Every proper prefix of the evidence's quotation is a fragment; the quotation itself
    is whole."""
    if tail in words:
        return
    title = " ".join([*words, joiner, tail])
    ev = build_evidence([f"Read the section “{title}” in the guide first."])
    head = " ".join(words[: min(cut, len(words))])
    assert not whole_title(head, ev)
    assert whole_title(title, ev)


SOCKET = (
    "The socket offers two functions: read and peek. We use read on the socket, which removes "
    "the bytes from the buffer and returns them to the caller."
)
REMOVES_Q = "Which function of the socket removes the bytes from the buffer and returns them?"


def rung(answer: str, evidence: list[str], **kw: object) -> int:
    return verify_answer(answer, build_evidence(evidence), **kw).rung  # type: ignore[arg-type]


def test_list_siblings() -> None:
    assert list_siblings("try_recv", "Two useful methods: recv and try_recv.") == {" recv "}
    assert list_siblings("b", "He played with A, b, and c (1990).") == {" c "}
    assert list_siblings("Cracked", "He worked for the magazine Cracked.") == frozenset()


def test_a_span_listed_beside_the_filler_of_the_relation_is_not_the_answer() -> None:
    assert "NOT_ANSWER_ANCHORED" in codes("peek", [SOCKET], question=REMOVES_Q)
    assert rung("read", [SOCKET], question=REMOVES_Q) == 1
    assert rung("peek", [SOCKET], question=REMOVES_Q, policy=NO_RIVALS) == 1


_ITEM = st.sampled_from(["alpha", "beta_fn", "gamma", "delta_fn", "omega"])


@settings(max_examples=60, deadline=None)
@given(a=_ITEM, b=_ITEM, joiner=st.sampled_from([" and ", " or ", ", "]))
def test_a_listed_sibling_never_raises_a_rung(a: str, b: str, joiner: str) -> None:
    """With rivals on, no span is labelled better than with them off; the item the
    relation's sentence names keeps rung 1, the other loses it."""
    if a == b:
        return
    ev = [
        f"The queue has two methods: {a}{joiner}{b}. We call {a}, which will block the "
        "current thread until a message arrives on the queue."
    ]
    q = "Which method of the queue blocks the current thread until a message arrives?"
    for span in (a, b):
        assert rung(span, ev, question=q) >= rung(span, ev, question=q, policy=NO_RIVALS)
    assert rung(a, ev, question=q) == 1
    assert rung(b, ev, question=q) == 3


FERRY = (
    "Two boats serve the island: one boat, known as the shuttle, carries the mail every "
    "morning and the other boat, known as the tender, carries the tourists at noon."
)
FERRY_Q = "What is the boat that carries the mail every morning called?"


def test_asked_phrases() -> None:
    assert asked_phrases(FERRY_Q, "one boat, known as the shuttle, carries mail") == ["the shuttle"]
    q = "Which function do the values go through?"
    assert asked_phrases(q, "The values go through the from function first.") == ["from function"]
    assert asked_phrases("Where do the values go?", "known as the shuttle,") == []


def test_a_name_given_in_the_clause_of_the_relation_is_a_rival() -> None:
    assert "NOT_ANSWER_ANCHORED" in codes("the tender", [FERRY], question=FERRY_Q)
    assert rung("the shuttle", [FERRY], question=FERRY_Q) == 1
    assert rung("the tender", [FERRY], question=FERRY_Q, policy=NO_RIVALS) == 1


def test_the_phrase_the_question_asks_for_in_the_other_clause_is_a_rival() -> None:
    ev = [
        "There is a difference between what the loop statement does and what the map call "
        "does: values that have the map call applied to them go through the into function."
    ]
    q = "Which function do values that have the map call applied to them go through?"
    assert rung("the loop statement", ev, question=q) == 3
    assert rung("the loop statement", ev, question=q, policy=NO_RIVALS) == 1
    assert rung("the into function", ev, question=q) == 1


_NICK = st.sampled_from(["shuttle", "tender", "lighter", "launch"])


@settings(max_examples=60, deadline=None)
@given(a=_NICK, b=_NICK)
def test_a_named_rival_never_raises_a_rung(a: str, b: str) -> None:
    if a == b:
        return
    ev = [FERRY.replace("shuttle", "{A}").replace("tender", "{B}").format(A=a, B=b)]
    for span in (f"the {a}", f"the {b}"):
        on = rung(span, ev, question=FERRY_Q)
        assert on >= rung(span, ev, question=FERRY_Q, policy=NO_RIVALS)
    assert rung(f"the {a}", ev, question=FERRY_Q) == 1
    assert rung(f"the {b}", ev, question=FERRY_Q) == 3


def test_the_words_a_question_ends_on_lead_to_a_rival_filler() -> None:
    q = "What is grep short for?"
    ev = [
        "The grep tool is the Unix version of a pattern search. Its name comes from the "
        "grep command (short for global regular expression print) in ed."
    ]
    assert asked_phrases(q, ev[0]) == ["global regular expression print"]
    assert asked_phrases("Where does grep come from?", ev[0]) == []
    assert rung("pattern search", ev, question=q) == 3
    assert rung("pattern search", ev, question=q, policy=NO_RIVALS) == 1
    assert rung("global regular expression print", ev, question=q) == 1

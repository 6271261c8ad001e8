"""A bare span against its rivals (docs/verifier.md §19.14): another member of the series
the question's ordinal picks, and another clause that states the question's relation with
another filler. Each test has its control: the rule switched off, or the right filler."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from aborist.verify.evidence import build_evidence
from aborist.verify.policy import VerifierPolicy
from aborist.verify.rules.locality import build_sentences
from aborist.verify.rules.rival import other_member, rival_clause, span_kind
from aborist.verify.verify import verify_answer

NO_RIVALS = VerifierPolicy(answer_rivals=False)


def rung(answer: str, evidence: list[str], **kw: object) -> int:
    return verify_answer(answer, build_evidence(evidence), **kw).rung  # type: ignore[arg-type]


PARAMS = (
    "This example creates a function named print_labeled_measurement with two parameters. "
    "The first parameter is named value and is an i32. "
    "The second is named unit_label and is type char."
)
DICE = (
    "Imagine a game where, if you roll a 3 on a dice roll, your player doesn't move but "
    "instead gets a fancy new hat. If you roll a 7, your player loses a fancy hat."
)


def test_span_kinds() -> None:
    assert span_kind("7") == span_kind("seven") == span_kind("May 30, 1943") == "number"
    assert span_kind("i32") == span_kind("RefCell<T>") == span_kind("--ignored") == "code"
    assert span_kind("id()") == span_kind("__context__") == "code"
    assert span_kind("Robert Zemeckis") == span_kind("The Raconteurs") == "name"
    assert span_kind("the unit type") == span_kind("undefined behavior") == ""


def test_another_member_of_the_series() -> None:
    q = "What is the type of the second parameter of print_labeled_measurement?"
    sents = build_sentences(PARAMS)
    assert other_member(q, "i32", [sents[1]]) == ["o:2"]
    # the sentence names the question's member too: no conflict
    both = build_sentences("The first parameter is a u8 and the second parameter is an i32.")
    assert other_member(q, "i32", list(both)) == []
    # an ordinal on another head word is not the same series ("fifteenth season")
    other = build_sentences("South Park aired its first season on Comedy Central.")
    assert other_member("the second episode of which series?", "South Park", list(other)) == []
    assert rung("i32", [PARAMS], question=q) == 3
    assert rung("i32", [PARAMS], question=q, policy=NO_RIVALS) == 1  # the control


def test_a_rival_sentence_with_another_number() -> None:
    q = "Which number do you roll to get a fancy new hat?"
    assert rung("7", [DICE], question=q) == 3
    assert rung("3", [DICE], question=q) == 1  # the filler the rival sentence holds
    assert rung("7", [DICE], question=q, policy=NO_RIVALS) == 1


def test_a_rival_in_another_cited_object() -> None:
    ev = [
        "To check the results of the ignored tests, you can run cargo test -- --ignored.",
        "If you want to run all tests whether they are ignored or not, you can run "
        "cargo test -- --include-ignored.",
    ]
    q = "How do you run all tests whether they are ignored or not?"
    assert rung("cargo test -- --ignored", ev, question=q) == 3
    assert rung("cargo test -- --include-ignored", ev, question=q) == 1


def test_a_sibling_clause_and_listed_candidates() -> None:
    ev = [
        "Rc<T> enables multiple owners of the same data; Box<T> and RefCell<T> have single owners."
    ]
    q = "Which of Rc<T>, Box<T> and RefCell<T> enables multiple owners of the same data?"
    assert rung("RefCell<T>", ev, question=q) == 3
    assert rung("Rc<T>", ev, question=q) == 1


def test_a_filler_the_span_sentence_names_is_a_bridge_not_a_rival() -> None:
    # two hops: the first sentence leads to Cracked, the second answers about Cracked
    ev = [
        "John Severin was an American comics artist known for his 45 year stint with the "
        "magazine Cracked. Cracked is an American humor magazine founded in 1958."
    ]
    q = "John Severin had a 45 year stint with the magazine Cracked that was founded in what year?"
    assert rung("1958", ev, question=q) == 1
    sents = build_sentences(ev[0])
    anchors = frozenset({"stint", "magazin", "crack", "found", "sever", "john", "45"})
    assert rival_clause("1958", q, anchors, sents, [1]) == ""


def test_a_plain_phrase_has_no_rival_test() -> None:
    ev = [
        "The main error message, mismatched types, reveals the core issue. "
        "Statements don't evaluate to a value, which is expressed by (), the unit type."
    ]
    q = "What is the main error message?"
    assert (
        rival_clause(
            "the unit type", q, frozenset({"main", "error", "messag"}), build_sentences(ev[0]), [1]
        )
        == ""
    )


_NUM = st.integers(min_value=2, max_value=99)
_NOUN = st.sampled_from(["hat", "coin", "badge", "ticket", "token"])


@settings(max_examples=80, deadline=None)
@given(a=_NUM, b=_NUM, noun=_NOUN, other=_NOUN)
def test_rivals_never_raise_a_rung(a: int, b: int, noun: str, other: str) -> None:
    """The rule can only take a rung away: with it on, no span is ever labelled better
    than with it off; and the filler the question's own clause holds stays VERIFIED."""
    if a == b or noun == other:
        return
    ev = [f"If you roll a {a}, you get a new {noun}. If you roll a {b}, you lose a {other}."]
    q = f"Which number do you roll to get a new {noun}?"
    for span in (str(a), str(b)):
        assert rung(span, ev, question=q) >= rung(span, ev, question=q, policy=NO_RIVALS)
    assert rung(str(a), ev, question=q) == 1


def test_a_short_clause_is_not_a_bare_span() -> None:
    ev = ["The order is kept. Keys added after deletion are inserted at the end."]
    q = "Where are keys inserted after deletion?"
    # a sentence with a finite copula states its own relation, like any longer claim
    # (docs/verifier.md §19.5): it is checked as a claim, not as an answer to the question
    assert rung("The order is kept.", ev, question=q) == 1
    # the same words without the sentence's end are a bare span whose sentence holds none
    # of the question's terms
    assert rung("the order is kept", ev, question=q) == 3
    assert rung("The order.", ev, question=q) == 3  # no finite verb: still a bare span


def test_an_agent_phrase_elsewhere_is_a_rival_for_a_who_question() -> None:
    ev = [
        "Rust walks back up the stack and cleans up the data from each function. "
        "The memory that the program was using is then cleaned up by the operating system."
    ]
    q = "After aborting, who cleans up the memory the program was using?"
    assert rung("Rust", ev, question=q) == 3  # "cleaned up by the operating system"
    assert rung("the operating system", ev, question=q) == 1
    assert rung("Rust", ev, question=q, policy=NO_RIVALS) == 1  # the control


def test_a_bare_quoted_answer_is_held_to_the_question() -> None:
    ev = [
        "The Book of Kells was made in a monastery on the island of Iona. Scholars "
        'discuss its decoration in the chapter "Insular Art".'
    ]
    q = "Where was the Book of Kells made?"
    # the quotation is verbatim, but its sentence holds none of the question's terms
    assert rung('"Insular Art"', ev, question=q) == 3
    assert rung('"Insular Art"', ev) == 1  # without a question there is nothing to answer
    assert rung("the island of Iona", ev, question=q) == 1


def test_a_reach_past_the_last_sentence_is_no_error() -> None:
    # the neighbours searched may run past the object's end: the rival test reads only
    # the sentences there are
    wide = VerifierPolicy(question_anchor_neighbours=3)
    q = "Which number do you roll to get a fancy new hat?"
    # the widened reach counts the neighbouring sentence as the span's own, so no rival
    assert rung("7", [DICE], question=q, policy=wide) == 1
    assert rung("3", [DICE], question=q, policy=wide) == 1


def test_a_strengthened_quantifier_is_not_supported() -> None:
    from aborist.verify.rules.locality import anchor_keys

    assert anchor_keys("every value") == anchor_keys("all values") == {"q:all"}
    ev = ["A call to recv may block the current thread until a value is sent."]
    same = "A call to recv may block the current thread until a value is sent."
    assert rung(same, ev) == 1
    assert rung("A call to recv always blocks the current thread until a value is sent.", ev) > 2
    ev2 = ["Some values of the list are copied when the list is sliced."]
    assert rung("All values of the list are copied when the list is sliced.", ev2) > 2
    assert rung("Values of the list are copied when the list is sliced.", ev2) == 1  # a fragment


def test_a_number_the_sentence_names_as_the_kind_asked_for() -> None:
    ev = ["Underscores for grouping digits in literals were first allowed in version 3.6."]
    q = "In which Python version were underscores first allowed for grouping digits?"
    assert rung("3.6", ev, question=q) == 1  # "version 3.6": the kind the question names
    other = ["Underscores for grouping digits were first allowed 3 years ago, in 2016."]
    assert rung("3", other, question=q) == 3  # a number the sentence does not call a version


def test_a_numbered_name_is_another_name_with_another_number() -> None:
    ev = [
        "Unpacking into dictionary displays was originally proposed by PEP 448.",
        "Starting with 3.8, the key is evaluated before the value, as proposed by PEP 572.",
    ]
    q = "Which PEP originally proposed unpacking into dictionary displays?"
    assert rung("PEP 572", ev, question=q) == 3
    assert rung("PEP 448", ev, question=q) == 1

"""Anchor-class warrants: one pass, one fail and the near misses per class."""

from __future__ import annotations

import pytest

from aborist.verify.evidence import build_evidence
from aborist.verify.rules.warrant import (
    WARRANT_DEMOTE,
    WARRANT_FAIL,
    WARRANT_NOT_APPLICABLE,
    WARRANT_PASS,
    check_warrant,
    date_components,
    proper_nouns,
    question_shapes,
)

EV = build_evidence(
    [
        "Thomas K. Arnold joined Video Store Magazine in March 1991. "
        "The board met on 5 June 2001 in Boston. Seven members voted. "
        "The flood was caused by heavy monsoon rainfall.",
    ]
)


def test_question_shapes() -> None:
    assert question_shapes("Who founded Acme?") == ("proper_noun",)
    assert question_shapes("How many members voted?") == ("count",)
    assert question_shapes("Why did the dam fail?") == ("cause",)
    assert "entity_list" in question_shapes("List the founding members.")
    assert question_shapes(None) == ()
    assert question_shapes("Is it raining?") == ()


def test_proper_nouns_runs_connectors_and_initials() -> None:
    assert proper_nouns("The Bank of America and Thomas K. Arnold met.") == [
        "Bank of America",
        "Thomas K. Arnold",
    ]
    assert proper_nouns("Procter & Gamble sold Jean-Paul's shop") == [
        "Procter & Gamble",
        "Jean-Paul's",
    ]
    assert proper_nouns("First for Women was started first.") == ["First for Women"]
    assert proper_nouns("In Paris, France we ate.", multi_word_only=True) == []
    assert proper_nouns("The cat sat.") == []


def test_proper_noun_warrant_pass_fail_and_not_applicable() -> None:
    q = "Who joined Video Store Magazine?"
    assert check_warrant("Thomas K. Arnold joined it", EV, q).status == WARRANT_PASS
    failed = check_warrant("Jane Doe joined it", EV, q)
    assert failed.status == WARRANT_FAIL and "proper_noun" in failed.reasons[0]
    # near miss: no Title-Case anchor in the claim -> the class does not apply
    assert check_warrant("someone joined it", EV, q).status == WARRANT_NOT_APPLICABLE


def test_date_warrant_requires_all_components_in_one_object() -> None:
    assert date_components("on June 5, 2001") == [{"month": 6, "day": 5, "year": 2001}]
    assert check_warrant("The board met on June 5, 2001", EV).status == WARRANT_PASS
    assert check_warrant("The board met on June 6, 2001", EV).status == WARRANT_FAIL
    assert check_warrant("He joined in March 1992", EV).status == WARRANT_FAIL
    assert check_warrant("He joined in March 1991", EV).status == WARRANT_PASS
    # near misses: a year without a month, and the modal verb "may", are not dates
    assert check_warrant("He joined in 1992", EV).status == WARRANT_NOT_APPLICABLE
    assert date_components("It may rain in 2020") == []
    split = build_evidence(["in March", "in 1991"])
    assert check_warrant("He joined in March 1991", split).status == WARRANT_FAIL


def test_entity_list_demotes_instead_of_rejecting() -> None:
    q = "List the cities where the board met."
    assert check_warrant("Boston", EV, q).status == WARRANT_PASS
    result = check_warrant("Chicago and Denver", EV, q)
    assert result.status == WARRANT_DEMOTE
    assert "entity_list" in result.classes


@pytest.mark.parametrize(
    ("claim", "status"),
    [
        ("7 members voted", WARRANT_PASS),
        ("seven members voted", WARRANT_PASS),
        ("Eight members voted", WARRANT_FAIL),
        ("8 members voted", WARRANT_FAIL),
        ("members voted", WARRANT_NOT_APPLICABLE),
    ],
)
def test_count_warrant_digit_word_equivalence(claim: str, status: str) -> None:
    assert check_warrant(claim, EV, "How many members voted?").status == status


def test_count_digit_in_evidence_matches_word_in_claim() -> None:
    ev = build_evidence(["The committee has 12 seats."])
    assert check_warrant("twelve seats", ev, "How many seats?").status == WARRANT_PASS


def test_cause_warrant() -> None:
    q = "Why did the flood happen?"
    assert check_warrant("because of monsoon rainfall", EV, q).status == WARRANT_PASS
    assert check_warrant("because of sabotage", EV, q).status == WARRANT_FAIL
    # near miss: only short or stop words, no cause anchor -> not applicable
    assert check_warrant("it was bad", EV, q).status == WARRANT_NOT_APPLICABLE

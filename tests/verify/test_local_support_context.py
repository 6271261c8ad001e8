"""Local support read in the document (docs/verifier.md §19.12): date forms, datelines and a
pronoun's antecedent."""

from __future__ import annotations

import pytest

from aborist.verify.evidence import build_evidence
from aborist.verify.policy import VerifierPolicy
from aborist.verify.rules.coref import SupportContext, subject_name
from aborist.verify.rules.locality import Passage, build_sentences
from aborist.verify.text.dates import (
    adjunct_keys,
    date_adjunct,
    dateline_keys,
    dates_itself,
    is_dateline,
    normalize_dates,
)
from aborist.verify.verify import verify_answer

ON = VerifierPolicy(pronoun_antecedents=True, dateline_dates=True, date_forms=True)
OFF = VerifierPolicy(pronoun_antecedents=False, dateline_dates=False, date_forms=False)


def label(claim: str, evidence: list[str], policy: VerifierPolicy) -> str:
    return verify_answer(claim, build_evidence(evidence), policy).label


@pytest.mark.parametrize(
    ("text", "out"),
    [
        ("Aug. 10, 2014", "August 10, 2014"),
        ("Nov 4, 2015", "November 4, 2015"),
        ("the 2018–19 season", "the 2018-2019 season"),
        ("2018-06-30 07:00", "30 June 2018 07:00"),
        ("Mar the finish", "Mar the finish"),  # no full stop, no number after it: a verb
        ("2019-18", "2019-18"),  # not a range
    ],
)
def test_normalize_dates(text: str, out: str) -> None:
    assert normalize_dates(text) == out


def test_datelines() -> None:
    assert is_dateline("May 20, 2019")
    assert is_dateline("Published 7:33 a.m. ET Aug. 10, 2014 | Updated 3:36 p.m. ET Aug. 10, 2014")
    assert is_dateline("(meta data) PUBLISHED DATETIME: 2007-05-22 19:02")
    assert not is_dateline("The museum opened in May 2019.")
    assert not is_dateline("2019")  # a year alone is not a date
    # a clock time's numbers are not the date's
    assert dateline_keys("29 April 2014 / 11:04") == {"n:29", "n:2014", "m:4"}


def test_date_adjunct() -> None:
    assert date_adjunct("Watson has been the head coach since 2019.") == (
        "since 2019",
        "Watson has been the head coach.",
    )
    adj = date_adjunct("On May 7, 2018, Russell died in Calgary.")
    assert adj == ("On May 7, 2018", "Russell died in Calgary.")
    assert adjunct_keys(adj[0]) == {"n:7", "n:2018", "m:5"}
    # two dates: which event had which is the claim's, not the dateline's
    assert date_adjunct("In 2014 she was hired, and in 2016 she left.") is None
    assert date_adjunct("at the 2016 Olympics") is None
    assert dates_itself("The parade was held last year.")
    assert dates_itself("The parade was held in March.")
    assert not dates_itself("The parade was held on Monday.")


def test_subject_name() -> None:
    assert subject_name("The Odessa Jackalopes announced a coach.") == "Odessa Jackalopes"
    assert subject_name("Bank of England raised rates.") == "Bank of England"
    assert subject_name("# Anna Holm") == "Anna Holm"
    assert subject_name("The company grew.") == ""
    assert subject_name("In 2012 it grew.") == ""  # "In" is a stopword: no name


def test_antecedent_is_the_nearest_name_before_a_pronoun_chain() -> None:
    objs = [
        ("a", Passage(build_sentences("Anna Holm was born in Oslo."))),
        ("b", Passage(build_sentences("She studied law. She founded the museum."))),
    ]
    ctx = SupportContext(objs, antecedents=True, datelines=True, date_forms=True)
    second = objs[1][1].sentences[1]
    assert ctx.antecedent("b", 1, second) == "Anna Holm"
    read, via = ctx.read("b", 1, second)
    assert read.text == "Anna Holm founded the museum."
    assert "Anna Holm" in via
    # a sentence that opens with anything else ends the search
    objs2 = [("a", Passage(build_sentences("Anna Holm was born. The city grew. She left.")))]
    ctx2 = SupportContext(objs2, antecedents=True, datelines=False, date_forms=False)
    assert ctx2.antecedent("a", 2, objs2[0][1].sentences[2]) == ""


DOC = [
    "May 20, 2019",
    "The Odessa Jackalopes announced that they have hired Todd Watson as head coach.",
]


def test_dateline_dates_the_adjunct() -> None:
    claim = "The Odessa Jackalopes hired Todd Watson as head coach in 2019."
    assert label(claim, DOC, ON) == "SUPPORTED"
    assert label(claim, DOC, OFF) == "PARTIAL"  # entity only: the year is not in the sentence
    assert label(claim.replace("2019", "2018"), DOC, ON) not in {"VERIFIED", "SUPPORTED"}
    assert label("The Odessa Jackalopes hired Todd Watson as head coach in May 2019.", DOC, ON) == (
        "SUPPORTED"
    )
    assert label(
        "The Odessa Jackalopes hired Todd Watson as head coach in June 2019.", DOC, ON
    ) != ("SUPPORTED")


def test_dateline_must_come_before_and_the_sentence_must_not_date_itself() -> None:
    claim = "The Odessa Jackalopes hired Todd Watson as head coach in 2019."
    assert label(claim, list(reversed(DOC)), ON) != "SUPPORTED"
    dated_itself = [DOC[0], DOC[1].replace("have hired", "hired last year")]
    assert label(claim, dated_itself, ON) != "SUPPORTED"
    negated = [DOC[0], DOC[1].replace("have hired", "have not hired")]
    assert label(claim, negated, ON) != "SUPPORTED"


def test_date_forms() -> None:
    ev = ["The final implementation will happen over the 2018-2019 academic year."]
    assert label(
        "The final implementation will happen over the 2018–19 academic year.", ev, ON
    ) == ("SUPPORTED")
    assert label(
        "The final implementation will happen over the 2018–20 academic year.", ev, ON
    ) != ("SUPPORTED")
    # (an abbreviation with its full stop before a digit ends a sentence, §4: none here)
    ev2 = ["Regan Smith replaced Tony Stewart at Watkins Glen on Aug 10, 2014."]
    assert label(
        "Regan Smith replaced Tony Stewart at Watkins Glen on August 10, 2014.", ev2, ON
    ) == ("SUPPORTED")
    assert label(
        "Regan Smith replaced Tony Stewart at Watkins Glen on August 10, 2014.", ev2, OFF
    ) != ("SUPPORTED")
    assert label(
        "Regan Smith replaced Tony Stewart at Watkins Glen on October 10, 2014.", ev2, ON
    ) != ("SUPPORTED")


def test_pronoun_antecedent() -> None:
    ev = [
        "Ron Bakir was named the young entrepreneur of the year.",
        "He founded HomeCorp Group in 2004.",
    ]
    claim = "Ron Bakir founded HomeCorp Group in 2004."
    assert label(claim, ev, ON) == "SUPPORTED"
    assert label(claim, ev, OFF) != "SUPPORTED"
    assert label("Tony Smith founded HomeCorp Group in 2004.", ev, ON) != "SUPPORTED"
    # only the name is supplied: a word the sentence lacks is still missing
    assert label("Ron Bakir sold HomeCorp Group in 2004.", ev, ON) != "SUPPORTED"
    possessive = ["Ron Bakir is a retailer.", "His company HomeCorp Group turned over 500 million."]
    assert label("Ron Bakir's company HomeCorp Group turned over 500 million.", possessive, ON) == (
        "SUPPORTED"
    )


def test_switches_off_change_nothing_on_a_verbatim_sentence() -> None:
    ev = ["He founded HomeCorp Group in 2004."]
    for pol in (ON, OFF):
        assert label("He founded HomeCorp Group in 2004.", ev, pol) == "VERIFIED"

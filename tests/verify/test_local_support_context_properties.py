"""Hypothesis properties of the document-context rules (docs/verifier.md §19.12), with every
switch on: a claim that differs from its support by one negation, one number, one month or
one swapped entity is still never vouched for; a verbatim sentence is still STRICT; a
dateline never dates a claim with another year."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from aborist.verify.evidence import build_evidence
from aborist.verify.policy import VerifierPolicy
from aborist.verify.verify import verify_answer

ON = VerifierPolicy(pronoun_antecedents=True, dateline_dates=True, date_forms=True)
NAMES = ["Anna Holm", "Erik Berg", "Maria Lund", "Olav Dahl", "Sigrid Moe", "Jonas Vik"]
PLACES = ["Bergen", "Oslo", "Tromsø", "Stavanger", "Drammen", "Hamar"]
VERBS = ["founded", "designed", "funded", "restored", "opened", "sold"]
NOUNS = ["museum", "library", "theatre", "harbour", "bridge", "school"]
MONTHS = ["January", "March", "April", "June", "August", "October", "December"]
PROPS = settings(max_examples=60, deadline=None)
VOUCHED = {"VERIFIED", "SUPPORTED"}


@st.composite
def docs(draw: st.DrawFn) -> dict[str, str | int]:
    return {
        "name": draw(st.sampled_from(NAMES)),
        "place": draw(st.sampled_from(PLACES)),
        "verb": draw(st.sampled_from(VERBS)),
        "noun": draw(st.sampled_from(NOUNS)),
        "year": draw(st.integers(1900, 2020)),
        "count": draw(st.integers(2, 900)),
        "month": draw(st.sampled_from(MONTHS)),
        "day": draw(st.integers(1, 28)),
    }


def evidence(d: dict[str, str | int]) -> list[str]:
    """A dateline, a sentence naming the subject, a pronoun-led sentence about it."""
    return [
        f"{d['month']} {d['day']}, {d['year']}",
        f"{d['name']} lives in {d['place']}.",
        f"She {d['verb']} the {d['noun']} with {d['count']} volunteers.",
    ]


def claim(d: dict[str, str | int], **kw: str | int) -> str:
    e = {**d, **kw}
    return f"{e['name']} {e['verb']} the {e['noun']} with {e['count']} volunteers in {e['year']}."


def vouched(text: str, ev: list[str]) -> bool:
    return verify_answer(text, build_evidence(ev), ON).label in VOUCHED


@PROPS
@given(docs())
def test_the_rules_support_the_faithful_claim(d: dict[str, str | int]) -> None:
    # a check that the properties below test a claim the rules do reach
    assert vouched(claim(d), evidence(d))


@PROPS
@given(docs(), st.data())
def test_one_swapped_name_is_never_vouched(d: dict[str, str | int], data: st.DataObject) -> None:
    other = data.draw(st.sampled_from([n for n in NAMES if n != d["name"]]))
    assert not vouched(claim(d, name=other), evidence(d))


@PROPS
@given(docs(), st.data())
def test_another_year_or_number_is_never_vouched(
    d: dict[str, str | int], data: st.DataObject
) -> None:
    year = data.draw(st.integers(1900, 2020).filter(lambda y: y != d["year"]))
    assert not vouched(claim(d, year=year), evidence(d))
    count = data.draw(st.integers(2, 900).filter(lambda c: c != d["count"]))
    assert not vouched(claim(d, count=count), evidence(d))


@PROPS
@given(docs(), st.data())
def test_another_month_or_day_is_never_vouched(
    d: dict[str, str | int], data: st.DataObject
) -> None:
    month = data.draw(st.sampled_from([m for m in MONTHS if m != d["month"]]))
    base = claim(d).removesuffix(f" in {d['year']}.")
    assert vouched(f"{base} on {d['month']} {d['day']}, {d['year']}.", evidence(d))
    assert not vouched(f"{base} on {month} {d['day']}, {d['year']}.", evidence(d))
    day = data.draw(st.integers(1, 28).filter(lambda x: x != d["day"]))
    assert not vouched(f"{base} on {d['month']} {day}, {d['year']}.", evidence(d))


@PROPS
@given(docs())
def test_one_negation_is_never_vouched(d: dict[str, str | int]) -> None:
    negated = claim(d).replace(f" {d['verb']} ", f" never {d['verb']} ", 1)
    assert not vouched(negated, evidence(d))
    ev = evidence(d)
    ev[2] = ev[2].replace("She ", "She never ", 1)
    assert not vouched(claim(d), ev)


@PROPS
@given(docs(), st.data())
def test_a_sentence_dated_otherwise_is_never_redated(
    d: dict[str, str | int], data: st.DataObject
) -> None:
    year = data.draw(st.integers(1900, 2020).filter(lambda y: y != d["year"]))
    ev = evidence(d)
    ev[2] = ev[2].removesuffix(".") + f" in {year}."
    assert not vouched(claim(d), ev)


@PROPS
@given(docs())
def test_a_verbatim_sentence_is_still_strict(d: dict[str, str | int]) -> None:
    ev = evidence(d)
    for sentence in ev[1:]:
        assert verify_answer(sentence, build_evidence(ev), ON).label == "VERIFIED"

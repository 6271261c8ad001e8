"""Hypothesis properties of §19.18 (docs/verifier.md): the rules that only read a unit or a
rival differently never take a rung away; a span whose words the evidence lacks is never
vouched for, whatever the switches; the first hop stands for a rival only through one of
the question's own nouns."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from aborist.verify.evidence import build_evidence
from aborist.verify.policy import VerifierPolicy
from aborist.verify.verify import verify_answer

#: every §19.18 rule on, the five that are off by default included (they vouch for wrong
#: answers a review built: docs/verifier.md §19.18, "Why five of them are off")
ON = VerifierPolicy(
    answer_whole_sentences=True,
    answer_restated_question=True,
    answer_first_hop=True,
    answer_rival_same_stem=True,
    answer_definite_reference=True,
)
#: the switches whose rules only ever return "answers" earlier or read a rival as agreeing
LOOSENING = VerifierPolicy(
    answer_whole_sentences=False,
    answer_restated_question=False,
    answer_first_hop=False,
    answer_rival_same_stem=False,
)
FIRST = ["Per", "Anna", "Erik", "Maria", "Olav", "Sigrid"]
MIDDLE = ["Olav", "Marie", "Johan", "Elise"]
LAST = ["Lund", "Holm", "Berg", "Dahl", "Moe", "Vik"]
NOUNS = ["chairman", "founder", "director", "patron"]
BODIES = ["Commission", "Society", "Council", "Trust"]
PLACES = ["Bergen", "Oslo", "Hamar", "Tromsø"]
PROPS = settings(max_examples=60, deadline=None)
VOUCHED = {"VERIFIED", "SUPPORTED"}


@st.composite
def docs(draw: st.DrawFn) -> dict[str, str | int]:
    return {
        "first": draw(st.sampled_from(FIRST)),
        "middle": draw(st.sampled_from(MIDDLE)),
        "last": draw(st.sampled_from(LAST)),
        "noun": draw(st.sampled_from(NOUNS)),
        "other": draw(st.sampled_from(NOUNS)),
        "body": draw(st.sampled_from(BODIES)),
        "place": draw(st.sampled_from(PLACES)),
        "set_up": draw(st.integers(1900, 1950)),
        "born": draw(st.integers(1850, 1899)),
        "died": draw(st.integers(1951, 2020)),
    }


def evidence(d: dict[str, str | int]) -> list[str]:
    """A first hop naming a person after a noun, then that person's own sentence."""
    return [
        f"The {d['last']} {d['body']} was set up in {d['set_up']} in {d['place']} by its "
        f"{d['noun']} {d['first']} {d['last']}. {d['first']} {d['middle']} {d['last']} "
        f"({d['born']} - {d['died']}) was an engineer."
    ]


def rung(answer: str, d: dict[str, str | int], question: str, policy: VerifierPolicy) -> int:
    return verify_answer(answer, build_evidence(evidence(d)), policy, question=question).rung


QUESTIONS = [
    "What year did the {noun} of the {last} {body} in {place} die?",
    "What year did the {other} of the {last} {body} in {place} die?",
    "What year was the {last} {body} in {place} set up?",
    "Who was the {noun} of the {last} {body}?",
]


@PROPS
@given(docs(), st.sampled_from(QUESTIONS), st.sampled_from(["died", "born", "set_up", "place"]))
def test_the_loosening_rules_never_take_a_rung_away(
    d: dict[str, str | int], template: str, field: str
) -> None:
    question = template.format(**d)
    answer = str(d[field])
    assert rung(answer, d, question, ON) <= rung(answer, d, question, LOOSENING)


@PROPS
@given(docs(), st.sampled_from(QUESTIONS), st.integers(2021, 2999))
def test_a_number_the_evidence_lacks_is_never_vouched_for(
    d: dict[str, str | int], template: str, year: int
) -> None:
    question = template.format(**d)
    label = verify_answer(str(year), build_evidence(evidence(d)), ON, question=question).label
    assert label not in VOUCHED


NO_HOP = VerifierPolicy(answer_first_hop=False)


@PROPS
@given(docs())
def test_the_first_hop_needs_the_question_s_own_noun(d: dict[str, str | int]) -> None:
    died = str(d["died"])
    asked = f"What year did the {d['noun']} of the {d['last']} {d['body']} in {d['place']} die?"
    # the sentence naming the body is a rival with its own year, except as the first hop
    assert rung(died, d, asked, NO_HOP) == 3
    assert rung(died, d, asked, ON) == 1
    if d["other"] != d["noun"]:  # without the noun the rule changes nothing
        other = asked.replace(f" {d['noun']} ", f" {d['other']} ")
        assert rung(died, d, other, ON) == rung(died, d, other, NO_HOP)

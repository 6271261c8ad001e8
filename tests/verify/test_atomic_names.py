"""What a rung-2 answer may not build (docs/verifier.md §19.21): a multi-word name out of
the words of other names, a bare answer that repeats the question, a bare span the
evidence does not hold word for word, and a quantifier the passage does not state. Each
test has its control: the rule switched off, or the right answer."""

from __future__ import annotations

import pytest

from aborist.verify.evidence import build_evidence
from aborist.verify.policy import VerifierPolicy
from aborist.verify.rules.roles import echoes_question
from aborist.verify.text.names import missing_name, name_runs
from aborist.verify.text.textcanon import canonicalize, tokens
from aborist.verify.verify import verify_answer


def rung(answer: str, evidence: list[str], **kw: object) -> int:
    return verify_answer(answer, build_evidence(evidence), **kw).rung  # type: ignore[arg-type]


PARK = (
    "Presque Isle State Park is a 3112 acre Pennsylvania state park on an arching, sandy "
    "peninsula that juts into Lake Erie, 4 mi west of the city of Erie."
)
BASE = (
    "Tyndall Air Force Base is a United States Air Force Base located 12 mi east of Panama "
    "City, Florida."
)


def test_name_runs_skip_a_first_word_and_keep_small_words() -> None:
    assert name_runs("It moved to the Bank of England in 1990.") == [("bank", "england")]
    assert name_runs("Panama City Air Force Base is near.") == [("city", "air", "force", "base")]
    assert name_runs("Many Python users agree.") == []  # "Many" is a first word, not a name
    assert name_runs('founded by Matthew "The Granimal" Granahan') == [
        ("matthew", "granimal", "granahan")
    ]


def test_a_name_built_from_other_names_is_missing() -> None:
    runs = name_runs(canonicalize("The park is Lake Erie State Park."))
    assert missing_name(runs, [canonicalize(PARK)]) == "lake erie state park"
    runs = name_runs(canonicalize("The park is Presque Isle State Park."))
    assert missing_name(runs, [canonicalize(PARK)]) == ""


def test_a_shorter_name_and_a_lower_case_name_are_held() -> None:
    ev = ["Ricky Dene Gervais (born 25 June 1961) is an English comedian."]
    assert missing_name(name_runs("He said Ricky Gervais is a comedian."), ev) == ""
    ev = ["It blends new music with alternative such as Mumford & sons."]
    assert missing_name(name_runs("It plays Mumford & Sons."), ev) == ""
    ev = ['founded by wrestler Matthew "The Granimal" Granahan.']
    assert missing_name(name_runs("It was founded by Matthew Granahan."), ev) == ""


def test_a_claim_with_a_built_name_is_not_supported() -> None:
    claim = "The air force base east of Panama City is Panama City Air Force Base."
    right = "The air force base east of Panama City is Tyndall Air Force Base."
    on = VerifierPolicy(claim_names=True)
    assert rung(right, [BASE], policy=on) == 2
    assert rung(claim, [BASE], policy=on) > 2
    assert rung(claim, [BASE]) == 2  # the control: off by default


def test_echoes_question_needs_the_question_s_own_run_and_no_choice() -> None:
    q = "After installing ripgrep, what command do I run?"
    assert echoes_question(q, "ripgrep", tokens("ripgrep"))
    assert echoes_question(
        "What does upgrade give back on a Weak<T>?", "Weak<T>", tokens("Weak<T>")
    )
    assert not echoes_question(q, "rg", tokens("rg"))
    # a choice question is answered by one of its own words
    q2 = "Which is older, Rust or Python?"
    assert not echoes_question(q2, "Rust", tokens("Rust"))
    # a name built from the question's words is not a repeat of them
    q3 = "What are structs that look similar to tuples called?"
    assert not echoes_question(q3, "Tuple structs", tokens("Tuple structs"))
    # nor is code whose digits the question holds elsewhere
    q4 = "In Listing 6-1, what address is associated with the loopback instance?"
    assert not echoes_question(q4, "::1", tokens("::1"))


INSTALL = (
    "After installing ripgrep, you can run it with the rg command. The ripgrep tool "
    "searches files for a pattern."
)


def test_an_answer_that_repeats_the_question_is_not_strict() -> None:
    q = "After installing ripgrep, what command do I run?"
    assert rung("rg", [INSTALL], question=q) == 1
    assert rung("ripgrep", [INSTALL], question=q) == 3
    assert rung("ripgrep", [INSTALL], question=q, policy=VerifierPolicy(answer_echo=False)) == 1


ART = (
    "He helped to found many of Canada's institutions, including the University of "
    "Toronto, Appleby College, Art Gallery of Ontario and Royal Ontario Museum."
)


def test_a_bare_span_found_only_as_a_paraphrase_is_at_most_rung_3() -> None:
    q = "Which institution he founded was controlled by the Church of England?"
    v = verify_answer("The Art Gallery of Ontario", build_evidence([ART]), question=q)
    assert v.rung == 3
    assert "NOT_ANSWER_ANCHORED" in {x.code for x in v.violations}
    off = VerifierPolicy(answer_bare_paraphrase=False)
    assert rung("The Art Gallery of Ontario", [ART], question=q, policy=off) == 2
    # without a question there is no relation to stand in: the old rung
    assert rung("The Art Gallery of Ontario", [ART]) == 2


ELSE = "If all expressions are false, the suite of the else clause, if present, is executed."


def test_any_is_a_quantifier_the_passage_must_state() -> None:
    assert rung("If all expressions are false, the else clause is executed.", [ELSE]) == 2
    assert rung("If any expression is false, the else clause is executed.", [ELSE]) > 2


@pytest.mark.parametrize("head", ["Presque Isle", "Tyndall Air", "Royal Ontario", "Appleby Art"])
def test_a_swapped_first_name_word_is_never_vouched(head: str) -> None:
    """A claim naming "<X> <Y> Park" where the passage's only park is "Presque Isle State
    Park" is vouched for only when <X> <Y> is the passage's own name."""
    claim = f"The peninsula that juts into Lake Erie is in {head} State Park."
    r = rung(claim, [PARK], policy=VerifierPolicy(claim_names=True))
    assert (r == 2) if head == "Presque Isle" else (r > 2)

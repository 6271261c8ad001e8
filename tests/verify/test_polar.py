"""A yes/no particle that opens an answer (docs/verifier.md §19.16): not a word of the
claim, and checked against what the claim says of the question's proposition."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from aborist.verify.evidence import build_evidence
from aborist.verify.policy import VerifierPolicy
from aborist.verify.rules.polar import is_polar_question, particle_agrees, split_particle
from aborist.verify.verify import verify_answer

OFF = VerifierPolicy(polar_particles=False)
EV = [
    "Rust does not allow mixing borrowed and owned values in one vector. "
    "Matches in Rust are exhaustive: we must exhaust every last possibility."
]
MIX = "Can I mix borrowed and owned values in one vector?"
MATCH = "Are matches in Rust exhaustive?"


def rung(answer: str, question: str | None, policy: VerifierPolicy | None = None) -> int:
    return verify_answer(answer, build_evidence(EV), policy, question=question).rung


def test_split_particle() -> None:
    assert split_particle("No. Rust does not allow it.") == ("no", "Rust does not allow it.")
    assert split_particle("Yes, it is.") == ("yes", "it is.")
    assert split_particle("Yes.") == ("yes", "")
    assert split_particle("No. 5 is the answer.") is None  # "No." abbreviates a number
    assert split_particle("Nobody knows.") is None
    assert is_polar_question(MIX) and is_polar_question(MATCH)
    assert not is_polar_question("What are matches?")


def test_a_particle_that_agrees_is_not_a_second_negation() -> None:
    no = "No. Rust does not allow mixing borrowed and owned values in one vector."
    assert rung(no, MIX) == 1
    assert rung(no, MIX, OFF) == 4  # the control: "No" read as a word of the claim
    assert rung("Yes. Matches in Rust are exhaustive.", MATCH) == 1
    assert rung("Yes, matches in Rust are exhaustive.", MATCH) == 1


def test_a_particle_that_contradicts_its_claim_is_refused() -> None:
    assert rung("No. Matches in Rust are exhaustive.", MATCH) == 4
    wrong = "Yes. Rust does not allow mixing borrowed and owned values in one vector."
    assert rung(wrong, MIX) == 3  # the claim is true, its "yes" is not


def test_an_unchecked_particle_is_never_vouched_for() -> None:
    no = "No. Rust does not allow mixing borrowed and owned values in one vector."
    assert rung(no, None) == 3  # no question: nothing tells what the "no" answers
    # another ordinal: the claim states another proposition than the question's
    assert (
        particle_agrees("no", "Is it the highest peak?", "It is the second-highest peak.") is None
    )
    assert particle_agrees("yes", "Is it the highest peak?", "It is the highest peak.") is True


@settings(max_examples=60, deadline=None)
@given(particle=st.sampled_from(["yes", "no"]), negate_q=st.booleans(), negate_c=st.booleans())
def test_agreement_is_the_parity_of_the_two_polarities(
    particle: str, negate_q: bool, negate_c: bool
) -> None:
    q = f"Does the compiler {'not ' if negate_q else ''}check every borrow at compile time?"
    c = f"The compiler does {'not ' if negate_c else ''}check every borrow at compile time."
    same = negate_q == negate_c
    assert particle_agrees(particle, q, c) is (same if particle == "yes" else not same)

"""The parts of a multi-sentence claim found in one evidence object must stand near each
other (docs/verifier.md §19.7, `parts_max_gap`)."""

from __future__ import annotations

from aborist.verify.evidence import build_evidence
from aborist.verify.policy import VerifierPolicy
from aborist.verify.verify import verify_answer


def rung(answer: str, evidence: list[str], **kw: object) -> int:
    return verify_answer(answer, build_evidence(evidence), **kw).rung  # type: ignore[arg-type]


TOUR = (
    "The band first played live on MTV in July 1989. The tour went on for months. The "
    "crowds grew. Their album sold well. In March 1990, the duo won a Grammy award."
)


def test_the_parts_of_a_claim_must_stand_near_each_other_in_one_object() -> None:
    """§19.7: two true sentences far apart in one document do not make one statement."""
    joined = "In March 1990, the band first played live on MTV."
    v = verify_answer(joined, build_evidence([TOUR]))
    assert v.rung == 4
    assert any("sentences 1 and 5" in r for u in v.units for r in u.reasons)
    assert rung(joined, [TOUR], policy=VerifierPolicy(parts_max_gap=1000)) == 2  # control
    # adjacent sentences still support a claim clause by clause
    near = "The band first played live on MTV in July 1989. The tour went on for months."
    assert (
        rung(
            "In July 1989, the band first played live on MTV, and the tour went on for months.",
            [near],
        )
        == 2
    )
    # parts in two evidence objects are each a source of their own: not held to a
    # distance (the known limit §19.7 states), so this joined claim is still rung 2
    two = [
        "The band first played live on MTV in July 1989.",
        "In March 1990, the duo won a Grammy award.",
    ]
    assert rung("In March 1990, the band first played live on MTV.", two) == 2

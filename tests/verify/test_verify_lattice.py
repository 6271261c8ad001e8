"""Strategy 5, the claim lattice: each of the seven hard checks passing and failing."""

from __future__ import annotations

import json
from typing import Any

import pytest

from aborist.verify.evidence import build_evidence
from aborist.verify.verify import HARD_CHECKS, VerifierPolicy, verify_answer

EV = build_evidence(
    [
        "The Oberoi Group is a hotel company with its head office in Delhi.",
        "The Oberoi family is famous for its involvement in hotels.",
        {
            "text": "Anonymous forum post: the head office moved to Mumbai.",
            "source_role": "untrusted",
        },
        "The group runs 31 hotels in seven countries.",
        "Founded in 1934 by Mohan Singh Oberoi.",
    ]
)


def unit(answer: str, *, question: str | None = None, policy: VerifierPolicy | None = None):  # type: ignore[no-untyped-def]
    v = verify_answer(answer, EV, policy, question=question, mode="claim-lattice")
    assert v.n_units == 1
    return v.units[0], v


def statuses(u) -> dict[str, str]:  # type: ignore[no-untyped-def]
    return dict(u.checks)


def test_all_seven_checks_pass_verbatim() -> None:
    u, v = unit("The Oberoi Group is a hotel company with its head office in Delhi. [E1]")
    assert [c for c, _ in u.checks] == list(HARD_CHECKS)
    assert set(statuses(u).values()) == {"pass"}
    assert (u.verified, u.grade, v.audit_mode, v.label) == (True, "verbatim", "STRICT", "VERIFIED")
    assert u.evidence_ids == (EV[0].evidence_id,)


def test_check1_untagged_line_is_no_evidence_pointer_in_denominator() -> None:
    v = verify_answer(
        "The Oberoi Group is a hotel company [E1]\nIt is the best.", EV, mode="claim-lattice"
    )
    assert v.n_units == 2 and v.n_verified == 1
    assert v.units[1].checks[0] == ("parser_succeeded", "fail")
    assert v.units[1].checks[1] == ("evidence_resolves", "skipped")
    assert any(x.code == "NO_EVIDENCE_POINTER" for x in v.violations)
    assert v.audit_mode == "HYBRID"


def test_check1_malformed_pointer() -> None:
    u, _ = unit("Delhi [E1, above]")
    assert statuses(u)["parser_succeeded"] == "fail"


def test_check2_unresolved_pointer_fails_even_with_good_ones() -> None:
    u, v = unit("The head office is in Delhi [E1, E9]")
    assert statuses(u)["evidence_resolves"] == "fail" and not u.verified
    assert v.violations[0].code == "POINTER_UNRESOLVED"


def test_check2_evidence_id_tag_resolves() -> None:
    u, _ = unit(f"The head office is in Delhi [{EV[0].evidence_id}]")
    assert statuses(u)["evidence_resolves"] == "pass" and u.verified


def test_check3_source_role_denied_and_allow_list() -> None:
    u, _ = unit("the head office moved to Mumbai [E3]")
    assert statuses(u)["source_role_allowed"] == "fail"
    only_reference = VerifierPolicy(allowed_source_roles=("reference",))
    u2, _ = unit("The Oberoi Group is a hotel company [E1]", policy=only_reference)
    assert statuses(u2)["source_role_allowed"] == "fail"


def test_check4_claim_without_content_is_empty() -> None:
    u, _ = unit("Yes, it is. [E1]")
    assert statuses(u)["claim_non_empty"] == "fail"


def test_check5_coverage_threshold_and_partial_grade() -> None:
    # 6 of 6 content tokens present but not contiguous -> verified, partial grade
    u, v = unit("Delhi is where the Oberoi Group hotel company has its head office [E1]")
    assert (
        u.verified and u.grade == "partial" and v.audit_mode == "HYBRID" and v.label == "SUPPORTED"
    )
    # near miss: 5 of 7 (71 %) below 85 %
    u2, _ = unit("The Oberoi Group hotel company head office is in London Bridge [E1]")
    assert statuses(u2)["citation_coverage"] == "fail"


def test_check5_coverage_is_over_the_union_of_cited_objects() -> None:
    u, _ = unit("The Oberoi family hotels head office Delhi [E1, E2]")
    assert statuses(u)["citation_coverage"] == "pass"
    u2, _ = unit("The Oberoi family hotels head office Delhi [E2]")
    assert statuses(u2)["citation_coverage"] == "fail"


def test_check6_pointer_cap_trims_and_verifies() -> None:
    u, v = unit(
        "The Oberoi Group is a hotel company with its head office in Delhi. [E4, E5, E2, E1]"
    )
    assert statuses(u)["pointer_cap"] == "pass" and u.verified
    assert any(x.code == "POINTER_TRIMMED" and x.severity == "advisory" for x in v.violations)
    assert EV[0].evidence_id in u.evidence_ids and len(u.evidence_ids) == 3


def test_check6_pointer_cap_fails_when_trimmed_set_loses_coverage() -> None:
    tight = VerifierPolicy(max_pointers_per_claim=1)
    u, _ = unit("The Oberoi family hotels head office Delhi [E1, E2]", policy=tight)
    assert statuses(u)["pointer_cap"] == "fail"


def test_check7_warrants_fail_and_demote() -> None:
    u, _ = unit("The group runs 31 hotels in seven countries [E4]", question="How many hotels?")
    assert u.verified  # "31" is the count token and occurs
    # near miss: coverage is literal, "7" is not the token "seven" (only the warrant equates them)
    u1, _ = unit("The group runs 31 hotels in 7 countries [E4]", question="How many hotels?")
    assert dict(u1.checks)["citation_coverage"] == "fail"
    u2, _ = unit("The group runs 32 hotels in seven countries [E4]", question="How many hotels?")
    assert statuses(u2)["citation_coverage"] == "fail" or statuses(u2)["anchor_warrant"] == "fail"
    loose = VerifierPolicy(citation_coverage_min=0.5)
    u3, _ = unit(
        "The group runs 32 hotels in seven countries [E4]",
        question="How many hotels?",
        policy=loose,
    )
    assert statuses(u3)["anchor_warrant"] == "fail"
    u4, _v4 = unit(
        "Mohan Singh Oberoi and Ratan Tata founded it in 1934 [E5]",
        question="List the founders.",
        policy=VerifierPolicy(citation_coverage_min=0.6),
    )
    # the warrant demotes, and (since 2.0) check 8 fails: "Ratan Tata" is a name of the
    # claim that the supporting sentence does not hold
    assert statuses(u4)["anchor_warrant"] == "pass"
    assert statuses(u4)["local_support"] == "fail"


def test_check7_date_warrant_in_claim_lattice() -> None:
    ev = build_evidence(["The treaty was signed on 4 March 1921 in Riga."])
    v = verify_answer(
        "The treaty was signed on 4 March 1922 in Riga [E1]",
        ev,
        VerifierPolicy(citation_coverage_min=0.7),
        mode="claim-lattice",
    )
    assert dict(v.units[0].checks)["anchor_warrant"] == "fail"


def test_json_claims_go_through_the_same_checks() -> None:
    claim = "The Oberoi family is famous for its involvement in hotels."
    answer = json.dumps([{"claim": claim, "evidence": ["E2"]}])
    v = verify_answer(answer, EV, mode="claim-lattice")
    assert v.audit_mode == "STRICT"


def test_quote_inside_a_claim_uses_the_quote_rule_on_cited_evidence() -> None:
    v = verify_answer(
        'It says "famous for its involvement in hotels" [E2]', EV, mode="claim-lattice"
    )
    assert v.units[0].grade == "verbatim"
    v1 = verify_answer(
        'Critics say "famous for its involvement in hotels" [E2]', EV, mode="claim-lattice"
    )
    assert not v1.units[0].verified  # "critics" is neither a cue nor in E2: coverage 3/4
    # a frame that names a speaker is a relation of its own (2.0): no sentence says the
    # Oberoi Group notes anything, so the claim fails check 8
    answer = 'The Oberoi Group notes "famous for its involvement in hotels" [E1, E2]'
    v2 = verify_answer(answer, EV, mode="claim-lattice")
    assert not v2.units[0].verified
    assert dict(v2.units[0].checks)["local_support"] == "fail"


# -- the negation warrant (docs/verifier.md §11) ------------------------------------------


def _lattice(answer: str, evidence: str) -> Any:
    return verify_answer(answer, build_evidence([evidence]), mode="claim-lattice")


NONLOCAL = (
    "The nonlocal statement causes the listed identifiers to refer to previously bound "
    "variables in the nearest enclosing scope excluding globals."
)


@pytest.mark.parametrize(
    "claim",
    [
        "The nonlocal statement does not cause the listed identifiers to refer to previously "
        "bound variables in the nearest enclosing scope.",
        "The nonlocal statement causes the listed identifiers to refer to no previously "
        "bound variables in the nearest enclosing scope.",
        "The nonlocal statement never causes the listed identifiers to refer to previously "
        "bound variables in the nearest enclosing scope.",
    ],
)
def test_a_negated_claim_needs_a_negated_sentence(claim: str) -> None:
    verdict = _lattice(f"{claim} [E1]", NONLOCAL)
    [unit] = verdict.units
    assert not unit.verified and verdict.audit_mode == "UNGROUNDED"
    assert any(v.code == "WARRANT_FAILED" and "negation" in v.detail for v in unit.violations)


def test_a_negated_claim_passes_on_a_negated_sentence_not_on_a_neighbour() -> None:
    evidence = (
        "The collector frees unreachable objects. "
        "It never frees objects that are still reachable from a root."
    )
    ok = _lattice("The collector never frees objects still reachable from a root. [E1]", evidence)
    assert ok.units[0].verified and ok.audit_mode == "HYBRID"
    # since 2.0 polarity is checked both ways: the affirmative claim's best sentence is negated
    flipped = "The collector frees objects that are still reachable from a root. [E1]"
    assert not _lattice(flipped, evidence).units[0].verified


def test_a_verbatim_negated_claim_across_abbreviations_stays_strict() -> None:
    """``U.S.`` is not a sentence end; and a claim verbatim in the evidence carries its
    negation with it (a ClapNQ sentence the first version of the rule refused)."""
    evidence = (
        "Unlike most Western countries , 18 of the U.S. states do not have a legal minimum "
        "age of marriage. Others set it at 16."
    )
    claim = (
        "Unlike most Western countries , 18 of the U.S. states do not have a legal minimum "
        "age of marriage. [E1]"
    )
    assert _lattice(claim, evidence).audit_mode == "STRICT"
    partial = "In 18 of the U.S. states there is no legal minimum age of marriage. [E1]"
    verdict = _lattice(partial, evidence)
    assert verdict.units[0].verified, verdict.units[0].reasons


@pytest.mark.parametrize(
    ("text", "negated"),
    [("it doesn’t", True), ("it doesn't", True), ("Nothing else", True), ("nor", True),
     ("a knot", False), ("notable", False), ("Noel", False)],
)  # fmt: skip
def test_negation_cues(text: str, negated: bool) -> None:
    from aborist.verify.rules.warrant import _NEGATION

    assert bool(_NEGATION.search(text)) is negated

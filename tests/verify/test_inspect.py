"""The inspect sidecar: each of the eight diagnoses, its repair action, and deflection."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aborist.verify.evidence import build_evidence
from aborist.verify.inspect import (
    DIAGNOSIS_KINDS,
    REPAIR_ACTIONS,
    classify_span,
    detect_deflection,
    inspect_answer,
)
from aborist.verify.units import verbatim_in
from aborist.verify.verify import verify_answer
from ledger.canonical import canonical_json

SOURCE = (
    "The committee approved the budget (after a long debate) on Friday. Revenue grew by ten "
    "percent in 2020, the report said. The plan covers all regional offices."
)
EV = build_evidence([SOURCE])


def test_eight_kinds_each_with_a_repair_action() -> None:
    assert set(DIAGNOSIS_KINDS) == {
        "verbatim_in_base",
        "verbatim_in_raw_only",
        "trailing_artifact",
        "synthetic_elision_inside_quote",
        "include_aside_for_verbatim",
        "paraphrase",
        "partial_paraphrase",
        "no_overlap",
    }
    mechanical = {k for k, (_action, mech) in REPAIR_ACTIONS.items() if mech}
    assert mechanical == {"synthetic_elision_inside_quote", "trailing_artifact", "no_overlap"}


@pytest.mark.parametrize(
    ("span", "is_quote", "kind"),
    [
        ("the plan covers all regional offices", False, "verbatim_in_base"),
        (
            "The committee approved the budget [...] on Friday.",
            True,
            "synthetic_elision_inside_quote",
        ),
        ("The committee approved the budget … on Friday.", True, "synthetic_elision_inside_quote"),
        ("Revenue grew by ten percent in 2020. (Source: annual report)", True, "trailing_artifact"),
        ("The committee approved the budget on Friday", True, "include_aside_for_verbatim"),
        ("Revenue in 2020 grew by ten percent.", False, "paraphrase"),
        ("Revenue grew strongly across Europe in 2020.", False, "partial_paraphrase"),
        ("Bananas are yellow and tasty fruit.", False, "no_overlap"),
    ],
)
def test_classify_span(span: str, is_quote: bool, kind: str) -> None:
    assert classify_span(span, EV, is_quote=is_quote)[0] == kind


def test_near_misses() -> None:
    # elision outside a quote is not a synthetic elision; one verbatim half is not enough
    assert classify_span("The committee approved the budget [...] on Friday.", EV)[0] != (
        "synthetic_elision_inside_quote"
    )
    assert classify_span("The committee approved the budget ... on Monday.", EV, is_quote=True)[
        0
    ] != ("synthetic_elision_inside_quote")
    # the verbatim prefix must cover at least half the span
    kind, _ = classify_span(
        "The plan covers. Then a long invented tail about many other unrelated things", EV
    )
    assert kind != "trailing_artifact"
    # an inserted gap that is not an aside (no opening bracket/comma/dash) does not qualify
    ev = build_evidence(["alpha beta gamma delta epsilon"])
    assert classify_span("alpha beta epsilon", ev)[0] != "include_aside_for_verbatim"


def test_details_carry_what_mechanical_repair_needs() -> None:
    _, elision = classify_span(
        "The committee approved the budget [...] on Friday.", EV, is_quote=True
    )
    assert elision["replacement"] == '"The committee approved the budget" ... "on Friday."'
    _, trailing = classify_span("Revenue grew by ten percent in 2020. (Source: annual report)", EV)
    assert trailing["keep"] == "Revenue grew by ten percent in 2020."
    assert trailing["drop"] == "(Source: annual report)"
    _, aside = classify_span("The committee approved the budget on Friday", EV)
    assert (
        aside["source_span"] == "The committee approved the budget (after a long debate) on Friday"
    )
    assert aside["aside"] == "(after a long debate)"


def test_verbatim_in_raw_only() -> None:
    raw = [SOURCE + " Travel costs fell sharply in the second half."]
    assert (
        classify_span("Travel costs fell sharply", EV, raw_evidence=raw)[0]
        == "verbatim_in_raw_only"
    )


def test_inspect_answer_diagnoses_only_non_verbatim_units_and_is_pure() -> None:
    answer = (
        'The report notes "The committee approved the budget [...] on Friday."\n'
        "The plan covers all regional offices.\n"
        "Bananas are yellow and tasty fruit."
    )
    verdict = verify_answer(answer, EV)
    before = canonical_json(verdict.to_dict())
    report = inspect_answer(answer, EV, verdict, question="What did the committee approve?")
    assert [(d.unit, d.kind, d.repair) for d in report.diagnoses] == [
        (0, "synthetic_elision_inside_quote", "split_elision"),
        (2, "no_overlap", "drop_line"),
    ]
    assert report.diagnoses[0].is_quote and report.diagnoses[0].unit_status == "unverified"
    assert canonical_json(verdict.to_dict()) == before  # read-only
    again = inspect_answer(answer, EV, verdict, question="What did the committee approve?")
    assert canonical_json(report.to_dict()) == canonical_json(again.to_dict())


def test_partial_units_are_diagnosed_too() -> None:
    verdict = verify_answer("Revenue in 2020 grew by ten percent.", EV)
    report = inspect_answer("Revenue in 2020 grew by ten percent.", EV, verdict)
    assert [(d.kind, d.unit_status) for d in report.diagnoses] == [("paraphrase", "partial")]
    assert report.diagnoses[0].details["excerpt"]


def test_deflection() -> None:
    q = "What did Acme Corp pay for the Globex merger?"
    on = detect_deflection("Acme Corp paid four billion dollars for the Globex deal in cash.", q)
    assert on.status == "on_topic" and on.matched
    off = detect_deflection("Mergers are complex and the market was volatile that year overall.", q)
    assert off.deflected and off.anchors == ("Acme Corp", "Globex")
    assert detect_deflection("Four billion.", q).status == "not_applicable"
    assert (
        detect_deflection("anything at all here in this long answer text", None).status
        == "not_applicable"
    )
    lower = detect_deflection(
        "The weather was fine that day and everybody stayed home.", "why did the dam collapse?"
    )
    assert lower.deflected and "collapse" in lower.anchors


def test_mechanical_repairs_from_the_details_reverify_as_strict() -> None:
    """Seed 001 contract: applying split_elision / drop_trailing_artifact by string
    substitution gives text the verifier accepts."""
    elided = '"The committee approved the budget [...] on Friday."'
    v = verify_answer(elided, EV)
    (d,) = inspect_answer(elided, EV, v).diagnoses
    repaired = d.details["replacement"]
    assert verify_answer(repaired, EV).audit_mode == "STRICT"

    trailing = '"Revenue grew by ten percent in 2020. (Source: annual report)"'
    v2 = verify_answer(trailing, EV)
    (d2,) = inspect_answer(trailing, EV, v2).diagnoses
    assert d2.kind == "trailing_artifact"
    assert verify_answer(f'"{d2.details["keep"]}"', EV).audit_mode == "STRICT"

    aside = '"The committee approved the budget on Friday"'
    (d3,) = inspect_answer(aside, EV, verify_answer(aside, EV)).diagnoses
    assert verify_answer(f'"{d3.details["source_span"]}"', EV).audit_mode == "STRICT"


@settings(max_examples=60, deadline=None)
@given(
    span=st.text(alphabet=st.sampled_from(list("abcdef TheRvnu.()[],-…")), max_size=60),
    quote=st.booleans(),
)
def test_every_span_gets_one_of_the_eight_kinds(span: str, quote: bool) -> None:
    kind, details = classify_span(span, EV, is_quote=quote)
    assert kind in DIAGNOSIS_KINDS
    assert isinstance(details, dict)
    assert (kind == "verbatim_in_base") == bool(verbatim_in(span, EV))

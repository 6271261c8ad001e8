"""The inspect sidecar: each of the ten diagnoses, its repair action, and deflection."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aborist.verify.evidence import build_evidence
from aborist.verify.inspect import (
    CONTRADICTION_KINDS,
    DIAGNOSIS_KINDS,
    REPAIR_ACTIONS,
    classify_span,
    contradiction,
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


def test_eleven_kinds_each_with_a_repair_action() -> None:
    assert set(DIAGNOSIS_KINDS) == {
        "verbatim_in_base",
        "verbatim_in_raw_only",
        "trailing_artifact",
        "synthetic_elision_inside_quote",
        "contradicted_polarity",
        "mismatched_quantity",
        "swapped_items",
        "include_aside_for_verbatim",
        "paraphrase",
        "partial_paraphrase",
        "no_overlap",
    }
    mechanical = {k for k, (_action, mech) in REPAIR_ACTIONS.items() if mech}
    assert mechanical == {
        "synthetic_elision_inside_quote",
        "trailing_artifact",
        "no_overlap",
        "contradicted_polarity",
        "mismatched_quantity",
        "swapped_items",
    }
    assert REPAIR_ACTIONS["contradicted_polarity"] == ("drop_claim", True)
    assert REPAIR_ACTIONS["mismatched_quantity"] == ("drop_claim", True)
    assert REPAIR_ACTIONS["swapped_items"] == ("drop_claim", True)


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
    """The repair contract: applying split_elision / drop_trailing_artifact by string
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
def test_every_span_gets_one_of_the_ten_kinds(span: str, quote: bool) -> None:
    kind, details = classify_span(span, EV, is_quote=quote)
    assert kind in DIAGNOSIS_KINDS
    assert isinstance(details, dict)
    assert (kind == "verbatim_in_base") == bool(verbatim_in(span, EV))


RUST = build_evidence(
    [
        "Memory is managed through a system of ownership with a set of rules that the "
        "compiler checks. If any of the rules are violated, the program won't compile. None "
        "of the features of ownership will slow down your program while it's running.",
        "Rust also has two data types for characters. Rust's char type is four bytes in size "
        "and represents a Unicode Scalar Value. Python has no goto, but the for "
        "statement is used to iterate over the elements of a sequence.",
    ]
)


@pytest.mark.parametrize(
    ("span", "kind"),
    [
        # a dropped negation (the case that trailing_artifact used to cut to "violated,")
        ("If any of the rules are violated, the program will compile.", "contradicted_polarity"),
        # an added one, with each spelling of a negation cue
        ("The compiler does not check a set of rules of ownership.", "contradicted_polarity"),
        ("The compiler never checks the set of rules.", "contradicted_polarity"),
        ("Some of the features of ownership will slow down your program.", "contradicted_polarity"),
        ("Memory is managed without a system of ownership.", "contradicted_polarity"),
        ("If the rules are violated, the program fails to compile at all.", None),
        # numbers, counts and ordinals, digits and words alike
        ("Rust's char type is eight bytes in size.", "mismatched_quantity"),
        ("Rust's char type is 8 bytes in size.", "mismatched_quantity"),
        ("Rust also has three data types for characters.", "mismatched_quantity"),
        ("Rust's char type is 4 bytes in size.", None),
        ("Rust also has 2 data types for characters.", None),
    ],
)
def test_contradiction(span: str, kind: str | None) -> None:
    found = contradiction(span, RUST)
    assert (found[0] if found else None) == kind
    if kind is not None:
        assert classify_span(span, RUST)[0] == kind
        assert classify_span(span, RUST, is_quote=True)[0] == kind


def test_contradiction_details_name_the_sentence_and_what_differs() -> None:
    kind, details = classify_span(
        "If any of the rules are violated, the program will compile.", RUST
    )
    assert kind == "contradicted_polarity"
    assert details["sentence"] == "If any of the rules are violated, the program won't compile."
    assert details["pointer_id"] == "E1"
    assert (details["claim_negated"], details["evidence_negated"]) == (False, True)
    kind, details = classify_span("Rust's char type is eight bytes in size.", RUST)
    assert kind == "mismatched_quantity"
    assert details["claim_quantities"] == ["8"] and details["evidence_quantities"] == ["4"]
    kind, details = classify_span("Revenue grew by ten percent in 1999.", EV)
    assert kind == "mismatched_quantity" and details["claim_quantities"] == ["1999"]
    ordinal = build_evidence(["The fifth amendment was ratified in the autumn of that year."])
    kind, details = classify_span("The first amendment was ratified in the autumn.", ordinal)
    assert kind == "mismatched_quantity" and details["claim_quantities"] == ["ordinal 1"]


def test_contradiction_near_misses() -> None:
    # a negation that governs none of the shared words is not the claim's polarity
    assert contradiction("The for statement is used to iterate over a sequence.", RUST) is None
    # too little of the span in any one sentence: not "the same claim" at all
    assert contradiction("The program will compile quickly on every platform.", RUST) is None
    # one sentence holding the span faithfully is enough, whatever another one says
    both = build_evidence(["The door is not locked at night.", "The door is locked at night."])
    assert contradiction("The door is locked at night.", both) is None
    assert contradiction("The door is locked.", both) is None  # fewer than two words
    # a paraphrase with digits for words is a paraphrase, not a mismatch
    assert contradiction("Revenue in 2020 grew by 10 percent.", EV) is None
    assert classify_span("Revenue in 2020 grew by 10 percent.", EV)[0] not in CONTRADICTION_KINDS


def test_a_contradicted_claim_is_never_a_trailing_artifact() -> None:
    answer = "If any of the rules are violated, the program will compile. [E1]"
    verdict = verify_answer(answer, RUST, mode="claim-lattice")
    kinds = [d.kind for d in inspect_answer(answer, RUST, verdict).diagnoses]
    assert kinds == ["contradicted_polarity"]
    quoted = 'The book says "If any of the rules are violated, the program will compile."'
    verdict = verify_answer(quoted, RUST)
    diagnoses = inspect_answer(quoted, RUST, verdict).diagnoses
    assert [(d.kind, d.is_quote, d.repair) for d in diagnoses] == [
        ("contradicted_polarity", True, "drop_claim")
    ]


_WORD = st.from_regex(r"[bcdfghjklmpqrstvwxz]{2}[aeiou][bcdfghjklmnpqrstvwxz]{2}", fullmatch=True)


@settings(max_examples=60, deadline=None)
@given(words=st.lists(_WORD, min_size=4, max_size=4, unique=True), n=st.integers(2, 9999))
def test_one_negation_or_one_number_away_is_a_contradiction(words: list[str], n: int) -> None:
    a, b, c, d = words
    sentence = f"The {a} {b} will {c} {n} {d}."
    ev = build_evidence([f"Some {d} were counted. {sentence} Nothing else was said."])
    assert classify_span(sentence, ev)[0] == "verbatim_in_base"
    negated = f"The {a} {b} will not {c} {n} {d}."
    assert classify_span(negated, ev)[0] == "contradicted_polarity"
    other = f"The {a} {b} will {c} {n + 1} {d}."
    assert classify_span(other, ev)[0] == "mismatched_quantity"
    for span in (negated, other):
        assert contradiction(span, ev) is not None
        assert classify_span(span, ev)[0] in CONTRADICTION_KINDS


NODES = build_evidence(
    [
        "Next, we create one Node instance named leaf with the value 3 and no children, and "
        "another instance named branch with the value 5 and leaf as one of its children."
    ]
)


def test_two_items_that_trade_slots_are_a_contradiction_to_drop() -> None:
    """§19.22 in inspect: a claim that puts two numbers of its sentence in each other's
    slots is diagnosed swapped_items (drop_claim), not a paraphrase to requote."""
    swapped = "leaf has the value 5 and no children; branch has the value 3."
    kind, details = classify_span(swapped, NODES)
    assert kind == "swapped_items"
    assert "'5' before '3'" in details["order"]
    right = "leaf has the value 3 and no children; branch has the value 5."
    assert classify_span(right, NODES)[0] == "paraphrase"

"""The pointer-line parser (docs/verifier.md)."""

from __future__ import annotations

import pytest

from aborist.verify.claims import (
    PARSE_MALFORMED_POINTER,
    PARSE_NO_EVIDENCE_POINTER,
    PARSE_OK,
    parse_claims,
)


def test_single_and_multi_pointer_tags() -> None:
    claims = parse_claims("The sky is blue [E1].\n- Grass is green [E2, E3]\nWater is wet [E4][E1]")
    assert [(c.claim_text, c.pointer_ids, c.parse_status, c.line_no) for c in claims] == [
        ("The sky is blue.", ("E1",), PARSE_OK, 1),
        ("Grass is green", ("E2", "E3"), PARSE_OK, 2),
        ("Water is wet", ("E4", "E1"), PARSE_OK, 3),
    ]


def test_untagged_line_counts_with_no_evidence_pointer() -> None:
    claims = parse_claims("Tagged [E1]\n\nUntagged prose here.\n---\n")
    assert [c.parse_status for c in claims] == [PARSE_OK, PARSE_NO_EVIDENCE_POINTER]
    assert claims[1].line_no == 3


@pytest.mark.parametrize("line", ["Claim [E1, see above]", "Claim [E1 E2]", "Claim [E2x]"])
def test_malformed_pointer_brackets(line: str) -> None:
    (claim,) = parse_claims(line)
    assert claim.parse_status == PARSE_MALFORMED_POINTER


def test_evidence_id_tags_and_duplicates() -> None:
    (claim,) = parse_claims("Claim [E1a2b3c4d; E1] [E1]")
    assert claim.pointer_ids == ("E1a2b3c4d", "E1")


def test_json_claim_list_and_fenced_object() -> None:
    listed = parse_claims(
        '[{"claim": "A is B", "evidence": ["E1", "E2"]}, {"text": "C", "pointers": []}]'
    )
    assert [(c.claim_text, c.pointer_ids, c.parse_status) for c in listed] == [
        ("A is B", ("E1", "E2"), PARSE_OK),
        ("C", (), PARSE_NO_EVIDENCE_POINTER),
    ]
    fenced = parse_claims('```json\n{"claims": [{"claim": "X", "citations": "E3"}]}\n```')
    assert [(c.claim_text, c.pointer_ids) for c in fenced] == [("X", ("E3",))]


def test_json_with_bad_pointer_is_malformed() -> None:
    (claim,) = parse_claims('[{"claim": "X", "evidence": ["source 1"]}]')
    assert claim.parse_status == PARSE_MALFORMED_POINTER


def test_invalid_json_falls_back_to_lines() -> None:
    claims = parse_claims("[not json] [E1]")
    assert [c.parse_status for c in claims] == [PARSE_OK]


def test_code_fence_lines_are_skipped_and_to_dict() -> None:
    (claim,) = parse_claims("```\nA fact [E2]\n```")
    assert claim.to_dict() == {
        "claim_text": "A fact",
        "pointer_ids": ["E2"],
        "parse_status": "OK",
        "line_no": 2,
    }

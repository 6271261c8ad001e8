"""The four-rung display ladder: (audit_mode, violations) mapped to rungs (docs/verifier.md)."""

from __future__ import annotations

import pytest

from aborist.verify.ladder import LADDER, ladder_label, ladder_rung
from aborist.verify.units import Violation

ADVISORY = Violation("PARTIAL_SUPPORT", "advisory", 0, "entity")
BLOCKING = Violation("UNSUPPORTED", "blocking", 1, "none")


@pytest.mark.parametrize(
    ("mode", "violations", "rung", "label"),
    [
        ("STRICT", [], 1, "VERIFIED"),
        ("STRICT", [Violation("POINTER_TRIMMED", "advisory", 0, "")], 1, "VERIFIED"),
        ("HYBRID", [ADVISORY], 2, "SUPPORTED"),
        ("HYBRID", [ADVISORY, BLOCKING], 3, "PARTIAL"),
        ("STRICT", [BLOCKING], 3, "PARTIAL"),
        ("UNGROUNDED", [BLOCKING], 4, "UNSUPPORTED"),
        ("UNGROUNDED", [], 4, "UNSUPPORTED"),
    ],
)
def test_ladder_mapping(mode: str, violations: list[Violation], rung: int, label: str) -> None:
    assert ladder_rung(mode, violations) == rung
    assert ladder_label(mode, violations) == label


def test_ladder_accepts_serialized_violations() -> None:
    assert ladder_label("HYBRID", [BLOCKING.to_dict()]) == "PARTIAL"
    assert ladder_label("HYBRID", [{"code": "X"}]) == "PARTIAL"  # missing severity: blocking


def test_ladder_rejects_unknown_mode_and_has_four_rungs() -> None:
    with pytest.raises(ValueError, match="audit_mode"):
        ladder_rung("MAYBE", [])
    assert [r[0] for r in LADDER] == [1, 2, 3, 4]

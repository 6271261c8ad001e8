"""The layered verifier.

``verify_answer(answer, evidence, policy, question=, mode=)`` is a pure function: no I/O,
no clock, no randomness, so ``aborist-ledger replay --deep`` can re-run it on recorded
inputs and compare the canonical bytes of ``Verdict.to_dict()``.

Two modes:

* ``quote`` (prose answers): the answer is cut into units
  (:func:`aborist.verify.units.segment_prose`) and each runs strategies 1–4
  (:mod:`aborist.verify.strategies`). Pointer tags are ignored, and evidence whose
  ``source_role`` the policy does not allow is left out (in claim-lattice mode citing it
  fails hard check 3 instead).
* ``claim-lattice``: the answer is parsed into claim lines
  (:func:`aborist.verify.claims.parse_claims`) and each runs strategy 5 with its seven
  hard checks (:mod:`aborist.verify.lattice`). Untagged lines count in the denominator.

Roll-up (``audit_mode``):

* ``STRICT`` — at least one unit, and every unit verified at *verbatim* grade;
* ``UNGROUNDED`` — no unit verified (including an answer with no unit at all);
* ``HYBRID`` — everything else.

The display label is :func:`aborist.verify.ladder.ladder_label` of ``(audit_mode, violations)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from aborist.errors import InputError
from aborist.verify.claims import ParsedClaim, parse_claims
from aborist.verify.evidence import EvidenceObject
from aborist.verify.ladder import ladder_label, ladder_rung
from aborist.verify.lattice import HARD_CHECKS, classify_claim
from aborist.verify.policy import DEFAULT_POLICY, VERIFIER_VERSION, VerifierPolicy, policy_hash
from aborist.verify.strategies import classify_prose_units
from aborist.verify.text.textcanon import CANONICALIZATION_VERSION, canonicalize
from aborist.verify.units import (
    GRADE_VERBATIM,
    SEVERITY_BLOCKING,
    UnitVerdict,
    Violation,
    segment_prose,
)

__all__ = [
    "DEFAULT_POLICY",
    "HARD_CHECKS",
    "MODES",
    "VERIFIER_VERSION",
    "UnitVerdict",
    "Verdict",
    "VerifierPolicy",
    "Violation",
    "policy_hash",
    "roll_up",
    "verify_answer",
]

MODES = ("quote", "claim-lattice")


@dataclass(frozen=True)
class Verdict:
    """The verifier's output; ``to_dict()`` is what the ledger records and replay compares."""

    audit_mode: str
    label: str
    mode: str
    units: tuple[UnitVerdict, ...]
    violations: tuple[Violation, ...]
    evidence_map: tuple[tuple[str, str], ...]
    verifier_version: str
    verifier_policy_hash: str

    @property
    def rung(self) -> int:
        """The ladder rung (1 VERIFIED … 4 UNSUPPORTED) of this verdict."""
        return ladder_rung(self.audit_mode, self.violations)

    @property
    def n_units(self) -> int:
        return len(self.units)

    @property
    def n_verified(self) -> int:
        return sum(1 for u in self.units if u.verified)

    @property
    def n_verbatim(self) -> int:
        return sum(1 for u in self.units if u.verified and u.grade == GRADE_VERBATIM)

    def unverified_units(self) -> list[UnitVerdict]:
        """Units the inspect sidecar and repair stage look at."""
        return [u for u in self.units if not u.verified]

    def to_dict(self) -> dict[str, Any]:
        return {
            "verifier_version": self.verifier_version,
            "verifier_policy_hash": self.verifier_policy_hash,
            "canonicalization_version": CANONICALIZATION_VERSION,
            "mode": self.mode,
            "audit_mode": self.audit_mode,
            "label": self.label,
            "rung": self.rung,
            "n_units": self.n_units,
            "n_verified": self.n_verified,
            "n_verbatim": self.n_verbatim,
            "units": [u.to_dict() for u in self.units],
            "violations": [v.to_dict() for v in self.violations],
            "evidence": [{"pointer_id": p, "evidence_id": e} for p, e in self.evidence_map],
        }


def roll_up(units: Sequence[UnitVerdict]) -> str:
    """STRICT / HYBRID / UNGROUNDED from the unit verdicts (rules in the module docstring)."""
    if not units or not any(u.verified for u in units):
        return "UNGROUNDED"
    if all(u.verified and u.grade == GRADE_VERBATIM for u in units):
        return "STRICT"
    return "HYBRID"


def verify_answer(
    answer: str,
    evidence: Sequence[EvidenceObject],
    policy: VerifierPolicy | None = None,
    *,
    question: str | None = None,
    mode: str = "quote",
    claims: Sequence[ParsedClaim] | None = None,
) -> Verdict:
    """Classify every unit of ``answer`` against ``evidence`` and roll up the verdict.
    In claim-lattice mode ``claims``, when given, must be ``parse_claims(answer)`` (the
    pipeline parses once and passes them); quote mode ignores it."""
    if mode not in MODES:
        raise InputError(f"mode must be one of {', '.join(MODES)}; found {mode!r}")
    pol = policy if policy is not None else DEFAULT_POLICY
    # the question goes through the same canonicalization as answer and evidence (§1)
    # before any rule reads it: no rule sees a raw form
    question = canonicalize(question) if question is not None else None
    units: list[UnitVerdict]
    if mode == "quote":
        usable = [ev for ev in evidence if pol.role_allowed(ev.source_role)]
        units = classify_prose_units(segment_prose(answer), usable, pol, question)
    else:
        units = [
            classify_claim(i, c, evidence, pol, question)
            for i, c in enumerate(parse_claims(answer) if claims is None else claims)
        ]
    violations: list[Violation] = [v for u in units for v in u.violations]
    if not units:
        violations.append(
            Violation("NO_UNITS", SEVERITY_BLOCKING, None, "the answer has no checkable text")
        )
    audit_mode = roll_up(units)
    return Verdict(
        audit_mode=audit_mode,
        label=ladder_label(audit_mode, violations),
        mode=mode,
        units=tuple(units),
        violations=tuple(violations),
        evidence_map=tuple((ev.pointer_id, ev.evidence_id) for ev in evidence),
        verifier_version=VERIFIER_VERSION,
        verifier_policy_hash=policy_hash(pol),
    )

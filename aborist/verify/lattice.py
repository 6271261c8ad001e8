"""Strategy 5, the claim lattice, and its eight hard checks.

Each parsed claim (:func:`aborist.verify.claims.parse_claims`) runs the checks in order;
the first failure stops the claim (later checks are recorded as ``skipped``):

1. ``parser_succeeded`` — the line carried well-formed pointer tags (``NO_EVIDENCE_POINTER``
   and ``MALFORMED_POINTER`` fail here).
2. ``evidence_resolves`` — every tag names a pointer id (``E3``) or evidence id
   (``E1a2b3c4d``) of the evidence given; one unknown tag fails the claim.
3. ``source_role_allowed`` — every cited object's role passes the policy.
4. ``claim_non_empty`` — the claim text has at least one content token.
5. ``citation_coverage`` — the distinct content tokens of the claim present in the *union*
   of the cited objects are >= ``citation_coverage_min`` (85 %). In a claim holding a
   quotation, attribution cues (said, states, according …) do not count.
6. ``pointer_cap`` — more than ``max_pointers_per_claim`` citations are trimmed to the cap
   (objects ranked by claim tokens covered, ties by citation order) and check 5 is re-run
   on the trimmed set: pass with an advisory ``POINTER_TRIMMED``, or fail.
7. ``anchor_warrant`` — :func:`aborist.verify.rules.warrant.check_warrant` over the cited objects.
8. ``local_support`` — the claim is verbatim inside one passage of a cited object with its
   polarity, or one passage (or, clause by clause, one passage per clause) holds its
   words, anchors and polarity (:mod:`aborist.verify.support`); a claim holding
   quotations runs the quote rule over the cited objects instead.

A claim that passes all eight is verified. Its grade is *verbatim* only when its text (or,
if it holds quotations, every quotation under the quote rule) occurs verbatim in one
passage of the cited objects and the warrant did not demote it; otherwise *partial*. A
verbatim claim of at most ``bare_span_max_tokens`` tokens whose sentence shares no term
with the question is verified at partial grade with the blocking ``NOT_ANSWER_ANCHORED``
(rung 3 at best).
"""

from __future__ import annotations

from collections.abc import Sequence

from aborist.verify.claims import PARSE_MALFORMED_POINTER, PARSE_OK, ParsedClaim
from aborist.verify.evidence import EvidenceObject
from aborist.verify.policy import VerifierPolicy
from aborist.verify.rules.warrant import WARRANT_DEMOTE, WARRANT_FAIL, check_warrant
from aborist.verify.strategies import ATTRIBUTION_CUES, quote_grade
from aborist.verify.support import (
    answers_question,
    failure_code,
    local_support,
    verbatim_passages,
)
from aborist.verify.text.textcanon import content_tokens, tokens
from aborist.verify.units import (
    GRADE_NONE,
    GRADE_PARTIAL,
    GRADE_VERBATIM,
    SEVERITY_ADVISORY,
    SEVERITY_BLOCKING,
    UnitVerdict,
    Violation,
    extract_quotes,
)

__all__ = ["HARD_CHECKS", "classify_claim"]

HARD_CHECKS = (
    "parser_succeeded",
    "evidence_resolves",
    "source_role_allowed",
    "claim_non_empty",
    "citation_coverage",
    "pointer_cap",
    "anchor_warrant",
    "local_support",
)

_FAIL_CODES = {
    "evidence_resolves": "POINTER_UNRESOLVED",
    "source_role_allowed": "SOURCE_ROLE_DENIED",
    "claim_non_empty": "EMPTY_CLAIM",
    "citation_coverage": "COVERAGE_BELOW_THRESHOLD",
    "pointer_cap": "POINTER_CAP_EXCEEDED",
    "anchor_warrant": "WARRANT_FAILED",
    "local_support": "NOT_LOCALLY_SUPPORTED",
}


def _coverage(content: Sequence[str], cited: Sequence[EvidenceObject]) -> float:
    wanted = set(content)
    if not wanted:
        return 0.0
    covered = sum(1 for t in wanted if any(t in ev.token_set for ev in cited))
    return covered / len(wanted)


def _grade(
    text: str, cited: Sequence[EvidenceObject], policy: VerifierPolicy, question: str | None
) -> tuple[str, list[str], str]:
    """``(grade, reasons, blocking_code)`` of check 8; grade none fails the check."""
    if extract_quotes(text):
        grade, _ids, reasons = quote_grade(text, cited, policy)
        code = failure_code(reasons, "QUOTE_NOT_VERBATIM") if grade == GRADE_NONE else ""
        return grade, reasons, code
    located = verbatim_passages(text, cited, policy)
    agreeing = [loc for loc in located if loc.polarity_ok]
    if agreeing:
        ok, anchored = answers_question(text, agreeing, question, policy, cited)
        if not ok:
            return GRADE_PARTIAL, [anchored], "NOT_ANSWER_ANCHORED"
        return GRADE_VERBATIM, ["verbatim in one passage"] + ([anchored] if anchored else []), ""
    if located:
        return (
            GRADE_NONE,
            [
                "POLARITY_MISMATCH: verbatim only as part of a sentence whose polarity cue it "
                "leaves out"
            ],
            "POLARITY_MISMATCH",
        )
    ok, why, _ids = local_support(text, cited, policy)
    if ok:
        return GRADE_PARTIAL, why, ""
    return GRADE_NONE, why, failure_code(why, "NOT_LOCALLY_SUPPORTED")


class _ClaimChecks:
    """The record of one claim's hard checks as they run: passes, the reasons and
    violations so far, and the evidence the claim cites (once resolved)."""

    def __init__(self, index: int, claim: ParsedClaim) -> None:
        self.index = index
        self.claim = claim
        self.cited: list[EvidenceObject] = []
        self.checks: list[tuple[str, str]] = []
        self.reasons: list[str] = []
        self.violations: list[Violation] = []

    def passed(self, check: str) -> None:
        self.checks.append((check, "pass"))

    def fail(self, check: str, code: str, detail: str) -> UnitVerdict:
        """``check`` failed with ``code``: the later checks are skipped."""
        self.checks.append((check, "fail"))
        self.checks.extend((c, "skipped") for c in HARD_CHECKS[len(self.checks) :])
        self.reasons.append(f"{code}: {detail}")
        self.violations.append(Violation(code, SEVERITY_BLOCKING, self.index, detail))
        return self.unit(False, GRADE_NONE)

    def unit(self, verified: bool, unit_grade: str) -> UnitVerdict:
        return UnitVerdict(
            index=self.index,
            text=self.claim.claim_text,
            strategy="claim_lattice",
            verified=verified,
            grade=unit_grade,
            line_no=self.claim.line_no,
            evidence_ids=tuple(ev.evidence_id for ev in self.cited),
            pointer_ids=self.claim.pointer_ids,
            reasons=tuple(self.reasons),
            checks=tuple(self.checks),
            violations=tuple(self.violations),
        )


def classify_claim(
    index: int,
    claim: ParsedClaim,
    evidence: Sequence[EvidenceObject],
    policy: VerifierPolicy,
    question: str | None,
) -> UnitVerdict:
    """Run the seven hard checks on one claim."""
    c = _ClaimChecks(index, claim)
    content = content_tokens(tokens(claim.claim_text))
    if extract_quotes(claim.claim_text):
        content = [t for t in content if t not in ATTRIBUTION_CUES]
    failed = _check_citations(c, content, evidence, policy) or _check_coverage(c, content, policy)
    if failed is not None:
        return failed

    warrant = check_warrant(claim.claim_text, c.cited, question)
    if warrant.status == WARRANT_FAIL:
        return c.fail("anchor_warrant", "WARRANT_FAILED", "; ".join(warrant.reasons))
    c.passed("anchor_warrant")
    if warrant.classes:
        c.reasons.append(f"warrant {warrant.status}: {list(warrant.classes)}")

    grade, why, code = _grade(claim.claim_text, c.cited, policy, question)
    if grade == GRADE_NONE:
        code = code or "NOT_LOCALLY_SUPPORTED"
        detail = "; ".join(why)
        return c.fail("local_support", code, detail.removeprefix(code + ": "))
    c.passed("local_support")
    c.reasons.extend(why)
    if code:
        c.violations.append(Violation(code, SEVERITY_BLOCKING, index, "; ".join(why)))
    if warrant.status == WARRANT_DEMOTE:
        grade = GRADE_PARTIAL
        c.violations.append(
            Violation("WARRANT_DEMOTED", SEVERITY_ADVISORY, index, "; ".join(warrant.reasons))
        )
    if grade == GRADE_PARTIAL:
        c.violations.append(
            Violation(
                "PARTIAL_SUPPORT",
                SEVERITY_ADVISORY,
                index,
                "claim_lattice: not verbatim in cited evidence",
            )
        )
    return c.unit(True, grade)


def _check_citations(
    c: _ClaimChecks,
    content: list[str],
    evidence: Sequence[EvidenceObject],
    policy: VerifierPolicy,
) -> UnitVerdict | None:
    """The first four checks — the line parsed, its pointers resolve, their roles are
    allowed, the claim has content — setting ``c.cited``; the failed unit, or None."""
    claim = c.claim
    by_pointer = {ev.pointer_id: ev for ev in reversed(evidence)}
    by_id = {ev.evidence_id: ev for ev in reversed(evidence)}
    if claim.parse_status != PARSE_OK:
        code = (
            "PARSE_FAILED" if claim.parse_status == PARSE_MALFORMED_POINTER else claim.parse_status
        )
        return c.fail("parser_succeeded", code, f"line {claim.line_no}: {claim.parse_status}")
    c.passed("parser_succeeded")

    unresolved = [p for p in claim.pointer_ids if p not in by_pointer and p not in by_id]
    if unresolved:
        known = ", ".join(ev.pointer_id for ev in evidence) or "none"
        return c.fail(
            "evidence_resolves", "POINTER_UNRESOLVED", f"{unresolved} not in evidence ({known})"
        )
    c.cited = [by_pointer.get(p) or by_id[p] for p in claim.pointer_ids]
    c.passed("evidence_resolves")

    denied = [
        f"{ev.pointer_id}:{ev.source_role}"
        for ev in c.cited
        if not policy.role_allowed(ev.source_role)
    ]
    if denied:
        return c.fail("source_role_allowed", "SOURCE_ROLE_DENIED", f"role not allowed: {denied}")
    c.passed("source_role_allowed")

    if not content:
        return c.fail("claim_non_empty", "EMPTY_CLAIM", "claim has no content token")
    c.passed("claim_non_empty")
    return None


def _check_coverage(
    c: _ClaimChecks, content: list[str], policy: VerifierPolicy
) -> UnitVerdict | None:
    """Citation coverage and the pointer cap (trimming to the best-covering pointers when
    the trimmed set still covers); the failed unit, or None."""
    cited = c.cited
    cov = _coverage(content, cited)
    if cov < policy.citation_coverage_min:
        return c.fail(
            "citation_coverage",
            "COVERAGE_BELOW_THRESHOLD",
            f"coverage {cov:.3f} < {policy.citation_coverage_min}",
        )
    c.passed("citation_coverage")
    c.reasons.append(f"citation coverage {cov:.3f}")

    if len(cited) > policy.max_pointers_per_claim:
        wanted = set(content)
        ranked = sorted(range(len(cited)), key=lambda i: (-len(wanted & cited[i].token_set), i))
        keep = sorted(ranked[: policy.max_pointers_per_claim])
        trimmed = [cited[i] for i in keep]
        trimmed_cov = _coverage(content, trimmed)
        dropped = [cited[i].pointer_id for i in range(len(cited)) if i not in keep]
        if trimmed_cov < policy.citation_coverage_min:
            return c.fail(
                "pointer_cap",
                "POINTER_CAP_EXCEEDED",
                f"{len(cited)} pointers > cap {policy.max_pointers_per_claim}; "
                f"trimmed coverage {trimmed_cov:.3f} < {policy.citation_coverage_min}",
            )
        c.cited = trimmed
        c.violations.append(
            Violation("POINTER_TRIMMED", SEVERITY_ADVISORY, c.index, f"dropped {dropped}")
        )
        c.reasons.append(f"POINTER_TRIMMED: dropped {dropped}")
    c.passed("pointer_cap")
    return None

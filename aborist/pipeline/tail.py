"""The deterministic tail of a run — parse → verify → repair → render → label — as pure
functions of the recorded inputs (docs/pipeline.md, "The deterministic tail").

Each function takes what a run records before the stage (the raw answer, the evidence,
the question, the mode, the verifier policy, and for a repair the verdict it repairs)
and returns the stage's payload as the event model :mod:`aborist.events` defines. The
pipeline (:mod:`aborist.pipeline.run`, :mod:`aborist.pipeline.repair_stage`) records
what they return; ``aborist-ledger replay --deep`` (:mod:`aborist.audit.deep`) calls the
same functions on the inputs read back from the ledger and compares the payloads stage by
stage, so the two can never drift apart. No I/O, clock or randomness: the model's
re-prompt replies are inputs here, never calls.

The claims are parsed once per run: :func:`parse` returns them with the
``qa.claims_parsed`` payload, and :func:`verify` hands them to the verifier.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from aborist.events import AnswerRendered, AnswerRepaired, AnswerVerified, ClaimsParsed
from aborist.pipeline.render import render_answer
from aborist.verify.claims import ParsedClaim, parse_claims
from aborist.verify.evidence import EvidenceObject
from aborist.verify.ladder import LADDER
from aborist.verify.policy import DEFAULT_POLICY, VerifierPolicy
from aborist.verify.verify import Verdict, verify_answer
from ledger.canonical import sha256_hex

if TYPE_CHECKING:
    from aborist.repair.repair import RepairOutcome

__all__ = [
    "TailInputs",
    "label_fields",
    "label_rung",
    "mechanical_repair",
    "parse",
    "render",
    "repair_due",
    "reprompt_accepted",
    "reprompt_repaired",
    "verify",
    "verify_reply",
]


@dataclass(frozen=True, slots=True)
class TailInputs:
    """What the tail is a function of: all of it is in the run's recorded events and
    blobs (the question and mode in ``qa.run_started``, the evidence texts and the raw
    answer as blobs), plus the verifier policy whose hash every verdict records."""

    question: str
    mode: str
    raw: str
    evidence: Sequence[EvidenceObject]
    policy: VerifierPolicy = DEFAULT_POLICY


def parse(inputs: TailInputs) -> tuple[tuple[ParsedClaim, ...] | None, ClaimsParsed | None]:
    """The parsed claims and the ``qa.claims_parsed`` payload (claim-lattice mode); in
    quote mode there is no parse stage: ``(None, None)``."""
    if inputs.mode != "claim-lattice":
        return None, None
    claims = tuple(parse_claims(inputs.raw))
    return claims, ClaimsParsed(claims=[c.to_dict() for c in claims])


def verify(
    inputs: TailInputs, claims: Sequence[ParsedClaim] | None = None
) -> tuple[Verdict, AnswerVerified]:
    """The verdict of the raw answer and its ``qa.answer_verified`` payload; ``claims``
    are :func:`parse`'s (parsed again when not given)."""
    verdict = verify_answer(
        inputs.raw, inputs.evidence, inputs.policy, question=inputs.question,
        mode=inputs.mode, claims=claims,
    )  # fmt: skip
    payload = AnswerVerified(
        answer_blob=sha256_hex(inputs.raw.encode("utf-8")), verdict=verdict.to_dict()
    )
    return verdict, payload


def repair_due(repair_enabled: bool, verdict: Verdict) -> bool:
    """Whether the repair stage runs: repair is on and the first verdict is not STRICT."""
    return repair_enabled and verdict.audit_mode != "STRICT"


def mechanical_repair(
    inputs: TailInputs, verdict: Verdict
) -> tuple[RepairOutcome, AnswerRepaired | None]:
    """The mechanical repair of the raw answer (first verified as ``verdict``) and, when
    it was accepted, its ``qa.answer_repaired`` payload (``method: mechanical``)."""
    from aborist.repair.repair import repair_answer

    outcome = repair_answer(
        inputs.raw, inputs.evidence, verdict, question=inputs.question, mode=inputs.mode,
        policy=inputs.policy,
    )  # fmt: skip
    if not outcome.accepted:
        return outcome, None
    text = str(outcome.text)
    payload = AnswerRepaired(
        method="mechanical", repaired_answer_blob=sha256_hex(text.encode("utf-8")),
        outcome=outcome.to_dict(),
    )  # fmt: skip
    return outcome, payload


def verify_reply(inputs: TailInputs, reply: str) -> Verdict:
    """The verdict of a re-prompt's reply (the model's text, an input here)."""
    return verify_answer(
        reply, inputs.evidence, inputs.policy, question=inputs.question, mode=inputs.mode
    )


def reprompt_accepted(current_text: str, current: Verdict, reply: str, post: Verdict) -> bool:
    """Whether a re-prompt's reply replaces the current answer: the mechanical repair's
    not-worse rule; a reply that repeats the answer changes nothing and is refused."""
    from aborist.repair.repair import accept_reprompt

    changed = reply.strip() != current_text.strip()
    return changed and post.n_units > 0 and accept_reprompt(current, post)


def reprompt_repaired(
    attempt: int, current_text: str, current: Verdict, reply: str, post: Verdict
) -> AnswerRepaired:
    """The ``qa.answer_repaired`` payload (``method: reprompt``) of an accepted reply."""
    from aborist.repair.repair import REPROMPT_VERSION

    detail = {
        "reprompt_version": REPROMPT_VERSION,
        "attempt": attempt,
        "accepted": True,
        "original_text": current_text,
        "repaired_text": reply,
        "pre_repair_audit_mode": current.audit_mode,
        "post_repair_audit_mode": post.audit_mode,
        "pre_verdict": current.to_dict(),
        "post_verdict": post.to_dict(),
    }
    return AnswerRepaired(
        method="reprompt", repaired_answer_blob=sha256_hex(reply.encode("utf-8")),
        outcome=detail,
    )  # fmt: skip


def render(
    answer: str,
    verdict: Mapping[str, Any],
    evidence: Sequence[EvidenceObject],
    policy: VerifierPolicy = DEFAULT_POLICY,
) -> AnswerRendered:
    """The ``qa.answer_rendered`` payload of the final answer and its verdict (as
    recorded: ``Verdict.to_dict()``)."""
    return AnswerRendered(
        **render_answer(answer, verdict, evidence, window=policy.spotlight_window)
    )


def label_fields(answer: str, verdict: Mapping[str, Any]) -> dict[str, Any]:
    """What ``qa.answer_labelled`` says of the final answer, without the run DAG it
    concludes: the verdict's audit mode and label, and the answer's sha256."""
    return {
        "audit_mode": verdict["audit_mode"],
        "label": verdict["label"],
        "answer_hash": sha256_hex(answer.encode("utf-8")),
    }


_RUNGS = {name: rung for rung, name, _ in LADDER}


def label_rung(label: object) -> int | None:
    """The ladder rung (1–4) a recorded label names (the verifier made the label from
    the rung, so the two are one); None for a label that is no rung's name."""
    return _RUNGS.get(label) if isinstance(label, str) else None

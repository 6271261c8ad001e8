"""The repair stage: mechanical repair, the accept rule, the re-prompt.

Three pure pieces the pipeline calls (no I/O, no clock, no randomness, so
``aborist-ledger replay --deep`` can re-run them on recorded inputs and compare bytes):

* :func:`mechanical_repair` applies the inspect sidecar's *mechanical* repair actions to the
  answer text by string substitution:

  - ``synthetic_elision_inside_quote`` (``split_elision``): ``"prefix [...] suffix"`` →
    ``"prefix" ... "suffix"`` — two verbatim quotations, the ellipsis becomes prose;
  - ``trailing_artifact`` (``drop_trailing_artifact``): ``"prose. (Source: ...)"`` →
    ``"prose."`` — the verbatim prefix stays, the appended tail goes;
  - ``no_overlap`` (``drop_line``): the line holding the bad span goes (only the failing
    sentence, when the line also holds a verified unit);
  - ``contradicted_polarity`` / ``mismatched_quantity`` / ``swapped_items``
    (``drop_claim``): the claim that says the opposite of its evidence, another number, or
    puts two of its items in each other's slots, goes whole, the same way — it is never
    trimmed into a fragment.

  Every other kind (``include_aside_for_verbatim``, ``paraphrase``, ``partial_paraphrase``,
  and the citation kinds) is left for the re-prompt and listed in ``skipped``.
* :func:`repair_answer` is the seed's decision rule: not STRICT → inspect → mechanical
  repair → re-verify → accept only when the number of verified units did not fall
  (:func:`not_worse`), a contradicted unit that was dropped not counting as a verified
  one (the verifier may have let it through at partial grade; it was never support).
* :func:`build_reprompt_messages` / :func:`accept_reprompt`: the fallback for what mechanics
  cannot fix — ask the model once more with the diagnoses and spotlight excerpts.

The mechanical rules live in :mod:`aborist.repair.mechanical` and are re-exported here;
this module holds the decision, the accept rule and the re-prompt. docs/repair.md states
the rules with a worked example for each.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from aborist.errors import InputError
from aborist.prompts import CANNOT_ANSWER, MODE_QUOTE, build_messages, template_for
from aborist.repair.mechanical import (
    MECHANICAL_KINDS,
    RepairChange,
    RepairResult,
    RepairSkip,
    apply_changes,
    mechanical_repair,
)
from aborist.verify.evidence import EvidenceObject, spotlight
from aborist.verify.inspect import SpanDiagnosis, inspect_answer
from aborist.verify.policy import DEFAULT_POLICY, VerifierPolicy, policy_hash
from aborist.verify.text.textcanon import content_tokens, tokens
from aborist.verify.units import best_coverage
from aborist.verify.verify import Verdict, verify_answer
from ledger.canonical import canonical_json, sha256_hex

__all__ = [
    "MECHANICAL_KINDS",
    "REPAIR_VERSION",
    "REPROMPT_VERSION",
    "RepairChange",
    "RepairOutcome",
    "RepairResult",
    "RepairSkip",
    "accept_reprompt",
    "apply_changes",
    "build_reprompt_messages",
    "dropped_contradicted",
    "mechanical_repair",
    "not_worse",
    "repair_answer",
    "reprompt_template_sha256",
]

REPAIR_VERSION = "aborist-repair/3"
REPROMPT_VERSION = "reprompt/2"


# ---------------------------------------------------------------------------------------
# The accept rule and the pipeline's pure decision


def _counts(verdict: Verdict | Mapping[str, Any]) -> tuple[int, int]:
    if isinstance(verdict, Verdict):
        return verdict.n_units, verdict.n_verified
    return int(verdict["n_units"]), int(verdict["n_verified"])


def not_worse(
    pre: Verdict | Mapping[str, Any], post: Verdict | Mapping[str, Any], *, discounted: int = 0
) -> bool:
    """The accept rule: the number of verified units did not fall.

    ``discounted`` verified units of ``pre`` do not count: the contradicted units the
    repair dropped (:func:`repair_answer`). Also refuses a candidate with no unit at all
    (an empty reply is never an answer). Takes verdicts or their ``to_dict()`` form, so a
    replay can decide from the events.
    """
    pre_units, pre_verified = _counts(pre)
    post_units, post_verified = _counts(post)
    del pre_units
    return post_units > 0 and post_verified >= pre_verified - discounted


def dropped_contradicted(
    verdict: Verdict, result: RepairResult, diagnoses: Sequence[SpanDiagnosis]
) -> int:
    """How many units the verifier verified that the repair dropped as contradicted."""
    done = {(c.kind, c.line_no, c.span) for c in result.changes if c.action == "drop_claim"}
    units = {d.unit for d in diagnoses if (d.kind, d.line_no, d.span) in done}
    return sum(1 for u in verdict.units if u.index in units and u.verified)


@dataclass(frozen=True)
class RepairOutcome:
    """What :func:`repair_answer` decided; ``to_dict()`` is the ``qa.answer_repaired`` body."""

    accepted: bool
    reason: str
    original_text: str
    repaired_text: str
    result: RepairResult
    diagnoses: tuple[SpanDiagnosis, ...]
    pre_verdict: Verdict
    post_verdict: Verdict | None

    @property
    def text(self) -> str:
        """The answer to persist: the repaired text when accepted, else the original."""
        return self.repaired_text if self.accepted else self.original_text

    @property
    def verdict(self) -> Verdict:
        """The verdict of :attr:`text`."""
        if self.accepted and self.post_verdict is not None:
            return self.post_verdict
        return self.pre_verdict

    def to_dict(self) -> dict[str, Any]:
        post = self.post_verdict
        return {
            "repair_version": REPAIR_VERSION,
            "accepted": self.accepted,
            "reason": self.reason,
            "original_text": self.original_text,
            "repaired_text": self.repaired_text,
            "changes": [c.to_dict() for c in self.result.changes],
            "skipped": [s.to_dict() for s in self.result.skipped],
            "diagnoses": [d.to_dict() for d in self.diagnoses],
            "pre_repair_audit_mode": self.pre_verdict.audit_mode,
            "post_repair_audit_mode": post.audit_mode if post is not None else None,
            "pre_verdict": self.pre_verdict.to_dict(),
            "post_verdict": post.to_dict() if post is not None else None,
        }


def repair_answer(
    answer: str,
    evidence: Sequence[EvidenceObject],
    verdict: Verdict,
    *,
    question: str | None = None,
    mode: str = MODE_QUOTE,
    policy: VerifierPolicy | None = None,
) -> RepairOutcome:
    """The decision, pure: repair a non-STRICT answer mechanically if not worse.

    ``verdict`` is the first verification of ``answer`` (same evidence, mode and policy —
    checked by mode and policy hash). Reasons: ``already_strict``, ``no_diagnoses``,
    ``no_mechanical_change``, ``accepted``, ``rejected_worse``.
    """
    pol = policy if policy is not None else DEFAULT_POLICY
    if verdict.mode != mode:
        raise InputError(f"the verdict is for mode {verdict.mode!r}, not {mode!r}")
    if verdict.verifier_policy_hash != policy_hash(pol):
        raise InputError("the verdict was made under a different verifier policy")
    empty = RepairResult(answer, (), ())

    def outcome(
        reason: str,
        result: RepairResult = empty,
        diagnoses: tuple[SpanDiagnosis, ...] = (),
        post: Verdict | None = None,
        accepted: bool = False,
    ) -> RepairOutcome:
        return RepairOutcome(
            accepted, reason, answer, result.text, result, diagnoses, verdict, post
        )

    if verdict.audit_mode == "STRICT":
        return outcome("already_strict")
    report = inspect_answer(answer, evidence, verdict, question=question, policy=pol)
    if not report.diagnoses:
        return outcome("no_diagnoses")
    result = mechanical_repair(answer, report.diagnoses, evidence, mode=mode, policy=pol)
    if not result.changes:
        return outcome("no_mechanical_change", result, report.diagnoses)
    post = verify_answer(result.text, evidence, pol, question=question, mode=mode)
    ok = not_worse(
        verdict, post, discounted=dropped_contradicted(verdict, result, report.diagnoses)
    )
    return outcome("accepted" if ok else "rejected_worse", result, report.diagnoses, post, ok)


# ---------------------------------------------------------------------------------------
# The re-prompt fallback (docs/repair.md)

_KIND_HELP: dict[str, str] = {
    "verbatim_in_base": "the words do occur in the evidence; cite the passage that holds them",
    "verbatim_in_raw_only": "the words occur only in source text that is not in the evidence",
    "synthetic_elision_inside_quote": (
        "the quotation joins separate parts of a passage with an ellipsis; quote each part "
        "on its own"
    ),
    "trailing_artifact": "the quotation ends with words that are not in the evidence",
    "include_aside_for_verbatim": (
        "the quotation leaves out words that stand between its parts in the evidence"
    ),
    "paraphrase": "the quotation rewords the evidence instead of copying it",
    "partial_paraphrase": "only some of the quotation's words are in the evidence",
    "no_overlap": "the evidence does not contain these words",
    "contradicted_polarity": (
        "the evidence says the opposite: its sentence is negated where this is not, or the "
        "other way round"
    ),
    "mismatched_quantity": "the evidence gives another number, count or ordinal",
    "swapped_items": "the evidence has two of its numbers, names or code in the other slots",
}

_MODE_FORMAT: dict[str, str] = {
    "quote": (
        'every statement supported by a "verbatim quotation" in double quotes followed by '
        "the tag of its passage, such as [E1]"
    ),
    "claim-lattice": (
        "one claim per line, each ending in the tags of the passages that support it, such as [E1]"
    ),
}

_REPROMPT_HEAD = (
    "Your answer could not be verified: the items below are not copied verbatim from the "
    "evidence. For each one you get the check's diagnosis and the part of the evidence "
    "closest to it."
)
_REPROMPT_TAIL = (
    "Rewrite your whole answer. Replace each item listed above with a span copied character "
    "for character from the evidence (no ellipses, no changed words), or drop it. Keep the "
    "rest of your answer as it was. Keep the answer format: {format}. If nothing in the "
    'evidence answers the question, reply with exactly "{cannot}" and nothing else.'
)


def reprompt_template_sha256() -> str:
    """sha256 of the re-prompt template (for the model profile next to REPROMPT_VERSION)."""
    return sha256_hex(
        canonical_json(
            {
                "version": REPROMPT_VERSION,
                "head": _REPROMPT_HEAD,
                "tail": _REPROMPT_TAIL,
                "kinds": _KIND_HELP,
                "formats": _MODE_FORMAT,
            }
        )
    )


def _closest(span: str, d: SpanDiagnosis, evidence: Sequence[EvidenceObject]) -> EvidenceObject:
    wanted = d.details.get("pointer_id") or next(iter(d.details.get("pointer_ids", [])), None)
    for ev in evidence:
        if ev.pointer_id == wanted:
            return ev
    _cov, best = best_coverage(content_tokens(tokens(span)), evidence)
    return next((ev for ev in evidence if best and ev.evidence_id == best[0]), evidence[0])


def _item(n: int, d: SpanDiagnosis, evidence: Sequence[EvidenceObject], window: int) -> str:
    what = "quotation" if d.is_quote else "statement"
    lines = [f'{n}. Line {d.line_no}, {what}: "{d.span}"']
    lines.append(f"   Diagnosis: {d.kind} — {_KIND_HELP.get(d.kind, d.kind)}.")
    if d.kind == "include_aside_for_verbatim" and d.details.get("source_span"):
        lines.append(f'   The evidence reads: "{d.details["source_span"]}"')
    if evidence:
        ev = _closest(d.span, d, evidence)
        lines.append(
            f"   Evidence [{ev.pointer_id}], excerpt: {spotlight(ev.text, d.span, window)}"
        )
    return "\n".join(lines)


def build_reprompt_messages(
    question: str,
    answer: str,
    diagnoses: Sequence[SpanDiagnosis],
    evidence: Sequence[EvidenceObject],
    mode: str,
    *,
    policy: VerifierPolicy | None = None,
) -> list[dict[str, str]]:
    """The re-prompt as a chat continuation (pure).

    ``[system, user]`` are exactly the first prompt (:func:`aborist.prompts.build_messages`,
    so ``parse_messages(messages[:2])`` still recovers question, evidence and mode), then the
    model's ``answer`` as the assistant turn, then one user turn listing each diagnosed item
    with its diagnosis and the spotlight excerpt of its closest evidence object.
    """
    pol = policy if policy is not None else DEFAULT_POLICY
    template_for(mode)  # raises InputError for an unknown mode
    if not diagnoses:
        raise InputError("nothing to re-prompt for: no diagnosed span")
    items = [_item(n, d, evidence, pol.spotlight_window) for n, d in enumerate(diagnoses, 1)]
    tail = _REPROMPT_TAIL.format(format=_MODE_FORMAT[mode], cannot=CANNOT_ANSWER)
    request = "\n\n".join([_REPROMPT_HEAD, *items, tail])
    return [
        *build_messages(question, evidence, mode),
        {"role": "assistant", "content": answer},
        {"role": "user", "content": request},
    ]


def accept_reprompt(
    pre_verdict: Verdict | Mapping[str, Any], post_verdict: Verdict | Mapping[str, Any]
) -> bool:
    """The re-prompt's reply replaces the answer under the same rule as a repair."""
    return not_worse(pre_verdict, post_verdict)

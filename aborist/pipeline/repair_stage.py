"""The repair stage in a run: mechanical repair, then the re-prompt fallback (docs/repair.md).

Called by :func:`aborist.pipeline.run.execute_run` after the first verification when
``policy["repair_enabled"]`` is on and the answer is not STRICT:

1. mechanical repair (:func:`aborist.repair.repair.repair_answer`, pure): accepted when the
   number of verified units did not fall; recorded as one ``qa.answer_repaired`` event
   (``method: mechanical``) whose ``outcome`` holds the original and repaired texts, the
   change log and the pre- and post-repair verdicts;
2. if that did not make the answer STRICT and ``repair_max_reprompts`` > 0, up to that many
   re-prompts of the model with the sidecar's diagnosis and the spotlight excerpts, each
   recorded as ``qa.reprompt_attempted`` (prompt and reply as blobs, the reply's verdict,
   accepted or not); the first accepted one is recorded as ``qa.answer_repaired``
   (``method: reprompt``).

Returns the text, verdict and change log to persist, or None when nothing was accepted.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from aborist.clients.base import ChatClient
from aborist.errors import AboristError
from aborist.events import AnswerRepaired, RepromptAttempted
from aborist.repair.repair import (
    REPROMPT_VERSION,
    accept_reprompt,
    build_reprompt_messages,
    repair_answer,
)
from aborist.verify.evidence import EvidenceObject
from aborist.verify.inspect import inspect_answer
from aborist.verify.policy import VerifierPolicy
from aborist.verify.verify import Verdict, verify_answer
from ledger.canonical import canonical_json, sha256_hex

__all__ = ["repair_stage"]


def repair_stage(
    *,
    rec: Any,
    question: str,
    answer: str,
    evidence: Sequence[EvidenceObject],
    verdict: Verdict,
    governance: Any,
    policy: VerifierPolicy,
    client: ChatClient,
) -> tuple[str, dict[str, Any], list[dict[str, Any]]] | None:
    mode = governance.mode
    outcome = repair_answer(answer, evidence, verdict, question=question, mode=mode, policy=policy)
    current_text, current = answer, verdict
    accepted: tuple[str, dict[str, Any], list[dict[str, Any]]] | None = None
    if outcome.accepted:
        repaired = outcome.text.encode("utf-8")
        rec.record(
            AnswerRepaired(
                method="mechanical", repaired_answer_blob=sha256_hex(repaired),
                outcome=outcome.to_dict(),
            ),
            blobs=[repaired],
        )  # fmt: skip
        current_text, current = outcome.text, outcome.verdict
        accepted = (current_text, current.to_dict(), outcome.to_dict()["changes"])
    if current.audit_mode == "STRICT":
        return accepted
    for attempt in range(1, governance.repair_max_reprompts + 1):
        diagnoses = inspect_answer(
            current_text, evidence, current, question=question, policy=policy
        ).diagnoses
        if not diagnoses:
            break
        messages = build_reprompt_messages(
            question, current_text, diagnoses, evidence, mode, policy=policy
        )
        prompt = canonical_json(messages)
        try:
            reply = client.complete(messages).text
        except AboristError as e:
            rec.record(
                RepromptAttempted(
                    attempt=attempt, reprompt_version=REPROMPT_VERSION,
                    prompt_blob=sha256_hex(prompt), raw_answer_blob=None,
                    error=f"{type(e).__name__}: {e}", accepted=False,
                ),
                blobs=[prompt],
            )  # fmt: skip
            continue
        post = verify_answer(reply, evidence, policy, question=question, mode=mode)
        # Same not-worse rule as the mechanical repair; a reply that repeats the answer
        # changes nothing and is not accepted.
        changed = reply.strip() != current_text.strip()
        ok = changed and post.n_units > 0 and accept_reprompt(current, post)
        raw = reply.encode("utf-8")
        rec.record(
            RepromptAttempted(
                attempt=attempt, reprompt_version=REPROMPT_VERSION,
                prompt_blob=sha256_hex(prompt), raw_answer_blob=sha256_hex(raw),
                verdict=post.to_dict(), accepted=ok,
            ),
            blobs=[prompt, raw],
        )  # fmt: skip
        if not ok:
            continue
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
        rec.record(
            AnswerRepaired(method="reprompt", repaired_answer_blob=sha256_hex(raw),
                           outcome=detail),
            blobs=[raw],
        )  # fmt: skip
        changes = [{"kind": "reprompt", "attempt": attempt, "before": current_text,
                    "after": reply}]  # fmt: skip
        return reply, post.to_dict(), (accepted[2] if accepted else []) + changes
    return accepted

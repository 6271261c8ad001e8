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

The pure parts (the mechanical repair, a reply's verdict, whether it is accepted, the
payloads) are :mod:`aborist.pipeline.tail`'s, which ``replay --deep`` re-runs; this module
adds the model calls and the recording.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from aborist.clients.base import ChatClient
from aborist.errors import AboristError
from aborist.events import RepromptAttempted
from aborist.pipeline import tail
from aborist.pipeline.tail import TailInputs
from aborist.repair.repair import REPROMPT_VERSION, build_reprompt_messages
from aborist.verify.evidence import EvidenceObject
from aborist.verify.inspect import inspect_answer
from aborist.verify.policy import VerifierPolicy
from aborist.verify.verify import Verdict
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
    inputs = TailInputs(question, mode, answer, evidence, policy)
    outcome, mechanical = tail.mechanical_repair(inputs, verdict)
    current_text, current = answer, verdict
    accepted: tuple[str, dict[str, Any], list[dict[str, Any]]] | None = None
    if mechanical is not None:
        current_text, current = outcome.text, outcome.verdict
        rec.record(mechanical, blobs=[current_text.encode("utf-8")])
        accepted = (current_text, current.to_dict(), mechanical.outcome["changes"])
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
        post = tail.verify_reply(inputs, reply)
        ok = tail.reprompt_accepted(current_text, current, reply, post)
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
        rec.record(tail.reprompt_repaired(attempt, current_text, current, reply, post),
                   blobs=[raw])  # fmt: skip
        changes = [{"kind": "reprompt", "attempt": attempt, "before": current_text,
                    "after": reply}]  # fmt: skip
        return reply, post.to_dict(), (accepted[2] if accepted else []) + changes
    return accepted

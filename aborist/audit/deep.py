"""Replay check 3 (``--deep``): re-execute a run's deterministic stages from its recorded
inputs and compare the outputs with the recorded events byte for byte (docs/replay.md,
check 3).

Inputs come only from the ledger: the evidence texts and the raw answer from their blobs,
the question and mode from ``qa.run_started``, and the default verifier policy. The stages
are re-run by the functions the pipeline itself called to make the payloads it recorded,
:mod:`aborist.pipeline.tail` (one derivation for both):

- ``parsed_claim_lattice``: :func:`~aborist.pipeline.tail.parse` (claim-lattice), whose
  claims the verify stage takes, as in the pipeline;
- ``verify``: :func:`~aborist.pipeline.tail.verify`;
- ``repair``: :func:`~aborist.pipeline.tail.mechanical_repair` (pure); a re-prompt's
  reply came from the model and is taken as recorded, but its verdict and acceptance (in
  ``qa.reprompt_attempted``) and the accepted reply's ``qa.answer_repaired`` are derived
  again;
- ``render``: :func:`~aborist.pipeline.tail.render`;
- ``final_label``: :func:`~aborist.pipeline.tail.label_fields` (audit mode, label and
  answer hash).

Each expected payload is the event's own pydantic model, compared as RFC 8785 bytes with
the stored payload; a difference is reported at its first JSON path.

A verdict recorded under another ``verifier_version``, ``verifier_policy_hash`` or
``canonicalization_version`` than the running code is *version skew*: the stages are not
re-run (they would differ for an honest reason) and the skew is reported apart from
divergence.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from aborist.audit.checks.blobs import (
    BLOB_FIELDS,
    EVIDENCE_STAGE,
    BlobRef,
    BlobSource,
    check_blob,
    referenced_blobs,
)
from aborist.audit.checks.run_events import RunEvents, as_run_events
from aborist.audit.evidence_memo import EvidenceMemo, construct
from aborist.audit.findings import Divergence, NotReexecuted, ReplayReport, VersionSkew, clip
from aborist.errors import AboristError
from aborist.events import (
    AnswerLabelled,
    AnswerRendered,
    AnswerRepaired,
    AnswerVerified,
    ClaimsParsed,
    ContextAssembled,
    EventPayload,
    EvidenceMapped,
    ModelAnswered,
    RepromptAttempted,
    RunCompleted,
    RunStarted,
)
from aborist.pipeline import tail
from aborist.pipeline.render import RENDER_VERSION
from aborist.pipeline.tail import TailInputs
from aborist.verify.evidence import EvidenceObject
from aborist.verify.policy import DEFAULT_POLICY, VERIFIER_VERSION, policy_hash
from aborist.verify.text.textcanon import CANONICALIZATION_VERSION
from aborist.verify.verify import Verdict
from ledger.canonical import canonical_json
from ledger.envelope import RecordedEvent
from ledger.errors import BlobNotFoundError, LedgerError

__all__ = [
    "DEEP_EVENT_TYPES",
    "EvidenceMemo",
    "first_difference",
    "reexecute_run",
    "running_versions",
]

_MISSING = object()
#: Every event type the re-execution reads: the stages it compares, their inputs, and the
#: events naming blobs (whose blobs it checks). A run re-executed in another process
#: (:mod:`aborist.audit.deep_batches`) is sent these events only; the others (the
#: retrieval record, the cache check) are the bulk of a run's bytes and none of its
#: inputs. Reading another type here means adding it to this set.
DEEP_EVENT_TYPES = frozenset(
    {RunStarted.TYPE, ModelAnswered.TYPE, ClaimsParsed.TYPE, AnswerVerified.TYPE,
     AnswerRepaired.TYPE, RepromptAttempted.TYPE, AnswerRendered.TYPE,
     AnswerLabelled.TYPE, RunCompleted.TYPE, *BLOB_FIELDS, *EVIDENCE_STAGE}
)  # fmt: skip
_INPUT_ERRORS = (AboristError, LedgerError, KeyError, TypeError, ValueError, UnicodeDecodeError)


def running_versions() -> dict[str, str]:
    """What a verdict records about the code that made it, for the running code."""
    return {
        "verifier_version": VERIFIER_VERSION,
        "verifier_policy_hash": policy_hash(DEFAULT_POLICY),
        "canonicalization_version": CANONICALIZATION_VERSION,
    }


def first_difference(expected: Any, found: Any, path: str = "$") -> tuple[str, Any, Any] | None:
    """The first JSON path where ``found`` differs from ``expected`` (None when equal)."""
    if isinstance(expected, dict) and isinstance(found, dict):
        for key in sorted(set(expected) | set(found)):
            d = first_difference(
                expected.get(key, _MISSING), found.get(key, _MISSING), f"{path}.{key}"
            )
            if d is not None:
                return d
        return None
    if isinstance(expected, list) and isinstance(found, list):
        for i in range(max(len(expected), len(found))):
            e = expected[i] if i < len(expected) else _MISSING
            f = found[i] if i < len(found) else _MISSING
            d = first_difference(e, f, f"{path}[{i}]")
            if d is not None:
                return d
        return None
    if type(expected) is not type(found) or expected != found:
        return path, expected, found
    return None


def _show(value: Any) -> str:
    return "(absent)" if value is _MISSING else clip(canonical_json(value).decode("utf-8"))


class _Fetched:
    """Blobs already read (one query per run), as a :class:`BlobSource`."""

    def __init__(self, blobs: dict[str, bytes]) -> None:
        self.blobs = blobs

    def get_blob(self, blob_hash: str) -> bytes:
        try:
            return self.blobs[blob_hash]
        except KeyError:
            raise BlobNotFoundError(f"no blob with hash {blob_hash}") from None


class _RunReplay:
    """Re-execution of one run; collects into the shared report."""

    def __init__(
        self, source: BlobSource, run: RunEvents, report: ReplayReport, memo: EvidenceMemo | None
    ) -> None:
        self.source = source
        self.memo = memo
        self.run_id = run.run_id
        self.run_events = run
        self.events = run.events
        self.report = report

    def data(self, ev: RecordedEvent) -> Any:
        """``ev``'s payload, parsed once per run and shared with the run's other checks."""
        return self.run_events.data(ev)

    def first(self, type_: str) -> RecordedEvent | None:
        return self.run_events.first(type_)

    def diverge(self, ev: RecordedEvent | None, stage: str, expected: str, found: str,
                detail: str = "") -> None:  # fmt: skip
        self.report.diverge(
            Divergence("deep", ev.seq if ev else None, self.run_id, stage, expected, found, detail)
        )

    def skip(self, stage: str, reason: str) -> None:
        self.report.skip(NotReexecuted(self.run_id, stage, reason))

    def compare(self, ev: RecordedEvent | None, stage: str, expected: EventPayload) -> None:
        """The stored payload of ``ev`` against ``expected``, as canonical bytes."""
        self.report.deep_stages += 1
        if ev is None:
            self.diverge(None, stage, f"a {expected.TYPE} event", "none")
            return
        want = expected.model_dump(mode="json")
        if canonical_json(want) == ev.payload.encode("utf-8"):
            return
        diff = first_difference(want, self.data(ev))
        path, e, f = diff if diff is not None else ("$", want, self.data(ev))
        self.diverge(ev, stage, _show(e), _show(f), path)

    def prefetch(self, refs: Sequence[BlobRef]) -> BlobSource:
        """The run's blobs in one query when the source can (a ledger's ``get_blobs``);
        a missing blob falls back to one-by-one reads, so the failure names it."""
        get_blobs = getattr(self.source, "get_blobs", None)
        if get_blobs is None:
            return self.source
        try:
            return _Fetched(get_blobs([r.blob for r in refs]))
        except LedgerError:
            return self.source

    def blobs(self) -> dict[str, bytes] | None:
        """Every referenced blob, checked; None (and divergences) if any failed."""
        out: dict[str, bytes] = {}
        ok = True
        refs = referenced_blobs(self.run_id, self.run_events)
        source = self.prefetch(refs)
        for ref in refs:
            if ref.blob in out:
                continue
            if ref.blob not in self.report.blobs_seen:  # another run's reference counted it
                self.report.blobs_seen.add(ref.blob)
                self.report.blobs_checked += 1
            data, failure = check_blob(source, ref)
            if failure is not None:
                self.report.diverge(failure)
                ok = False
            elif data is not None:
                out[ref.blob] = data
        return out if ok else None

    def skewed(self, verified: RecordedEvent) -> bool:
        verdict = self.data(verified).get("verdict")
        recorded = verdict if isinstance(verdict, dict) else {}
        skew = False
        for key, running in running_versions().items():
            value = recorded.get(key)
            if value != running:
                skew = True
                self.report.skew(
                    VersionSkew(verified.seq, self.run_id, "verify", key, clip(value), running)
                )
        return skew

    def evidence(self, blobs: dict[str, bytes]) -> list[EvidenceObject]:
        records: list[dict[str, Any]] = []
        for t in (EvidenceMapped.TYPE, ContextAssembled.TYPE):
            ev = self.first(t)
            if ev is not None:
                records = list(self.data(ev)["evidence"])
                break
        if self.memo is not None:
            return self.memo.evidence(records, blobs)
        return [construct(r, blobs) for r in records]

    def run(self) -> None:
        verified = self.first(AnswerVerified.TYPE)
        started = self.first(RunStarted.TYPE)
        answered = self.first(ModelAnswered.TYPE)
        if verified is None or started is None or answered is None:
            return  # a cache hit, a failed or an unfinished run: nothing was verified
        blobs = self.blobs()
        if blobs is None:
            self.skip("all", "a blob the run references failed its check")
            return
        if self.skewed(verified):
            self.report.skewed_runs += 1
            self.skip("all", "version skew: recorded by another verifier or policy")
            return
        self.report.deep_runs += 1  # counted once it is re-executed, not before
        stage = "evidence_map"
        try:
            inputs = TailInputs(
                question=str(self.data(started)["question"]),
                mode=str(self.data(started)["mode"]),
                raw=blobs[self.data(answered)["raw_answer_blob"]].decode("utf-8"),
                evidence=self.evidence(blobs),
                policy=DEFAULT_POLICY,
            )
            if inputs.mode == "claim-lattice":
                stage = "parsed_claim_lattice"
            claims, parsed = tail.parse(inputs)
            if parsed is not None:
                self.compare(self.first(ClaimsParsed.TYPE), stage, parsed)
            stage = "verify"
            verdict, expected = tail.verify(inputs, claims)
            self.compare(verified, stage, expected)
            stage = "repair"
            answer, verdict_dict = self.repair(inputs, verdict, blobs)
            stage = "render"
            self.render(answer, verdict_dict, inputs)
            stage = "final_label"
            self.label(answer, verdict_dict)
        except _INPUT_ERRORS as e:
            self.diverge(
                None, stage, "re-executable recorded inputs", clip(f"{type(e).__name__}: {e}")
            )

    def repair(
        self, inputs: TailInputs, verdict: Verdict, blobs: dict[str, bytes]
    ) -> tuple[str, dict[str, Any]]:
        """Re-run the repair stage as :mod:`aborist.pipeline.repair_stage` ran it; returns the
        answer and verdict that render and label consumed.

        The mechanical repair is pure and re-run whole. A re-prompt's reply came from the
        model and is taken as recorded, but its verdict, whether it was accepted, and the
        accepted reply's ``qa.answer_repaired`` are derived again.
        """
        repairs = [e for e in self.events if e.type == AnswerRepaired.TYPE]
        mech = next((e for e in repairs if self.data(e).get("method") == "mechanical"), None)
        policy = self.first(RunStarted.TYPE)
        enabled = bool(policy and self.data(policy).get("policy", {}).get("repair_enabled"))
        if not repairs and not tail.repair_due(enabled, verdict):
            return inputs.raw, verdict.to_dict()
        answer, current = inputs.raw, verdict
        if verdict.audit_mode != "STRICT":
            outcome, expected = tail.mechanical_repair(inputs, verdict)
            if expected is not None:
                self.compare(mech, "repair", expected)
                answer, current = str(outcome.text), outcome.verdict
            elif mech is not None:
                self.report.deep_stages += 1
                self.diverge(mech, "repair", "no mechanical repair accepted",
                             f"one ({clip(outcome.reason)} on re-execution)")  # fmt: skip
        elif mech is not None:
            self.report.deep_stages += 1
            self.diverge(mech, "repair", "no repair of a STRICT answer", "a mechanical repair")
        return self.reprompts(inputs, answer, current, repairs, blobs)

    def reprompts(
        self, inputs: TailInputs, answer: str, current: Verdict,
        repairs: list[RecordedEvent], blobs: dict[str, bytes],
    ) -> tuple[str, dict[str, Any]]:  # fmt: skip
        """The re-prompts after the mechanical repair: each reply re-verified and its
        acceptance decided again against the answer it was to replace (the same for every
        attempt, as the stage stops at the first accepted one)."""
        for ev in self.events:
            if ev.type == RepromptAttempted.TYPE and self.data(ev).get("raw_answer_blob"):
                reply = blobs[self.data(ev)["raw_answer_blob"]].decode("utf-8")
                post = tail.verify_reply(inputs, reply)
                ok = tail.reprompt_accepted(answer, current, reply, post)
                self.compare_fields(ev, "repair", {"accepted": ok, "verdict": post.to_dict()})
        reprompt = next(
            (e for e in reversed(repairs) if self.data(e).get("method") == "reprompt"), None
        )
        if reprompt is None:
            return answer, current.to_dict()
        self.skip("repair", "the re-prompt's reply came from the model (its verdict was "
                  "re-verified)")  # fmt: skip
        text = blobs[self.data(reprompt)["repaired_answer_blob"]].decode("utf-8")
        post = tail.verify_reply(inputs, text)
        attempt = self.data(reprompt)["outcome"]["attempt"]
        self.compare(
            reprompt, "repair", tail.reprompt_repaired(attempt, answer, current, text, post)
        )
        return text, post.to_dict()

    def compare_fields(self, ev: RecordedEvent, stage: str, want: dict[str, Any]) -> None:
        """Only the fields of ``want`` (nested) against the stored payload."""
        self.report.deep_stages += 1

        def pick(w: Any, found: Any) -> Any:
            if isinstance(w, dict) and isinstance(found, dict):
                return {k: pick(v, found.get(k, _MISSING)) for k, v in w.items()}
            return found

        diff = first_difference(want, pick(want, self.data(ev)))
        if diff is not None:
            path, e, f = diff
            self.diverge(ev, stage, _show(e), _show(f), path)

    def ended_before(self, stage: str, ev: RecordedEvent | None) -> bool:
        """A run that failed or was interrupted before ``stage`` has nothing to compare."""
        if ev is None and self.first(RunCompleted.TYPE) is None:
            self.skip(stage, "the run ended before this stage")
            return True
        return False

    def render(self, answer: str, verdict: dict[str, Any], inputs: TailInputs) -> None:
        ev = self.first(AnswerRendered.TYPE)
        if self.ended_before("render", ev):
            return
        if ev is not None and self.data(ev).get("render_version") != RENDER_VERSION:
            self.report.skew(
                VersionSkew(ev.seq, self.run_id, "render", "render_version",
                            clip(self.data(ev).get("render_version")), RENDER_VERSION)
            )  # fmt: skip
            self.report.skewed_runs += 1  # its verdict re-ran; what a reader sees did not
            self.skip("render", "version skew: recorded by another renderer")
            return
        self.compare(ev, "render", tail.render(answer, verdict, inputs.evidence, inputs.policy))

    def label(self, answer: str, verdict: dict[str, Any]) -> None:
        ev = self.first(AnswerLabelled.TYPE)
        if self.ended_before("final_label", ev):
            return
        if ev is None:
            self.report.deep_stages += 1
            self.diverge(None, "final_label", f"a {AnswerLabelled.TYPE} event", "none")
            return
        self.compare_fields(ev, "final_label", tail.label_fields(answer, verdict))


def reexecute_run(
    source: BlobSource,
    run_id: str,
    events: Sequence[RecordedEvent],
    report: ReplayReport,
    memo: EvidenceMemo | None = None,
) -> None:
    """Re-run ``run_id``'s deterministic stages and record what diverged in ``report``.

    ``source`` gives the blobs: the ledger, an export bundle's blobs with no database, or
    replay's :class:`~aborist.audit.checks.blobs.BlobCache`. ``events`` may be a
    :class:`~aborist.audit.checks.run_events.RunEvents` whose parsed payloads are shared with the
    caller's other checks. ``memo`` shares the evidence objects built for earlier runs
    (replay passes one for the whole replay)."""
    _RunReplay(source, as_run_events(run_id, events), report, memo).run()

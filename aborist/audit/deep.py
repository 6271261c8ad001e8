"""Replay check 3 (``--deep``): re-execute a run's deterministic stages from its recorded
inputs and compare the outputs with the recorded events byte for byte (docs/replay.md,
check 3).

Inputs come only from the ledger: the evidence texts and the raw answer from their blobs,
the question and mode from ``qa.run_started``, and the default verifier policy. The stages
re-run are the pure functions the pipeline called:

- ``parsed_claim_lattice``: :func:`aborist.verify.claims.parse_claims` (claim-lattice);
- ``verify``: :func:`aborist.verify.verify.verify_answer`;
- ``repair``: :func:`aborist.repair.repair.repair_answer` (the mechanical repair, pure), when
  that module is installed; a re-prompt's reply came from the model and is taken as
  recorded, but its verdict (in ``qa.reprompt_attempted`` and ``qa.answer_repaired``) is
  re-verified;
- ``render``: :func:`aborist.pipeline.render.render_answer`;
- ``final_label``: audit mode, label and answer hash.

Each expected payload is built with the event's own pydantic model and compared as RFC 8785
bytes with the stored payload; a difference is reported at its first JSON path.

A verdict recorded under another ``verifier_version``, ``verifier_policy_hash`` or
``canonicalization_version`` than the running code is *version skew*: the stages are not
re-run (they would differ for an honest reason) and the skew is reported apart from
divergence.
"""

from __future__ import annotations

import copy
import dataclasses
import importlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from aborist.audit.blobs import (
    BLOB_FIELDS,
    EVIDENCE_STAGE,
    BlobRef,
    BlobSource,
    check_blob,
    referenced_blobs,
)
from aborist.audit.findings import Divergence, NotReexecuted, ReplayReport, VersionSkew, clip
from aborist.audit.run_events import RunEvents, as_run_events
from aborist.errors import AboristError
from aborist.events import (
    AnswerRendered,
    AnswerRepaired,
    AnswerVerified,
    ClaimsParsed,
    EventPayload,
)
from aborist.pipeline.render import RENDER_VERSION, render_answer
from aborist.verify.claims import parse_claims
from aborist.verify.evidence import EvidenceObject
from aborist.verify.policy import DEFAULT_POLICY, VERIFIER_VERSION, policy_hash
from aborist.verify.textcanon import CANONICALIZATION_VERSION
from aborist.verify.verify import Verdict, verify_answer
from ledger.canonical import canonical_json, sha256_hex
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
    {"qa.run_started", "qa.model_answered", "qa.claims_parsed", "qa.answer_verified",
     "qa.answer_repaired", "qa.reprompt_attempted", "qa.answer_rendered",
     "qa.answer_labelled", "qa.run_completed", *BLOB_FIELDS, *EVIDENCE_STAGE}
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


def _load_repair() -> Callable[..., Any] | None:
    """``aborist.repair.repair.repair_answer`` if the repair stage is installed (lazy import:
    replay must work on a tree without it)."""
    try:
        module = importlib.import_module("aborist.repair.repair")
    except ImportError:
        return None
    fn = getattr(module, "repair_answer", None)
    return fn if callable(fn) else None


#: The fields of :class:`EvidenceObject` that :class:`EvidenceMemo` knows how to fill:
#: the record's and what the object derives from its text. Should the class gain another,
#: the memo builds every object with the constructor instead.
_RECORD_FIELDS = ("pointer_id", "source_uri", "title", "source_role")
_KNOWN_FIELDS = frozenset(
    {*_RECORD_FIELDS, "text", "evidence_hash", "evidence_id", "canonical_text", "token_list",
     "form", "token_set"}
)  # fmt: skip
_MEMO_FAST = {f.name for f in dataclasses.fields(EvidenceObject)} == _KNOWN_FIELDS
#: Characters of evidence text an :class:`EvidenceMemo` keeps before it starts afresh.
MEMO_BUDGET = 16 * 1024 * 1024


class EvidenceMemo:
    """The evidence objects built from evidence records during one replay, so that the
    runs that cite the same chunks (most runs of a ledger cite chunks other runs cited)
    do not build them again.

    An :class:`EvidenceObject` is a pure function of its record (pointer, source,
    title, role, recorded hash) and its text, and the text is a pure function of the text
    blob's address once the blob's bytes were checked to hash to it (every run's blobs are
    checked before its evidence is built). So a record seen before gets the object built
    then; a record new to the memo whose text is known gets a copy of that text's object
    with the record's own fields (the text's hash, canonical form and tokens are shared,
    not derived again: ``tests/audit/test_deep_memo.py`` checks the copies field for field
    against the constructor); anything else, and anything the constructor would refuse
    (a recorded hash that does not match the text), goes through the constructor, which
    decides and raises as it always does. Past :data:`MEMO_BUDGET` characters of text the
    memo starts afresh, so memory stays bounded."""

    def __init__(self, budget: int = MEMO_BUDGET) -> None:
        self.budget = budget
        self.by_text: dict[str, EvidenceObject] = {}  # text blob -> an object of its text
        self.by_record: dict[tuple[Any, ...], EvidenceObject] = {}
        self.size = 0

    def evidence(self, records: Sequence[Any], blobs: Mapping[str, bytes]) -> list[EvidenceObject]:
        """The evidence objects of ``records`` (``qa.evidence_mapped`` or
        ``qa.context_assembled``'s ``evidence``), with texts from the checked ``blobs``."""
        if self.size > self.budget:
            self.by_text.clear()
            self.by_record.clear()
            self.size = 0
        return [self.one(r, blobs) for r in records]

    def one(self, r: Any, blobs: Mapping[str, bytes]) -> EvidenceObject:
        try:
            key = (r["pointer_id"], r["text_blob"], r["source_uri"], r["title"],
                   r["source_role"], r["evidence_hash"])  # fmt: skip
            found = self.by_record.get(key)
        except (KeyError, TypeError, IndexError):  # not a record: the constructor says why
            return _construct(r, blobs)
        if found is not None:
            return found
        blob = key[1]
        proto = self.by_text.get(blob) if type(blob) is str else None
        if (
            proto is not None
            and _MEMO_FAST
            and all(type(v) is str for v in key)
            and key[5] in ("", proto.evidence_hash)
            and blobs.get(blob) is not None
        ):
            obj = copy.copy(proto)
            for name, value in zip(_RECORD_FIELDS, (key[0], *key[2:5]), strict=True):
                object.__setattr__(obj, name, value)
        else:
            obj = _construct(r, blobs)
            if type(blob) is str and blob not in self.by_text:
                self.by_text[blob] = obj
                self.size += len(obj.text)
        self.by_record[key] = obj
        return obj


def _construct(r: Any, blobs: Mapping[str, bytes]) -> EvidenceObject:
    """One evidence object from its record, by the constructor (which checks the recorded
    hash against the text)."""
    return EvidenceObject(
        pointer_id=r["pointer_id"], text=blobs[r["text_blob"]].decode("utf-8"),
        source_uri=r["source_uri"], title=r["title"], source_role=r["source_role"],
        evidence_hash=r["evidence_hash"],
    )  # fmt: skip


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
        for t in ("qa.evidence_mapped", "qa.context_assembled"):
            ev = self.first(t)
            if ev is not None:
                records = list(self.data(ev)["evidence"])
                break
        if self.memo is not None:
            return self.memo.evidence(records, blobs)
        return [_construct(r, blobs) for r in records]

    def run(self) -> None:
        verified = self.first("qa.answer_verified")
        started = self.first("qa.run_started")
        answered = self.first("qa.model_answered")
        if verified is None or started is None or answered is None:
            return  # a cache hit, a failed or an unfinished run: nothing was verified
        self.report.deep_runs += 1
        blobs = self.blobs()
        if blobs is None:
            self.skip("all", "a blob the run references failed its check")
            return
        if self.skewed(verified):
            self.skip("all", "version skew: recorded by another verifier or policy")
            return
        stage = "evidence_map"
        try:
            question = str(self.data(started)["question"])
            mode = str(self.data(started)["mode"])
            evidence = self.evidence(blobs)
            raw = blobs[self.data(answered)["raw_answer_blob"]].decode("utf-8")
            if mode == "claim-lattice":
                stage = "parsed_claim_lattice"
                claims = [c.to_dict() for c in parse_claims(raw)]
                self.compare(self.first("qa.claims_parsed"), stage, ClaimsParsed(claims=claims))
            stage = "verify"
            verdict = verify_answer(raw, evidence, DEFAULT_POLICY, question=question, mode=mode)
            expected = AnswerVerified(answer_blob=sha256_hex(raw.encode("utf-8")),
                                      verdict=verdict.to_dict())  # fmt: skip
            self.compare(verified, stage, expected)
            stage = "repair"
            answer, verdict_dict = self.repair(raw, evidence, verdict, question, mode, blobs)
            stage = "render"
            self.render(answer, verdict_dict, evidence)
            stage = "final_label"
            self.label(answer, verdict_dict)
        except _INPUT_ERRORS as e:
            self.diverge(
                None, stage, "re-executable recorded inputs", clip(f"{type(e).__name__}: {e}")
            )

    def repair(
        self, raw: str, evidence: list[EvidenceObject], verdict: Verdict, question: str,
        mode: str, blobs: dict[str, bytes],
    ) -> tuple[str, dict[str, Any]]:  # fmt: skip
        """Re-run the repair stage as :mod:`aborist.pipeline.repair_stage` ran it; returns the
        answer and verdict that render and label consumed.

        The mechanical repair is pure and re-run whole. A re-prompt's reply came from the
        model and is taken as recorded, but its verdict is re-verified.
        """
        repairs = [e for e in self.events if e.type == "qa.answer_repaired"]
        mech = next((e for e in repairs if self.data(e).get("method") == "mechanical"), None)
        policy = self.first("qa.run_started")
        enabled = bool(policy and self.data(policy).get("policy", {}).get("repair_enabled"))
        if not repairs and not (enabled and verdict.audit_mode != "STRICT"):
            return raw, verdict.to_dict()
        repair_answer = _load_repair()
        if repair_answer is None:
            self.skip("repair", "aborist.repair.repair is not installed")
            if not repairs:
                return raw, verdict.to_dict()
            last = self.data(repairs[-1])
            text = blobs[last["repaired_answer_blob"]].decode("utf-8")
            return text, dict(last["outcome"]["post_verdict"])
        answer, current = raw, verdict.to_dict()
        if verdict.audit_mode != "STRICT":
            outcome = repair_answer(
                raw, evidence, verdict, question=question, mode=mode, policy=DEFAULT_POLICY
            )
            if outcome.accepted:
                text = str(outcome.text)
                expected = AnswerRepaired(
                    method="mechanical", repaired_answer_blob=sha256_hex(text.encode("utf-8")),
                    outcome=outcome.to_dict(),
                )  # fmt: skip
                self.compare(mech, "repair", expected)
                answer, current = text, outcome.verdict.to_dict()
            elif mech is not None:
                self.report.deep_stages += 1
                self.diverge(mech, "repair", "no mechanical repair accepted",
                             f"one ({clip(outcome.reason)} on re-execution)")  # fmt: skip
        elif mech is not None:
            self.report.deep_stages += 1
            self.diverge(mech, "repair", "no repair of a STRICT answer", "a mechanical repair")
        for ev in self.events:
            if ev.type == "qa.reprompt_attempted" and self.data(ev).get("raw_answer_blob"):
                reply = blobs[self.data(ev)["raw_answer_blob"]].decode("utf-8")
                post = verify_answer(reply, evidence, DEFAULT_POLICY, question=question, mode=mode)
                self.compare_fields(ev, "repair", {"verdict": post.to_dict()})
        reprompt = next(
            (e for e in reversed(repairs) if self.data(e).get("method") == "reprompt"), None
        )
        if reprompt is not None:
            self.skip("repair", "the re-prompt's reply came from the model (its verdict was "
                      "re-verified)")  # fmt: skip
            text = blobs[self.data(reprompt)["repaired_answer_blob"]].decode("utf-8")
            post = verify_answer(text, evidence, DEFAULT_POLICY, question=question, mode=mode)
            want = {"outcome": {"repaired_text": text, "post_verdict": post.to_dict()}}
            self.compare_fields(reprompt, "repair", want)
            answer, current = text, post.to_dict()
        return answer, current

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
        if ev is None and self.first("qa.run_completed") is None:
            self.skip(stage, "the run ended before this stage")
            return True
        return False

    def render(self, answer: str, verdict: dict[str, Any], evidence: list[EvidenceObject]) -> None:
        ev = self.first("qa.answer_rendered")
        if self.ended_before("render", ev):
            return
        if ev is not None and self.data(ev).get("render_version") != RENDER_VERSION:
            self.report.skew(
                VersionSkew(ev.seq, self.run_id, "render", "render_version",
                            clip(self.data(ev).get("render_version")), RENDER_VERSION)
            )  # fmt: skip
            self.skip("render", "version skew: recorded by another renderer")
            return
        rendered = render_answer(answer, verdict, evidence, window=DEFAULT_POLICY.spotlight_window)
        self.compare(ev, "render", AnswerRendered(**rendered))

    def label(self, answer: str, verdict: dict[str, Any]) -> None:
        ev = self.first("qa.answer_labelled")
        if self.ended_before("final_label", ev):
            return
        if ev is None:
            self.report.deep_stages += 1
            self.diverge(None, "final_label", "a qa.answer_labelled event", "none")
            return
        want = {
            "audit_mode": verdict["audit_mode"],
            "label": verdict["label"],
            "answer_hash": sha256_hex(answer.encode("utf-8")),
        }
        self.compare_fields(ev, "final_label", want)


def reexecute_run(
    source: BlobSource,
    run_id: str,
    events: Sequence[RecordedEvent],
    report: ReplayReport,
    memo: EvidenceMemo | None = None,
) -> None:
    """Re-run ``run_id``'s deterministic stages and record what diverged in ``report``.

    ``source`` gives the blobs: the ledger, an export bundle's blobs with no database, or
    replay's :class:`~aborist.audit.blobs.BlobCache`. ``events`` may be a
    :class:`~aborist.audit.run_events.RunEvents` whose parsed payloads are shared with the
    caller's other checks. ``memo`` shares the evidence objects built for earlier runs
    (replay passes one for the whole replay)."""
    _RunReplay(source, as_run_events(run_id, events), report, memo).run()

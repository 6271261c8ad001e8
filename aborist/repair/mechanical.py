"""Mechanical repair: the sidecar's repair actions as string substitution.

Part of the repair stage (:mod:`aborist.repair.repair`, docs/repair.md §1–3). Pure: no I/O, no
clock, no randomness.

The sidecar diagnoses *canonical* text (straight quotes, collapsed whitespace); the repair
edits the *raw* answer. Each raw line is canonicalized character by character with a map
back to the raw characters (:func:`_canon_map`), the diagnosed quotation is found in the
canonical line by the verifier's quotation rule, and the raw range is replaced, keeping the
raw quotation marks. :func:`apply_changes` replays the change log on the original text;
:func:`mechanical_repair` builds its own result with it, so a recorded change log always
reproduces the repaired text.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from aborist.errors import InputError
from aborist.prompts import MODE_QUOTE
from aborist.verify.claims import parse_claims
from aborist.verify.evidence import EvidenceObject
from aborist.verify.inspect import CONTRADICTION_KINDS, SpanDiagnosis
from aborist.verify.policy import DEFAULT_POLICY, VerifierPolicy
from aborist.verify.text.textcanon import canonicalize
from aborist.verify.units import extract_quotes, segment_prose, verbatim_in

__all__ = [
    "DROP_KINDS",
    "MECHANICAL_KINDS",
    "RepairChange",
    "RepairResult",
    "RepairSkip",
    "apply_changes",
    "mechanical_repair",
]

MECHANICAL_KINDS = (
    "synthetic_elision_inside_quote",
    "trailing_artifact",
    "no_overlap",
    "contradicted_polarity",
    "mismatched_quantity",
    "swapped_items",
)
#: Kinds whose unit is removed whole: nothing of it is kept (docs/repair.md §3).
DROP_KINDS = ("no_overlap", *CONTRADICTION_KINDS)

# Same pairing rule as verify_units.extract_quotes, applied to a canonical line.
_QUOTE = re.compile(r'"([^"]+)"')
# What str.splitlines() breaks on: a line's ending is kept apart from its body.
_ENDINGS = "\r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"


@dataclass(frozen=True)
class RepairChange:
    """One substitution: ``before`` (raw text at ``line_no``, ``column``) became ``after``.

    ``scope`` is ``"line"`` when the whole line went, with its line break; ``"text"``
    otherwise (``column`` is the 0-based offset of ``before`` in the original line).
    """

    kind: str
    action: str
    line_no: int
    span: str
    before: str
    after: str
    column: int = 0
    scope: str = "text"

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "action": self.action,
            "line_no": self.line_no,
            "column": self.column,
            "scope": self.scope,
            "span": self.span,
            "before": self.before,
            "after": self.after,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RepairChange:
        return cls(
            kind=str(data["kind"]),
            action=str(data["action"]),
            line_no=int(data["line_no"]),
            span=str(data["span"]),
            before=str(data["before"]),
            after=str(data["after"]),
            column=int(data["column"]),
            scope=str(data["scope"]),
        )


@dataclass(frozen=True)
class RepairSkip:
    """A diagnosis :func:`mechanical_repair` did not act on, and why."""

    kind: str
    action: str
    line_no: int
    span: str
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "action": self.action,
            "line_no": self.line_no,
            "span": self.span,
            "reason": self.reason,
        }


@dataclass(frozen=True)
class RepairResult:
    """The repaired text, the change log and what was left alone."""

    text: str
    changes: tuple[RepairChange, ...]
    skipped: tuple[RepairSkip, ...]

    @property
    def changed(self) -> bool:
        return bool(self.changes)

    def to_dict(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "changes": [c.to_dict() for c in self.changes],
            "skipped": [s.to_dict() for s in self.skipped],
        }


# ---------------------------------------------------------------------------------------
# Locating canonical spans in the raw answer


def _canon_map(raw: str) -> tuple[str, list[int], list[int]] | None:
    """``canonicalize(raw)`` with, per canonical char, the raw [start, end) it came from.

    ``None`` when the text cannot be mapped char by char (NFC composes characters); the
    caller then skips the edit rather than guess.
    """
    if not raw.isascii() and unicodedata.normalize("NFC", raw) != raw:
        return None
    chars: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    gap: int | None = None  # raw start of a pending whitespace run
    for i, ch in enumerate(raw):
        if ch.isspace():
            if gap is None:
                gap = i
            continue
        rep = canonicalize(ch)
        if not rep:
            continue
        if gap is not None and chars:
            chars.append(" ")
            starts.append(gap)
            ends.append(i)
        gap = None
        for c in rep:
            chars.append(c)
            starts.append(i)
            ends.append(i + 1)
    canon = "".join(chars)
    if canon != canonicalize(raw):
        return None
    return canon, starts, ends


@dataclass(frozen=True)
class _Edit:
    start: int
    end: int
    new: str
    diagnosis: SpanDiagnosis


def _units_by_index(answer: str, mode: str) -> list[tuple[int, str]] | None:
    """``(line_no, text)`` per unit index, as the verifier numbers them; None for JSON claims."""
    if mode == MODE_QUOTE:
        return [(u.line_no, u.text) for u in segment_prose(answer)]
    claims = parse_claims(answer)
    by_line = [
        (line_no, c.claim_text)
        for line_no, line in enumerate(answer.splitlines(), start=1)
        for c in parse_claims(line)
    ]
    if [(c.line_no, c.claim_text) for c in claims] != by_line:
        return None  # a JSON claim list: claim numbers are not text lines
    return by_line


def _quote_edits(
    line: str,
    mapped: tuple[str, list[int], list[int]],
    d: SpanDiagnosis,
    evidence: Sequence[EvidenceObject],
) -> list[_Edit] | str:
    canon, starts, ends = mapped
    if d.kind == "synthetic_elision_inside_quote":
        pieces = [str(p) for p in d.details.get("pieces", [])]
    else:
        pieces = [str(d.details.get("keep", ""))]
    if len(pieces) < (2 if d.kind == "synthetic_elision_inside_quote" else 1):
        return "details_incomplete"
    if not all(verbatim_in(p, evidence) for p in pieces):
        return "replacement_not_verbatim"
    edits: list[_Edit] = []
    for m in _QUOTE.finditer(canon):
        if m.group(1).strip() != d.span:
            continue
        rs, re_ = starts[m.start()], ends[m.end() - 1]
        opener, closer = line[rs], line[re_ - 1]
        new = " ... ".join(f"{opener}{p}{closer}" for p in pieces)
        edits.append(_Edit(rs, re_, new, d))
    return edits or "span_not_located"


def _tail_edit(
    mapped: tuple[str, list[int], list[int]], span: str, cut_from: int, d: SpanDiagnosis
) -> _Edit | str:
    """Remove ``span[cut_from:]`` where ``span`` occurs in the canonical line."""
    canon, starts, ends = mapped
    pos = canon.find(span)
    if pos < 0 or cut_from >= len(span):
        return "span_not_located"
    a, b = pos + cut_from, pos + len(span)
    if a == 0 and b < len(canon) and canon[b] == " ":
        b += 1  # the whole line start goes: take the following space with it
    elif a > 0 and canon[a - 1] == " " and cut_from == 0:
        a -= 1  # a sentence mid-line: take the space before it
    # a cut tail that ended its sentence hands the full stop on, so the sentence does not
    # run into the next one (which would merge two units into one unverifiable unit)
    dropped = span[cut_from:].rstrip()
    stop = dropped[-1] if cut_from and dropped[-1:] in (".", "!", "?") else ""
    kept = span[:cut_from].rstrip()
    if kept.endswith((".", "!", "?")):
        stop = ""
    elif stop and kept.endswith((",", ";", ":")):
        a = pos + len(kept) - 1  # the full stop replaces the clause mark: never ",."
    return _Edit(starts[a], ends[b - 1], stop, d)


def _changes(
    lines: list[str],
    drops: dict[int, SpanDiagnosis],
    edits: dict[int, list[_Edit]],
    skip: Callable[[SpanDiagnosis, str], None],
) -> list[RepairChange]:
    """The change log of the planned line drops and edits, in line and column order; an
    edit that overlaps one to its right on the same line is skipped (``overlapping_edit``)."""
    changes: list[RepairChange] = []
    for line_no, full in enumerate(lines, start=1):
        body = full.rstrip(_ENDINGS)
        if line_no in drops:
            d = drops[line_no]
            changes.append(RepairChange(d.kind, d.repair, line_no, d.span, body, "", 0, "line"))
            continue
        last_start = len(body) + 1
        for e in sorted(edits.get(line_no, []), key=lambda e: (-e.start, -e.end)):
            if e.end > last_start:
                skip(e.diagnosis, "overlapping_edit")
                continue
            last_start = e.start
            d = e.diagnosis
            before = body[e.start : e.end]
            changes.append(RepairChange(d.kind, d.repair, line_no, d.span, before, e.new, e.start))
    changes.sort(key=lambda c: (c.line_no, c.column))
    return changes


# long: one pass over the diagnoses in which every branch ends in a skip with its reason
# or a planned edit, checked in the order docs/repair.md gives the skip reasons; split,
# that order would be spread over several functions.
def mechanical_repair(
    answer: str,
    unverified_quotes: Sequence[SpanDiagnosis],
    context: Sequence[EvidenceObject],
    *,
    mode: str = MODE_QUOTE,
    policy: VerifierPolicy | None = None,
) -> RepairResult:
    """Apply the mechanical repair actions of ``unverified_quotes`` to ``answer`` (pure).

    ``unverified_quotes`` is the *full* ``InspectReport.diagnoses`` of this answer (the
    sidecar's diagnosis of every unit that kept it from STRICT); ``context`` is the evidence
    objects the answer was verified against (replacements are re-checked to be verbatim in
    them). A diagnosis that does not match ``answer`` — its unit, line and span are checked
    against a fresh segmentation — is skipped as stale, so applying old diagnoses to an
    already repaired text changes nothing.
    """
    pol = policy if policy is not None else DEFAULT_POLICY
    evidence = [ev for ev in context if pol.role_allowed(ev.source_role)]
    skipped: list[RepairSkip] = []

    def skip(d: SpanDiagnosis, reason: str) -> None:
        skipped.append(RepairSkip(d.kind, d.repair, d.line_no, d.span, reason))

    units = _units_by_index(answer, mode)
    lines = answer.splitlines(keepends=True)
    unverified = {d.unit for d in unverified_quotes if d.unit_status == "unverified"}
    # A unit that contradicts its evidence goes even when the verifier let it through at
    # partial grade: it is a claim to drop, not a quotation to trim.
    contradicted = {d.unit for d in unverified_quotes if d.kind in CONTRADICTION_KINDS}
    droppable = unverified | contradicted
    edits: dict[int, list[_Edit]] = {}
    drops: dict[int, SpanDiagnosis] = {}
    seen: set[tuple[int, int, str, str, bool]] = set()
    for d in unverified_quotes:
        key = (d.unit, d.line_no, d.span, d.kind, d.is_quote)
        if key in seen:
            continue
        seen.add(key)
        if d.kind not in MECHANICAL_KINDS:
            skip(d, "not_mechanical")
            continue
        if units is None:
            skip(d, "json_claim_list")
            continue
        if d.unit >= len(units) or units[d.unit][0] != d.line_no:
            skip(d, "stale_diagnosis")
            continue
        unit_text = units[d.unit][1]
        if d.is_quote and d.span not in extract_quotes(unit_text):
            skip(d, "stale_diagnosis")
            continue
        if not d.is_quote and canonicalize(unit_text) != canonicalize(d.span):
            skip(d, "stale_diagnosis")
            continue
        line = lines[d.line_no - 1].rstrip(_ENDINGS)
        mapped = _canon_map(line)
        if mapped is None:
            skip(d, "span_not_located")
            continue
        if d.kind in DROP_KINDS:
            if d.unit not in droppable:
                skip(d, "unit_is_verified")
                continue
            on_line = [i for i, (ln, _t) in enumerate(units) if ln == d.line_no]
            if all(i in droppable for i in on_line):
                drops[d.line_no] = d
                continue
            sentence = _tail_edit(mapped, canonicalize(unit_text), 0, d)
            if isinstance(sentence, str):
                skip(d, "line_holds_verified_units")
            else:
                edits.setdefault(d.line_no, []).append(sentence)
            continue
        if d.unit in contradicted:
            skip(d, "unit_is_dropped")  # a quotation of a unit that goes whole
            continue
        if d.is_quote:
            found = _quote_edits(line, mapped, d, evidence)
            if isinstance(found, str):
                skip(d, found)
            else:
                edits.setdefault(d.line_no, []).extend(found)
            continue
        # a trailing artifact on a whole unit
        if extract_quotes(unit_text):
            skip(d, "unit_has_quotations")
            continue
        keep = str(d.details.get("keep", ""))
        if not keep or not verbatim_in(keep, evidence):
            skip(d, "replacement_not_verbatim")
            continue
        span = canonicalize(d.span)
        tail = _tail_edit(mapped, span, len(canonicalize(keep)), d)
        if isinstance(tail, str):
            skip(d, tail)
        else:
            edits.setdefault(d.line_no, []).append(tail)

    remaining = [ln for ln, _t in units or [] if ln not in drops]
    if drops and not remaining:
        for d in drops.values():
            skip(d, "would_empty_answer")
        drops = {}

    changes = _changes(lines, drops, edits, skip)
    skipped.sort(key=lambda s: (s.line_no, s.span, s.kind, s.reason))
    return RepairResult(apply_changes(answer, changes), tuple(changes), tuple(skipped))


def apply_changes(original: str, changes: Sequence[RepairChange | Mapping[str, Any]]) -> str:
    """Replay a change log on the original text (pure; the inverse view of the event).

    :func:`mechanical_repair` builds its own result with this function, so the recorded
    ``changes`` of a ``qa.answer_repaired`` event reproduce ``repaired_text`` from
    ``original_text`` exactly. Raises :class:`InputError` when a change does not match the
    text (``before`` is not at ``line_no``/``column``).
    """
    log = [c if isinstance(c, RepairChange) else RepairChange.from_dict(c) for c in changes]
    lines = original.splitlines(keepends=True)
    out: list[str] = []
    dropped_last = False
    for line_no, full in enumerate(lines, start=1):
        body = full.rstrip(_ENDINGS)
        ending = full[len(body) :]
        here = [c for c in log if c.line_no == line_no]
        if any(c.scope == "line" for c in here):
            if len(here) != 1 or here[0].before != body:
                raise InputError(f"change log does not match line {line_no} of the text")
            dropped_last = line_no == len(lines)
            continue
        for c in sorted(here, key=lambda c: -c.column):
            if body[c.column : c.column + len(c.before)] != c.before:
                raise InputError(f"change log does not match line {line_no} of the text")
            body = body[: c.column] + c.after + body[c.column + len(c.before) :]
        out.append(body + ending)
    if any(c.line_no > len(lines) or c.line_no < 1 for c in log):
        raise InputError("change log names a line the text does not have")
    if dropped_last and out and not lines[-1].endswith(tuple(_ENDINGS)):
        out[-1] = out[-1].rstrip(_ENDINGS)  # the original did not end with a line break
    return "".join(out)

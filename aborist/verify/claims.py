"""The pointer-line parser (docs/verifier.md, §9).

A claim-lattice answer is either

* **pointer lines**: each line is one claim followed (or interrupted) by bracket tags
  ``[E1]``, ``[E1, E2]``, ``[E1][E3]``; or
* a **JSON claim list**: ``[{"claim": "...", "evidence": ["E1", "E2"]}, ...]`` or
  ``{"claims": [...]}`` (``text`` may stand for ``claim``; ``pointers``, ``pointer_ids`` or
  ``citations`` for ``evidence``), optionally inside a ```` ``` ```` code fence.

Every line that has any letter or digit is a claim. A line without a tag gets
``parse_status = "NO_EVIDENCE_POINTER"`` and still counts in the verifier's denominator, so
unsourced prose cannot slip through. A bracket that looks like a pointer list but holds
something else (``[E1, see above]``) gets ``MALFORMED_POINTER``: the parser did not
succeed for that line, which fails hard check 1.

A tag item is a pointer id (``E`` + decimal digits) or an evidence id (``E`` + 8 lower-case
hex digits); both are resolved later by the verifier.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from aborist.verify.text.textcanon import canonical_lines, canonicalize

__all__ = [
    "PARSE_MALFORMED_POINTER",
    "PARSE_NO_EVIDENCE_POINTER",
    "PARSE_OK",
    "ParsedClaim",
    "parse_claims",
    "strip_pointer_tags",
]

PARSE_OK = "OK"
PARSE_NO_EVIDENCE_POINTER = "NO_EVIDENCE_POINTER"
PARSE_MALFORMED_POINTER = "MALFORMED_POINTER"

_ITEM = r"E(?:[0-9a-f]{8}|\d+)"
_TAG = re.compile(r"\[\s*(" + _ITEM + r"(?:\s*[,;]\s*" + _ITEM + r")*)\s*\]")
# Brackets that start like a pointer list but are not one.
_SUSPECT = re.compile(r"\[\s*E\d[^\]]*\]")
_ITEM_RE = re.compile(_ITEM)
_BULLET = re.compile(r"^\s*(?:[-*•+]|\d{1,3}[.)])\s+")
_FENCE = re.compile(r"^```[a-zA-Z]*\s*\n(.*)\n```\s*$", re.DOTALL)
_HAS_ALNUM = re.compile(r"[^\W_]")

_CLAIM_KEYS = ("claim", "text", "claim_text")
_POINTER_KEYS = ("evidence", "pointers", "pointer_ids", "citations", "evidence_ids")


@dataclass(frozen=True)
class ParsedClaim:
    """One claim line: its text without tags, its pointers in order, and its status."""

    claim_text: str
    pointer_ids: tuple[str, ...]
    parse_status: str
    line_no: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "claim_text": self.claim_text,
            "pointer_ids": list(self.pointer_ids),
            "parse_status": self.parse_status,
            "line_no": self.line_no,
        }


def strip_pointer_tags(line: str) -> str:
    """The line with every well-formed ``[E…]`` tag removed and whitespace collapsed (the
    tags are read on the canonical line: ``[E\u200b1]`` is ``[E1]``)."""
    return canonicalize(_TAG.sub(" ", canonicalize(line)))


def _unique(items: list[str]) -> tuple[str, ...]:
    seen: dict[str, None] = {}
    for item in items:
        seen.setdefault(item, None)
    return tuple(seen)


def _parse_line(line: str, line_no: int) -> ParsedClaim | None:
    if not _HAS_ALNUM.search(line):
        return None
    pointers: list[str] = []
    for m in _TAG.finditer(line):
        pointers.extend(_ITEM_RE.findall(m.group(1)))
    rest = _TAG.sub(" ", line)
    malformed = _SUSPECT.search(rest) is not None
    text = canonicalize(_BULLET.sub("", rest))
    if text.endswith((" .", " ,", " ;")):
        text = text[:-2] + text[-1]
    if malformed:
        status = PARSE_MALFORMED_POINTER
    elif pointers:
        status = PARSE_OK
    else:
        status = PARSE_NO_EVIDENCE_POINTER
    return ParsedClaim(text, _unique(pointers), status, line_no)


def _json_claims(text: str) -> list[ParsedClaim] | None:
    body = text.strip()
    fenced = _FENCE.match(body)
    if fenced:
        body = fenced.group(1).strip()
    if not body.startswith(("[", "{")):
        return None
    try:
        data = json.loads(body)
    except ValueError:
        return None
    if isinstance(data, dict) and isinstance(data.get("claims"), list):
        data = data["claims"]
    if not isinstance(data, list) or not all(isinstance(x, dict) for x in data):
        return None
    claims: list[ParsedClaim] = []
    for n, entry in enumerate(data, start=1):
        claim = next((entry[k] for k in _CLAIM_KEYS if k in entry), None)
        raw_ptrs = next((entry[k] for k in _POINTER_KEYS if k in entry), None)
        if isinstance(raw_ptrs, str):
            raw_ptrs = [raw_ptrs]
        ok_ptrs = isinstance(raw_ptrs, list) and all(
            isinstance(p, str) and _ITEM_RE.fullmatch(canonicalize(p)) for p in raw_ptrs
        )
        claim_text = canonicalize(claim) if isinstance(claim, str) else ""
        if not isinstance(claim, str) or (raw_ptrs is not None and not ok_ptrs):
            status = PARSE_MALFORMED_POINTER
            pointers: tuple[str, ...] = ()
        elif not raw_ptrs:
            status, pointers = PARSE_NO_EVIDENCE_POINTER, ()
        else:
            assert isinstance(raw_ptrs, list)
            status, pointers = PARSE_OK, _unique([canonicalize(p) for p in raw_ptrs])
        claims.append(ParsedClaim(claim_text, pointers, status, n))
    return claims


def parse_claims(text: str) -> list[ParsedClaim]:
    """Parse a claim-lattice answer into claims (pure; never raises on model output)."""
    as_json = _json_claims(text)
    if as_json is not None:
        return as_json
    claims: list[ParsedClaim] = []
    # every line in canonical form before a tag, a bullet or a fence is looked for (§1)
    for line_no, line in enumerate(canonical_lines(text).split("\n"), start=1):
        if line.startswith("```"):
            continue
        parsed = _parse_line(line, line_no)
        if parsed is not None:
            claims.append(parsed)
    return claims

"""The four-rung display ladder: ``(audit_mode, violations)`` → rung 1–4.

A pure function, so the CLI, the report renderer and ``replay --deep`` agree on the label:

====  =============  ===========================================================
rung  name           when
====  =============  ===========================================================
1     VERIFIED       audit_mode STRICT and no blocking violation
2     SUPPORTED      audit_mode HYBRID and no blocking violation: every unit's
                     words, polarity and numbers were found together in one passage
                     (or clause by clause), some of it not word for word
3     PARTIAL        audit_mode HYBRID (or STRICT) with a blocking violation:
                     some unit has no such passage (only names occur, its words
                     are scattered or contradicted, or a bare answer's sentence
                     does not share the question's terms)
4     UNSUPPORTED    audit_mode UNGROUNDED
====  =============  ===========================================================

Advisory violations (``PARTIAL_SUPPORT``, ``POINTER_TRIMMED``, ``WARRANT_DEMOTED``) never
move the rung by themselves; the roll-up already turned them into HYBRID where they matter.
A STRICT verdict with a blocking violation cannot come out of :mod:`aborist.verify.verify`; the
mapping still places it on rung 3, so a display never claims more than the violations allow.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from aborist.errors import InputError

__all__ = ["AUDIT_MODES", "LADDER", "ladder_label", "ladder_rung"]

AUDIT_MODES = ("STRICT", "HYBRID", "UNGROUNDED")

#: ``(rung, label, what was checked)``: the words say what the rung means lexically.
LADDER: tuple[tuple[int, str, str], ...] = (
    (
        1,
        "VERIFIED",
        "every claim occurs word for word inside one sentence of the evidence, with its "
        "polarity; a short answer's sentence also shares a term with the question",
    ),
    (
        2,
        "SUPPORTED",
        "every claim's words, polarity and numbers were found together in one sentence "
        "of the evidence (or each clause in one sentence, adjacent ones within one "
        "evidence object), no two of its numbers, names or code tokens in each other's "
        "places, not all word for word",
    ),
    (
        3,
        "PARTIAL",
        "some claim's words, polarity and numbers were not found together, in order, in "
        "one sentence of the evidence",
    ),
    (
        4,
        "UNSUPPORTED",
        "no claim's words, polarity and numbers were found together, in order, in one "
        "sentence of the evidence",
    ),
)


def _severity(v: Any) -> str:
    if isinstance(v, Mapping):
        return str(v.get("severity", "blocking"))
    return str(getattr(v, "severity", "blocking"))


def ladder_rung(audit_mode: str, violations: Iterable[Any]) -> int:
    """Rung 1–4 for ``(audit_mode, violations)``; violations are objects or dicts with a
    ``severity`` (missing severity counts as blocking)."""
    if audit_mode not in AUDIT_MODES:
        raise InputError(f"audit_mode must be one of {AUDIT_MODES}, found {audit_mode!r}")
    if audit_mode == "UNGROUNDED":
        return 4
    blocking = any(_severity(v) == "blocking" for v in violations)
    if blocking:
        return 3
    return 1 if audit_mode == "STRICT" else 2


def ladder_label(audit_mode: str, violations: Iterable[Any]) -> str:
    """The rung's name (``VERIFIED``, ``SUPPORTED``, ``PARTIAL``, ``UNSUPPORTED``)."""
    return LADDER[ladder_rung(audit_mode, violations) - 1][1]

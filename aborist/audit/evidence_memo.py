"""The evidence objects ``replay --deep`` builds from recorded evidence records, shared
between the runs of one replay (:class:`EvidenceMemo`)."""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from aborist.verify.evidence import EvidenceObject

__all__ = ["MEMO_BUDGET", "EvidenceMemo", "construct"]

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
            return construct(r, blobs)
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
            obj = construct(r, blobs)
            if type(blob) is str and blob not in self.by_text:
                self.by_text[blob] = obj
                self.size += len(obj.text)
        self.by_record[key] = obj
        return obj


def construct(r: Any, blobs: Mapping[str, bytes]) -> EvidenceObject:
    """One evidence object from its record, by the constructor (which checks the recorded
    hash against the text)."""
    return EvidenceObject(
        pointer_id=r["pointer_id"], text=blobs[r["text_blob"]].decode("utf-8"),
        source_uri=r["source_uri"], title=r["title"], source_role=r["source_role"],
        evidence_hash=r["evidence_hash"],
    )  # fmt: skip

"""What ``replay --deep`` remembers within one replay gives what rebuilding would:
evidence objects from :class:`~aborist.audit.deep.EvidenceMemo` are the constructor's,
field for field, and the constructor still decides what it refuses; a blob
:class:`~aborist.audit.checks.blobs.BlobCache` found to hash to its address is not hashed again,
while bytes that hash elsewhere are reported at every reference."""

from __future__ import annotations

import dataclasses
import sys
from typing import Any

import pytest

from aborist.audit.checks.blobs import BlobCache, BlobRef, check_blob
from aborist.audit.deep import EvidenceMemo
from aborist.errors import InputError
from aborist.verify.evidence import EvidenceObject
from ledger.canonical import sha256_hex

BLOBS = sys.modules["aborist.audit.checks.blobs"]
TEXTS = [
    "The Silverrun River is 412 kilometres long.",
    "Ownership is a set of rules that govern how a Rust program manages memory.",
]
DATA = {sha256_hex(t.encode("utf-8")): t.encode("utf-8") for t in TEXTS}
ADDRESSES = list(DATA)


def record(n: int, text: int, **over: Any) -> dict[str, Any]:
    r = {
        "pointer_id": f"E{n}",
        "text_blob": ADDRESSES[text],
        "source_uri": f"file:///doc{n}.md",
        "title": f"Doc {n}",
        "source_role": "primary" if n % 2 else "secondary",
        "evidence_hash": ADDRESSES[text] if n % 3 else "",
    }
    r.update(over)
    return r


def constructed(r: dict[str, Any]) -> EvidenceObject:
    return EvidenceObject(
        pointer_id=r["pointer_id"], text=DATA[r["text_blob"]].decode("utf-8"),
        source_uri=r["source_uri"], title=r["title"], source_role=r["source_role"],
        evidence_hash=r["evidence_hash"],
    )  # fmt: skip


def same_fields(a: EvidenceObject, b: EvidenceObject) -> bool:
    return all(getattr(a, f.name) == getattr(b, f.name) for f in dataclasses.fields(a))


def test_memo_objects_are_the_constructors() -> None:
    memo = EvidenceMemo()
    runs = [
        [record(1, 0), record(2, 1)],
        [record(1, 1), record(2, 0), record(3, 0)],  # known texts under other records
        [record(1, 0), record(2, 1)],  # a list seen before
        [record(4, 0, title="Other", source_uri="file:///x.md")],
    ]
    for records in runs:
        built = memo.evidence(records, DATA)
        assert len(built) == len(records)
        for r, ev in zip(records, built, strict=True):
            assert same_fields(ev, constructed(r)), r
    assert len(memo.by_text) == 2  # each text derived once


def test_memo_refuses_what_the_constructor_refuses() -> None:
    memo = EvidenceMemo()
    memo.evidence([record(1, 0)], DATA)  # the text is known now
    wrong = record(2, 0, evidence_hash=ADDRESSES[1])
    with pytest.raises(InputError, match="does not match the text"):
        constructed(wrong)
    with pytest.raises(InputError, match="does not match the text"):
        memo.evidence([wrong], DATA)
    with pytest.raises(KeyError):
        memo.evidence([{"pointer_id": "E1"}], DATA)
    odd = record(3, 0, title=["not", "a", "string"])  # unhashable: built, not remembered
    (ev,) = memo.evidence([odd], DATA)
    assert same_fields(ev, constructed(odd))


def test_memo_starts_afresh_past_its_budget() -> None:
    memo = EvidenceMemo(budget=10)
    memo.evidence([record(1, 0)], DATA)
    memo.evidence([record(1, 1)], DATA)  # over budget before this call: cleared first
    assert list(memo.by_text) == [ADDRESSES[1]]


def test_blob_cache_hashes_a_good_blob_once_and_a_bad_one_every_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    hashed: list[bytes] = []

    def counting(data: bytes) -> str:
        hashed.append(data)
        return sha256_hex(data)

    monkeypatch.setattr(BLOBS, "sha256_hex", counting)
    good, bad = ADDRESSES
    cache = BlobCache(ledger=None)  # type: ignore[arg-type]  # never reads: all in memory
    cache.blobs = {good: DATA[good], bad: b"forged"}
    failures = []
    for run in range(3):
        for blob in (good, bad):
            data, failure = check_blob(cache, BlobRef(blob, run, f"run{run}", "evidence_map"))
            if blob == good:
                assert data == DATA[good] and failure is None
            else:
                assert data is None and failure is not None
                failures.append(failure)
    assert [f.run for f in failures] == ["run0", "run1", "run2"]
    assert {f.detail for f in failures} == {f"blob {bad} bytes hash elsewhere"}
    assert hashed.count(DATA[good]) == 1 and hashed.count(b"forged") == 3

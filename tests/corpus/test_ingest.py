"""ingest(): shard contents, Merkle source roots, idempotence, bad input, swap safety."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from aborist.corpus.canonicalize import CANONICALIZATION_VERSION
from aborist.corpus.chunking import CHUNKING_VERSION
from aborist.corpus.ingest import ingest, shard_ingested_payload
from aborist.corpus.shard import list_shards, shard_path
from aborist.errors import CorpusError, InputError


def rfc6962_root(leaves: list[bytes]) -> bytes:
    """MTH of RFC 6962 §2.1, written out recursively and independently of ledger.merkle."""
    if not leaves:
        return hashlib.sha256(b"").digest()
    if len(leaves) == 1:
        return hashlib.sha256(b"\x00" + leaves[0]).digest()
    k = 1
    while k * 2 < len(leaves):
        k *= 2
    return hashlib.sha256(b"\x01" + rfc6962_root(leaves[:k]) + rfc6962_root(leaves[k:])).digest()


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    (root / "sub").mkdir(parents=True)
    (root / "a.md").write_text("# Alpha\n\nThe alpha document.\n\n## Part\n\nMore alpha.\n")
    (root / "b.txt").write_text("Plain bravo text.\n\nSecond bravo paragraph.\n")
    (root / "sub" / "c.html").write_text("<h1>Charlie</h1><p>Charlie page.</p>")
    (root / "sub" / "d.rst").write_text("Delta\n=====\n\nDelta body.\n")
    return root


def _chunk_hashes(path: Path) -> list[str]:
    conn = sqlite3.connect(path)
    try:
        return [r[0] for r in conn.execute("SELECT chunk_hash FROM chunks ORDER BY rowid")]
    finally:
        conn.close()


def test_ingest_writes_documents_chunks_and_a_merkle_root(docs: Path, tmp_path: Path) -> None:
    shards = tmp_path / "shards"
    report = ingest([docs], "handbook", "secondary", shards_dir=shards)
    assert [d.title for d in report.documents] == ["Alpha", "b", "Charlie", "Delta"]
    assert [d.source_uri for d in report.documents] == sorted(
        d.source_uri for d in report.documents
    )
    hashes = _chunk_hashes(report.path)
    assert len(hashes) == report.n_chunks == sum(d.n_chunks for d in report.documents)
    assert report.source_root == rfc6962_root([bytes.fromhex(h) for h in hashes]).hex()
    offset = 0
    for doc in report.documents:
        mine = hashes[offset : offset + doc.n_chunks]
        assert doc.doc_root == rfc6962_root([bytes.fromhex(h) for h in mine]).hex()
        offset += doc.n_chunks
    conn = sqlite3.connect(report.path)
    try:
        roles = {r[0] for r in conn.execute("SELECT source_role FROM documents")}
        raw, canon = conn.execute(
            "SELECT raw_text, canonical_text FROM documents WHERE file_name = 'a.md'"
        ).fetchone()
        text, stored_hash = conn.execute("SELECT text, chunk_hash FROM chunks LIMIT 1").fetchone()
        fts = conn.execute(
            "SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH 'title:charlie'"
        ).fetchone()[0]
    finally:
        conn.close()
    assert roles == {"secondary"}
    assert raw.startswith("# Alpha") and canon.startswith("Alpha\n\nThe alpha document.")
    assert stored_hash == hashlib.sha256(text.encode()).hexdigest()
    assert fts == 1
    assert report.canonicalization_version == CANONICALIZATION_VERSION
    assert report.chunking_version == CHUNKING_VERSION


def test_reingest_is_idempotent_and_one_byte_changes_the_root(docs: Path, tmp_path: Path) -> None:
    shards = tmp_path / "shards"
    first = ingest([docs], "h", shards_dir=shards)
    again = ingest([docs, docs / "a.md"], "h", shards_dir=shards)
    assert again.source_root == first.source_root and not again.changed
    assert again.n_chunks == first.n_chunks and len(again.documents) == len(first.documents)
    (docs / "b.txt").write_text("Plain bravo text.\n\nSecond bravo paragraph!\n")
    changed = ingest([docs / "b.txt"], "h", shards_dir=shards)
    assert changed.changed and changed.source_root != first.source_root
    assert len(changed.documents) == len(first.documents)  # upsert, others kept
    (docs / "b.txt").write_text("Plain bravo text.\n\nSecond bravo paragraph.\n")
    back = ingest([docs / "b.txt"], "h", shards_dir=shards)
    assert back.source_root == first.source_root


def test_replace_drops_documents_not_named(docs: Path, tmp_path: Path) -> None:
    shards = tmp_path / "shards"
    ingest([docs], "h", shards_dir=shards)
    only = ingest([docs / "a.md"], "h", shards_dir=shards, replace=True)
    assert [d.title for d in only.documents] == ["Alpha"]
    assert [(i.name, i.documents) for i in list_shards(shards)] == [("h", 1)]


def test_bad_files_are_skipped_and_listed(docs: Path, tmp_path: Path) -> None:
    (docs / "image.txt").write_bytes(b"\x89PNG\x00\x00\x01")
    (docs / "old.md").write_bytes("caf\u00e9".encode("latin-1"))
    (docs / "data.pdf").write_bytes(b"%PDF-1.4")
    (docs / "empty.md").write_text("   \n\n")
    (docs / ".hidden.md").write_text("# hidden")
    report = ingest([docs], "h", shards_dir=tmp_path / "shards")
    reasons = {Path(s.path).name: s.reason for s in report.skipped}
    assert reasons["image.txt"].startswith("binary file")
    assert reasons["old.md"].startswith("not UTF-8 (byte 0xe9 at offset 3)")
    assert reasons["data.pdf"].startswith("unsupported file type .pdf")
    assert reasons["empty.md"] == "no text after canonicalization"
    assert ".hidden.md" not in reasons
    assert len(report.documents) == 4
    assert shard_ingested_payload(report)["skipped"] == [s.to_dict() for s in report.skipped]


def test_missing_path_is_an_input_error_and_writes_nothing(docs: Path, tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"no such file or directory: .*nope"):
        ingest([docs, tmp_path / "nope"], "h", shards_dir=tmp_path / "shards")
    assert not (tmp_path / "shards").exists()


def test_empty_directory_and_all_skipped_are_corpus_errors(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(CorpusError, match=r"directory holds no \.txt, \.md, \.rst or \.html files"):
        ingest([empty], "h", shards_dir=tmp_path / "shards")
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"\x00\x01binary")
    with pytest.raises(CorpusError, match=r"every file was skipped: .*binary file"):
        ingest([bad], "h", shards_dir=tmp_path / "shards")


@pytest.mark.parametrize("name", ["", "../x", "a/b", "-lead", "x" * 65, "sp ace"])
def test_bad_shard_names(name: str, docs: Path, tmp_path: Path) -> None:
    with pytest.raises(InputError, match="shard name"):
        ingest([docs], name, shards_dir=tmp_path / "shards")


def test_bad_role(docs: Path, tmp_path: Path) -> None:
    with pytest.raises(InputError, match="role"):
        ingest([docs], "h", "Primary!", shards_dir=tmp_path / "shards")


class _FailingLedger:
    def append(self, stream: str, events: Any) -> Any:
        raise RuntimeError("ledger down")


def test_failure_before_swap_leaves_previous_shard_intact(docs: Path, tmp_path: Path) -> None:
    shards = tmp_path / "shards"
    first = ingest([docs], "h", shards_dir=shards)
    before = shard_path(shards, "h").read_bytes()
    (docs / "a.md").write_text("# Alpha\n\nchanged\n")
    with pytest.raises(RuntimeError, match="ledger down"):
        ingest([docs], "h", shards_dir=shards, ledger=_FailingLedger())
    assert shard_path(shards, "h").read_bytes() == before
    assert sorted(p.name for p in shards.iterdir()) == ["h.shard.sqlite"]
    assert list_shards(shards)[0].source_root == first.source_root


def test_failure_while_building_leaves_previous_shard_intact(
    docs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shards = tmp_path / "shards"
    first = ingest([docs], "h", shards_dir=shards)

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr("aborist.corpus.shard._insert_rows", broken)
    with pytest.raises(sqlite3.OperationalError):
        ingest([docs], "h", shards_dir=shards, replace=True)
    assert sorted(p.name for p in shards.iterdir()) == ["h.shard.sqlite"]
    assert list_shards(shards)[0].source_root == first.source_root


class _RecordingLedger:
    def __init__(self) -> None:
        self.calls: list[tuple[str, list[Any]]] = []

    def append(self, stream: str, events: Any) -> Any:
        self.calls.append((stream, list(events)))
        return []


def test_shard_ingested_event_payload(docs: Path, tmp_path: Path) -> None:
    ledger = _RecordingLedger()
    report = ingest([docs], "handbook", shards_dir=tmp_path / "shards", ledger=ledger)
    ((stream, events),) = ledger.calls
    assert stream == "shard:handbook"
    (event,) = events
    assert event.type == "corpus.shard_ingested"
    payload = event.payload
    assert payload == shard_ingested_payload(report)
    assert set(payload) == {
        "shard", "source_root", "canonicalization_version", "chunking_version", "role",
        "documents", "skipped",
    }  # fmt: skip
    assert payload["source_root"] == report.source_root
    assert payload["documents"][0] == {
        "source_uri": report.documents[0].source_uri,
        "title": report.documents[0].title,
        "doc_root": report.documents[0].doc_root,
        "n_chunks": report.documents[0].n_chunks,
    }
    from ledger.canonical import canonical_json

    assert canonical_json(payload)


def test_ingest_event_lands_in_a_real_ledger(docs: Path, tmp_path: Path, ledger: Any) -> None:
    report = ingest([docs], "handbook", shards_dir=tmp_path / "shards", ledger=ledger)
    (recorded,) = ledger.read_stream("shard:handbook")
    assert recorded.type == "corpus.shard_ingested"
    from ledger.canonical import canonical_text

    assert recorded.payload == canonical_text(shard_ingested_payload(report))

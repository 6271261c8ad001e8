"""ingest(): shard contents, Merkle source roots, idempotence, bad input, swap safety."""

from __future__ import annotations

import codecs
import fcntl
import hashlib
import json
import os
import resource
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from aborist.corpus.canonicalize import CANONICALIZATION_VERSION
from aborist.corpus.chunk_list import decode_chunk_hashes
from aborist.corpus.chunking import CHUNKING_VERSION
from aborist.corpus.ingest import ingest, shard_ingested_payload
from aborist.corpus.shard import list_shards, shard_lock_path, shard_path
from aborist.errors import CorpusError, InputError


def rfc6962_root(leaves: list[bytes]) -> bytes:
    """MTH of RFC 6962 §2.1, written out recursively and independently of ledger.tlog.merkle."""
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
    (docs / "sheet.xlsx").write_bytes(b"PK")
    (docs / "empty.md").write_text("   \n\n")
    (docs / ".hidden.md").write_text("# hidden")
    report = ingest([docs], "h", shards_dir=tmp_path / "shards")
    reasons = {Path(s.path).name: s.reason for s in report.skipped}
    assert reasons["image.txt"].startswith("binary file")
    assert reasons["old.md"].startswith("not UTF-8 (byte 0xe9 at offset 3)")
    assert reasons["data.pdf"].startswith("malformed PDF (")
    assert reasons["sheet.xlsx"].startswith("unsupported file type .xlsx")
    assert reasons["empty.md"] == "no text after canonicalization"
    assert all(s.path.startswith(f"{docs}/") for s in report.skipped)  # no file:// URIs
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
    with pytest.raises(
        CorpusError,
        match=r"directory holds no \.docx, \.htm, \.html, \.markdown, \.md, \.pdf, "
        r"\.rst, \.txt files",
    ):
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
    def append(self, stream: str, events: Any, *, blobs: Any = ()) -> Any:
        raise RuntimeError("ledger down")


def test_failure_before_swap_leaves_previous_shard_intact(docs: Path, tmp_path: Path) -> None:
    shards = tmp_path / "shards"
    first = ingest([docs], "h", shards_dir=shards)
    before = shard_path(shards, "h").read_bytes()
    (docs / "a.md").write_text("# Alpha\n\nchanged\n")
    with pytest.raises(RuntimeError, match="ledger down"):
        ingest([docs], "h", shards_dir=shards, ledger=_FailingLedger())
    assert shard_path(shards, "h").read_bytes() == before
    assert sorted(p.name for p in shards.iterdir()) == [".h.shard.sqlite.lock", "h.shard.sqlite"]
    assert list_shards(shards)[0].source_root == first.source_root


def test_failure_while_building_leaves_previous_shard_intact(
    docs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shards = tmp_path / "shards"
    first = ingest([docs], "h", shards_dir=shards)

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr("aborist.corpus.shard_build._insert_rows", broken)
    with pytest.raises(sqlite3.OperationalError):
        ingest([docs], "h", shards_dir=shards, replace=True)
    assert sorted(p.name for p in shards.iterdir()) == [".h.shard.sqlite.lock", "h.shard.sqlite"]
    assert list_shards(shards)[0].source_root == first.source_root


class _RecordingLedger:
    def __init__(self) -> None:
        self.calls: list[tuple[str, list[Any]]] = []
        self.blobs: list[bytes] = []

    def append(self, stream: str, events: Any, *, blobs: Any = ()) -> Any:
        self.calls.append((stream, list(events)))
        self.blobs.extend(blobs)
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
        "documents", "skipped", "chunk_hashes_blob",
    }  # fmt: skip
    assert payload["source_root"] == report.source_root
    # the chunk-hash list goes with the event: the leaves of source_root, in shard order
    (blob,) = ledger.blobs
    assert payload["chunk_hashes_blob"] == hashlib.sha256(blob).hexdigest()
    leaves = decode_chunk_hashes(blob)
    assert leaves is not None and len(leaves) == report.n_chunks > 1
    assert rfc6962_root(leaves).hex() == report.source_root
    with sqlite3.connect(report.path) as conn:
        stored = [r[0] for r in conn.execute("SELECT chunk_hash FROM chunks ORDER BY rowid")]
    assert [h.hex() for h in leaves] == stored
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
    blob = ledger.get_blob(recorded.data["chunk_hashes_blob"])
    assert blob == report.chunk_hashes_blob and len(blob) == 32 * report.n_chunks


# --- hostile inputs: special files, loops, odd names, unreadable directories -----------

_CHILD_INGEST = """
import json, sys
from pathlib import Path
from aborist.corpus.ingest import ingest
report = ingest([sys.argv[1]], "h", shards_dir=Path(sys.argv[2]))
print(json.dumps(report.to_dict()))
"""


def _limit_memory() -> None:
    limit = 1024 * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def test_fifo_and_dev_zero_in_a_directory_are_skipped_not_read(docs: Path, tmp_path: Path) -> None:
    os.mkfifo(docs / "pipe.txt")
    (docs / "z.txt").symlink_to("/dev/zero")
    # In a child with 1 GiB of address space and a deadline: reading the FIFO would hang
    # and reading /dev/zero would take all memory, and neither may take the test with it.
    done = subprocess.run(
        [sys.executable, "-c", _CHILD_INGEST, str(docs), str(tmp_path / "shards")],
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=_limit_memory,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["documents"] == 4
    assert {s["path"]: s["reason"] for s in report["skipped"]} == {
        str(docs / "pipe.txt"): "not a regular file (named pipe)",
        str(docs / "z.txt"): "not a regular file (character device)",
    }


def test_a_fifo_named_on_the_command_line_does_not_hang(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.txt"
    os.mkfifo(fifo)
    done = subprocess.run(
        [sys.executable, "-c", _CHILD_INGEST, str(fifo), str(tmp_path / "shards")],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode != 0
    assert "every file was skipped: " in done.stderr
    assert f"{fifo}: not a regular file (named pipe)" in done.stderr


def test_files_over_the_size_cap_are_skipped(docs: Path, tmp_path: Path) -> None:
    (docs / "huge.txt").write_text("word " * 100)
    report = ingest([docs], "h", shards_dir=tmp_path / "shards", max_file_bytes=200)
    assert [s.to_dict() for s in report.skipped] == [
        {
            "path": str(docs / "huge.txt"),
            "reason": "larger than the 200 bytes limit for one file (500 bytes)",
        }
    ]
    assert len(report.documents) == 4


def test_symlink_loops_are_skipped_in_a_directory_and_named_on_the_command_line(
    docs: Path, tmp_path: Path
) -> None:
    (docs / "loop_a.md").symlink_to("loop_b.md")
    (docs / "loop_b.md").symlink_to("loop_a.md")
    (docs / "LOOP").symlink_to("LOOP")  # no extension: still a loop, not a file type
    report = ingest([docs], "h", shards_dir=tmp_path / "shards")
    assert [(s.path, s.reason) for s in report.skipped] == [
        (str(docs / "LOOP"), "symlink loop"),
        (str(docs / "loop_a.md"), "symlink loop"),
        (str(docs / "loop_b.md"), "symlink loop"),
    ]
    assert len(report.documents) == 4
    with pytest.raises(InputError, match=r"^symlink loop: .*loop_a\.md; no such file or dir"):
        ingest([docs / "loop_a.md", tmp_path / "nope"], "h", shards_dir=tmp_path / "shards")


def test_a_file_name_that_is_not_utf8_is_ingested_losslessly(docs: Path, tmp_path: Path) -> None:
    try:
        (docs / os.fsdecode(b"caf\xe9.md")).write_text("# Menu\n\nCoffee.\n")
        (docs / os.fsdecode(b"na\xffme.md")).write_text("")
    except (OSError, UnicodeError) as e:  # a file system that insists on UTF-8 names
        pytest.skip(f"cannot create a non-UTF-8 file name here: {e}")
    ledger = _RecordingLedger()
    report = ingest([docs], "h", shards_dir=tmp_path / "shards", ledger=ledger)
    uri = f"{(docs / 'caf').resolve().as_uri()}%E9.md"
    assert uri in report.ingested
    assert [s.to_dict() for s in report.skipped] == [
        {"path": f"{docs}/na\\xffme.md", "reason": "no text after canonicalization"}
    ]
    conn = sqlite3.connect(report.path)
    try:
        row = conn.execute(
            "SELECT file_name, title FROM documents WHERE source_uri = ?", (uri,)
        ).fetchone()
    finally:
        conn.close()
    assert row == ("caf\\xe9.md", "Menu")
    from ledger.canonical import canonical_json

    ((_, (event,)),) = ledger.calls
    assert canonical_json(event.payload)  # every string in the event is valid UTF-8


def test_a_linked_subdirectory_is_listed_not_silently_ignored(docs: Path, tmp_path: Path) -> None:
    (docs / "linked").symlink_to(docs / "sub", target_is_directory=True)
    report = ingest([docs], "h", shards_dir=tmp_path / "shards")
    assert [(s.path, s.reason) for s in report.skipped] == [
        (
            str(docs / "linked"),
            "symlink to a directory (not followed inside a directory; name it directly)",
        )
    ]
    assert len(report.documents) == 4
    named = ingest([docs / "linked"], "h2", shards_dir=tmp_path / "shards")
    assert [d.title for d in named.documents] == ["Charlie", "Delta"]


def test_file_content_with_lone_surrogates_is_refused(docs: Path, tmp_path: Path) -> None:
    (docs / "u8.md").write_bytes(b"# A\n\nx \xed\xa0\x80 y\n")  # U+D800 encoded as UTF-8
    (docs / "u16.md").write_bytes(codecs.BOM_UTF16_LE + b"x\x00\x00\xd8y\x00")
    (docs / "u32.md").write_bytes(codecs.BOM_UTF32_LE + b"\x00\xd8\x00\x00")
    report = ingest([docs], "h", shards_dir=tmp_path / "shards")
    reasons = {Path(s.path).name: s.reason for s in report.skipped}
    assert reasons["u8.md"].startswith("not UTF-8 (byte 0xed at offset 7)")
    assert reasons["u16.md"].startswith("starts with a utf-16 byte-order mark but is not valid")
    assert reasons["u32.md"].startswith("starts with a utf-32 byte-order mark but is not valid")
    assert len(report.documents) == 4


def test_an_unreadable_subdirectory_is_listed(
    docs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Injected, so the test also means something when run as root (which reads anything).
    real_scandir = os.scandir

    def scandir(path: Any = ".") -> Any:
        # the walk lists a directory it holds open
        where = os.readlink(f"/proc/self/fd/{path}") if isinstance(path, int) else os.fspath(path)
        if where == os.path.realpath(docs / "sub"):
            raise PermissionError(13, "Permission denied", where)
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    report = ingest([docs], "h", shards_dir=tmp_path / "shards")
    assert [s.to_dict() for s in report.skipped] == [
        {"path": str(docs / "sub"), "reason": "unreadable directory: Permission denied"}
    ]
    assert [d.title for d in report.documents] == ["Alpha", "b"]


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a mode-000 directory anyway")
def test_an_unreadable_subdirectory_is_listed_for_real(docs: Path, tmp_path: Path) -> None:
    (docs / "sub").chmod(0)
    try:
        report = ingest([docs], "h", shards_dir=tmp_path / "shards")
    finally:
        (docs / "sub").chmod(0o755)
    assert (str(docs / "sub"), "unreadable directory: Permission denied") in [
        (s.path, s.reason) for s in report.skipped
    ]


# --- concurrent ingests into one shard -------------------------------------------------

_CHILD_RACE = """
import sys, time
from pathlib import Path
import importlib
ingest_module = importlib.import_module("aborist.corpus.ingest")  # the package re-exports ingest()

folder, shards, ready, go = sys.argv[1:5]
real_build = ingest_module.build_shard

def slow_build(*args, **kwargs):
    time.sleep(1.0)  # holds the read-build-swap window open: unlocked, both ingests
    return real_build(*args, **kwargs)  # would build on the same old shard

ingest_module.build_shard = slow_build
Path(ready).touch()
deadline = time.monotonic() + 30
while not Path(go).exists() and time.monotonic() < deadline:
    time.sleep(0.01)
ingest_module.ingest([folder], "r", shards_dir=Path(shards))
"""


def _set(root: Path, name: str) -> Path:
    folder = root / f"set{name}"
    folder.mkdir()
    for i in (1, 2):
        (folder / f"{name}{i}.md").write_text(f"# {name}{i}\n\nBody of {name}{i}.\n")
    return folder


def test_simultaneous_ingests_into_one_shard_keep_both(tmp_path: Path) -> None:
    shards = tmp_path / "shards"
    ingest([_set(tmp_path, "C")], "r", shards_dir=shards)
    go = tmp_path / "go"
    children = []
    for name in ("A", "B"):
        ready = tmp_path / f"ready{name}"
        argv = [sys.executable, "-c", _CHILD_RACE, str(_set(tmp_path, name)), str(shards)]
        children.append((ready, subprocess.Popen([*argv, str(ready), str(go)])))
    try:
        deadline = time.monotonic() + 30
        while not all(r.exists() for r, _ in children) and time.monotonic() < deadline:
            time.sleep(0.01)
        go.touch()  # both start their ingest at the same moment
        codes = [child.wait(timeout=60) for _, child in children]
    finally:
        for _, child in children:
            child.kill()
    assert codes == [0, 0]
    conn = sqlite3.connect(shard_path(shards, "r"))
    try:
        titles = [r[0] for r in conn.execute("SELECT title FROM documents ORDER BY title")]
    finally:
        conn.close()
    assert titles == ["A1", "A2", "B1", "B2", "C1", "C2"]


def test_a_held_shard_lock_times_out_with_a_clear_error(docs: Path, tmp_path: Path) -> None:
    shards = tmp_path / "shards"
    first = ingest([docs / "a.md"], "h", shards_dir=shards)
    before = shard_path(shards, "h").read_bytes()
    with open(shard_lock_path(shard_path(shards, "h")), "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # another open file description: conflicts
        with pytest.raises(CorpusError, match=r"shard 'h' is being written by another ingest"):
            ingest([docs], "h", shards_dir=shards, lock_timeout=0.2)
    assert shard_path(shards, "h").read_bytes() == before
    again = ingest([docs], "h", shards_dir=shards, lock_timeout=0.2)  # released: proceeds
    assert again.changed and again.previous_root == first.source_root


def test_pdf_and_docx_are_ingested_and_refused_ones_listed(tmp_path: Path) -> None:
    import io

    from pypdf import PdfReader, PdfWriter

    from tests.corpus.documents import make_docx, make_pdf

    src = tmp_path / "src"
    src.mkdir()
    (src / "book.pdf").write_bytes(make_pdf([["Page one text."], ["Page two text."]]))
    (src / "policy.docx").write_bytes(make_docx([("h1", "Policy"), ("p", "Rules.")]))
    (src / "broken.docx").write_bytes(b"PK\x03\x04 not really")
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(make_pdf([["x"]]))))
    writer.add_blank_page(612, 792)
    buffer = io.BytesIO()
    writer.write(buffer)
    (src / "half-scanned.pdf").write_bytes(buffer.getvalue())
    report = ingest([src], "mixed", shards_dir=tmp_path / "shards")
    assert sorted(d.title for d in report.documents) == ["Page one text.", "Policy", "x"]
    assert [(Path(s.path).name, s.reason.split(" (")[0]) for s in report.skipped] == [
        ("broken.docx", "malformed DOCX: not a ZIP package")
    ]
    assert [(Path(n.path).name, n.reason) for n in report.notes] == [
        ("half-scanned.pdf", "page(s) 2 have no text layer (OCR is not offered)")
    ]
    again = ingest([src / "policy.docx"], "mixed", shards_dir=tmp_path / "shards")
    assert again.source_root == report.source_root  # kept PDFs re-derived from their extraction


def test_chunk_locators_are_stored_per_format(tmp_path: Path) -> None:
    import json

    from aborist.corpus.shard import open_shard
    from aborist.corpus.shard_reader import ShardReader
    from tests.corpus.documents import make_docx, make_pdf

    src = tmp_path / "src"
    src.mkdir()
    (src / "book.pdf").write_bytes(
        make_pdf([["Roman one."], ["Arabic one."], ["Arabic two."]], roman_front_pages=1)
    )
    (src / "policy.docx").write_bytes(
        make_docx([("h1", "Policy"), ("p", "Intro."), ("h2", "Scope"), ("p", "Scope text.")],
                  footer="Footer text")
    )  # fmt: skip
    (src / "guide.md").write_text("# Guide\n\nFirst.\n\n## Part\n\n- item\n", encoding="utf-8")
    (src / "notes.txt").write_text("\n\nnote one\n", encoding="utf-8")
    report = ingest([src], "loc", shards_dir=tmp_path / "shards")
    conn = open_shard(report.path)
    rows = conn.execute(
        "SELECT d.file_name, c.text, c.locator FROM chunks c JOIN documents d USING (doc_pos)"
        " ORDER BY c.rowid"
    ).fetchall()
    conn.close()
    got = {(name, text.split("\n")[0]): json.loads(loc) for name, text, loc in rows}
    assert got == {
        ("book.pdf", "Roman one."): {"page": 1, "page_label": "i"},
        ("book.pdf", "Arabic one."): {"page": 2, "page_label": "1"},
        ("book.pdf", "Arabic two."): {"page": 3, "page_label": "2"},
        ("guide.md", "Guide"): {"heading": ["Guide"], "paragraph": 1},
        ("guide.md", "Part"): {"heading": ["Guide", "Part"], "paragraph": 2},
        ("notes.txt", "note one"): {"line": 3},
        ("policy.docx", "Policy"): {"heading": ["Policy"], "paragraph": 1},
        ("policy.docx", "Scope"): {"heading": ["Policy", "Scope"], "paragraph": 2},
        ("policy.docx", "Footer text"): {"heading": [], "paragraph": 3, "part": "footer"},
    }
    reader = ShardReader(report.path)
    try:
        assert reader.locators([1]) == {1: {"page": 1, "page_label": "i"}}
    finally:
        reader.close()

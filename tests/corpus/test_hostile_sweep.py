"""Hostile documents fed to `aborist ingest` together, as a stranger's tree would hold them
(docs/corpus.md, "What is read"): each is skipped with its named reason while the good
file ingests; with nothing good, one ``Error:`` line, exit 1 and no shard. No traceback,
no hang (a FIFO is never opened), no temporary file left."""

from __future__ import annotations

import json
import os
import shutil
import zlib
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from cli.main import cli
from tests.corpus.test_hostile_files import (
    _deflate_then_zeros,
    _docx_parts,
    _zip_by_hand,
    pages_pdf,
)

ENCRYPTED = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "pdf-samples"
ENCRYPTED = ENCRYPTED / "005-libreoffice-writer-password"

REASONS = {
    "broken-xref.pdf": "malformed PDF (PdfReadError: Cannot find Root object in pdf)",
    "encrypted.pdf": "encrypted PDF: it needs a password (aborist reads only PDFs that open "
    "without one)",
    "blank.pdf": "no text on any of its 2 page(s): its text layer holds only white space",
    "xml200mb.docx": "DOCX whose XML parts unpack to {xml} bytes, more than the 64 MiB limit",
    "deep.md": "Markdown nested deeper than 2048 elements (in the HTML it renders to)",
    "latin1.txt": "not UTF-8 (byte 0xe9 at offset 3); re-save the file as UTF-8",
    "empty.md": "no text after canonicalization",
    "empty.docx": "malformed DOCX: not a ZIP package (File is not a zip file)",
    "fifo.txt": "not a regular file (named pipe)",
}


def _docx_200mb_xml() -> tuple[bytes, int]:
    parts = _docx_parts()
    document = parts.pop("word/document.xml")
    members = [(n, b, 0, zlib.crc32(b), len(b)) for n, b in parts.items()]
    crc, mib = zlib.crc32(document), b"\0" * (1 << 20)
    for _ in range(200):
        crc = zlib.crc32(mib, crc)
    size = len(document) + 200 * (1 << 20)
    members.append(("word/document.xml", _deflate_then_zeros(document, 200), 8, crc, size))
    xml = size + sum(len(b) for n, b in parts.items() if n.endswith((".xml", ".rels")))
    return _zip_by_hand(members), xml


def _hostile_tree(tree: Path) -> dict[str, str]:
    """The files, and the reason each must be skipped with."""
    encrypted = next(ENCRYPTED.glob("*.pdf"), None) if ENCRYPTED.is_dir() else None
    if encrypted is None:
        pytest.skip(f"shared sample {ENCRYPTED} is absent")
    tree.mkdir()
    (tree / "broken-xref.pdf").write_bytes(
        b"%PDF-1.7\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\n"
        b"xref\nnonsense\nstartxref\n12\n%%EOF"
    )
    shutil.copy(encrypted, tree / "encrypted.pdf")
    (tree / "blank.pdf").write_bytes(
        pages_pdf([b"BT /F1 12 Tf 72 720 Td (   ) Tj ET", b"BT /F1 12 Tf 9 9 Td (\\t) Tj ET"])
    )
    docx, xml = _docx_200mb_xml()
    (tree / "xml200mb.docx").write_bytes(docx)
    (tree / "deep.md").write_text("> " * 5000 + "deep\n\n" + "*" * 100_000 + "x" + "*" * 100_000)
    (tree / "latin1.txt").write_bytes("café au lait\n".encode("latin-1"))
    (tree / "empty.md").write_bytes(b"")
    (tree / "empty.docx").write_bytes(b"")
    os.mkfifo(tree / "fifo.txt")
    return {k: v.format(xml=xml) for k, v in REASONS.items()}


def _run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    monkeypatch.setenv("ABORIST_HOME", str(home))
    monkeypatch.delenv("ABORIST_DB_URL", raising=False)
    monkeypatch.delenv("ABORIST_SHARD_DIR", raising=False)
    monkeypatch.chdir(tmp_path)
    return home


def test_each_hostile_file_is_skipped_by_name_and_the_good_one_ingests(
    home: Path, tmp_path: Path
) -> None:
    reasons = _hostile_tree(tmp_path / "tree")
    (tmp_path / "tree" / "good.txt").write_text("The pump runs hot.\n")
    result = _run("ingest", "tree", "--shard", "h", "--json")
    assert result.exit_code == 0, result.stderr
    assert "Traceback" not in result.stderr
    report = json.loads(result.stdout)
    assert report["ingested"] == [(tmp_path / "tree" / "good.txt").resolve().as_uri()]
    assert {Path(s["path"]).name: s["reason"] for s in report["skipped"]} == reasons
    shards = home / "shards"
    assert sorted(p.name for p in shards.iterdir() if p.name.startswith("h.")) == ["h.shard.sqlite"]
    assert not [p for p in shards.iterdir() if p.name.endswith(".tmp")]


@pytest.mark.parametrize("name", sorted(REASONS))
def test_a_hostile_file_alone_is_one_error_line_exit_1_and_no_shard(
    name: str, home: Path, tmp_path: Path
) -> None:
    reasons = _hostile_tree(tmp_path / "tree")
    result = _run("ingest", f"tree/{name}", "--shard", "h")
    assert result.exit_code == 1
    errors = [ln for ln in result.stderr.splitlines() if ln.startswith("Error: ")]
    assert errors == [
        f"Error: nothing ingested into shard 'h': every file was skipped: tree/{name}: "
        f"{reasons[name]}"
    ], result.stderr
    assert "Traceback" not in result.stderr
    shards = home / "shards"
    assert not shards.exists() or not [p for p in shards.iterdir() if "shard.sqlite" in p.name]

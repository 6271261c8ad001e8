"""Hostile files a review found after the first round (tests/corpus/test_hostile_files.py):
deflate data that is not deflate, an XML part given another name, a form drawn fewer times
than the operator count between two clock checks."""

from __future__ import annotations

import io
import re
import zlib
from pathlib import Path
from typing import Any

import pytest

from aborist.corpus.readers import pdf as pdf_reader
from tests.corpus.test_hostile_files import _docx_parts, _skip_reason, _texts, _zip


def test_a_docx_part_whose_deflate_data_is_broken_is_one_skipped_file() -> None:
    import zipfile

    good = _zip(_docx_parts())
    info = zipfile.ZipFile(io.BytesIO(good)).getinfo("word/document.xml")
    at = info.header_offset + 30 + len(info.filename) + len(info.extra)
    bad = good[:at] + b"\xff" * 16 + good[at + 16 :]  # the compressed data, not the header
    reason = _skip_reason(bad, "docx")
    assert reason.startswith("malformed DOCX"), reason
    with pytest.raises(zlib.error):  # the data is broken deflate (it was a traceback)
        zlib.decompress(bad[at : at + 64], -15)


def test_an_xml_part_under_another_name_counts_to_the_xml_limit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from aborist.corpus.readers import docx_package as docx_reader

    parts = _docx_parts(b"<w:p><w:r><w:t>x</w:t></w:r></w:p>" * 2000)
    body = parts.pop("word/document.xml")
    parts["word/document.bin"] = body  # the types and the relationship say where it is
    types = parts["[Content_Types].xml"].decode()
    parts["[Content_Types].xml"] = types.replace(
        'PartName="/word/document.xml"', 'PartName="/word/document.bin"'
    ).encode()
    rels = parts["_rels/.rels"].decode()
    parts["_rels/.rels"] = re.sub(r'Target="/?word/document\.xml"',
                                  'Target="word/document.bin"', rels).encode()  # fmt: skip
    assert len(_texts(_zip(parts), "docx")) == 2000  # python-docx reads it by its type
    named = sum(len(b) for n, b in parts.items() if n.endswith((".xml", ".rels")))
    monkeypatch.setattr(docx_reader, "MAX_XML_BYTES", named + len(body) - 1)
    reason = _skip_reason(_zip(parts), "docx")
    assert reason.startswith("DOCX whose XML parts unpack to"), reason


def test_the_clock_is_read_before_every_form_is_drawn(monkeypatch: pytest.MonkeyPatch) -> None:
    budget = pdf_reader._Budget()
    budget._end = 0.0  # already past
    budget.visit(b"Tj", [], None, None)  # 1 operator of 64: no check yet
    with pytest.raises(pdf_reader._OutOfTime):
        budget.visit(b"Do", [], None, None)  # a form may take seconds: checked first


@pytest.mark.parametrize("was", ["file", "inner_link"])
def test_a_walked_file_that_becomes_a_symlink_out_before_it_is_read_is_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, was: str
) -> None:
    """The walk judged the file (a plain file, or a link inside the tree); someone who can
    write to the tree swaps it for a link out of it before the read. The read judges the
    file it opened, not the path the walk saw."""
    from aborist.corpus import sources
    from aborist.corpus.ingest import ingest

    secret = tmp_path / "private" / "id_rsa.txt"
    secret.parent.mkdir()
    secret.write_text("-----BEGIN PRIVATE KEY----- do not read\n")
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("The first file.\n")
    (docs / "inner.txt").write_text("Inside the tree.\n")
    z = docs / "z.txt"
    if was == "file":
        z.write_text("A plain file when walked.\n")
    else:
        z.symlink_to(docs / "inner.txt")
    walk = sources._walk

    def walk_then_swap(root: Path, skipped: list[Any]) -> dict[Path, Any]:
        found = walk(root, skipped)
        z.unlink()
        z.symlink_to(secret)  # after the walk, before the read
        return found

    monkeypatch.setattr(sources, "_walk", walk_then_swap)
    report = ingest([docs], "h", shards_dir=tmp_path / "shards")
    assert secret.as_uri() not in report.ingested
    [skip] = [s for s in report.skipped if s.path == str(z)]
    assert "became a symlink out of it" in skip.reason
    assert (docs / "a.txt").as_uri() in report.ingested


def test_a_types_part_past_one_mib_is_refused_rather_than_skipped() -> None:
    """Left unread, it would let a renamed XML part past the XML limit again."""
    parts = _docx_parts()
    types = parts["[Content_Types].xml"]
    parts["[Content_Types].xml"] = types.replace(b"</Types>", b" " * (1024 * 1024) + b"</Types>")
    reason = _skip_reason(_zip(parts), "docx")
    assert reason.startswith("DOCX whose [Content_Types].xml unpacks to"), reason
    assert len(_texts(_zip(_docx_parts()), "docx")) >= 1  # the same package, its types small

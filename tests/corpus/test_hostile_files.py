"""Hostile PDF, DOCX and text files and hostile paths, through the readers and through
``ingest`` (docs/corpus.md, "What is read", "PDF", "DOCX"): each is read, or skipped with
one reason while the other files ingest; none hangs, takes unbounded memory, or leaves a
half-written shard.

Files are built here, byte by byte where a library would refuse to write them. No timing
is asserted: a time limit is tested with the limit set far below what the file needs (a
file that would run for minutes, refused at a limit of a fraction of a second), in a
child process with a deadline, so a regression fails instead of hanging the suite."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from aborist.corpus.readers import SourceFileSkipped, extract_source, parse_document
from aborist.corpus.readers import pdf as pdf_reader

ROOT = Path(__file__).resolve().parents[2]

# --- building PDFs by hand ---------------------------------------------------------

FONT = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"
HELLO = b"BT /F1 12 Tf 72 720 Td (Hello hostile world.) Tj ET"


def raw_pdf(objects: Sequence[bytes]) -> bytes:
    """A PDF of ``objects`` (numbered from 1; object 1 the catalog) with a correct
    cross-reference table."""
    out = io.BytesIO()
    out.write(b"%PDF-1.7\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(out.tell())
        out.write(b"%d 0 obj\n%s\nendobj\n" % (number, body))
    xref = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1))
    out.write(b"".join(b"%010d 00000 n \n" % o for o in offsets))
    out.write(b"trailer\n<< /Size %d /Root 1 0 R >>\n" % (len(objects) + 1))
    out.write(b"startxref\n%d\n%%%%EOF\n" % xref)
    return out.getvalue()


def stream(data: bytes, extra: bytes = b"", *, compress: bool = False) -> bytes:
    if compress:
        data = zlib.compress(data, 9)
        extra += b" /Filter /FlateDecode"
    return b"<< /Length %d%s >>\nstream\n%s\nendstream" % (len(data), extra, data)


def pages_pdf(contents: Sequence[bytes], *, compress: bool = False) -> bytes:
    """One page per content stream, each with font F1 (Helvetica)."""
    kids = b" ".join(b"%d 0 R" % (4 + 2 * i) for i in range(len(contents)))
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, len(contents)),
        FONT,
    ]
    for i, content in enumerate(contents):
        objects.append(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents %d 0 R "
            b"/Resources << /Font << /F1 3 0 R >> >> >>" % (5 + 2 * i)
        )
        objects.append(stream(content, compress=compress))
    return raw_pdf(objects)


def form_spin_pdf(invocations: int = 5000, leaf_ops: int = 50_000) -> bytes:
    """1.5 KB that make pypdf work for many minutes: one page draws a form XObject of
    ``leaf_ops`` text operators ``invocations`` times, and pypdf parses the form's
    content stream again at every invocation (its own limit is 5,000 per page)."""
    leaf = b"BT /F1 12 Tf " + b"(a) Tj " * leaf_ops + b"ET"
    form = b" /Type /XObject /Subtype /Form /BBox [0 0 612 792]"
    form += b" /Resources << /Font << /F1 4 0 R >> >>"
    return raw_pdf(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [5 0 R] /Count 1 >>",
            stream(HELLO + b" /X Do" * invocations, compress=True),
            FONT,
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 3 0 R "
            b"/Resources << /Font << /F1 4 0 R >> /XObject << /X 6 0 R >> >> >>",
            stream(leaf, form, compress=True),
        ]
    )


def _skip_reason(data: bytes, fmt: str) -> str:
    with pytest.raises(SourceFileSkipped) as caught:
        extract_source(data, fmt)
    return caught.value.reason


def _texts(data: bytes, fmt: str) -> list[str]:
    doc = parse_document(extract_source(data, fmt), fmt, file_name=f"doc.{fmt}")
    return [b.text for b in doc.blocks]


_CHILD = """
import sys
from pathlib import Path
from aborist.corpus.readers import SourceFileSkipped, extract_source
from aborist.corpus.readers import pdf
pdf.PDF_SECONDS = float(sys.argv[2])
try:
    extract_source(Path(sys.argv[1]).read_bytes(), "pdf")
    print("read")
except SourceFileSkipped as e:
    print(e.reason)
"""


def _extract_in_child(path: Path, seconds: float) -> str:
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, str(path), str(seconds)],
        capture_output=True, text=True, timeout=120, check=False, cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


# --- PDF ---------------------------------------------------------------------------


def test_a_pdf_that_makes_pypdf_spin_is_refused_at_the_time_limit(tmp_path: Path) -> None:
    path = tmp_path / "spin.pdf"
    path.write_bytes(form_spin_pdf())  # minutes of pypdf's time (25 min measured at 5,000)
    assert _extract_in_child(path, 0.5) == (
        "PDF whose text takes longer than 0.5 s to extract (pypdf has no time limit of "
        "its own; a file that makes it spin is refused)"
    )


def test_the_time_limit_is_checked_between_pages(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pdf_reader, "PDF_SECONDS", 0.0)  # spent before the first page
    assert _skip_reason(pages_pdf([HELLO]), "pdf").startswith("PDF whose text takes longer than")
    monkeypatch.setattr(pdf_reader, "PDF_SECONDS", 60.0)
    assert _texts(form_spin_pdf(invocations=3, leaf_ops=2), "pdf")[0].startswith("Hello hostile")


def test_page_contents_that_unpack_beyond_the_budget_are_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # At full size: ten pages of 70 MB of blanks each (a 680 KB file) took 67 s and
    # 781 MB, as pypdf keeps every decoded stream; 64 MiB of such pages, hours and GBs.
    page = HELLO + b" " * 4000
    monkeypatch.setattr(pdf_reader, "MAX_CONTENT_BYTES", 3 * len(page))
    assert len(_texts(pages_pdf([page] * 3, compress=True), "pdf")) == 3
    assert _skip_reason(pages_pdf([page] * 4, compress=True), "pdf") == (
        f"PDF whose page contents unpack to more than {3 * len(page)} bytes (a "
        "decompression bomb; the limit bounds the memory and time one file takes)"
    )


@pytest.mark.parametrize(
    ("objects", "reason"),
    [
        pytest.param(
            [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
             b"<< /Type /Pages /Kids [2 0 R] /Count 1 /Parent 2 0 R >>"],
            "malformed PDF (PdfReadError: Detected cyclic page references.)",
            id="page-tree-loop",
        ),
        pytest.param(
            [b"<< /Type /Catalog /Pages 2 0 R >>", b"3 0 R", b"2 0 R"],
            "malformed PDF (",
            id="reference-cycle",
        ),
        pytest.param(
            [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
             b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 9 9] /Contents 4 0 R "
             b"/Resources << /Font << /F1 5 0 R >> >> >>",
             b"<< /Length 4 0 R >>\nstream\n" + HELLO + b"\nendstream", FONT],
            "malformed PDF (LimitReachedError: Detected loop with self reference",
            id="length-refers-to-itself",
        ),
        pytest.param(
            [b"<< /Type /Catalog /Pages 2 0 R /X " + b"[" * 100_000 + b"]" * 100_000 + b" >>"],
            "malformed PDF (",
            id="arrays-nested-100k-deep",
        ),
        pytest.param(
            [b"<< /Type /Catalog /Pages 2 0 R >>",
             b"<< /Type /Pages /Kids [" + b"3 0 R " * 200_000 + b"] /Count 200000 >>",
             b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 9 9] >>"],
            "malformed PDF (LimitReachedError: Reached maximum array element count.)",
            id="one-page-listed-200k-times",
        ),
    ],
)  # fmt: skip
def test_pdf_object_cycles_and_loops_are_refused(objects: list[bytes], reason: str) -> None:
    assert _skip_reason(raw_pdf(objects), "pdf").startswith(reason)


def test_pdf_form_and_outline_loops_are_read_once() -> None:
    form = b" /Type /XObject /Subtype /Form /BBox [0 0 9 9]"
    form += b" /Resources << /XObject << /X 5 0 R >> >>"
    page = b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources "
    self_drawing = raw_pdf(
        [
            b"<< /Type /Catalog /Pages 2 0 R /Outlines 6 0 R >>",
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            page + b"<< /Font << /F1 7 0 R >> /XObject << /X 5 0 R >> >> >>",
            stream(HELLO + b" /X Do"),
            stream(b"/X Do", form),  # a form that draws itself
            b"<< /Type /Outlines /First 8 0 R /Last 8 0 R >>",
            FONT,
            b"<< /Title (Loop) /Parent 6 0 R /Next 8 0 R /First 8 0 R >>",  # its own next
        ]
    )
    assert _texts(self_drawing, "pdf") == ["Hello hostile world."]


def test_truncated_and_garbage_pdfs_are_refused() -> None:
    pdf = pages_pdf([HELLO])
    xref = pdf.index(b"xref")
    garbage = pdf[:xref] + b"xref\n0 9999999\nGARBAGE\ntrailer\n<< /Size 99999999 /Root 1 0 R >>"
    for data in (pdf[:20], pdf[: len(pdf) // 2], garbage + b"\nstartxref\n%d\n%%%%EOF\n" % xref):
        assert _skip_reason(data, "pdf").startswith("malformed PDF (")


def test_twenty_thousand_empty_pages_are_read_and_noted(tmp_path: Path) -> None:
    from aborist.corpus.ingest import ingest

    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "empty.pdf").write_bytes(pages_pdf([HELLO] + [b""] * 19_999))
    report = ingest([tmp_path / "docs"], "h", shards_dir=tmp_path / "shards")
    assert [d.n_chunks for d in report.documents] == [1]
    (note,) = report.notes
    pages = ", ".join(str(n) for n in range(2, 12))
    assert note.reason == f"page(s) {pages} … have no text layer (OCR is not offered)"


# --- DOCX --------------------------------------------------------------------------

_W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"


_HELLO_DOCX = b"<w:p><w:r><w:t>Hello docx.</w:t></w:r></w:p>"


def _docx_parts(body_xml: bytes = _HELLO_DOCX) -> dict[str, bytes]:
    import zipfile

    from tests.corpus.documents import make_docx

    base = zipfile.ZipFile(io.BytesIO(make_docx([("p", "placeholder")])))
    parts = {name: base.read(name) for name in base.namelist()}
    parts["word/document.xml"] = b'<w:document xmlns:w="%s"><w:body>%s</w:body></w:document>' % (
        _W.encode(),
        body_xml,
    )
    return parts


def _zip(parts: dict[str, bytes], method: int | None = None) -> bytes:
    import zipfile

    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as package:
        for name, body in parts.items():
            package.writestr(name, body, compress_type=method)
    return out.getvalue()


def _zip_by_hand(members: Sequence[tuple[str, bytes, int, int, int]]) -> bytes:
    """A ZIP of ``(name, data as stored, method, crc, declared size)``: the sizes and CRC
    are whatever the caller says, which ``zipfile`` would never write."""
    import struct

    out = io.BytesIO()
    central = []
    for name, data, method, crc, size in members:
        offset = out.tell()
        encoded = name.encode()
        out.write(struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, method, 0, 0x21, crc,
                              len(data), size, len(encoded), 0) + encoded + data)  # fmt: skip
        central.append(
            struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, 0, method, 0, 0x21, crc,
                        len(data), size, len(encoded), 0, 0, 0, 0, 0, offset) + encoded
        )  # fmt: skip
    start = out.tell()
    out.write(b"".join(central))
    count = min(len(members), 0xFFFF)  # past it, only the directory's size says (zipfile reads so)
    out.write(struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, count, count,
                          out.tell() - start, start, 0))  # fmt: skip
    return out.getvalue()


def _deflate_then_zeros(head: bytes, zero_mib: int) -> bytes:
    """Raw deflate of ``head`` followed by ``zero_mib`` MiB of zero bytes, built from one
    flushed MiB repeated (a full flush makes each segment independent), so the test needs
    no GBs to build a stream that inflates to GBs."""
    first = zlib.compressobj(9, zlib.DEFLATED, -15)
    start = first.compress(head) + first.flush(zlib.Z_FULL_FLUSH)
    zeros = zlib.compressobj(9, zlib.DEFLATED, -15)
    segment = zeros.compress(b"\0" * (1 << 20)) + zeros.flush(zlib.Z_FULL_FLUSH)
    return start + segment * zero_mib + zlib.compressobj(9, zlib.DEFLATED, -15).flush()


_CHILD_DOCX = """
import resource, sys
from pathlib import Path
resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
from aborist.corpus.readers import SourceFileSkipped, extract_source, parse_document
try:
    raw = extract_source(Path(sys.argv[1]).read_bytes(), "docx")
    print([b.text for b in parse_document(raw, "docx", file_name="x.docx").blocks])
except SourceFileSkipped as e:
    print(e.reason)
"""


def test_a_docx_part_that_inflates_beyond_its_declared_size_is_read_in_bounded_memory(
    tmp_path: Path,
) -> None:
    # document.xml declares its true size, then its deflate stream goes on for 1.5 GB of
    # zeros: zipfile inflated all of it before cutting at the declared size.
    parts = _docx_parts()
    document = parts.pop("word/document.xml")
    members = [(name, body, 0, zlib.crc32(body), len(body)) for name, body in parts.items()]
    bomb = _deflate_then_zeros(document, 1536)
    members.append(("word/document.xml", bomb, 8, zlib.crc32(document), len(document)))
    path = tmp_path / "bomb.docx"
    path.write_bytes(_zip_by_hand(members))
    assert path.stat().st_size < 3 * 1024 * 1024
    done = subprocess.run(
        [sys.executable, "-c", _CHILD_DOCX, str(path)], capture_output=True, text=True,
        timeout=120, check=False, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    assert (done.returncode, done.stdout.strip()) == (0, "['Hello docx.']"), done.stderr


def test_a_docx_part_whose_bytes_fail_their_crc_is_refused() -> None:
    parts = _docx_parts()
    document = parts.pop("word/document.xml")
    members = [(name, body, 0, zlib.crc32(body), len(body)) for name, body in parts.items()]
    members.append(("word/document.xml", _deflate_then_zeros(document, 4), 8, 0, 1000))
    assert _skip_reason(_zip_by_hand(members), "docx") == (
        "malformed DOCX: a part cannot be unpacked (Bad CRC-32 for file 'word/document.xml')"
    )


def test_docx_parts_compressed_other_than_word_does_are_refused() -> None:
    import zipfile

    assert _skip_reason(_zip(_docx_parts(), zipfile.ZIP_BZIP2), "docx") == (
        "DOCX part '[Content_Types].xml' compressed with method 12 (Word writes parts "
        "stored or deflated)"
    )


def test_docx_xml_beyond_its_limit_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    from aborist.corpus.readers import docx_package as docx_reader

    parts = _docx_parts(b"<w:p><w:r><w:t>x</w:t></w:r></w:p>" * 2000)
    xml = sum(len(b) for n, b in parts.items() if n.endswith((".xml", ".rels")))
    monkeypatch.setattr(docx_reader, "MAX_XML_BYTES", xml)
    assert len(_texts(_zip(parts), "docx")) == 2000
    monkeypatch.setattr(docx_reader, "MAX_XML_BYTES", xml - 1)
    assert _skip_reason(_zip(parts), "docx") == (
        f"DOCX whose XML parts unpack to {xml} bytes, more than the 0 MiB limit"
    )
    monkeypatch.setattr(docx_reader, "MAX_XML_BYTES", xml)
    monkeypatch.setattr(docx_reader, "DOCX_SECONDS", 0.0)
    assert _skip_reason(_zip(parts), "docx") == "DOCX whose text takes longer than 0 s to read"


def test_a_cell_merged_down_2000_rows_is_read_in_every_row() -> None:
    # python-docx's row.cells walked up one row at a time, searching the table at each
    # step: 20,000 such rows took 25 s and then failed with RecursionError (2,000 too).
    def row(i: int) -> bytes:
        merge = b'<w:vMerge w:val="restart"/>' if i == 0 else b"<w:vMerge/>"
        first = b"<w:tc><w:tcPr>%s</w:tcPr><w:p><w:r><w:t>%s</w:t></w:r></w:p></w:tc>" % (
            merge, b"Merged" if i == 0 else b""
        )  # fmt: skip
        return b"<w:tr>%s<w:tc><w:p><w:r><w:t>r%d</w:t></w:r></w:p></w:tc></w:tr>" % (first, i)

    table = b"<w:tbl><w:tblGrid><w:gridCol/><w:gridCol/></w:tblGrid>%s</w:tbl>" % b"".join(
        row(i) for i in range(2000)
    )
    texts = _texts(_zip(_docx_parts(table)), "docx")
    assert texts[:2] == ["Merged ; r0", "Merged ; r1"]
    assert len(texts) == 2000 and texts[-1] == "Merged ; r1999"
    no_top = b"<w:tr><w:tc><w:tcPr><w:vMerge/></w:tcPr><w:p/></w:tc></w:tr>"
    continued_from_nothing = b"<w:tbl>%s</w:tbl>" % no_top
    assert _skip_reason(_zip(_docx_parts(continued_from_nothing)), "docx").startswith(
        "malformed DOCX (ValueError: a merged cell continues no cell above"
    )


def test_hostile_docx_xml_is_refused_or_read_without_leaking(tmp_path: Path) -> None:
    entities = b"".join(
        b'<!ENTITY e%d "%s">' % (i, b"&e%d;" % (i - 1) * 10 if i else b"lol") for i in range(10)
    )
    laughs = _docx_parts()
    laughs["word/document.xml"] = (
        b'<?xml version="1.0"?><!DOCTYPE w:document [%s]><w:document xmlns:w="%s"><w:body>'
        b"<w:p><w:r><w:t>&e9;</w:t></w:r></w:p></w:body></w:document>" % (entities, _W.encode())
    )
    assert "Maximum entity amplification" in _skip_reason(_zip(laughs), "docx")
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP SECRET")
    xxe = _docx_parts()
    xxe["word/document.xml"] = (
        b'<?xml version="1.0"?><!DOCTYPE w:document [<!ENTITY x SYSTEM "%s">]>'
        b'<w:document xmlns:w="%s"><w:body><w:p><w:r><w:t>see &x;</w:t></w:r></w:p>'
        b"</w:body></w:document>" % (secret.as_uri().encode(), _W.encode())
    )
    assert _texts(_zip(xxe), "docx") == ["see"]  # the entity is not resolved, not read
    deep = _docx_parts(b"<w:sdt><w:sdtContent>" * 100_000 + b"</w:sdtContent></w:sdt>" * 100_000)
    assert "Excessive depth in document" in _skip_reason(_zip(deep), "docx")
    missing = _docx_parts()
    del missing["word/document.xml"]
    assert _skip_reason(_zip(missing), "docx") == (
        "malformed DOCX: a relationship names the part 'word/document.xml', which the "
        "package does not hold"
    )


# --- text formats ------------------------------------------------------------------


@pytest.mark.parametrize(
    "raw",
    [
        pytest.param("*" * 100_000 + "x" + "*" * 100_000 + "\n", id="emphasis"),
        pytest.param("<span>" * 100_000 + "x\n", id="inline-html"),
    ],
)
def test_markdown_that_renders_too_deep_is_skipped_and_the_rest_ingests(
    raw: str, tmp_path: Path
) -> None:
    # 200 KB of `*` around a word: the HTML it renders to nests 50,000 deep, and the
    # HTML reader's refusal came out of `aborist ingest` as a traceback, losing the
    # other files of the directory.
    from aborist.corpus.ingest import ingest

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "deep.md").write_text(raw)
    (docs / "fine.md").write_text("# Fine\n\nA fine file.\n")
    report = ingest([docs], "h", shards_dir=tmp_path / "shards")
    assert [d.title for d in report.documents] == ["Fine"]
    assert [s.to_dict() for s in report.skipped] == [
        {
            "path": str(docs / "deep.md"),
            "reason": "Markdown nested deeper than 2048 elements (in the HTML it renders to)",
        }
    ]


def test_a_reader_failing_on_a_file_skips_it_and_the_rest_ingests(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from aborist.corpus import sources
    from aborist.corpus.ingest import ingest

    real = sources.parse_document

    def parse(raw: str, fmt: str, *, file_name: str) -> object:
        if file_name == "bad.rst":
            raise RecursionError("maximum recursion depth exceeded")
        return real(raw, fmt, file_name=file_name)

    monkeypatch.setattr(sources, "parse_document", parse)
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "bad.rst").write_text("Bad\n===\n")
    (docs / "good.txt").write_text("Good text.\n")
    report = ingest([docs], "h", shards_dir=tmp_path / "shards")
    assert [d.title for d in report.documents] == ["good"]
    assert [s.reason for s in report.skipped] == [
        "the rst reader failed on this file (RecursionError: maximum recursion depth exceeded)"
    ]


# --- paths -------------------------------------------------------------------------


def test_a_symlink_in_a_directory_to_a_file_outside_it_is_not_followed(tmp_path: Path) -> None:
    # An untrusted tree (an unpacked archive, a checkout) with `notes.txt -> ~/.ssh/id_rsa`
    # ingested the key into the shard, where answers quote it.
    from aborist.corpus.ingest import ingest

    secret = tmp_path / "private" / "id_rsa"
    secret.parent.mkdir()
    secret.write_text("-----BEGIN PRIVATE KEY----- do not read\n")
    docs = tmp_path / "docs"
    (docs / "sub").mkdir(parents=True)
    (docs / "sub" / "inside.txt").write_text("Inside the tree.\n")
    (docs / "notes.txt").symlink_to(secret)
    (docs / "alias.txt").symlink_to(docs / "sub" / "inside.txt")  # inside the tree: read
    report = ingest([docs], "h", shards_dir=tmp_path / "shards")
    assert [s.to_dict() for s in report.skipped] == [
        {
            "path": str(docs / "notes.txt"),
            "reason": "symlink to a file outside the directory (not followed inside a "
            "directory; name it directly)",
        }
    ]
    assert report.ingested == ((docs / "sub" / "inside.txt").as_uri(),)
    named = ingest([docs / "notes.txt"], "h2", shards_dir=tmp_path / "shards")
    assert named.ingested == (secret.as_uri(),)  # named on the command line: read


def test_odd_names_a_directory_named_like_a_file_and_an_unreadable_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from aborist.corpus.ingest import ingest

    docs = tmp_path / "docs"
    (docs / "foo.md").mkdir(parents=True)  # a directory named like a file: walked
    (docs / "foo.md" / "inner.txt").write_text("Inside foo.md.\n")
    (docs / "new\nline.txt").write_text("A name with a newline.\n")
    (docs / "locked.txt").write_text("Locked.\n")
    os.mkfifo(docs / "x.txt")
    real_open = os.open

    def locked_open(path: object, flags: int, *args: object, **kw: Any) -> int:
        # as root would not refuse; a walked file is opened by its name in its directory
        if str(path) in (str(docs / "locked.txt"), "locked.txt"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, flags, *args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", locked_open)
    report = ingest([docs], "h", shards_dir=tmp_path / "shards")
    assert sorted(d.title for d in report.documents) == ["inner", "new\\nline"]
    assert [s.to_dict() for s in report.skipped] == [
        {"path": str(docs / "locked.txt"), "reason": "unreadable: Permission denied"},
        {"path": str(docs / "x.txt"), "reason": "not a regular file (named pipe)"},
    ]


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a mode-000 file anyway")
def test_a_mode_000_file_is_skipped_for_real(tmp_path: Path) -> None:
    from aborist.corpus.ingest import ingest

    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "ok.txt").write_text("Fine.\n")
    (tmp_path / "docs" / "locked.txt").write_text("Locked.\n")
    (tmp_path / "docs" / "locked.txt").chmod(0)
    report = ingest([tmp_path / "docs"], "h", shards_dir=tmp_path / "shards")
    assert [s.reason for s in report.skipped] == ["unreadable: Permission denied"]

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
import json
import os
import subprocess
import sys
import zlib
from collections.abc import Sequence
from pathlib import Path

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
    form = b" /Type /XObject /Subtype /Form /BBox [0 0 612 792] /Resources << /Font << /F1 4 0 R >> >>"
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
    form = b" /Type /XObject /Subtype /Form /BBox [0 0 9 9] /Resources << /XObject << /X 5 0 R >> >>"
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
    assert note.reason == "page(s) 2, 3, 4, 5, 6, 7, 8, 9, 10, 11 … have no text layer (OCR is not offered)"

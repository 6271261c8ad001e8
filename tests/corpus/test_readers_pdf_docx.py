"""The PDF and DOCX readers (docs/corpus.md, "PDF", "DOCX"): text, titles, locators, and
one clear reason for every file they refuse. Files made here have known text on known
pages; the shared samples are real producers' files (pdfTeX, LibreOffice, Word …), and
their expected texts are what the files visibly show."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest

from aborist.corpus.canonicalize import fold_pdf_text
from aborist.corpus.readers import SourceFileSkipped, extract_source, parse_document
from aborist.corpus.readers import docx_package as docx_reader
from tests.corpus.documents import make_docx, make_pdf

DATA = Path(__file__).resolve().parents[2] / ".." / "shared" / "data"
PDFS = DATA / "pdf-samples"
DOCXS = DATA / "docx-samples"


def _read(
    data: bytes, fmt: str, name: str = "doc"
) -> tuple[str, list[tuple[int, str, dict[str, object]]]]:
    doc = parse_document(extract_source(data, fmt), fmt, file_name=f"{name}.{fmt}")
    return doc.title, [(b.level, b.text, b.locator.to_dict()) for b in doc.blocks]


def _skip_reason(data: bytes, fmt: str) -> str:
    with pytest.raises(SourceFileSkipped) as caught:
        extract_source(data, fmt)
    return caught.value.reason


def _sample(folder: Path, relative: str) -> bytes:
    path = folder / relative
    if not path.is_file():
        pytest.skip(f"shared sample {path} is absent")
    return path.read_bytes()


# --- PDF ---------------------------------------------------------------------------


def test_pdf_pages_labels_title_and_folded_text() -> None:
    pdf = make_pdf(
        [["Front matter."], ["Preface."], ["Chapter one:", "a conven-", "tional start."],
         ["The answer is on the fourth sheet."]],
        title="Test Book",
        roman_front_pages=2,
    )  # fmt: skip
    title, blocks = _read(pdf, "pdf")
    assert title == "Test Book"
    assert blocks == [
        (0, "Front matter.", {"page": 1, "page_label": "i"}),
        (0, "Preface.", {"page": 2, "page_label": "ii"}),
        (0, "Chapter one: a conventional start.", {"page": 3, "page_label": "1"}),
        (0, "The answer is on the fourth sheet.", {"page": 4, "page_label": "2"}),
    ]
    doc = parse_document(extract_source(pdf, "pdf"), "pdf", file_name="b.pdf")
    assert doc.blocks[2].raw == "Chapter one:\na conven-\ntional start."  # raw text kept


def test_pdf_title_falls_back_to_a_short_first_line_then_the_file_name() -> None:
    assert _read(make_pdf([["Annual Report", "Body text."]]), "pdf")[0] == "Annual Report"
    long_line = "word " * 30
    assert _read(make_pdf([[long_line]]), "pdf", "report-2026")[0] == "report-2026"


def test_fold_pdf_text_ligatures_and_line_end_hyphens() -> None:
    assert fold_pdf_text("the misﬁts and ﬂows, eﬀort") == "the misfits and flows, effort"
    assert fold_pdf_text("conven-\ntional") == "conventional"
    assert fold_pdf_text("COVID-\n19") == "COVID-\n19"  # a digit follows: not a word break
    assert fold_pdf_text("Jean-\nPaul") == "Jean-\nPaul"  # a capital follows: kept


def test_encrypted_pdf_needs_a_password_unless_the_user_password_is_empty() -> None:
    from pypdf import PdfReader, PdfWriter

    plain = make_pdf([["Secret text."]])

    def encrypted(user: str) -> bytes:
        writer = PdfWriter(clone_from=PdfReader(io.BytesIO(plain)))
        writer.encrypt(user_password=user, owner_password="owner")
        out = io.BytesIO()
        writer.write(out)
        return out.getvalue()

    assert _skip_reason(encrypted("pw"), "pdf").startswith("encrypted PDF: it needs a password")
    assert _read(encrypted(""), "pdf")[1] == [(0, "Secret text.", {"page": 1, "page_label": "1"})]


def test_pdf_without_a_text_layer_is_named() -> None:
    from pypdf import PdfWriter

    writer = PdfWriter()
    writer.add_blank_page(612, 792)
    writer.add_blank_page(612, 792)
    out = io.BytesIO()
    writer.write(out)
    assert _skip_reason(out.getvalue(), "pdf") == (
        "no text layer on any of its 2 page(s) (a scanned or image-only PDF; OCR is not offered)"
    )


def test_a_pdf_whose_text_is_all_white_space_is_named_as_such() -> None:
    """Not called scanned: it has a text layer, of spaces, tabs and line breaks."""
    from tests.corpus.test_hostile_files import pages_pdf

    blank = pages_pdf([b"BT /F1 12 Tf 72 720 Td (   ) Tj ET", b"BT /F1 12 Tf 9 9 Td (\t \t) Tj ET"])
    assert _skip_reason(blank, "pdf") == (
        "no text on any of its 2 page(s): its text layer holds only white space"
    )


def test_a_pdf_whose_text_is_control_characters_is_not_called_white_space() -> None:
    """A font with no Unicode map draws codes that read as control characters: cleaning
    removes them, and the reason says what was there, not "white space"."""
    from tests.corpus.test_hostile_files import pages_pdf

    codes = pages_pdf([b"BT /F1 12 Tf 72 720 Td (\001\002\003) Tj ET"])
    assert _skip_reason(codes, "pdf") == (
        "no text on any of its 1 page(s): its text layer holds only control or zero-width "
        "characters (a font with no Unicode map?)"
    )


def test_malformed_pdfs_are_skipped_and_a_wrong_xref_offset_is_repaired() -> None:
    pdf = make_pdf([["Repairable text."]])
    assert _skip_reason(b"%PDF-1.7\nthis is not a pdf", "pdf").startswith("malformed PDF (")
    assert _skip_reason(pdf[: len(pdf) // 3], "pdf").startswith(("malformed PDF (", "no text"))
    start = pdf.rindex(b"startxref")
    broken = pdf[:start] + b"startxref\n999999\n%%EOF\n"
    assert _read(broken, "pdf")[1][0][1] == "Repairable text."


def test_pdf_samples_four_pages_with_their_page_numbers() -> None:
    four = _sample(PDFS, "004-pdflatex-4-pages/pdflatex-4-pages.pdf")
    title, blocks = _read(four, "pdf", "pdflatex-4-pages")
    assert [loc["page"] for _, _, loc in blocks] == [1, 2, 3, 4]
    assert blocks[0][1].startswith("Hello, here is some text without a meaning.")
    assert title == "pdflatex-4-pages"  # no metadata title, no outline, a long first line


def test_pdf_samples_refused_with_their_reasons() -> None:
    encrypted = _sample(PDFS, "005-libreoffice-writer-password/libreoffice-writer-password.pdf")
    assert "needs a password" in _skip_reason(encrypted, "pdf")
    image = _sample(PDFS, "007-imagemagick-images/imagemagick-lzw.pdf")
    assert _skip_reason(image, "pdf").startswith("no text layer")


def test_pdf_samples_ligatures_folded_raw_kept_and_metadata_title() -> None:
    doc = parse_document(
        extract_source(_sample(PDFS, "021-pdfa/crazyones-pdfa.pdf"), "pdf"),
        "pdf",
        file_name="crazyones-pdfa.pdf",
    )
    assert doc.title == "The Crazy Ones"  # the first line: this file has no metadata title
    assert "The misfits. The rebels." in doc.blocks[0].text
    assert "misﬁts" in doc.blocks[0].raw
    title, _ = _read(_sample(PDFS, "011-google-doc-document/google-doc-document.pdf"), "pdf")
    assert title == "PDF Example Document"
    title, _ = _read(_sample(PDFS, "006-pdflatex-outline/pdflatex-outline.pdf"), "pdf")
    assert title == "Foo"  # the first outline entry


def test_pdf_samples_arabic_text() -> None:
    _, blocks = _read(_sample(PDFS, "015-arabic/habibi.pdf"), "pdf")
    assert "habibi" in blocks[0][1] and "حَبيبي" in blocks[0][1]


# --- DOCX --------------------------------------------------------------------------


def test_docx_headings_paragraphs_tables_headers_and_hidden_runs() -> None:
    data = make_docx(
        [("h1", "Policy"), ("p", "Intro."), ("h2", "Scope"), ("p", "Scope text."),
         ("hidden", "Shown |SECRET"), ("row", "a|b"), ("row", "c|d"), ("h2", "Terms"),
         ("p", "Terms text.")],
        header="Company Confidential",
        footer="Footer line",
        title="The Policy",
    )  # fmt: skip
    title, blocks = _read(data, "docx")
    assert title == "The Policy"
    assert blocks == [
        (1, "Policy", {"heading": ["Policy"], "paragraph": 1}),
        (0, "Intro.", {"heading": ["Policy"], "paragraph": 1}),
        (2, "Scope", {"heading": ["Policy", "Scope"], "paragraph": 2}),
        (0, "Scope text.", {"heading": ["Policy", "Scope"], "paragraph": 2}),
        (0, "Shown", {"heading": ["Policy", "Scope"], "paragraph": 3}),
        (0, "a ; b", {"heading": ["Policy", "Scope"], "paragraph": 4}),
        (0, "c ; d", {"heading": ["Policy", "Scope"], "paragraph": 5}),
        (2, "Terms", {"heading": ["Policy", "Terms"], "paragraph": 6}),
        (0, "Terms text.", {"heading": ["Policy", "Terms"], "paragraph": 6}),
        (0, "Company Confidential", {"heading": [], "paragraph": 7, "part": "header"}),
        (0, "Footer line", {"heading": [], "paragraph": 8, "part": "footer"}),
    ]


def test_docx_title_falls_back_to_the_first_heading() -> None:
    assert _read(make_docx([("p", "x"), ("h1", "First Heading")]), "docx")[0] == "First Heading"


def test_malformed_docx_files_are_skipped(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _skip_reason(b"not a zip at all", "docx").startswith("malformed DOCX: not a ZIP")
    empty = io.BytesIO()
    with zipfile.ZipFile(empty, "w") as z:
        z.writestr("hello.txt", "no document part")
    assert _skip_reason(empty.getvalue(), "docx") == (
        "malformed DOCX: no main document part (the package has no [Content_Types].xml)"
    )
    monkeypatch.setattr(docx_reader, "MAX_UNPACKED_BYTES", 1000)
    assert "more than the 0 MiB limit" in _skip_reason(make_docx([("p", "x" * 5000)]), "docx")


def test_docx_samples_headers_footers_kept_apart() -> None:
    _, blocks = _read(_sample(DOCXS, "hdr-header-footer.docx"), "docx")
    assert [(t, loc.get("part")) for _, t, loc in blocks] == [
        ("section with header", None),
        ("section without header of its own.", None),
        ("Header for section-1", "header"),
        ("Footer for section 1", "footer"),
    ]


def test_docx_samples_headings_tables_and_hyperlinks() -> None:
    title, blocks = _read(_sample(DOCXS, "par-known-paragraphs.docx"), "docx")
    assert title == "Heading Paragraph"
    assert blocks[0][:2] == (1, "Heading Paragraph")
    _, rows = _read(_sample(DOCXS, "tbl-cell-access.docx"), "docx")
    assert [t for _, t, _ in rows[:3]] == ["1 ; 2 ; 3", "4 ; 5 ; 6", "7 ; 8 ; 9"]
    _, paras = _read(_sample(DOCXS, "par-hyperlinks.docx"), "docx")
    assert [t for _, t, _ in paras] == [
        "No hyperlinks",
        "One awesome hyperlink.",
        "Three hyperlinks: the first one here, the second one, and the third.",
    ]

"""Small PDF and DOCX files made in the test, with known text on known pages, for the
readers' tests (the shared samples test real producers' files; these test locators)."""

from __future__ import annotations

import io
from collections.abc import Sequence

__all__ = ["make_docx", "make_pdf"]


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def make_pdf(
    pages: Sequence[Sequence[str]],
    *,
    title: str | None = None,
    roman_front_pages: int = 0,
) -> bytes:
    """A PDF with one page per item of ``pages``, each line of it drawn in Helvetica
    (Latin-1 only). The first ``roman_front_pages`` pages are labelled i, ii, …; the rest
    1, 2, … (a PDF /PageLabels tree)."""
    from pypdf import PdfWriter
    from pypdf.constants import PageLabelStyle
    from pypdf.generic import (
        DecodedStreamObject,
        DictionaryObject,
        NameObject,
    )

    writer = PdfWriter()
    font = DictionaryObject(
        {
            NameObject("/Type"): NameObject("/Font"),
            NameObject("/Subtype"): NameObject("/Type1"),
            NameObject("/BaseFont"): NameObject("/Helvetica"),
            NameObject("/Encoding"): NameObject("/WinAnsiEncoding"),
        }
    )
    font_ref = writer._add_object(font)
    for lines in pages:
        page = writer.add_blank_page(612, 792)
        ops = ["BT", "/F1 11 Tf", "14 TL", "72 720 Td"]
        for line in lines:
            ops.append(f"({_escape(line)}) Tj T*")
        ops.append("ET")
        stream = DecodedStreamObject()
        stream.set_data("\n".join(ops).encode("latin-1"))
        page[NameObject("/Contents")] = writer._add_object(stream)
        page[NameObject("/Resources")] = DictionaryObject(
            {NameObject("/Font"): DictionaryObject({NameObject("/F1"): font_ref})}
        )
    if roman_front_pages:
        writer.set_page_label(0, roman_front_pages - 1, style=PageLabelStyle.LOWERCASE_ROMAN)
        writer.set_page_label(
            roman_front_pages, len(pages) - 1, style=PageLabelStyle.DECIMAL, start=1
        )
    if title is not None:
        writer.add_metadata({"/Title": title})
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def make_docx(
    body: Sequence[tuple[str, str]],
    *,
    header: str | None = None,
    footer: str | None = None,
    title: str | None = None,
) -> bytes:
    """A DOCX whose body is ``(kind, text)`` items: ``("h1", …)`` … ``("h3", …)``
    headings, ``("p", …)`` paragraphs, ``("hidden", …)`` a paragraph with one visible
    and one hidden run (``text`` = ``"visible|hidden"``), ``("row", "a|b")`` a one-row
    table (consecutive rows form one table)."""
    import docx

    document = docx.Document()
    table = None
    for kind, text in body:
        if kind != "row":
            table = None
        if kind.startswith("h"):
            if kind == "hidden":
                visible, hidden = text.split("|")
                para = document.add_paragraph(visible)
                para.add_run(hidden).font.hidden = True
            else:
                document.add_heading(text, level=int(kind[1:]))
        elif kind == "p":
            document.add_paragraph(text)
        elif kind == "row":
            cells = text.split("|")
            if table is None:
                table = document.add_table(rows=0, cols=len(cells))
            row = table.add_row()
            for cell, value in zip(row.cells, cells, strict=True):
                cell.text = value
    section = document.sections[0]
    if header is not None:
        section.header.paragraphs[0].text = header
    if footer is not None:
        section.footer.paragraphs[0].text = footer
    if title is not None:
        document.core_properties.title = title
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()

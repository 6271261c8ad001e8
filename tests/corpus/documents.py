"""Small PDF and DOCX files made in the test, with known text on known pages, for the
readers' tests (the shared samples test real producers' files; these test locators)."""

from __future__ import annotations

import io
from collections.abc import Sequence

__all__ = ["make_docx", "make_docx_xml", "make_pdf"]


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


_W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
_NOTES_REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/"
_NOTES_TYPE = "application/vnd.openxmlformats-officedocument.wordprocessingml."


def _note_part(kind: str, notes: dict[int, str]) -> str:
    separators = "".join(
        f'<w:{kind} w:type="{t}" w:id="{i}"><w:p><w:r><w:separator/></w:r></w:p></w:{kind}>'
        for i, t in ((-1, "separator"), (0, "continuationSeparator"))
    )
    bodies = "".join(
        f'<w:{kind} w:id="{i}">'
        + "".join(f"<w:p><w:r><w:t>{p}</w:t></w:r></w:p>" for p in text.split("|"))
        + f"</w:{kind}>"
        for i, text in notes.items()
    )
    return f'<w:{kind}s xmlns:w="{_W}">{separators}{bodies}</w:{kind}s>'


def make_docx_xml(
    body_xml: str,
    *,
    footnotes: dict[int, str] | None = None,
    endnotes: dict[int, str] | None = None,
) -> bytes:
    """A DOCX whose ``w:body`` is ``body_xml`` (WordprocessingML, prefixes ``w``, ``mc``,
    ``wp``, ``a``, ``wps``, ``v``, ``m`` declared), with footnote and endnote parts holding
    ``{id: "paragraph|paragraph"}`` beside Word's two separator notes."""
    import zipfile

    base = zipfile.ZipFile(io.BytesIO(make_docx([("p", "placeholder")])))
    ns = (
        f'xmlns:w="{_W}" '
        'xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006" '
        'xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing" '
        'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" '
        'xmlns:wps="http://schemas.microsoft.com/office/word/2010/wordprocessingShape" '
        'xmlns:v="urn:schemas-microsoft-com:vml" '
        'xmlns:m="http://schemas.openxmlformats.org/officeDocument/2006/math" '
        'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"'
    )
    parts = {name: base.read(name) for name in base.namelist()}
    parts["word/document.xml"] = (
        f"<w:document {ns}><w:body>{body_xml}</w:body></w:document>".encode()
    )
    rels = parts["word/_rels/document.xml.rels"].decode()
    types = parts["[Content_Types].xml"].decode()
    for kind, notes in (("footnote", footnotes), ("endnote", endnotes)):
        if notes is None:
            continue
        parts[f"word/{kind}s.xml"] = _note_part(kind, notes).encode()
        rels = rels.replace(
            "</Relationships>",
            f'<Relationship Id="rIdA{kind}" Type="{_NOTES_REL}{kind}s" Target="{kind}s.xml"/>'
            "</Relationships>",
        )
        types = types.replace(
            "</Types>",
            f'<Override PartName="/word/{kind}s.xml" ContentType="{_NOTES_TYPE}{kind}s+xml"/>'
            "</Types>",
        )
    parts["word/_rels/document.xml.rels"] = rels.encode()
    parts["[Content_Types].xml"] = types.encode()
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as package:
        for name, data in parts.items():
            package.writestr(name, data)
    return out.getvalue()

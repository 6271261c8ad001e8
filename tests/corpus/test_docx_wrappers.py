"""DOCX content inside wrapper elements (docs/corpus.md, "DOCX").

Content controls (``w:sdt``), custom XML, smart tags, tracked insertions and moves,
hyperlinks, simple fields and bidirectional embeddings hold paragraphs, tables, rows,
cells or runs without being any themselves: python-docx reads none of them but a
hyperlink's own runs, so their text was lost without a word. Tracked deletions are not
in the document and are not read."""

from __future__ import annotations

from pathlib import Path

import pytest

from aborist.corpus.readers import extract_source, parse_document
from tests.corpus.documents import make_docx_xml

DOCXS = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "docx-samples"


def _r(text: str, *, hidden: bool = False) -> str:
    props = "<w:rPr><w:vanish/></w:rPr>" if hidden else ""
    return f'<w:r>{props}<w:t xml:space="preserve">{text}</w:t></w:r>'


def _p(*runs: str, style: str | None = None) -> str:
    props = f'<w:pPr><w:pStyle w:val="{style}"/></w:pPr>' if style else ""
    return f"<w:p>{props}{''.join(runs)}</w:p>"


def _sdt(content: str) -> str:
    """A content control as Word writes one: properties, then the content."""
    return (
        '<w:sdt><w:sdtPr><w:alias w:val="Field"/><w:id w:val="1"/></w:sdtPr>'
        f"<w:sdtContent>{content}</w:sdtContent></w:sdt>"
    )


def _tc(*paragraphs: str) -> str:
    return f"<w:tc>{''.join(paragraphs)}</w:tc>"


def _tbl(*rows: str) -> str:
    return f"<w:tbl>{''.join(rows)}</w:tbl>"


def _tr(*cells: str) -> str:
    return f"<w:tr>{''.join(cells)}</w:tr>"


def _blocks(body: str) -> list[tuple[str, dict[str, object]]]:
    data = make_docx_xml(body)
    doc = parse_document(extract_source(data, "docx"), "docx", file_name="d.docx")
    return [(b.text, b.locator.to_dict()) for b in doc.blocks]


def _texts(body: str) -> list[str]:
    return [t for t, _ in _blocks(body)]


def test_block_level_content_controls_in_document_order() -> None:
    body = (
        _p(_r("Before."))
        + _sdt(
            _p(_r("Scope"), style="Heading1")
            + _p(_r("Inside the control."))
            + _tbl(_tr(_tc(_p(_r("a"))), _tc(_p(_r("b")))))
            + _sdt(_p(_r("A control in a control.")))
        )
        + '<w:customXml w:element="clause">'
        + _p(_r("Inside custom XML."))
        + "</w:customXml>"
        + _p(_r("After."))
    )
    assert _blocks(body) == [
        ("Before.", {"heading": [], "paragraph": 1}),
        ("Scope", {"heading": ["Scope"], "paragraph": 2}),  # a heading, inside a control
        ("Inside the control.", {"heading": ["Scope"], "paragraph": 2}),
        ("a ; b", {"heading": ["Scope"], "paragraph": 3}),
        ("A control in a control.", {"heading": ["Scope"], "paragraph": 4}),
        ("Inside custom XML.", {"heading": ["Scope"], "paragraph": 5}),
        ("After.", {"heading": ["Scope"], "paragraph": 6}),
    ]


def test_run_level_wrappers_are_read_and_deleted_text_is_not() -> None:
    paragraph = _p(
        _r("One "),
        _sdt(_r("two ") + _r("HIDDEN ", hidden=True)),
        '<w:smartTag w:uri="urn:x" w:element="place">' + _r("three ") + "</w:smartTag>",
        '<w:customXml w:element="word">' + _r("four ") + "</w:customXml>",
        '<w:ins w:id="1" w:author="A" w:date="2026-01-01T00:00:00Z">' + _r("five ") + "</w:ins>",
        '<w:del w:id="2" w:author="A" w:date="2026-01-01T00:00:00Z">'
        '<w:r><w:delText xml:space="preserve">DELETED </w:delText></w:r></w:del>',
        '<w:moveFrom w:id="3" w:author="A" w:date="2026-01-01T00:00:00Z">'
        + _r("MOVED-AWAY ")
        + "</w:moveFrom>",
        '<w:moveTo w:id="4" w:author="A" w:date="2026-01-01T00:00:00Z">'
        + _r("six ")
        + "</w:moveTo>",
        '<w:hyperlink w:anchor="x">'
        + _r("seven ")
        + '<w:ins w:id="5" w:author="A">'
        + _r("eight ")
        + "</w:ins></w:hyperlink>",
        '<w:fldSimple w:instr=" PAGE ">' + _r("9") + "</w:fldSimple>",
        # a complex field: its instruction is not text, its result is
        '<w:r><w:fldChar w:fldCharType="begin"/></w:r><w:r><w:instrText> REF x </w:instrText>'
        '</w:r><w:r><w:fldChar w:fldCharType="separate"/></w:r>',
        _r(" ten"),
        '<w:r><w:fldChar w:fldCharType="end"/></w:r>',
        '<w:bdo w:val="rtl">' + _r(" eleven.") + "</w:bdo>",
    )
    assert _texts(paragraph) == ["One two three four five six seven eight 9 ten eleven."]


def test_cell_and_row_level_content_controls() -> None:
    table = _tbl(
        _tr(_tc(_p(_r("plain"))), _sdt(_tc(_p(_r("cell in a control"))))),
        _sdt(_tr(_tc(_p(_r("row in a control"))), _tc(_p(_r("x"))))),
        _tr(_tc(_sdt(_p(_r("paragraph in a control in a cell")))), _tc(_p(_r("y")))),
        '<w:customXml w:element="row">'
        + _tr(_tc(_p(_r("custom row"))), _tc(_p(_r("z"))))
        + "</w:customXml>",
    )
    assert _texts(table) == [
        "plain ; cell in a control",
        "row in a control ; x",
        "paragraph in a control in a cell ; y",
        "custom row ; z",
    ]


def test_a_cell_merged_down_across_a_content_control_is_given_in_each_row() -> None:
    merged = '<w:tcPr><w:vMerge w:val="restart"/></w:tcPr>'
    table = _tbl(
        _tr(_sdt(f"<w:tc>{merged}{_p(_r('merged'))}</w:tc>"), _tc(_p(_r("1")))),
        _tr("<w:tc><w:tcPr><w:vMerge/></w:tcPr><w:p/></w:tc>", _tc(_p(_r("2")))),
    )
    assert _texts(table) == ["merged ; 1", "merged ; 2"]


def test_a_table_nested_in_a_cell_is_read_in_place() -> None:
    inner = _tbl(_tr(_tc(_p(_r("n1"))), _tc(_p(_r("n2")))), _tr(_tc(_p(_r("n3")))))
    table = _tbl(_tr(_tc(_p(_r("before")), inner, _p(_r("after"))), _tc(_p(_r("next")))))
    assert _texts(table) == ["before n1 ; n2 n3 after ; next"]


def _box(content: str) -> str:
    return (
        '<w:r><mc:AlternateContent><mc:Choice Requires="wps"><w:drawing><wp:anchor>'
        "<a:graphic><a:graphicData><wps:wsp><wps:txbx>"
        f"<w:txbxContent>{content}</w:txbxContent>"
        "</wps:txbx></wps:wsp></a:graphicData></a:graphic></wp:anchor></w:drawing>"
        "</mc:Choice></mc:AlternateContent></w:r>"
    )


def test_content_controls_in_a_text_box_and_a_box_in_deleted_text() -> None:
    body = _p(
        _r("Anchor."),
        _box(_sdt(_p(_r("In a control in a box.")))),
        '<w:del w:id="1" w:author="A">' + _box(_p(_r("A DELETED box."))) + "</w:del>",
    )
    assert _texts(body) == ["Anchor.", "In a control in a box."]


def test_docx_samples_read_as_before_but_the_nested_table() -> None:
    """The 44 samples hold hyperlinks and tables but no other wrapper; the one change is
    ``blk-paras-and-tables.docx``'s table nested in a cell, whose text was lost."""
    path = DOCXS / "blk-paras-and-tables.docx"
    if not path.is_file():
        pytest.skip(f"shared sample {path} is absent")
    doc = parse_document(extract_source(path.read_bytes(), "docx"), "docx", file_name="d")
    assert "Text before Table Between Text after" in [b.text for b in doc.blocks]


def test_a_content_control_in_a_header_is_read_as_the_header() -> None:
    import io
    import zipfile

    from tests.corpus.documents import make_docx

    base = zipfile.ZipFile(io.BytesIO(make_docx([("p", "Body text.")], header="HEAD")))
    parts = {name: base.read(name) for name in base.namelist()}
    header = parts["word/header1.xml"].decode()
    wrapped = _sdt(_p(_r("Company confidential")) + _tbl(_tr(_tc(_p(_r("Rev 3"))))))
    parts["word/header1.xml"] = header.replace("</w:hdr>", wrapped + "</w:hdr>").encode()
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as package:
        for name, blob in parts.items():
            package.writestr(name, blob)
    doc = parse_document(extract_source(out.getvalue(), "docx"), "docx", file_name="d.docx")
    header_texts = [b.text for b in doc.blocks if b.locator.part == "header"]
    assert header_texts == ["HEAD", "Company confidential", "Rev 3"]

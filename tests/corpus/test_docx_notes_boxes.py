"""DOCX text boxes, footnotes, endnotes and comments (docs/corpus.md, "DOCX").

Text boxes are document text, read in document order after the paragraph that anchors
them; footnotes and endnotes are document text, read after the body as their own
locator kind, numbered as Word shows them; comments are reviewers' annotations, not
what the document says, and are not read."""

from __future__ import annotations

from pathlib import Path

import pytest

from aborist.corpus.chunking import chunk_blocks
from aborist.corpus.readers import extract_source, parse_document
from aborist.corpus.readers.model import describe_locator
from tests.corpus.documents import make_docx_xml

DOCXS = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "docx-samples"


def _p(text: str) -> str:
    return f"<w:p><w:r><w:t>{text}</w:t></w:r></w:p>"


def _box(*paragraphs: str, fallback: str = "the VML copy") -> str:
    """A text box as Word writes it: DrawingML, and a VML copy for older readers."""
    inner = "".join(_p(p) for p in paragraphs)
    return (
        '<w:r><mc:AlternateContent><mc:Choice Requires="wps"><w:drawing><wp:anchor>'
        "<a:graphic><a:graphicData><wps:wsp><wps:txbx>"
        f"<w:txbxContent>{inner}</w:txbxContent>"
        "</wps:txbx></wps:wsp></a:graphicData></a:graphic></wp:anchor></w:drawing>"
        "</mc:Choice><mc:Fallback><w:pict><v:shape><v:textbox>"
        f"<w:txbxContent>{_p(fallback)}</w:txbxContent>"
        "</v:textbox></v:shape></w:pict></mc:Fallback></mc:AlternateContent></w:r>"
    )


def _blocks(data: bytes) -> list[tuple[str, dict[str, object]]]:
    doc = parse_document(extract_source(data, "docx"), "docx", file_name="d.docx")
    return [(b.text, b.locator.to_dict()) for b in doc.blocks]


BODY = (
    '<w:p><w:r><w:t>The pump runs hot.</w:t></w:r><w:r><w:footnoteReference w:id="7"/></w:r>'
    "</w:p>"
    f"<w:p><w:r><w:t>See the box.</w:t></w:r>{_box('Never open the valve.', 'Wear gloves.')}"
    "</w:p>"
    '<w:p><w:r><w:t>Cool it first.</w:t></w:r><w:r><w:footnoteReference w:id="3"/></w:r>'
    '<w:r><w:endnoteReference w:id="5"/></w:r></w:p>'
)
NOTES = {3: "Below 40 degrees.", 7: "Measured in 2024.|At full load.", 9: "Never shown."}


def test_text_boxes_in_order_and_notes_as_their_own_locators() -> None:
    blocks = _blocks(make_docx_xml(BODY, footnotes=NOTES, endnotes={5: "See the manual."}))
    assert blocks == [
        ("The pump runs hot.", {"heading": [], "paragraph": 1}),
        ("See the box.", {"heading": [], "paragraph": 2}),
        ("Never open the valve.", {"heading": [], "paragraph": 3}),
        ("Wear gloves.", {"heading": [], "paragraph": 4}),
        ("Cool it first.", {"heading": [], "paragraph": 5}),
        # numbered by first reference, as Word shows them: id 7 is footnote 1
        ("Measured in 2024.", {"part": "footnote", "footnote": 1}),
        ("At full load.", {"part": "footnote", "footnote": 1}),
        ("Below 40 degrees.", {"part": "footnote", "footnote": 2}),
        ("See the manual.", {"part": "endnote", "endnote": 1}),
    ]
    text = " ".join(t for t, _ in blocks)
    assert "the VML copy" not in text  # the fallback copy of the box is not read twice
    assert "Never shown." not in text  # a note nothing refers to is not shown by Word


def test_notes_never_share_a_chunk_with_the_body_or_each_other() -> None:
    doc = parse_document(
        extract_source(make_docx_xml(BODY, footnotes=NOTES), "docx"), "docx", file_name="d"
    )
    chunks = chunk_blocks(doc.blocks)
    assert [(c.text, describe_locator(c.locator.to_dict())) for c in chunks] == [
        (
            "The pump runs hot.\n\nSee the box.\n\nNever open the valve.\n\nWear gloves."
            "\n\nCool it first.",
            "¶ 1",
        ),
        ("Measured in 2024.\n\nAt full load.", "footnote 1"),
        ("Below 40 degrees.", "footnote 2"),
    ]


def test_no_external_entity_in_a_note_part_is_resolved(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-VALUE")
    data = make_docx_xml(BODY, footnotes={7: "x", 3: "y"})
    import io
    import zipfile

    parts = {}
    with zipfile.ZipFile(io.BytesIO(data)) as package:
        for name in package.namelist():
            parts[name] = package.read(name)
    evil = parts["word/footnotes.xml"].decode().replace("<w:t>x</w:t>", "<w:t>&xxe;</w:t>")
    doctype = f'<!DOCTYPE w:footnotes [<!ENTITY xxe SYSTEM "file://{secret}">]>'
    parts["word/footnotes.xml"] = (doctype + evil).encode()
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as package:
        for name, blob in parts.items():
            package.writestr(name, blob)
    blocks = _blocks(out.getvalue())  # read, the entity left unresolved (empty)
    assert "TOP-SECRET-VALUE" not in " ".join(t for t, _ in blocks)
    assert blocks[-1] == ("y", {"part": "footnote", "footnote": 2})


def test_docx_sample_comments_are_not_read() -> None:
    path = DOCXS / "comments-rich-para.docx"
    if not path.is_file():
        pytest.skip(f"shared sample {path} is absent")
    texts = [t for t, _ in _blocks(path.read_bytes())]
    # what the page shows; the four comments ("Text with hyperlink …", "Text with
    # inline image …", "Text with character style.", "Paragraph with Heading 2 …")
    # are the reviewers', not the document's
    assert texts == [
        "Document text",
        "Some text worthy of note.",
        "Other document text.",
        "Other text worthy of note.",
        "Paragraph 5",
        "Paragraph 6",
        "Paragraph 7",
    ]


@pytest.mark.parametrize("name", ["blk-paras-and-tables.docx", "hdr-header-footer.docx"])
def test_docx_samples_separator_notes_are_not_text(name: str) -> None:
    path = DOCXS / name
    if not path.is_file():
        pytest.skip(f"shared sample {path} is absent")
    blocks = _blocks(path.read_bytes())
    assert blocks and not any(loc.get("part") in ("footnote", "endnote") for _, loc in blocks)

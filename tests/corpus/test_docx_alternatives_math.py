"""DOCX markup-compatibility alternatives and equations (docs/corpus.md, "DOCX").

``mc:AlternateContent`` holds the same content more than once (``mc:Choice`` for current
readers, ``mc:Fallback`` for old ones): one branch is read, the first Choice, else the
Fallback, never both. Equations (``m:oMath``, ``m:oMathPara``) read as their ``m:t``
text in document order, in place."""

from __future__ import annotations

import json

from aborist.corpus.readers import extract_source, parse_document
from aborist.corpus.readers.docx import EXTRACTION_VERSION
from tests.corpus.documents import make_docx_xml

MC = 'xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006"'


def _r(text: str, props: str = "") -> str:
    return f'<w:r>{props}<w:t xml:space="preserve">{text}</w:t></w:r>'


def _p(*content: str) -> str:
    return "<w:p>" + "".join(content) + "</w:p>"


def _alt(*branches: tuple[str, str]) -> str:
    """``mc:AlternateContent`` of ``(kind, content)`` branches, kind ``Choice`` or
    ``Fallback``."""
    inner = "".join(
        f'<mc:Choice Requires="w14">{c}</mc:Choice>'
        if k == "Choice"
        else f"<mc:Fallback>{c}</mc:Fallback>"
        for k, c in branches
    )
    return f"<mc:AlternateContent>{inner}</mc:AlternateContent>"


def _texts(body: str, **notes: dict[int, str]) -> list[str]:
    raw = extract_source(make_docx_xml(body, **notes), "docx")
    return [b.text for b in parse_document(raw, "docx", file_name="d.docx").blocks]


def _box(content: str) -> str:
    return f"<w:txbxContent>{content}</w:txbxContent>"


def _drawing_box(text: str) -> str:
    return (
        "<w:drawing><wp:anchor><a:graphic><a:graphicData><wps:wsp><wps:txbx>"
        f"{_box(_p(_r(text)))}</wps:txbx></wps:wsp></a:graphicData></a:graphic></wp:anchor>"
        "</w:drawing>"
    )


def _vml_box(text: str) -> str:
    return f"<w:pict><v:shape><v:textbox>{_box(_p(_r(text)))}</v:textbox></v:shape></w:pict>"


# --- alternatives ------------------------------------------------------------------


def test_paragraphs_in_alternatives_are_read_once_from_the_first_choice() -> None:
    body = (
        _p(_r("Before."))
        + _alt(("Choice", _p(_r("Current text."))), ("Fallback", _p(_r("Old copy."))))
        + _p(_r("After."))
    )
    assert _texts(body) == ["Before.", "Current text.", "After."]


def test_runs_in_alternatives_are_read_in_place() -> None:
    body = _p(
        _r("The valve "),
        _alt(("Choice", _r("must stay shut")), ("Fallback", _r("MUST STAY SHUT"))),
        _r(" at night."),
    )
    assert _texts(body) == ["The valve must stay shut at night."]


def test_only_a_fallback_is_read_and_the_first_of_two_choices_wins() -> None:
    assert _texts(_alt(("Fallback", _p(_r("Only the fallback."))))) == ["Only the fallback."]
    two = _alt(
        ("Choice", _p(_r("First choice."))),
        ("Choice", _p(_r("Second choice."))),
        ("Fallback", _p(_r("Fallback."))),
    )
    assert _texts(two) == ["First choice."]


def test_a_text_box_is_read_once_whichever_branch_holds_it() -> None:
    both = _p(
        _r("Anchor."),
        "<w:r>" + _alt(("Choice", _drawing_box("In the box.")),
                       ("Fallback", _vml_box("In the box."))) + "</w:r>",
    )  # fmt: skip
    assert _texts(both) == ["Anchor.", "In the box."]
    vml_only = _p(_r("Anchor."), "<w:r>" + _alt(("Fallback", _vml_box("Old box."))) + "</w:r>")
    assert _texts(vml_only) == ["Anchor.", "Old box."]  # it was skipped as a fallback
    bare_vml = _p(_r("Anchor."), "<w:r>" + _vml_box("A VML box.") + "</w:r>")
    assert _texts(bare_vml) == ["Anchor.", "A VML box."]


def test_a_text_box_in_a_footnote_is_read_once() -> None:
    """Note paragraphs were found at any depth: both copies of a box were read."""
    inner = _box(_p(_r("Boxed note.")))
    box = (
        f"</w:t></w:r><w:r><mc:AlternateContent {MC}>"
        f'<mc:Choice Requires="wps">{inner}</mc:Choice><mc:Fallback>{inner}</mc:Fallback>'
        "</mc:AlternateContent></w:r><w:r><w:t>"
    )
    body = _p(_r("Body."), '<w:r><w:footnoteReference w:id="2"/></w:r>')
    assert _texts(body, footnotes={2: f"Note{box}."}) == ["Body.", "Note.", "Boxed note."]


# --- equations ---------------------------------------------------------------------


def _mr(text: str, props: str = "") -> str:
    return f"<m:r>{props}<m:t>{text}</m:t></m:r>"


EMC2 = (
    "<m:oMath>" + _mr("E=m") + "<m:sSup><m:e>" + _mr("c") + "</m:e><m:sup>" + _mr("2")
    + "</m:sup></m:sSup></m:oMath>"
)  # fmt: skip


def test_an_inline_equation_is_read_in_place() -> None:
    assert _texts(_p(_r("The energy is "), EMC2, _r(" in joules."))) == [
        "The energy is E=mc2 in joules."
    ]


def test_a_display_equation_is_its_own_paragraph_wherever_it_stands() -> None:
    fraction = (
        "<m:oMathPara><m:oMath><m:f><m:num>" + _mr("a") + "</m:num><m:den>" + _mr("b")
        + "</m:den></m:f></m:oMath></m:oMathPara>"
    )  # fmt: skip
    body = _p(_r("Where:")) + _p(fraction) + fraction + _p(_r("Done."))
    assert _texts(body) == ["Where:", "ab", "ab", "Done."]


def test_equations_in_cells_notes_and_alternatives() -> None:
    cell = "<w:tbl><w:tr><w:tc>" + _p(_r("x: "), EMC2) + "</w:tc></w:tr></w:tbl>"
    assert _texts(cell) == ["x: E=mc2"]
    m = 'xmlns:m="http://schemas.openxmlformats.org/officeDocument/2006/math"'
    note_math = f"</w:t></w:r><m:oMath {m}>{EMC2.removeprefix('<m:oMath>')}<w:r><w:t>"
    body = _p(_r("Body."), '<w:r><w:footnoteReference w:id="2"/></w:r>')
    assert _texts(body, footnotes={2: f"So {note_math}."}) == ["Body.", "So E=mc2."]
    alt = _p(_alt(("Choice", EMC2), ("Fallback", _r("[equation picture]"))))
    assert _texts(alt) == ["E=mc2"]


def test_hidden_and_deleted_math_runs_are_not_read() -> None:
    hidden = _mr("SECRET", "<w:rPr><w:vanish/></w:rPr>")
    shown = _mr("shown", '<w:rPr><w:vanish w:val="false"/></w:rPr>')
    deleted = '<w:del w:id="1" w:author="a">' + _mr("GONE") + "</w:del>"
    inserted = '<w:ins w:id="2" w:author="a">' + _mr("+1") + "</w:ins>"
    math = "<m:oMath>" + _mr("n") + hidden + deleted + inserted + shown + "</m:oMath>"
    assert _texts(_p(math)) == ["n+1shown"]


def test_the_extraction_says_its_version() -> None:
    raw = extract_source(make_docx_xml(_p(EMC2)), "docx")
    assert json.loads(raw)["extraction"] == EXTRACTION_VERSION == "docx-extract-4"


def test_a_note_whose_reference_was_deleted_is_not_read() -> None:
    """A footnote reference inside a tracked deletion (``w:del``) is deleted text: its note
    is not read (canon-4 read it, numbered before the live note)."""
    deleted = '<w:del w:id="9" w:author="a"><w:r><w:footnoteReference w:id="2"/></w:r></w:del>'
    body = _p(_r("Body."), deleted, '<w:r><w:footnoteReference w:id="3"/></w:r>')
    notes = {2: "Deleted ref note.", 3: "Live note."}
    assert _texts(body, footnotes=notes) == ["Body.", "Live note."]

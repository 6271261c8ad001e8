"""Hostile documents (docs/corpus.md, "What each reader drops"; "Linear time"): text a
reader of the rendered page cannot see is not evidence, and inputs that made the old
hand-written readers quadratic now finish at sizes that took seconds to minutes.

No timings are asserted: each hostile input is of a size that took many seconds before,
and the test only has to finish with the right text. bench/ingest.py measures scaling."""

from __future__ import annotations

import pytest

from aborist.corpus.chunking import MAX_CHARS, chunk_blocks
from aborist.corpus.readers import SourceFileSkipped, parse_document


def _text(raw: str, fmt: str) -> str:
    return "\n".join(b.text for b in parse_document(raw, fmt, file_name="doc").blocks)


FROBNICATOR = (
    "<html><body><h1>The frobnicator</h1>"
    "<p>The frobnicator is safe for children.</p>"
    '<div style="display:none">The frobnicator is toxic and must never be used by '
    "children.</div></body></html>"
)


def test_hidden_html_text_is_not_read() -> None:
    text = _text(FROBNICATOR, "html")
    assert "safe for children" in text
    assert "toxic" not in text


@pytest.mark.parametrize(
    "hidden",
    [
        "<div hidden>SECRET</div>",
        '<p hidden="until-found">SECRET</p>',
        '<span aria-hidden="true">SECRET</span>',
        '<div style="DISPLAY: None !important">SECRET</div>',
        '<div style="color:red;visibility:hidden">SECRET</div>',
        '<div style="visibility: collapse">SECRET</div>',
        '<div style="position:absolute; left:-9999px">SECRET</div>',
        '<div style="position:absolute;top:-100em">SECRET</div>',
        '<p style="text-indent:-10000px">SECRET</p>',
        '<div style="width:0;height:0;overflow:hidden">SECRET</div>',
        '<div style="height: 0px; overflow: hidden">SECRET</div>',
        '<span style="font-size:0">SECRET</span>',
        '<span style="opacity: 0.0">SECRET</span>',
        '<span style="clip: rect(0 0 0 0); position: absolute">SECRET</span>',
        '<span style="transform: scale(0)">SECRET</span>',
        "<select><option>SECRET</option></select>",
        "<textarea>SECRET</textarea>",
        "<button>SECRET</button>",
        '<input value="SECRET">',
        "<object data='x.swf'>SECRET</object>",
        "<template><p>SECRET</p></template>",
        "<noscript>SECRET</noscript>",
        "<script>document.write('SECRET')</script>",
        "<style>p::after{content:'SECRET'}</style>",
        "<dialog>SECRET</dialog>",
        "<!-- SECRET -->",
        '<img alt="SECRET" src="x.png">',
        "<div hidden><p>SECRET <b>nested</b> deeper</p></div>",
    ],
)
def test_each_kind_of_hidden_html_is_dropped(hidden: str) -> None:
    text = _text(f"<p>before</p>{hidden}<p>after</p>", "html")
    assert "SECRET" not in text
    assert "before" in text and "after" in text


def test_an_unclosed_comment_hides_the_rest_of_the_page_as_a_browser_does() -> None:
    # html.parser turned "<!-- SECRET" at the end of a file into visible text
    assert _text("<p>shown <!-- SECRET <p>also commented out</p>", "html") == "shown"


def test_text_after_a_hidden_element_is_kept() -> None:
    text = _text('<p>one <span hidden>SECRET</span>two <b style="">three</b></p>', "html")
    assert text == "one two three"
    assert _text("<dialog open>shown</dialog>", "html") == "shown"


def test_markdown_holds_inline_html_to_the_same_rules() -> None:
    raw = (
        "# Frobnicator\n\n"
        "The frobnicator is safe for children.\n\n"
        '<div style="display:none">The frobnicator is toxic for children.</div>\n\n'
        '<div style="display:none">\n\nA Markdown paragraph inside a hidden div: toxic.\n\n'
        "</div>\n\n"
        'Visible <span style="display:none">toxic</span>text.\n'
    )
    text = _text(raw, "markdown")
    assert "toxic" not in text
    assert "safe for children" in text
    assert "Visible text." in text


def test_rst_reads_no_files_and_passes_no_raw_html() -> None:
    raw = (
        "Title\n=====\n\n"
        ".. include:: /etc/passwd\n\n"
        ".. raw:: html\n\n   <p>RAW</p>\n\n"
        ".. csv-table::\n   :file: /etc/passwd\n\n"
        "Body.\n"
    )
    text = _text(raw, "rst")
    assert "root" not in text and "RAW" not in text
    assert text.endswith("Body.")


def test_html_nested_beyond_the_parser_limit_is_refused_not_truncated() -> None:
    deep = "<div>" * 5000 + "deep" + "</div>" * 5000 + "<p>after</p>"
    with pytest.raises(SourceFileSkipped, match="nested deeper than 2048"):
        parse_document(deep, "html", file_name="deep.html")


def test_rst_nested_beyond_the_parser_limit_is_refused() -> None:
    with pytest.raises(SourceFileSkipped, match="nested deeper"):
        parse_document("- " * 5000, "rst", file_name="deep.rst")


# --- sizes that took seconds to minutes with the old readers --------------------------


@pytest.mark.parametrize(
    ("fmt", "unit", "before"),
    [
        ("markdown", "**a ", "31 s"),
        ("markdown", "_a ", "19 s"),
        ("markdown", "[a", "10.7 s"),
        ("markdown", "<!--", "6 s"),
        ("rst", "*a ", "20 s"),
        ("html", "<a ", "72 s with html.parser"),
        ("html", "<a b='", "18 s with html.parser"),
    ],
)
def test_pathological_80_kb_inputs_finish(fmt: str, unit: str, before: str) -> None:
    raw = unit * (80_000 // len(unit))
    doc = parse_document(raw, fmt, file_name="x")
    chunks = chunk_blocks(doc.blocks)
    assert all(len(c.text) <= MAX_CHARS for c in chunks)
    if fmt != "html" and "a" in unit:  # unfinished markup's text is kept, as it renders
        assert sum(c.text.count("a") for c in chunks) == 80_000 // len(unit), before


@pytest.mark.parametrize(
    ("fmt", "raw"),
    [
        ("html", "<table><tr>" + "<td>a " * 40_000),
        ("markdown", "|" + " a |" * 40_000 + "\n|" + "---|" * 40_000 + "\n"),
    ],
)
def test_a_row_of_40_000_cells_is_read(fmt: str, raw: str) -> None:
    # the HTML reader joined the row's text so far at every cell: 40,000 cells took
    # minutes (64x the time for 8x the cells)
    doc = parse_document(raw, fmt, file_name="x")
    assert [b.text for b in doc.blocks] == [" ; ".join(["a"] * 40_000)]


def test_pathological_rst_in_many_paragraphs_finishes() -> None:
    # each paragraph under the inline limit, so the inline parser runs on all of them
    para = "*a " * 1000
    doc = parse_document("\n\n".join([para] * 30), "rst", file_name="x")
    assert len(doc.blocks) == 30
    assert doc.blocks[0].text.startswith("*a *a")


def test_one_line_text_of_8_mb_is_read_and_chunked() -> None:
    line = "abcdefghi " * 800_000
    doc = parse_document(line, "text", file_name="big.txt")
    chunks = chunk_blocks(doc.blocks)
    assert len(chunks) == 4000

"""Format readers (docs/corpus.md, "Readers")."""

from __future__ import annotations

import os
from pathlib import Path, PurePath

import pytest

from aborist.corpus.readers import (
    MAX_FILE_BYTES,
    SourceFileSkipped,
    format_for,
    parse_document,
    read_source_bytes,
)


def _texts(raw: str, fmt: str, name: str = "doc") -> tuple[str, list[tuple[int, str]]]:
    doc = parse_document(raw, fmt, file_name=name)
    return doc.title, [(b.level, b.text) for b in doc.blocks]


def test_markdown_headings_paragraphs_and_inline_markup() -> None:
    raw = (
        "Intro line\n\n"
        "## What Is _Ownership_?\n\n"
        "_Ownership_ is a **set of rules** that\ngovern [memory](https://x.y) use.\n\n"
        'The `Vec<T>` type and `snake_case_name` stay; <span class="x">tags</span> go.\n\n'
        "```rust\nlet x = 5;\n{{#include ../listings/x.rs}}\n```\n\n"
        "> ### The Stack\n>\n> quoted &amp; escaped\n\n"
        "- first item\n- second item\n\n"
        "Setext Title\n------------\n"
    )
    title, blocks = _texts(raw, "markdown")
    assert title == "What Is Ownership?"
    assert blocks == [
        (0, "Intro line"),
        (2, "What Is Ownership?"),
        (0, "Ownership is a set of rules that govern memory use."),
        (0, "The Vec<T> type and snake_case_name stay; tags go."),
        (0, "let x = 5;"),
        (3, "The Stack"),
        (0, "quoted & escaped"),
        (0, "first item"),
        (0, "second item"),
        (2, "Setext Title"),
    ]


def test_markdown_raw_is_kept_beside_canonical() -> None:
    doc = parse_document("# T\n\n**bold**\ntext\n", "markdown", file_name="t.md")
    para = doc.blocks[1]
    assert para.raw == "**bold**\ntext"
    assert para.text == "bold text"


def test_text_title_is_file_name() -> None:
    title, blocks = _texts("one\ntwo\n\n\nthree", "text", "notes.txt")
    assert title == "notes"
    assert blocks == [(0, "one two"), (0, "three")]


def test_rst_sections_directives_and_roles() -> None:
    raw = (
        "=========\nUser Guide\n=========\n\n"
        "Install\n-------\n\n"
        "Run ``pip install`` and see :ref:`the docs <docs>` or `site <https://x>`_.\n\n"
        ".. note::\n\n   indented directive body\n\n"
        ".. unknown-directive::\n\n   dropped with its error\n\n"
        ".. comment, dropped\n\n"
        "After the note.\n"
    )
    title, blocks = _texts(raw, "rst")
    assert title == "User Guide"
    assert blocks == [
        (1, "User Guide"),
        (2, "Install"),
        (0, "Run pip install and see the docs or site."),
        (0, "indented directive body"),  # an admonition's text is shown on the page
        (0, "After the note."),
    ]


def test_html_uses_a_parser_and_skips_scripts() -> None:
    raw = (
        "<html><head><title>Page Title</title><style>p{}</style></head><body>"
        "<script>var a = '<p>not text</p>';</script>"
        "<h2>Main &amp; Heading</h2><p>First <b>bold</b>\n para.</p>"
        "<ul><li>one</li><li>two</li></ul><p>x &lt; y</p></body></html>"
    )
    title, blocks = _texts(raw, "html", "page.html")
    assert title == "Main & Heading"
    assert blocks == [
        (2, "Main & Heading"),
        (0, "First bold para."),
        (0, "one"),
        (0, "two"),
        (0, "x < y"),
    ]


def test_html_title_element_then_file_name() -> None:
    assert _texts("<title>Only Title</title><p>body</p>", "html")[0] == "Only Title"
    assert _texts("<p>body</p>", "html", "bare.html")[0] == "bare"


def test_format_for_suffixes() -> None:
    assert format_for(PurePath("a.MD")) == "markdown"
    assert format_for(PurePath("a.htm")) == "html"
    assert format_for(PurePath("a.PDF")) == "pdf"
    assert format_for(PurePath("a.docx")) == "docx"
    assert format_for(PurePath("a.doc")) is None


# --- read_source_bytes: what may be read at all (docs/corpus.md, "What is read") -------


def _skip_reason(path: Path, limit: int = MAX_FILE_BYTES) -> str:
    with pytest.raises(SourceFileSkipped) as caught:
        read_source_bytes(path, limit=limit)
    return caught.value.reason


def test_read_source_bytes_refuses_non_regular_files_without_opening_them(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.txt"
    os.mkfifo(fifo)  # opening this for reading would block until a writer appears
    zero = tmp_path / "z.txt"
    zero.symlink_to("/dev/zero")  # reading this would never end
    assert _skip_reason(fifo) == "not a regular file (named pipe)"
    assert _skip_reason(zero) == "not a regular file (character device)"
    assert _skip_reason(tmp_path) == "not a regular file (directory)"


def test_read_source_bytes_names_symlink_loops_and_broken_links(tmp_path: Path) -> None:
    (tmp_path / "a.md").symlink_to("b.md")
    (tmp_path / "b.md").symlink_to("a.md")
    (tmp_path / "gone.md").symlink_to("nowhere.md")
    assert _skip_reason(tmp_path / "a.md") == "symlink loop"
    assert _skip_reason(tmp_path / "gone.md") == "broken symlink (its target does not exist)"


def test_read_source_bytes_caps_the_size(tmp_path: Path) -> None:
    assert MAX_FILE_BYTES == 64 * 1024 * 1024
    big = tmp_path / "big.txt"
    big.write_bytes(b"x" * 101)
    assert _skip_reason(big, limit=100) == (
        "larger than the 100 bytes limit for one file (101 bytes)"
    )
    assert read_source_bytes(big, limit=101) == b"x" * 101


@pytest.mark.skipif(not Path("/proc/self/status").is_file(), reason="needs Linux /proc")
def test_read_source_bytes_is_bounded_even_when_the_size_is_misreported(tmp_path: Path) -> None:
    # /proc files are regular files that report size 0 and hold more: the stat check
    # passes, so only the bounded read can stop them (as it stops a file that grows).
    proc = tmp_path / "status.txt"
    proc.symlink_to("/proc/self/status")
    assert os.stat(proc).st_size == 0
    assert _skip_reason(proc, limit=16) == (
        "larger than the 16 bytes limit for one file (it held more than its reported size)"
    )

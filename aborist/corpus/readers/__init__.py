"""Format readers: a source → title + heading / paragraph blocks with locators.

Part of ``canonicalization_version`` (docs/corpus.md, "Readers"). Each reader is a pure
function of (raw text, file name), so a shard can be rebuilt from the raw text it keeps;
for PDF and DOCX the raw text is the extraction the reader made of the file's bytes
(:func:`extract_source`). One module per format:

* :mod:`.text` (``.txt``), :mod:`.markdown` (markdown-it-py), :mod:`.rst` (docutils),
  :mod:`.html` (libxml2 through lxml, hidden content dropped), :mod:`.pdf` (pypdf),
  :mod:`.docx` (python-docx);
* :mod:`.source`: the one place a source file's bytes are read.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator
from pathlib import PurePath

from aborist.corpus.canonicalize import canonical_inline
from aborist.corpus.readers.docx import docx_blocks, extract_docx
from aborist.corpus.readers.html import MAX_DEPTH, HtmlTooDeep, html_blocks
from aborist.corpus.readers.markdown import markdown_blocks
from aborist.corpus.readers.model import (
    Block,
    Locator,
    ParsedDocument,
    describe_locator,
    number_blocks,
)
from aborist.corpus.readers.pdf import extract_pdf, pages_without_text, pdf_blocks
from aborist.corpus.readers.rst import RstTooDeep, rst_blocks
from aborist.corpus.readers.source import (
    MAX_FILE_BYTES,
    SourceFileSkipped,
    TreeFile,
    WalkedRoot,
    read_source_bytes,
)
from aborist.corpus.readers.text import text_blocks

__all__ = [
    "BINARY_FORMATS",
    "FORMATS",
    "MAX_FILE_BYTES",
    "Block",
    "Locator",
    "ParsedDocument",
    "SourceFileSkipped",
    "TreeFile",
    "WalkedRoot",
    "describe_locator",
    "extract_source",
    "format_for",
    "pages_without_text",
    "parse_document",
    "read_source_bytes",
]

FORMATS: dict[str, str] = {
    ".txt": "text",
    ".md": "markdown",
    ".markdown": "markdown",
    ".rst": "rst",
    ".html": "html",
    ".htm": "html",
    ".pdf": "pdf",
    ".docx": "docx",
}
BINARY_FORMATS = frozenset({"pdf", "docx"})
"""Formats read from bytes by :func:`extract_source`; their stored raw text is the
extraction (canonical JSON), which :func:`parse_document` reads."""


def extract_source(data: bytes, fmt: str) -> str:
    """The stored raw text of a binary-format file: its extraction (PDF, DOCX). Raises
    :class:`SourceFileSkipped` for a file that cannot be read, with the reason."""
    if fmt == "pdf":
        return extract_pdf(data)
    if fmt == "docx":
        return extract_docx(data)
    raise ValueError(f"not a binary format: {fmt!r}")


def format_for(path: PurePath) -> str | None:
    """The reader name for a file suffix, or ``None`` when the type is unsupported."""
    return FORMATS.get(path.suffix.lower())


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while a document is parsed.

    A parser builds one object per token or node; the collector's full passes scan every
    live object, and they come more often as the heap grows, so with the collector on,
    parsing takes superlinear time (80 KB → 640 KB of Markdown ``_a ``: 9.6x the time for
    8x the input; with it paused, 6.0x). Memory is bounded by the input (at most
    ``MAX_FILE_BYTES``), the trees are freed when parsing ends, and the collector runs
    again afterwards for whatever cycles they left."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def parse_document(raw: str, fmt: str, *, file_name: str) -> ParsedDocument:
    """Parse ``raw`` with the reader for ``fmt``; the title falls back to the file stem.

    Raises :class:`SourceFileSkipped` for a source the reader refuses (HTML or reST
    nested deeper than its parser reads)."""
    with _collector_paused():
        return _parse_document(raw, fmt, file_name=file_name)


def _parse_document(raw: str, fmt: str, *, file_name: str) -> ParsedDocument:
    """Parse ``raw`` with the reader for ``fmt``; the title falls back to the file stem.

    Raises :class:`SourceFileSkipped` for a source the reader refuses (HTML or reST
    nested deeper than its parser reads)."""
    extra_title: str | None = None
    if fmt == "markdown":
        try:
            blocks = markdown_blocks(raw)
        except HtmlTooDeep as e:  # the HTML reader reads what Markdown renders to
            raise SourceFileSkipped(
                f"Markdown nested deeper than {MAX_DEPTH} elements (in the HTML it renders to)"
            ) from e
    elif fmt == "rst":
        try:
            blocks = rst_blocks(raw)
        except RstTooDeep as e:
            raise SourceFileSkipped(str(e)) from e
    elif fmt == "html":
        try:
            blocks, extra_title = html_blocks(raw)
        except HtmlTooDeep as e:
            raise SourceFileSkipped(str(e)) from e
    elif fmt == "text":
        blocks = text_blocks(raw)
    elif fmt == "pdf":
        blocks, extra_title = pdf_blocks(raw)
    elif fmt == "docx":
        blocks, extra_title = docx_blocks(raw)
    else:
        raise ValueError(f"unknown format {fmt!r}")
    kept = tuple(number_blocks(b for b in blocks if b.text))
    heading = next((b.text for b in kept if b.is_heading and b.locator.part is None), None)
    if fmt in BINARY_FORMATS:  # the document's own metadata title comes first
        title = extra_title or heading or PurePath(file_name).stem or file_name
    else:
        title = heading or extra_title or PurePath(file_name).stem or file_name
    return ParsedDocument(title=canonical_inline(title), blocks=kept)

"""Chunking: blocks → chunks that follow heading and paragraph boundaries.

The rules and constants are ``chunking_version`` (docs/corpus.md, "Chunking"); changing
any of them changes chunk hashes, so bump the version with them.

1. A heading always starts a new chunk; consecutive headings stay together with the text
   that follows them, up to :data:`MAX_CHARS` of headings (a longer run of headings is
   cut into chunks of their own). Each chunk records its ``section``: the innermost
   heading above it.
2. Paragraphs are packed greedily into a chunk while it stays within
   :data:`TARGET_CHARS`; a chunk still shorter than :data:`MIN_CHARS` may grow up to
   :data:`MAX_CHARS` rather than leave a scrap behind.
3. A paragraph longer than :data:`MAX_CHARS` is cut at sentence ends, and a sentence
   longer than that at spaces, into pieces of at most :data:`MAX_CHARS`.
4. Paragraphs inside a chunk are joined by one blank line. The chunk hash is
   sha256(UTF-8 of the chunk text).
5. A chunk never straddles a PDF page or the boundary between a DOCX body and its
   headers and footers; its locator is that of its first paragraph.

Pure: no I/O, no clock, no randomness.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from aborist.corpus.readers import Block, Locator

__all__ = [
    "CHUNKING_VERSION",
    "MAX_CHARS",
    "MIN_CHARS",
    "TARGET_CHARS",
    "Chunk",
    "chunk_blocks",
    "chunk_hash",
]

CHUNKING_VERSION = "chunk-2"
TARGET_CHARS = 1200
MIN_CHARS = 300
MAX_CHARS = 2000

_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]’”]*\s+")


@dataclass(frozen=True)
class Chunk:
    index: int
    section: str
    text: str
    raw: str
    hash: str
    locator: Locator = field(default_factory=Locator)
    """Where the chunk starts in its source: the locator of its first paragraph (of its
    first heading when it holds only headings)."""


@dataclass
class _Piece:
    text: str
    raw: str
    heading: bool = False
    locator: Locator = field(default_factory=Locator)


def _boundary(locator: Locator) -> tuple[int | None, str | None, int | None, int | None]:
    """What a chunk may not straddle: a PDF page, a DOCX header, footer or note."""
    return locator.page, locator.part, locator.footnote, locator.endnote


def chunk_hash(text: str) -> str:
    """sha256 of the chunk text's UTF-8 bytes, lower-case hex."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _cut_at_spaces(sentence: str, limit: int, out: list[str]) -> None:
    """Append ``sentence`` cut at spaces into pieces of at most ``limit`` characters.

    The cuts move an index through the string and slice each piece once: re-slicing the
    remainder after every cut would copy the rest of the string each time, which is
    quadratic on a long line with no sentence end (a one-line file of many megabytes)."""
    start, end = 0, len(sentence)
    while end - start > limit:
        cut = sentence.rfind(" ", start, start + limit)
        if cut <= start:
            cut = start + limit
        piece = sentence[start:cut].rstrip()
        if piece:
            out.append(piece)
        start = cut
        while start < end and sentence[start].isspace():
            start += 1
    if start < end:
        out.append(sentence[start:])


def _split_long(text: str, limit: int) -> list[str]:
    """Sentences packed up to ``limit``; over-long sentences cut at spaces. Linear in
    ``len(text)``: each character is scanned a bounded number of times."""
    units: list[str] = []
    for sentence in _SENTENCE_END.split(text):
        if sentence:
            _cut_at_spaces(sentence, limit, units)
    pieces: list[str] = []
    current: list[str] = []
    size = 0
    for unit in units:
        if current and size + 1 + len(unit) > limit:
            pieces.append(" ".join(current))
            current, size = [unit], len(unit)
        else:
            size += len(unit) + (1 if current else 0)
            current.append(unit)
    if current:
        pieces.append(" ".join(current))
    return pieces


def _pieces(block: Block) -> list[_Piece]:
    if block.is_heading or len(block.text) <= MAX_CHARS:
        return [_Piece(block.text, block.raw, block.is_heading, block.locator)]
    texts = _split_long(block.text, MAX_CHARS)
    raws = _split_long(block.raw, MAX_CHARS)
    if len(raws) != len(texts):
        raws = [block.raw] + [""] * (len(texts) - 1)
    return [_Piece(t, r, False, block.locator) for t, r in zip(texts, raws, strict=True)]


def chunk_blocks(blocks: Sequence[Block]) -> list[Chunk]:
    """Apply the chunking rules to one document's blocks, in order.

    The chunk being built keeps its size and whether it holds only headings as running
    values, so each piece costs O(1) to place: recounting the chunk for every piece made
    a document of many short headings (which all gather in one chunk) quadratic."""
    chunks: list[Chunk] = []
    current: list[_Piece] = []
    size = 0
    only_headings = True
    section = ""
    current_section = ""
    current_part: str | None = None

    def flush() -> None:
        nonlocal size, only_headings
        if not current:
            return
        text = "\n\n".join(p.text for p in current)
        raw = "\n\n".join(p.raw for p in current if p.raw)
        first = next((p for p in current if not p.heading), current[0])
        chunks.append(
            Chunk(len(chunks), current_section, text, raw, chunk_hash(text), first.locator)
        )
        current.clear()
        size, only_headings = 0, True

    def add(piece: _Piece) -> None:
        nonlocal size, only_headings
        size += len(piece.text) + (2 if current else 0)
        only_headings = only_headings and piece.heading
        current.append(piece)

    for block in blocks:
        for piece in _pieces(block):
            if current and _boundary(piece.locator) != _boundary(current[-1].locator):
                flush()
                if piece.locator.part != current_part:
                    section = ""
                current_part = piece.locator.part
            if piece.heading:
                if current and (not only_headings or size + 2 + len(piece.text) > MAX_CHARS):
                    flush()
                section = current_section = piece.text
                add(piece)
                continue
            if current and not only_headings:
                grown = size + 2 + len(piece.text)
                if grown > MAX_CHARS or (grown > TARGET_CHARS and size >= MIN_CHARS):
                    flush()
                    current_section = section
            if not current:
                current_section = section
            add(piece)
    flush()
    return chunks

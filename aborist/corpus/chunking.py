"""Chunking: blocks → chunks that follow heading and paragraph boundaries.

The rules and constants are ``chunking_version`` (docs/corpus.md, "Chunking"); changing
any of them changes chunk hashes, so bump the version with them.

1. A heading always starts a new chunk; consecutive headings stay together with the text
   that follows them. Each chunk records its ``section``: the innermost heading above it.
2. Paragraphs are packed greedily into a chunk while it stays within
   :data:`TARGET_CHARS`; a chunk still shorter than :data:`MIN_CHARS` may grow up to
   :data:`MAX_CHARS` rather than leave a scrap behind.
3. A paragraph longer than :data:`MAX_CHARS` is cut at sentence ends, and a sentence
   longer than that at spaces, into pieces of at most :data:`MAX_CHARS`.
4. Paragraphs inside a chunk are joined by one blank line. The chunk hash is
   sha256(UTF-8 of the chunk text).

Pure: no I/O, no clock, no randomness.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass

from aborist.corpus.readers import Block

__all__ = [
    "CHUNKING_VERSION",
    "MAX_CHARS",
    "MIN_CHARS",
    "TARGET_CHARS",
    "Chunk",
    "chunk_blocks",
    "chunk_hash",
]

CHUNKING_VERSION = "chunk-1"
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


@dataclass
class _Piece:
    text: str
    raw: str
    heading: bool = False


def chunk_hash(text: str) -> str:
    """sha256 of the chunk text's UTF-8 bytes, lower-case hex."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _split_long(text: str, limit: int) -> list[str]:
    """Sentences packed up to ``limit``; over-long sentences cut at spaces."""
    sentences = [s for s in _SENTENCE_END.split(text) if s]
    units: list[str] = []
    for sentence in sentences:
        while len(sentence) > limit:
            cut = sentence.rfind(" ", 0, limit)
            cut = cut if cut > 0 else limit
            units.append(sentence[:cut].rstrip())
            sentence = sentence[cut:].lstrip()
        if sentence:
            units.append(sentence)
    pieces: list[str] = []
    current = ""
    for unit in units:
        if current and len(current) + 1 + len(unit) > limit:
            pieces.append(current)
            current = unit
        else:
            current = f"{current} {unit}" if current else unit
    if current:
        pieces.append(current)
    return pieces


def _pieces(block: Block) -> list[_Piece]:
    if block.is_heading or len(block.text) <= MAX_CHARS:
        return [_Piece(block.text, block.raw, block.is_heading)]
    texts = _split_long(block.text, MAX_CHARS)
    raws = _split_long(block.raw, MAX_CHARS)
    if len(raws) != len(texts):
        raws = [block.raw] + [""] * (len(texts) - 1)
    return [_Piece(t, r) for t, r in zip(texts, raws, strict=True)]


def chunk_blocks(blocks: Sequence[Block]) -> list[Chunk]:
    """Apply the chunking rules to one document's blocks, in order."""
    chunks: list[Chunk] = []
    current: list[_Piece] = []
    section = ""
    current_section = ""

    def size(pieces: list[_Piece]) -> int:
        return sum(len(p.text) for p in pieces) + 2 * max(0, len(pieces) - 1)

    def flush() -> None:
        if not current:
            return
        text = "\n\n".join(p.text for p in current)
        raw = "\n\n".join(p.raw for p in current if p.raw)
        chunks.append(Chunk(len(chunks), current_section, text, raw, chunk_hash(text)))
        current.clear()

    for block in blocks:
        for piece in _pieces(block):
            if piece.heading:
                if current and not all(p.heading for p in current):
                    flush()
                section = current_section = piece.text
                current.append(piece)
                continue
            if current and not all(p.heading for p in current):
                grown = size([*current, piece])
                if grown > MAX_CHARS or (grown > TARGET_CHARS and size(current) >= MIN_CHARS):
                    flush()
                    current_section = section
            if not current:
                current_section = section
            current.append(piece)
    flush()
    return chunks

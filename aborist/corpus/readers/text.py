"""Plain text: paragraphs separated by blank lines; no headings, so the title is the file
name. Each paragraph's locator is the line it starts on."""

from __future__ import annotations

from aborist.corpus.canonicalize import canonical_block
from aborist.corpus.readers.model import Block, Locator

__all__ = ["text_blocks"]


def text_blocks(raw: str) -> list[Block]:
    """Blank-line separated paragraphs of ``raw``; one pass over its lines."""
    blocks: list[Block] = []
    current: list[str] = []
    first = 0
    for number, line in enumerate(raw.split("\n"), start=1):
        if line.strip():
            if not current:
                first = number
            current.append(line)
        elif current:
            blocks.append(_paragraph(current, first))
            current = []
    if current:
        blocks.append(_paragraph(current, first))
    return blocks


def _paragraph(lines: list[str], first: int) -> Block:
    raw = "\n".join(lines)
    return Block(text=canonical_block(raw), raw=raw, locator=Locator(line=first))

"""What every reader returns: a title and a sequence of heading / paragraph blocks, each
with the place in the source it came from (its :class:`Locator`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

__all__ = ["Block", "Locator", "ParsedDocument", "describe_locator", "number_blocks"]


_FIELDS = ("page", "page_label", "heading", "paragraph", "line", "part", "footnote", "endnote")


@dataclass(frozen=True)
class Locator:
    """Where a block sits in its source, so a reader of a citation can open it there.

    * PDF: ``page`` (1-based index in the file) and ``page_label`` (the label the
      document prints or its viewer shows, e.g. ``"iv"``; the page number when the file
      defines none).
    * DOCX, Markdown, reST, HTML: ``heading`` (the path of headings above the block,
      outermost first) and ``paragraph`` (1-based position of the block among the
      document's non-heading blocks); DOCX headers and footers also carry ``part``.
    * DOCX footnotes and endnotes: ``part`` (``footnote`` / ``endnote``) and the note's
      number as Word shows it (``footnote`` / ``endnote``).
    * Plain text: ``line`` (1-based line where the paragraph starts).
    """

    page: int | None = None
    page_label: str | None = None
    heading: tuple[str, ...] | None = None
    paragraph: int | None = None
    line: int | None = None
    part: str | None = None
    footnote: int | None = None
    endnote: int | None = None

    def to_dict(self) -> dict[str, object]:
        """The locator as stored and recorded: only the fields this format has."""
        out: dict[str, object] = {}
        for name in _FIELDS:
            value = getattr(self, name)
            if value is not None:
                out[name] = list(value) if name == "heading" else value
        return out


@dataclass(frozen=True)
class Block:
    """One heading or paragraph. ``level`` is 0 for paragraphs, 1-6 for headings.
    ``text`` is canonical (what chunks, hashes and the verifier see); ``raw`` is the
    source slice it came from (what the inspect sidecar compares against)."""

    text: str
    raw: str
    level: int = 0
    locator: Locator = field(default_factory=Locator)

    @property
    def is_heading(self) -> bool:
        return self.level > 0


@dataclass(frozen=True)
class ParsedDocument:
    title: str
    blocks: tuple[Block, ...]


def number_blocks(blocks: Iterable[Block]) -> list[Block]:
    """Give each block the heading path above it and its paragraph number (headings get
    the path they open and the number of the paragraph that follows them). Blocks whose
    locator already names a page, a line or a note keep it; the ``part`` (header, footer) of a
    block starts its own heading path."""
    out: list[Block] = []
    path: list[tuple[int, str]] = []
    part: str | None = None
    paragraph = 0
    for block in blocks:
        loc = block.locator
        if loc.page is not None or loc.line is not None or loc.footnote or loc.endnote:
            out.append(block)
            continue
        if loc.part != part:
            part, path = loc.part, []
        if block.is_heading:
            while path and path[-1][0] >= block.level:
                path.pop()
            path.append((block.level, block.text))
            number = paragraph + 1
        else:
            paragraph += 1
            number = paragraph
        heading = tuple(text for _, text in path)
        out.append(replace(block, locator=replace(loc, heading=heading, paragraph=number)))
    return out


def describe_locator(locator: Mapping[str, Any] | None) -> str:
    """A locator as a reader cites it: ``p. 6``; ``p. vi (6th page of the file)`` when
    the label is not the page number; ``§ Policy › Scope, ¶ 3``; ``header, ¶ 7``;
    ``footnote 2``; ``line 17``. Empty for no locator."""
    if not locator:
        return ""
    page = locator.get("page")
    if isinstance(page, int):
        label = str(locator.get("page_label") or page)
        return f"p. {label}" if label == str(page) else f"p. {label} (page {page} of the file)"
    if isinstance(locator.get("line"), int):
        return f"line {locator['line']}"
    for note in ("footnote", "endnote"):
        if isinstance(locator.get(note), int):
            return f"{note} {locator[note]}"
    parts = []
    if locator.get("part"):
        parts.append(str(locator["part"]))
    heading = locator.get("heading") or []
    if heading:
        parts.append("§ " + " › ".join(str(h) for h in heading))
    if isinstance(locator.get("paragraph"), int):
        parts.append(f"¶ {locator['paragraph']}")
    return ", ".join(parts)

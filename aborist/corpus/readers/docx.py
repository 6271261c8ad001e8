"""DOCX through python-docx: body paragraphs and tables in document order, headings by
paragraph style, headers and footers kept apart.

Two steps, like the PDF reader, so a shard can re-derive a document from what it stores:

1. :func:`extract_docx` (bytes → extraction): the body in order, each paragraph as its
   visible text (runs marked hidden, ``w:vanish``, are left out, as Word does not show
   them) with its heading level (style ``Title`` → 1, ``Heading N`` → N, capped at 6;
   else 0), each table row as its cells (merged cells once), then each section's headers
   and footers that are its own (not linked to the previous section's), once per
   distinct text. Stored as canonical JSON in the shard's ``raw_text``.
2. :func:`docx_blocks` (extraction → blocks, pure). The locator is the heading path and
   the paragraph number (DOCX stores no pages); header and footer blocks also carry
   ``part`` (``header`` / ``footer``), and chunks never mix them with the body.

Refused: a file that is not a ZIP package or has no main document part, a package
whose parts decompress to more than :data:`MAX_UNPACKED_BYTES` (a ZIP bomb), and
other malformed files.
"""

from __future__ import annotations

import io
import json
import re
import zipfile
from typing import Any

from aborist.corpus.canonicalize import canonical_block, canonical_inline
from aborist.corpus.readers.model import Block, Locator
from aborist.corpus.readers.source import SourceFileSkipped

__all__ = ["EXTRACTION_VERSION", "MAX_UNPACKED_BYTES", "docx_blocks", "extract_docx"]

EXTRACTION_VERSION = "docx-extract-2"
MAX_UNPACKED_BYTES = 256 * 1024 * 1024
_HEADING_STYLE = re.compile(r"^heading ([1-9])$", re.I)


def _level(paragraph: Any) -> int:
    try:
        style = paragraph.style
    except Exception:  # a style id the styles part does not define
        return 0
    name = (getattr(style, "name", "") or "").strip()
    if name.lower() == "title":
        return 1
    m = _HEADING_STYLE.match(name)
    return min(int(m.group(1)), 6) if m else 0


def _visible_text(paragraph: Any) -> str:
    from docx.text.hyperlink import Hyperlink
    from docx.text.run import Run

    parts: list[str] = []
    for item in paragraph.iter_inner_content():
        runs = item.runs if isinstance(item, Hyperlink) else [item]
        for run in runs:
            if isinstance(run, Run) and not run.font.hidden:
                parts.append(run.text)
    return "".join(parts)


def _rows(table: Any) -> list[list[str]]:
    rows = []
    for row in table.rows:
        cells: list[str] = []
        seen: set[int] = set()
        for cell in row.cells:
            if id(cell._tc) in seen:  # a merged cell repeats across the cells it spans
                continue
            seen.add(id(cell._tc))
            cells.append("\n".join(_visible_text(p) for p in cell.paragraphs))
        rows.append(cells)
    return rows


def _items(container: Any, part: str) -> list[dict[str, Any]]:
    from docx.table import Table

    items: list[dict[str, Any]] = []
    for item in container.iter_inner_content():
        if isinstance(item, Table):
            items.extend({"kind": "row", "part": part, "cells": r} for r in _rows(item))
        else:
            items.append(
                {"kind": "paragraph", "part": part, "level": _level(item),
                 "text": _visible_text(item)}
            )  # fmt: skip
            items.extend(_text_box_items(item, part))
    return items


def _text_box_items(paragraph: Any, part: str) -> list[dict[str, Any]]:
    """The text boxes anchored in ``paragraph``, in document order, right after it: their
    paragraphs (level 0: a box's styles do not make the page's sections) and table rows.
    Word stores a box twice, as DrawingML (``mc:Choice``) and as VML for old readers
    (``mc:Fallback``); the fallback is skipped. A box inside a box follows it."""
    from docx.oxml.ns import qn
    from docx.table import Table
    from docx.text.paragraph import Paragraph

    fallback = "{http://schemas.openxmlformats.org/markup-compatibility/2006}Fallback"
    items: list[dict[str, Any]] = []
    for box in paragraph._p.iter(qn("w:txbxContent")):
        if any(a.tag == fallback for a in box.iterancestors()):
            continue
        for child in box:
            if child.tag == qn("w:tbl"):
                rows = _rows(Table(child, paragraph._parent))
                items.extend({"kind": "row", "part": part, "cells": r} for r in rows)
            elif child.tag == qn("w:p"):
                text = _visible_text(Paragraph(child, paragraph._parent))
                items.append({"kind": "paragraph", "part": part, "level": 0, "text": text})
    return items


_NOTE_KINDS = (("footnote", "/footnotes"), ("endnote", "/endnotes"))


def _note_items(document: Any) -> list[dict[str, Any]]:
    """Footnotes, then endnotes, each numbered as Word shows it: by the order of its
    first reference in the body. Notes no reference points to (Word shows none) and
    the separator notes Word keeps in the part are not read."""
    from docx.oxml import parse_xml
    from docx.oxml.ns import qn
    from docx.text.paragraph import Paragraph

    items: list[dict[str, Any]] = []
    body = document.element.body
    for kind, reltype in _NOTE_KINDS:
        part = next(
            (r.target_part for r in document.part.rels.values()
             if not r.is_external and r.reltype.endswith(reltype)),
            None,
        )  # fmt: skip
        if part is None:
            continue
        numbers: dict[str, int] = {}
        for ref in body.iter(qn(f"w:{kind}Reference")):
            numbers.setdefault(ref.get(qn("w:id")) or "", len(numbers) + 1)
        # python-docx's parser: no entities resolved, no network, no DTD loaded
        root = parse_xml(part.blob)
        notes = []
        for note in root.iter(qn(f"w:{kind}")):
            number = numbers.get(note.get(qn("w:id")) or "")
            if number is None or note.get(qn("w:type"), "normal") != "normal":
                continue
            paragraphs = note.iter(qn("w:p"))  # CT_P, parsed with python-docx's classes
            texts = [_visible_text(Paragraph(p, document)) for p in paragraphs]  # type: ignore[arg-type]
            notes.append((number, texts))
        for number, texts in sorted(notes, key=lambda n: n[0]):
            items.extend(
                {"kind": "paragraph", "part": kind, "note": number, "level": 0, "text": t}
                for t in texts
            )
    return items


def _check_package(data: bytes) -> None:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as package:
            infos = package.infolist()
    except (zipfile.BadZipFile, OSError, ValueError) as e:
        raise SourceFileSkipped(f"malformed DOCX: not a ZIP package ({e})") from e
    unpacked = sum(i.file_size for i in infos)
    if unpacked > MAX_UNPACKED_BYTES:
        raise SourceFileSkipped(
            f"DOCX whose parts unpack to {unpacked} bytes, more than the "
            f"{MAX_UNPACKED_BYTES // (1024 * 1024)} MiB limit"
        )


def extract_docx(data: bytes) -> str:
    """The extraction of a DOCX file as canonical JSON; raises
    :class:`SourceFileSkipped` naming why a file cannot be read."""
    _check_package(data)
    try:
        import docx

        document = docx.Document(io.BytesIO(data))
        items = _items(document, "body")
        items.extend(_note_items(document))
        seen: set[str] = set()
        for section in document.sections:
            for part, kinds in (
                ("header", ("first_page_header", "header", "even_page_header")),
                ("footer", ("first_page_footer", "footer", "even_page_footer")),
            ):
                for kind in kinds:
                    hf = getattr(section, kind)
                    if hf.is_linked_to_previous:
                        continue
                    found = _items(hf, part)
                    key = json.dumps(found, sort_keys=True)
                    if key not in seen:
                        seen.add(key)
                        items.extend(found)
        title = document.core_properties.title or ""
    except SourceFileSkipped:
        raise
    except Exception as e:
        raise SourceFileSkipped(f"malformed DOCX ({type(e).__name__}: {e})"[:300]) from e
    doc = {"extraction": EXTRACTION_VERSION, "title": title, "items": items}
    return json.dumps(doc, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def docx_blocks(raw: str) -> tuple[list[Block], str | None]:
    """Blocks and metadata title of an extraction made by :func:`extract_docx`."""
    doc = json.loads(raw)
    blocks: list[Block] = []
    for item in doc["items"]:
        part = None if item["part"] == "body" else item["part"]
        note = item.get("note")
        locator = Locator(
            part=part,
            footnote=note if part == "footnote" else None,
            endnote=note if part == "endnote" else None,
        )
        if item["kind"] == "row":
            cells = [t for c in item["cells"] if (t := canonical_inline(c))]
            if cells:
                text = " ; ".join(cells)
                blocks.append(Block(text=text, raw=" | ".join(item["cells"]), locator=locator))
            continue
        level = int(item["level"])
        text = canonical_inline(item["text"]) if level else canonical_block(item["text"])
        if text:
            blocks.append(Block(text=text, raw=item["text"], level=level, locator=locator))
    return blocks, canonical_inline(doc.get("title", "")) or None

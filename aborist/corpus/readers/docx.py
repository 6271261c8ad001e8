"""DOCX through python-docx: body paragraphs and tables in document order, headings by
paragraph style, headers and footers kept apart.

Two steps, like the PDF reader, so a shard can re-derive a document from what it stores:

1. :func:`extract_docx` (bytes → extraction): the body in order, each paragraph as its
   visible text (runs marked hidden, ``w:vanish``, are left out, as Word does not show
   them) with its heading level (style ``Title`` → 1, ``Heading N`` → N, capped at 6;
   else 0), each table row as its cells (merged cells once), then each section's headers
   and footers that are its own (not linked to the previous section's), once per
   distinct text. Content inside wrappers (content controls, custom XML, smart tags,
   tracked insertions, hyperlinks, simple fields: :data:`_WRAPPERS`) is read in place;
   tracked deletions are not. Stored as canonical JSON in the shard's ``raw_text``.
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
import time
import zipfile
import zlib
from typing import Any

from aborist.corpus.canonicalize import canonical_block, canonical_inline
from aborist.corpus.readers.model import Block, Locator
from aborist.corpus.readers.source import SourceFileSkipped

__all__ = [
    "DOCX_SECONDS",
    "EXTRACTION_VERSION",
    "MAX_UNPACKED_BYTES",
    "MAX_XML_BYTES",
    "docx_blocks",
    "extract_docx",
]

EXTRACTION_VERSION = "docx-extract-3"
MAX_UNPACKED_BYTES = 256 * 1024 * 1024
"""Limit on the declared sizes of all parts together (images included)."""
MAX_XML_BYTES = 64 * 1024 * 1024
"""Limit on the XML parts together, as unpacked: the text a DOCX holds is read from its
XML, so this is the counterpart of the 64 MiB limit on a text file (a 180 KB file held
50 MB of XML: 1.4 million paragraphs, 1.7 GB of memory)."""
DOCX_SECONDS = 60.0
"""Wall-clock limit on reading one DOCX's text (checked at every paragraph, table row
and note); a real document takes well under a second."""
_CHUNK = 1024 * 1024
_METHODS = (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED)


class _Reading:
    """What one extraction carries along: heading levels per style id (:func:`_level`)
    and the deadline."""

    def __init__(self) -> None:
        self.levels: dict[str | None, int] = {}
        self._end = time.monotonic() + DOCX_SECONDS
        self.seconds = DOCX_SECONDS

    def check_time(self) -> None:
        if time.monotonic() > self._end:
            raise SourceFileSkipped(f"DOCX whose text takes longer than {self.seconds:g} s to read")


_HEADING_STYLE = re.compile(r"^heading ([1-9])$", re.I)


def _level(paragraph: Any, levels: dict[str | None, int]) -> int:
    """The heading level of ``paragraph``'s style, remembered per style id in ``levels``:
    python-docx finds a paragraph's style (the default one, for a paragraph that names
    none) by scanning every style of the document, 0.45 ms a paragraph of Word's
    template, so 10,000 paragraphs took 4.5 s and a 180 KB file of 1.4 million empty
    ones over 150 s."""
    style_id = paragraph._p.style
    if style_id not in levels:
        levels[style_id] = _style_level(paragraph)
    return levels[style_id]


def _style_level(paragraph: Any) -> int:
    try:
        style = paragraph.style
    except Exception:  # a style id the styles part does not define
        return 0
    name = (getattr(style, "name", "") or "").strip()
    if name.lower() == "title":
        return 1
    m = _HEADING_STYLE.match(name)
    return min(int(m.group(1)), 6) if m else 0


_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_WRAPPERS = frozenset(
    _W + tag
    for tag in ("sdt", "sdtContent", "customXml", "smartTag", "ins", "moveTo", "hyperlink",
                "fldSimple", "bdo", "dir")
)  # fmt: skip
"""Elements that hold document content without being any themselves, read through: content
controls (``w:sdt``; their ``w:sdtPr`` holds no content), custom XML and smart tags,
tracked insertions and moves (``w:ins``, ``w:moveTo``: the text is in the document),
hyperlinks, simple fields (``w:fldSimple``: its runs are the result Word shows) and
bidirectional embeddings. Tracked deletions (``w:del``, ``w:moveFrom``) are not read:
that text is no longer in the document. python-docx reads none of these but hyperlinks,
and those one level deep."""


def _inner(element: Any, tags: frozenset[str]) -> list[Any]:
    """The descendants of ``element`` whose tag is in ``tags``, in document order, found
    through :data:`_WRAPPERS` at any depth (and not inside a found one)."""
    found: list[Any] = []
    stack = [iter(element)]
    while stack:
        child = next(stack[-1], None)
        if child is None:
            stack.pop()
        elif child.tag in tags:
            found.append(child)
        elif child.tag in _WRAPPERS:
            stack.append(iter(child))
    return found


_BLOCKS = frozenset((_W + "p", _W + "tbl"))
_RUNS = frozenset((_W + "r",))
_ROWS = frozenset((_W + "tr",))
_CELLS = frozenset((_W + "tc",))


def _visible_text(paragraph: Any) -> str:
    """The text of ``paragraph``'s runs that Word shows: all but those marked hidden,
    including runs inside :data:`_WRAPPERS`."""
    from docx.text.run import Run

    parts: list[str] = []
    for r in _inner(paragraph._p, _RUNS):
        run = Run(r, paragraph)
        if not run.font.hidden:
            parts.append(run.text)
    return "".join(parts)


def _cell_text(tc: Any, parent: Any, reading: _Reading) -> str:
    """A cell's paragraphs, one a line, with the rows of a table nested in it in place
    (cells joined by `` ; ``, as a row block is)."""
    from docx.table import Table
    from docx.text.paragraph import Paragraph

    lines: list[str] = []
    for el in _inner(tc, _BLOCKS):
        if el.tag == _W + "tbl":
            lines.extend(" ; ".join(r) for r in _rows(Table(el, parent), reading))
        else:
            lines.append(_visible_text(Paragraph(el, parent)))
    return "\n".join(lines)


def _rows(table: Any, reading: _Reading) -> list[list[str]]:
    """Each row's cells, a cell merged across columns once and a cell merged down the rows
    (``w:vMerge``) given in every row it spans, as python-docx's ``row.cells`` gives
    them. That property finds the top of a vertical merge by walking up one row at a time,
    each step searching the table, so 20,000 merged rows took 25 s and then failed
    (``RecursionError``); here each row's cells are found from the row above's."""
    rows = []
    above: dict[int, Any] = {}  # grid offset → the top element of the cell there, row above
    for tr in _inner(table._tbl, _ROWS):
        reading.check_time()
        here: dict[int, Any] = {}
        offset = tr.grid_before
        for tc in _inner(tr, _CELLS):
            if tc.vMerge == "continue" and offset not in above:
                raise ValueError(f"a merged cell continues no cell above (grid offset {offset})")
            here[offset] = above[offset] if tc.vMerge == "continue" else tc
            offset += tc.grid_span
        tops: list[Any] = []
        seen: set[int] = set()  # ids of elements ``here`` holds, so they stay unique
        for top in here.values():
            if id(top) not in seen:  # a merged cell is given once
                seen.add(id(top))
                tops.append(top)
        rows.append([_cell_text(top, table, reading) for top in tops])
        above = here
    return rows


def _block_items(
    element: Any, parent: Any, part: str, reading: _Reading, *, box: bool = False
) -> list[dict[str, Any]]:
    """The paragraphs and table rows of a body, header, footer or text box (``box``:
    every paragraph level 0), in document order, those inside :data:`_WRAPPERS` (a
    content control around paragraphs, a table, rows or cells) included."""
    from docx.table import Table
    from docx.text.paragraph import Paragraph

    items: list[dict[str, Any]] = []
    for el in _inner(element, _BLOCKS):
        reading.check_time()
        if el.tag == _W + "tbl":
            rows = _rows(Table(el, parent), reading)
            items.extend({"kind": "row", "part": part, "cells": r} for r in rows)
        else:
            paragraph = Paragraph(el, parent)
            level = 0 if box else _level(paragraph, reading.levels)
            items.append(
                {"kind": "paragraph", "part": part, "level": level,
                 "text": _visible_text(paragraph)}
            )  # fmt: skip
            if not box:
                items.extend(_text_box_items(paragraph, part, reading))
    return items


_DELETED = frozenset(_W + tag for tag in ("del", "moveFrom"))


def _text_box_items(paragraph: Any, part: str, reading: _Reading) -> list[dict[str, Any]]:
    """The text boxes anchored in ``paragraph``, in document order, right after it: their
    paragraphs (level 0: a box's styles do not make the page's sections) and table rows.
    Word stores a box twice, as DrawingML (``mc:Choice``) and as VML for old readers
    (``mc:Fallback``); the fallback is skipped, as is a box in deleted text (``w:del``).
    A box inside a box follows it."""
    fallback = "{http://schemas.openxmlformats.org/markup-compatibility/2006}Fallback"
    items: list[dict[str, Any]] = []
    for box in paragraph._p.iter(_W + "txbxContent"):
        if any(a.tag == fallback or a.tag in _DELETED for a in box.iterancestors()):
            continue
        items.extend(_block_items(box, paragraph._parent, part, reading, box=True))
    return items


_NOTE_KINDS = (("footnote", "/footnotes"), ("endnote", "/endnotes"))


def _note_items(document: Any, reading: _Reading) -> list[dict[str, Any]]:
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
            reading.check_time()
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


def _repacked(data: bytes) -> bytes:
    """The package with every part read through once, as a new stored ZIP, or
    :class:`SourceFileSkipped` when it is not a ZIP or its parts are too large.

    Why: Python's ``zipfile`` reading a part whole (as python-docx does) inflates *all*
    its compressed data in one call and only then cuts it at the declared size, so a part
    that declares 1,000 bytes and inflates to 500 MB took 990 MB before failing its CRC
    (a 64 MiB file could ask for 60 GB). Read in 1 MiB pieces, a part inflates to at most
    its declared size, checked against :data:`MAX_UNPACKED_BYTES` beforehand and its CRC
    at the end; python-docx then reads exactly those bytes. Parts are compressed only as
    Word writes them (stored or deflated): ``zipfile`` inflates bzip2 and LZMA without a
    bound on each piece."""
    try:
        package = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as e:
        raise SourceFileSkipped(f"malformed DOCX: not a ZIP package ({e})"[:300]) from e
    out = io.BytesIO()
    try:
        with package, zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as clean:
            infos = {i.filename: i for i in package.infolist()}  # the last of a name, as read
            _check_sizes(package, list(infos.values()))
            for info in infos.values():
                clean.writestr(info.filename, _read_part(package, info))
    except (zipfile.BadZipFile, OSError, ValueError, EOFError, RuntimeError, zlib.error) as e:
        # a CRC that does not match, data that ends early, an encrypted part, bad deflate data
        raise SourceFileSkipped(f"malformed DOCX: a part cannot be unpacked ({e})"[:300]) from e
    return out.getvalue()


def _check_sizes(package: zipfile.ZipFile, infos: Any) -> None:
    """The declared sizes against the limits (a part read in pieces never yields more than
    it declares, and one that yields less fails), and each part's compression (first:
    the types part is read to find the XML parts)."""
    for info in infos:
        if info.compress_type not in _METHODS:
            raise SourceFileSkipped(
                f"DOCX part {info.filename!r} compressed with method {info.compress_type} "
                "(Word writes parts stored or deflated)"[:300]
            )
    unpacked = sum(i.file_size for i in infos)
    if unpacked > MAX_UNPACKED_BYTES:
        raise SourceFileSkipped(
            f"DOCX whose parts unpack to {unpacked} bytes, more than the "
            f"{MAX_UNPACKED_BYTES // (1024 * 1024)} MiB limit"
        )
    xml_types = _xml_parts(package, infos)
    xml = sum(
        i.file_size
        for i in infos
        if i.filename.lower().endswith((".xml", ".rels")) or i.filename in xml_types
    )
    if xml > MAX_XML_BYTES:
        raise SourceFileSkipped(
            f"DOCX whose XML parts unpack to {xml} bytes, more than the "
            f"{MAX_XML_BYTES // (1024 * 1024)} MiB limit"
        )


def _xml_parts(package: zipfile.ZipFile, infos: Any) -> set[str]:
    """The parts ``[Content_Types].xml`` declares XML (a content type ending in ``xml``), by
    part name or by extension: python-docx parses a part by its declared type, whatever
    its name, so ``word/document.bin`` of type ``…document.main+xml`` counts to the XML
    limit too. A types part declaring more than 1 MiB (Word's are a few KB) is refused:
    skipping it would let the renamed part through again; one that cannot be parsed names
    none here (python-docx refuses the package itself)."""
    types = next((i for i in infos if i.filename == "[Content_Types].xml"), None)
    if types is None:
        return set()
    if types.file_size > _CHUNK:
        raise SourceFileSkipped(
            f"DOCX whose [Content_Types].xml unpacks to {types.file_size} bytes, more than "
            "1 MiB (Word writes a few KB)"
        )
    by_name: dict[str, str] = {}
    by_ext: dict[str, str] = {}
    try:
        from docx.oxml import parse_xml

        for el in parse_xml(_read_part(package, types)):
            tag = str(el.tag).rsplit("}", 1)[-1]
            if tag == "Override":
                by_name[str(el.get("PartName", "")).lower()] = str(el.get("ContentType", ""))
            elif tag == "Default":
                by_ext[str(el.get("Extension", "")).lower()] = str(el.get("ContentType", ""))
    except Exception:  # unreadable types: python-docx refuses the package itself
        return set()

    def declared(name: str) -> str:
        base = name.rsplit("/", 1)[-1]
        ext = base.rsplit(".", 1)[-1].lower() if "." in base else ""
        return by_name.get("/" + name.lower(), by_ext.get(ext, ""))

    return {i.filename for i in infos if declared(i.filename).lower().endswith("xml")}


def _read_part(package: zipfile.ZipFile, info: zipfile.ZipInfo) -> bytes:
    """One part's bytes, inflated 1 MiB at a time (``zipfile`` stops at the declared size
    and checks the CRC)."""
    pieces = []
    with package.open(info) as part:
        while piece := part.read(_CHUNK):
            pieces.append(piece)
    return b"".join(pieces)


def extract_docx(data: bytes) -> str:
    """The extraction of a DOCX file as canonical JSON; raises
    :class:`SourceFileSkipped` naming why a file cannot be read."""
    package = _repacked(data)
    reading = _Reading()
    try:
        import docx

        document = docx.Document(io.BytesIO(package))
        items = _block_items(document.element.body, document._body, "body", reading)
        items.extend(_note_items(document, reading))
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
                    found = _block_items(hf._element, hf, part, reading)
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

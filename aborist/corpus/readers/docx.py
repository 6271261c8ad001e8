"""DOCX through python-docx: body paragraphs and tables in document order, headings by
paragraph style, headers and footers kept apart.

Two steps, like the PDF reader, so a shard can re-derive a document from what it stores:

1. :func:`extract_docx` (bytes → extraction): the body in order, each paragraph as its
   visible text (runs marked hidden, ``w:vanish``, are left out, as Word does not show
   them; equations, ``m:oMath``, read as their ``m:t`` text in place) with its heading
   level (style ``Title`` → 1, ``Heading N`` → N, capped at 6; else 0), each table row
   as its cells (merged cells once), then each section's headers and footers that are
   its own (not linked to the previous section's), once per distinct text. Content
   inside wrappers (content controls, custom XML, smart tags, tracked insertions,
   hyperlinks, simple fields: :data:`_WRAPPERS`) is read in place, and of markup
   compatibility's alternatives (``mc:AlternateContent``) one branch, :func:`_chosen`;
   tracked deletions are not read. Stored as canonical JSON in the shard's ``raw_text``.
2. :func:`docx_blocks` (extraction → blocks, pure). The locator is the heading path and
   the paragraph number (DOCX stores no pages); header and footer blocks also carry
   ``part`` (``header`` / ``footer``), and chunks never mix them with the body.

Refused: a package :mod:`.docx_package` refuses (not a ZIP, too many parts, names that
are not part names, a ZIP bomb), a file that takes longer than :data:`DOCX_SECONDS` to
unpack and read, and other malformed files.
"""

from __future__ import annotations

import io
import json
import re
from typing import Any

from aborist.corpus.canonicalize import canonical_block, canonical_inline
from aborist.corpus.readers.docx_package import (
    DOCX_SECONDS,
    MAX_PARTS,
    MAX_UNPACKED_BYTES,
    MAX_XML_BYTES,
    TYPES_PART,
    Clock,
    repacked,
)
from aborist.corpus.readers.model import Block, Locator
from aborist.corpus.readers.source import SourceFileSkipped

__all__ = [
    "DOCX_SECONDS",
    "EXTRACTION_VERSION",
    "MAX_PARTS",
    "MAX_UNPACKED_BYTES",
    "MAX_XML_BYTES",
    "docx_blocks",
    "extract_docx",
]

EXTRACTION_VERSION = "docx-extract-4"


class _Reading:
    """What one extraction carries along: heading levels per style id (:func:`_level`)
    and the clock of the file."""

    def __init__(self, clock: Clock) -> None:
        self.levels: dict[str | None, int] = {}
        self.clock = clock

    def check_time(self) -> None:
        self.clock.check()


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


_MC = "{http://schemas.openxmlformats.org/markup-compatibility/2006}"
_ALTERNATIVES = _MC + "AlternateContent"
_BRANCHES = frozenset((_MC + "Choice", _MC + "Fallback"))


def _chosen(alternatives: Any) -> Any:
    """The one branch of an ``mc:AlternateContent`` that is read: its first ``mc:Choice``,
    else its ``mc:Fallback`` (``None`` when it holds neither).

    Markup compatibility (ECMA-376 Part 3, §10.2) gives the same content more than once,
    for readers of different ages: Word writes a text box as DrawingML (``mc:Choice
    Requires="wps"``) and again as VML for readers before Word 2010 (``mc:Fallback``).
    Reading both doubles the text; a reader takes the first Choice whose requirements it
    knows, else the Fallback. A text reader knows every markup enough to read its text, so
    the first Choice is taken: what current Word shows. The Fallback is read only when
    there is no Choice."""
    fallback = None
    for child in alternatives:
        if child.tag == _MC + "Choice":
            return child
        if child.tag == _MC + "Fallback" and fallback is None:
            fallback = child
    return fallback


def _inner(element: Any, tags: frozenset[str]) -> list[Any]:
    """The descendants of ``element`` whose tag is in ``tags``, in document order, found
    through :data:`_WRAPPERS` and the chosen branch of alternatives (:func:`_chosen`) at
    any depth (and not inside a found one)."""
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
        elif child.tag == _ALTERNATIVES and (branch := _chosen(child)) is not None:
            stack.append(iter(branch))
    return found


_DELETED = frozenset(_W + tag for tag in ("del", "moveFrom"))


def _not_read(element: Any, top: Any) -> bool:
    """Whether ``element`` lies, below ``top``, in tracked-deleted content or in a branch
    of alternatives that :func:`_chosen` does not take."""
    for above in element.iterancestors():
        if above is top:
            return False
        if above.tag in _DELETED:
            return True
        if above.tag in _BRANCHES and above is not _chosen(above.getparent()):
            return True
    return False


_M = "{http://schemas.openxmlformats.org/officeDocument/2006/math}"
_MATH = frozenset((_M + "oMathPara", _M + "oMath"))
_BLOCKS = frozenset((_W + "p", _W + "tbl", *_MATH))
_RUNS = frozenset((_W + "r", *_MATH))
_ROWS = frozenset((_W + "tr",))
_CELLS = frozenset((_W + "tc",))
_OFF = frozenset(("0", "false", "off"))


def _math_text(math: Any) -> str:
    """An equation's text (``m:oMath``, ``m:oMathPara``: Office Math, ECMA-376 Part 1
    §22.1) as its math runs' ``m:t`` in document order, which is how it reads left to
    right: ``E=mc`` and the superscript ``2`` give ``E=mc2``; a fraction gives its
    numerator then its denominator. The structure (fraction bar, superscript, radical)
    is not spelled out. Runs marked hidden, tracked deletions and the branches of
    alternatives not taken are not read, as in a paragraph."""
    parts: list[str] = []
    for t in math.iter(_M + "t"):
        run = t.getparent()
        vanish = run.find(f"{_W}rPr/{_W}vanish") if run is not None else None
        if vanish is not None and (vanish.get(_W + "val") or "true").lower() not in _OFF:
            continue
        if not _not_read(t, math):
            parts.append(t.text or "")
    return "".join(parts)


def _visible_text(paragraph: Any) -> str:
    """The text of ``paragraph``'s runs that Word shows: all but those marked hidden,
    including runs inside :data:`_WRAPPERS` and the chosen branch of alternatives, with
    its equations' text in place (:func:`_math_text`)."""
    from docx.text.run import Run

    parts: list[str] = []
    for r in _inner(paragraph._p, _RUNS):
        if r.tag in _MATH:
            parts.append(_math_text(r))
            continue
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
        elif el.tag in _MATH:
            lines.append(_math_text(el))
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
    content control around paragraphs, a table, rows or cells) and the chosen branch of
    alternatives included; an equation standing as a block is a paragraph of its own."""
    from docx.table import Table
    from docx.text.paragraph import Paragraph

    items: list[dict[str, Any]] = []
    for el in _inner(element, _BLOCKS):
        reading.check_time()
        if el.tag == _W + "tbl":
            rows = _rows(Table(el, parent), reading)
            items.extend({"kind": "row", "part": part, "cells": r} for r in rows)
        elif el.tag in _MATH:
            items.append({"kind": "paragraph", "part": part, "level": 0, "text": _math_text(el)})
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


def _text_box_items(paragraph: Any, part: str, reading: _Reading) -> list[dict[str, Any]]:
    """The text boxes anchored in ``paragraph``, in document order, right after it: their
    paragraphs (level 0: a box's styles do not make the page's sections) and table rows.
    Word stores a box twice, as DrawingML (``mc:Choice``) and as VML for old readers
    (``mc:Fallback``); only the branch :func:`_chosen` takes is read (the Fallback when
    there is no Choice; a VML box outside alternatives is read as it is), and no box in
    deleted text (``w:del``). A box inside a box follows it."""
    items: list[dict[str, Any]] = []
    for box in paragraph._p.iter(_W + "txbxContent"):
        if _not_read(box, paragraph._p):
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
            if _not_read(ref, body):
                continue
            numbers.setdefault(ref.get(qn("w:id")) or "", len(numbers) + 1)
        # python-docx's parser: no entities resolved, no network, no DTD loaded
        root = parse_xml(part.blob)
        notes = []
        for note in root.iter(qn(f"w:{kind}")):
            reading.check_time()
            number = numbers.get(note.get(qn("w:id")) or "")
            if number is None or note.get(qn("w:type"), "normal") != "normal":
                continue
            # CT_P, parsed with python-docx's classes; a box's paragraphs follow their anchor
            paragraphs = (p for p in note.iter(qn("w:p")) if not _not_read(p, note))
            texts = [_visible_text(Paragraph(p, document)) for p in paragraphs]  # type: ignore[arg-type]
            notes.append((number, texts))
        for number, texts in sorted(notes, key=lambda n: n[0]):
            items.extend(
                {"kind": "paragraph", "part": kind, "note": number, "level": 0, "text": t}
                for t in texts
            )
    return items


#: What zipfile says of a part a relationship names and the package does not hold, and
#: what python-docx says of a part [Content_Types].xml gives no type.
_NO_ITEM = re.compile(r"There is no item named '(?P<name>[^']*)' in the archive")
_NO_TYPE = re.compile(r"no content type for partname '(?P<name>[^']*)'")
_TYPES_ROOT = "{http://schemas.openxmlformats.org/package/2006/content-types}Types"


def _check_types(package: bytes) -> None:
    """[Content_Types].xml is XML whose root is ``Types`` in the OPC namespace: python-docx
    read any other root as a list of types, to an AttributeError, and named XML errors
    by the parser's class alone."""
    import zipfile

    from docx.oxml import parse_xml

    try:
        root = parse_xml(zipfile.ZipFile(io.BytesIO(package)).read(TYPES_PART))
    except Exception as e:
        raise SourceFileSkipped(
            f"malformed DOCX: no main document part ({TYPES_PART} is not XML: {e})"[:300]
        ) from e
    if root.tag != _TYPES_ROOT:
        tag = str(root.tag)
        shown = f"{tag!r}" if tag.startswith("{") else f"{tag!r} (in no namespace)"
        raise SourceFileSkipped(
            f"malformed DOCX: no main document part ({TYPES_PART} is not a list of content "
            f"types: its root element is {shown}, not OPC's Types)"[:300]
        )


def _named_part_problem(e: KeyError) -> str | None:
    """A plain reason for python-docx's KeyError naming a part, else None."""
    if missing := _NO_ITEM.search(str(e)):
        return f"a relationship names the part {missing['name']!r}, which the package does not hold"
    if untyped := _NO_TYPE.search(str(e)):
        return f"{TYPES_PART} gives the part {untyped['name']!r} no content type"
    return None


def _main_document(package: bytes) -> Any:
    """python-docx's document of the repacked ``package``, or :class:`SourceFileSkipped`
    with a plain reason when the package has no main document part (no officeDocument
    relationship, a relationship to a part the package does not hold, a main part
    ``[Content_Types].xml`` does not declare a Word document), or cannot be read."""
    try:
        from docx.opc.constants import CONTENT_TYPE as CT
        from docx.package import Package

        _check_types(package)
        opc = Package.open(io.BytesIO(package))
    except SourceFileSkipped:
        raise
    except KeyError as e:
        problem = _named_part_problem(e)
        if problem is None:
            raise SourceFileSkipped(f"malformed DOCX ({type(e).__name__}: {e})"[:300]) from e
        raise SourceFileSkipped(f"malformed DOCX: {problem}"[:300]) from e
    except Exception as e:
        raise SourceFileSkipped(f"malformed DOCX ({type(e).__name__}: {e})"[:300]) from e
    try:
        part = opc.main_document_part
    except KeyError:
        raise SourceFileSkipped(
            "malformed DOCX: no main document part (_rels/.rels has no officeDocument relationship)"
        ) from None
    if part.content_type != CT.WML_DOCUMENT_MAIN:
        raise SourceFileSkipped(
            f"malformed DOCX: no main document part ([Content_Types].xml gives "
            f"{str(part.partname)!r} the type {part.content_type!r}, not a Word "
            "document's)"[:300]
        )
    try:
        return part.document
    except Exception as e:
        raise SourceFileSkipped(f"malformed DOCX ({type(e).__name__}: {e})"[:300]) from e


def extract_docx(data: bytes) -> str:
    """The extraction of a DOCX file as canonical JSON; raises
    :class:`SourceFileSkipped` naming why a file cannot be read."""
    clock = Clock()  # from the first byte: unpacking counts to the limit too
    package = repacked(data, clock)
    reading = _Reading(clock)
    document = _main_document(package)
    try:
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

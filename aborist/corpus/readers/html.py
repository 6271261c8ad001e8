"""HTML: parsed by libxml2's HTML parser (through lxml), then walked for the text a
reader of the rendered page would see.

Why libxml2 and not :class:`html.parser.HTMLParser`: the standard library's parser takes
quadratic time on unfinished tags (80 KB of ``<a `` took over a minute) and turns an
unclosed ``<!--`` into visible text; libxml2 tokenizes as HTML5 does, in linear time.
Its tree is capped at 2,048 levels of nesting; a deeper file is refused rather than
read in part.

What is dropped (docs/corpus.md, "HTML"): comments and processing instructions;
``script``, ``style``, ``noscript``, ``template``, ``head`` (its ``<title>`` is kept as
the fallback title), ``svg``, ``iframe``, ``object``, ``embed``, ``applet``, ``canvas``,
``audio``, ``video``; form controls (``select``, ``option``, ``textarea``, ``button``,
``datalist``, ``input``); a ``dialog`` that is not ``open``; and every element that an
attribute or its inline style hides: ``hidden``, ``aria-hidden="true"``,
``display:none``, ``visibility:hidden|collapse``, ``opacity:0``, ``font-size:0``,
zero width or height with ``overflow:hidden``, ``clip: rect(0…)``, ``clip-path:
inset(50%)``, ``transform: scale(0)``, and positions or ``text-indent`` far off-screen
(-500 px or more, -50 em, -100 %). Style sheets and classes are not evaluated: text
hidden by a class rule (``.sr-only``) is kept.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from lxml import etree

from aborist.corpus.canonicalize import canonical_inline
from aborist.corpus.readers.model import Block

__all__ = ["MAX_DEPTH", "HtmlTooDeep", "html_blocks", "is_hidden"]

MAX_DEPTH = 2048
"""libxml2's nesting limit with ``huge_tree`` on; a deeper document is refused."""

_SKIP = frozenset(
    {
        "script", "style", "noscript", "template", "head", "svg", "iframe", "object",
        "embed", "applet", "canvas", "audio", "video", "select", "option", "optgroup",
        "textarea", "button", "datalist", "input",
    }
)  # fmt: skip
_HEADINGS = {f"h{n}": n for n in range(1, 7)}
_BLOCK_TAGS = frozenset(
    {
        "address", "article", "aside", "blockquote", "body", "br", "dd", "details",
        "dialog", "div", "dl", "dt", "fieldset", "figcaption", "figure", "footer", "form",
        "header", "hr", "html", "li", "main", "nav", "ol", "p", "pre", "section",
        "summary", "table", "tbody", "tfoot", "thead", "tr", "ul", "caption", "legend",
    }
)  # fmt: skip
_CELLS = frozenset({"td", "th"})

_DECLARATION = re.compile(r"([a-z-]+)\s*:\s*([^;]*)")
_LENGTH = re.compile(r"^(-?\d*\.?\d+)\s*([a-z%]*)")
_OFFSETS = frozenset({"left", "top", "right", "bottom", "text-indent", "margin-left", "margin-top"})
_FAR = {"": 500.0, "px": 500.0, "pt": 375.0, "em": 50.0, "rem": 50.0, "%": 100.0,
        "vw": 100.0, "vh": 100.0}  # fmt: skip


class HtmlTooDeep(ValueError):
    """The document nests elements deeper than :data:`MAX_DEPTH`."""


def _number(value: str) -> tuple[float, str] | None:
    m = _LENGTH.match(value.strip())
    return (float(m.group(1)), m.group(2)) if m else None


def _is_zero(value: str) -> bool:
    parsed = _number(value)
    return parsed is not None and parsed[0] == 0


def _style_hides(style: str) -> bool:
    decl = {k: v.strip() for k, v in _DECLARATION.findall(style.lower())}
    if decl.get("display", "").startswith("none"):
        return True
    if decl.get("visibility", "").startswith(("hidden", "collapse")):
        return True
    if _is_zero(decl.get("opacity", "1")) or _is_zero(decl.get("font-size", "1")):
        return True
    if decl.get("overflow", "").startswith(("hidden", "clip")) and any(
        _is_zero(decl.get(k, "1")) for k in ("width", "height", "max-width", "max-height")
    ):
        return True
    if re.match(r"rect\(\s*0", decl.get("clip", "")) or "inset(50%" in decl.get("clip-path", ""):
        return True
    if re.search(r"scale[xy]?\(\s*0(\.0*)?\s*[,)]", decl.get("transform", "")):
        return True
    for name in _OFFSETS & decl.keys():
        parsed = _number(decl[name])
        if parsed is not None and parsed[0] < 0 and -parsed[0] >= _FAR.get(parsed[1], 1e9):
            return True
    return False


def is_hidden(tag: str, attrs: dict[str, str]) -> bool:
    """Whether an element with these attributes shows nothing of its content."""
    if tag in _SKIP or "hidden" in attrs:
        return True
    if attrs.get("aria-hidden", "").strip().lower() == "true":
        return True
    if tag == "dialog" and "open" not in attrs:
        return True
    style = attrs.get("style", "")
    return bool(style) and _style_hides(style)


@dataclass
class _Walk:
    """The blocks gathered so far and the text of the block being read."""

    raw_for: Callable[[tuple[int, int] | None], str | None]
    blocks: list[Block] = field(default_factory=list)
    buffer: list[str] = field(default_factory=list)
    level: int = 0
    lines: list[tuple[int, int]] = field(default_factory=list)
    row_cells: int = 0
    blank_upto: int = 0  # buffer[:blank_upto] is known to be whitespace only

    def has_text(self) -> bool:
        """Whether the buffer holds more than whitespace. Each piece is looked at once
        per block (joining the buffer at every cell of a row was quadratic)."""
        while self.blank_upto < len(self.buffer):
            if self.buffer[self.blank_upto].strip():
                return True
            self.blank_upto += 1
        return False

    def flush(self) -> None:
        raw = "".join(self.buffer)
        self.buffer.clear()
        self.blank_upto = 0
        text = canonical_inline(raw)
        if text:
            span = self.lines[-1] if self.lines else None
            source = self.raw_for(span)
            self.blocks.append(Block(text=text, raw=source or raw.strip(), level=self.level))


def _parse(raw: str) -> etree._Element | None:
    if not raw.strip():
        return None
    parser = etree.HTMLParser(
        recover=True,
        huge_tree=True,
        no_network=True,
        remove_comments=True,
        remove_pis=True,
        encoding="utf-8",
    )
    root = etree.fromstring(raw.encode("utf-8", "surrogatepass"), parser)
    if any(e.type_name == "ERR_RESOURCE_LIMIT" for e in parser.error_log):
        raise HtmlTooDeep(f"HTML nested deeper than {MAX_DEPTH} elements")
    return root


def html_blocks(
    raw: str,
    *,
    line_attr: str | None = None,
    raw_for: Callable[[tuple[int, int] | None], str | None] = lambda _: None,
) -> tuple[list[Block], str | None]:
    """The visible blocks of ``raw`` and its ``<title>`` text.

    ``line_attr`` names an attribute of the form ``"start-end"`` (source line range)
    that the Markdown reader puts on the elements it renders; ``raw_for`` turns the
    innermost such range around a block into the block's raw source slice.
    """
    root = _parse(raw)
    if root is None:
        return [], None
    walk = _Walk(raw_for=raw_for)
    title_el = next(root.iter("title"), None)
    title = None
    if title_el is not None:
        title = canonical_inline("".join(str(t) for t in title_el.itertext())) or None
    # An explicit stack instead of recursion: a tree 2,048 levels deep would overflow
    # Python's recursion limit. Each entry is (element, leaving?).
    stack: list[tuple[etree._Element, bool]] = [(root, False)]
    while stack:
        el, leaving = stack.pop()
        tag = el.tag if isinstance(el.tag, str) else ""
        if leaving:
            if tag in _HEADINGS:
                walk.flush()
                walk.level = 0
            elif tag in _BLOCK_TAGS:
                walk.flush()
            if line_attr is not None and el.get(line_attr) is not None:
                walk.lines.pop()
            if tag == "tr":
                walk.row_cells = 0
            if el.tail:
                walk.buffer.append(el.tail)
            continue
        attrs = {str(k).lower(): str(v) for k, v in el.attrib.items()}
        if not tag or is_hidden(tag, attrs):
            if el.tail:
                walk.buffer.append(el.tail)
            continue
        if tag in _HEADINGS:
            walk.flush()
            walk.level = _HEADINGS[tag]
        elif tag in _BLOCK_TAGS:
            walk.flush()
        elif tag in _CELLS:
            if walk.row_cells and walk.has_text():
                walk.buffer.append(" ; ")
            walk.row_cells += 1
        if line_attr is not None:
            span = _span(attrs.get(line_attr))
            if span is not None:
                walk.lines.append(span)
            elif line_attr in attrs:
                walk.lines.append(walk.lines[-1] if walk.lines else (0, 0))
        if el.text:
            walk.buffer.append(el.text)
        stack.append((el, True))
        stack.extend((child, False) for child in reversed(el))
    walk.flush()
    return walk.blocks, title


def _span(value: str | None) -> tuple[int, int] | None:
    if value is None:
        return None
    start, _, end = value.partition("-")
    if start.isdigit() and end.isdigit():
        return int(start), int(end)
    return None

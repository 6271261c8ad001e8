"""Markdown: CommonMark (plus GitHub's pipe tables) parsed by markdown-it-py, rendered to
HTML and read by the HTML reader, so inline HTML in Markdown is held to the same rules as
an HTML page (a ``<div style="display:none">`` hides its text in both).

Raw HTML in the source is passed through to that reader (CommonMark allows it); every
block the renderer writes carries its source line range, so each block's raw text is
the exact source lines it came from. mdBook directives (``{{#include …}}`` lines) are
blanked before parsing. markdown-it-py's inline parser runs in linear time on the
inputs that made the old hand-written reader quadratic (``**a ``, ``_a ``, ``[a``).

Blocks nested deeper than markdown-it's limit (:data:`MAX_NESTING`, CommonMark preset's 20
levels: 20 block quotes, or 10 lists one inside the other) are read as one paragraph of
their lines, markers and all (:func:`_tokenize`): markdown-it drops them, and with them
every line to the end of the enclosing block, often the rest of the document.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml
from markdown_it.rules_block import StateBlock
from markdown_it.rules_core import StateCore

from aborist.corpus.readers.html import html_blocks
from aborist.corpus.readers.model import Block

__all__ = ["MAX_NESTING", "markdown_blocks"]

_LINE_ATTR = "data-aborist-lines"
_MDBOOK = re.compile(r"^\s*\{\{#\w+[^}]*\}\}\s*$", re.M)


def _mark_lines(state: StateCore) -> None:
    """Core rule: put each block token's source line range on the element it opens."""
    for token in state.tokens:
        if token.map is not None and (token.nesting == 1 or token.type in ("fence", "code_block")):
            token.attrSet(_LINE_ATTR, f"{token.map[0]}-{token.map[1]}")


def _parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": True}).enable("table")
    md.core.ruler.push("aborist_lines", _mark_lines)
    library_tokenize = md.block.tokenize

    def tokenize(state: StateBlock, start: int, end: int) -> None:
        if state.level < md.options.maxNesting:
            library_tokenize(state, start, end)
        else:
            _tokenize_too_deep(state, start, end)

    md.block.tokenize = tokenize  # type: ignore[method-assign,assignment]
    return md


def _tokenize_too_deep(state: StateBlock, start: int, end: int) -> None:
    """The block parser at the nesting limit: markdown-it skips to ``end`` here ("we should
    not care about content"), which for a list item is the end of the enclosing block, so
    the lines after the deep list went too. Here the lines the container holds (up to the
    first that is indented less than it, where markdown-it's loop would stop) become one
    paragraph of literal text, inline markup still read."""
    line = state.skipEmptyLines(start)
    last = line
    while last < end and (state.isEmpty(last) or state.sCount[last] >= state.blkIndent):
        last += 1
    while last > line and state.isEmpty(last - 1):
        last -= 1
    state.line = last
    if last <= line:
        return
    opening = state.push("paragraph_open", "p", 1)
    opening.map = [line, last]
    inline = state.push("inline", "", 0)
    inline.content = state.getLines(line, last, state.blkIndent, False).strip()
    inline.map = [line, last]
    inline.children = []
    state.push("paragraph_close", "p", -1)


_MD = _parser()
MAX_NESTING: int = _MD.options.maxNesting


def _code_block(renderer: Any, tokens: Sequence[Any], idx: int, options: Any, env: Any) -> str:
    """An indented code block, rendered with its attributes (the default drops them)."""
    token = tokens[idx]
    return f"<pre{renderer.renderAttrs(token)}><code>{escapeHtml(token.content)}</code></pre>\n"


_MD.add_render_rule("code_block", _code_block)


def markdown_blocks(raw: str) -> list[Block]:
    source = _MDBOOK.sub("", raw)
    lines = source.split("\n")

    def raw_for(span: tuple[int, int] | None) -> str | None:
        if span is None:
            return None
        return "\n".join(lines[span[0] : span[1]]).strip("\n") or None

    blocks, _ = html_blocks(_MD.render(source), line_attr=_LINE_ATTR, raw_for=raw_for)
    return blocks

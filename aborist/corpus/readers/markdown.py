"""Markdown: CommonMark (plus GitHub's pipe tables) parsed by markdown-it-py, rendered to
HTML and read by the HTML reader, so inline HTML in Markdown is held to the same rules as
an HTML page (a ``<div style="display:none">`` hides its text in both).

Raw HTML in the source is passed through to that reader (CommonMark allows it); every
block the renderer writes carries its source line range, so each block's raw text is
the exact source lines it came from. mdBook directives (``{{#include …}}`` lines) are
blanked before parsing. markdown-it-py's inline parser runs in linear time on the
inputs that made the old hand-written reader quadratic (``**a ``, ``_a ``, ``[a``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml
from markdown_it.rules_core import StateCore

from aborist.corpus.readers.html import html_blocks
from aborist.corpus.readers.model import Block

__all__ = ["markdown_blocks"]

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
    return md


_MD = _parser()


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

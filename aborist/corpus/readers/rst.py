"""reStructuredText: parsed by docutils into its document tree, then walked for sections,
paragraphs, literal blocks, list items and table rows.

The parser is configured for untrusted input: no file or URL inclusion (``include``,
``raw``, ``csv-table :file:``), no raw passthrough, no configuration files, no messages
on stderr. Sphinx's common roles (``:ref:``, ``:func:`` …) are read as their text and
its ``code-block`` directive as a literal block, so Sphinx sources read sensibly;
other unknown directives are dropped with docutils' error message about them. Comments,
substitution definitions, targets and system messages are dropped; admonitions (``..
note::``) keep their text, as a rendered page shows it.
"""

from __future__ import annotations

import io
import re
from typing import Any

from docutils import nodes
from docutils.core import publish_doctree
from docutils.parsers.rst import Directive, directives, roles, states
from docutils.parsers.rst.directives.body import CodeBlock

from aborist.corpus.canonicalize import canonical_block, canonical_inline
from aborist.corpus.readers.model import Block
from aborist.corpus.readers.rst_linear import LinearParser, LinearReader

__all__ = ["INLINE_LIMIT", "RstTooDeep", "rst_blocks"]

INLINE_LIMIT = 10_000
"""Text blocks longer than this many characters are kept as plain text, their inline
markup not interpreted. docutils' inline parser slices the rest of the block after every
construct it meets, which is quadratic in the block's length; no paragraph a person
writes comes near this (docutils itself refuses lines over 10,000 characters)."""


class RstTooDeep(ValueError):
    """The document nests (lists in lists …) deeper than docutils' recursive parser goes."""


class _EndSearch:
    """An inline end-string pattern that remembers where a search already failed.

    docutils looks for the end-string of every start-string (``*``, ``**``, `````, …) in
    the rest of the text block, so n unmatched starts cost n scans of the block. Every
    string it searches within one block is a suffix of that block, so a suffix's length
    identifies its position; a search that found nothing from a position finds nothing
    from any later one (a match in the shorter suffix at offset > 0 is a match in the
    longer one; one at offset 0 is an empty span, which docutils rejects). Remembering
    the longest failed suffix makes every later search of a shorter one O(1)."""

    def __init__(self, pattern: re.Pattern[str]) -> None:
        self.pattern = pattern
        self.failed = -1

    def search(self, string: str) -> re.Match[str] | None:
        if len(string) <= self.failed:
            return None
        match = self.pattern.search(string)
        if match is None:
            self.failed = len(string)
        return match

    def __getattr__(self, name: str) -> Any:
        return getattr(self.pattern, name)


_END_PATTERNS = (
    "emphasis", "strong", "literal", "target", "substitution_ref",
    "interpreted_or_phrase_ref",
)  # fmt: skip


def _bounded_inliner() -> states.Inliner:
    """docutils' inliner in time linear in the input (see :class:`_EndSearch` and
    :data:`INLINE_LIMIT`). Wrapped per instance rather than subclassed: the inliner
    builds its patterns from its own class's attributes."""
    inliner = states.Inliner()
    ends: list[_EndSearch] = []
    setup, parse = inliner.init_customizations, inliner.parse

    def init_customizations(settings: Any) -> None:
        setup(settings)
        ends.clear()
        for name in _END_PATTERNS:
            end = _EndSearch(getattr(inliner.patterns, name))
            setattr(inliner.patterns, name, end)
            ends.append(end)

    def bounded_parse(text: str, lineno: int, memo: Any, parent: Any) -> Any:
        if len(text) > INLINE_LIMIT:
            return [nodes.Text(text)], []
        for end in ends:
            end.failed = -1
        return parse(text, lineno, memo, parent)

    def inline_obj(
        match: re.Match[str],
        lineno: int,
        end_pattern: Any,
        nodeclass: Any,
        restore_backslashes: bool = False,
    ) -> Any:
        # A start-string with no end-string is plain text (what docutils renders too);
        # answering that here spares a warning node and a problematic node per start.
        string, end = match.string, match.end("start")
        if end_pattern.search(string[end:]) is None:
            return string[:end], [], string[end:], [], ""
        return find_inline(match, lineno, end_pattern, nodeclass, restore_backslashes)

    def interpreted_or_phrase_ref(self: Any, match: re.Match[str], lineno: int) -> Any:
        string, end = match.string, match.end("backquote")
        if inliner.patterns.interpreted_or_phrase_ref.search(string[end:]) is None:
            return string[:end], [], string[end:], []
        return find_interpreted(self, match, lineno)

    find_inline = inliner.inline_obj
    find_interpreted = states.Inliner.interpreted_or_phrase_ref
    # parse() calls the methods of its dispatch table with the inliner passed in
    table: dict[str, Any] = dict(states.Inliner.dispatch)
    patched: dict[str, Any] = {
        k: interpreted_or_phrase_ref if v is find_interpreted else v for k, v in table.items()
    }
    inliner.dispatch = patched
    inliner.init_customizations = init_customizations  # type: ignore[method-assign]
    inliner.parse = bounded_parse  # type: ignore[method-assign]
    inliner.inline_obj = inline_obj  # type: ignore[method-assign]
    return inliner


_SETTINGS: dict[str, Any] = {
    "report_level": 5,
    "halt_level": 5,
    "warning_stream": io.StringIO(),
    "file_insertion_enabled": False,
    "raw_enabled": False,
    "_disable_config": True,
    "doctitle_xform": False,
    "sectsubtitle_xform": False,
    "docinfo_xform": False,
    "smart_quotes": False,
    "syntax_highlight": "none",
    "input_encoding": "unicode",
    "pep_references": False,
    "rfc_references": False,
    "line_length_limit": 64 * 1024 * 1024,
}
_DROP = (
    nodes.comment,
    nodes.system_message,
    nodes.raw,
    nodes.substitution_definition,
    nodes.target,
    nodes.pending,
)
_TEXT_BLOCKS = (
    nodes.paragraph,
    nodes.literal_block,
    nodes.doctest_block,
    nodes.line_block,
    nodes.term,
    nodes.rubric,
    nodes.attribution,
    nodes.caption,
    nodes.field_name,
)
_SPHINX_ROLES = (
    "ref", "doc", "term", "func", "meth", "class", "attr", "mod", "data", "const", "exc",
    "obj", "envvar", "option", "program", "file", "command", "kbd", "guilabel",
    "menuselection", "samp", "numref", "download", "any", "keyword", "token", "dfn",
    "py:func", "py:meth", "py:class", "py:attr", "py:mod", "py:data", "py:const",
    "py:exc", "py:obj", "c:func", "c:type", "c:macro", "c:data", "c:member",
)  # fmt: skip
_TARGET = re.compile(r"^(.*?)\s*<[^<>]*>$", re.S)


def _text_role(
    name: str,
    rawtext: str,
    text: str,
    lineno: int,
    inliner: Any,
    options: Any = None,
    content: Any = None,
) -> tuple[list[nodes.Node], list[nodes.system_message]]:
    """A Sphinx cross-reference role read as the text a rendered page shows:
    ``:ref:`the docs <docs>``` → ``the docs``, ``:func:`~a.b``` → ``b``."""
    shown = text
    m = _TARGET.match(text)
    if m and m.group(1):
        shown = m.group(1)
    elif text.startswith("~"):
        shown = text[1:].rsplit(".", 1)[-1]
    return [nodes.literal(rawtext, shown.lstrip("!"))], []


class _Dropped(Directive):
    """A Sphinx directive that renders no text of its own (``toctree``, ``index``)."""

    has_content = True
    optional_arguments = 10
    final_argument_whitespace = True
    option_spec = None

    def run(self) -> list[nodes.Node]:
        return []


for _role in _SPHINX_ROLES:
    roles.register_local_role(_role, _text_role)  # type: ignore[arg-type]
directives.register_directive("code-block", CodeBlock)
directives.register_directive("sourcecode", CodeBlock)
for _name in ("toctree", "index", "highlight", "currentmodule", "module", "testsetup"):
    directives.register_directive(_name, _Dropped)


def _row_text(row: nodes.row) -> str:
    return " ; ".join(t for entry in row.children if (t := canonical_inline(entry.astext())))


def rst_blocks(raw: str) -> list[Block]:
    settings = dict(_SETTINGS, warning_stream=io.StringIO())
    try:
        tree = publish_doctree(
            raw,
            reader=LinearReader(),
            parser=LinearParser(inliner=_bounded_inliner()),
            settings_overrides=settings,
        )
    except RecursionError as e:
        raise RstTooDeep("reST nested deeper than the parser can read") from e
    blocks: list[Block] = []
    # Explicit stack (document order) rather than recursion: nesting is bounded by the
    # input, not by Python's recursion limit.
    stack: list[tuple[nodes.Node, int]] = [(tree, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, _DROP):
            continue
        if isinstance(node, nodes.title) and isinstance(node.parent, nodes.section):
            text = canonical_inline(node.astext())
            if text:
                blocks.append(Block(text=text, raw=node.rawsource or text, level=min(depth, 6)))
            continue
        if isinstance(node, nodes.row):
            text = _row_text(node)
            if text:
                blocks.append(Block(text=text, raw=text))
            continue
        if isinstance(node, _TEXT_BLOCKS):
            text = canonical_block(node.astext())
            if text:
                blocks.append(Block(text=text, raw=node.rawsource or text))
            continue
        if isinstance(node, nodes.Text):
            continue
        child_depth = depth + 1 if isinstance(node, nodes.section) else depth
        if isinstance(node, nodes.Element):
            stack.extend((child, child_depth) for child in reversed(node.children))
    return blocks

"""Format readers: raw source text → title + a list of heading / paragraph blocks.

Part of ``canonicalization_version`` (docs/corpus.md, "Readers"). Each reader is a pure
function of (raw text, file name), so a shard can be rebuilt from the raw text it keeps.
Every block keeps both its canonical text (what chunks, hashes and the verifier see) and
the raw slice it came from (what the inspect sidecar compares against).

* ``.txt``: paragraphs separated by blank lines; no headings, so the title is the file
  name.
* ``.md`` / ``.markdown``: ATX and setext headings, fenced code, block quotes, lists and
  tables, with inline markup (emphasis, code spans, links, images, a fixed list of inline
  HTML tags, entities) reduced to its text. mdBook directives (``{{#include …}}``) and
  HTML comments are dropped.
* ``.rst``: under- and overlined section titles, directives and comments dropped, inline
  roles and hyperlink references reduced to their text.
* ``.html`` / ``.htm``: :class:`html.parser.HTMLParser` (a real parser, never regexes);
  script, style and the like are skipped; block elements end a paragraph; ``h1``-``h6``
  are headings; ``<title>`` is the title when the page has no heading.

:func:`read_source_bytes` is the one place a source file's bytes are read: only regular
files (after following symlinks), at most :data:`MAX_FILE_BYTES`, never blocking.
"""

from __future__ import annotations

import errno
import html
import os
import re
import stat
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import PurePath

from aborist.corpus.canonicalize import canonical_block, canonical_inline

__all__ = [
    "FORMATS",
    "MAX_FILE_BYTES",
    "Block",
    "ParsedDocument",
    "SourceFileSkipped",
    "format_for",
    "parse_document",
    "read_source_bytes",
]

MAX_FILE_BYTES = 64 * 1024 * 1024
"""Source files larger than this are skipped. A file is held in memory several times over
(bytes, decoded text, canonical text, chunks) and its raw text is stored in the shard, so
an unbounded read lets one stray log file or ``/dev/zero`` exhaust the machine; 64 MiB is
far above any document a person writes (the longest COVID-QA paper is under 1 MiB)."""

_KINDS = (
    (stat.S_ISDIR, "directory"),
    (stat.S_ISFIFO, "named pipe"),
    (stat.S_ISCHR, "character device"),
    (stat.S_ISBLK, "block device"),
    (stat.S_ISSOCK, "socket"),
)


class SourceFileSkipped(Exception):
    """A file that cannot be read as a source; ``reason`` is its text in the skipped list."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _size_text(n: int) -> str:
    mib = 1024 * 1024
    return f"{n // mib} MiB" if n >= mib and n % mib == 0 else f"{n} bytes"


def _os_reason(e: OSError, path: str | os.PathLike[str]) -> str:
    if e.errno == errno.ELOOP:
        return "symlink loop"
    if e.errno == errno.ENOENT and os.path.islink(path):
        return "broken symlink (its target does not exist)"
    return f"unreadable: {e.strerror or e}"


def _not_regular(mode: int) -> str:
    kind = next((name for test, name in _KINDS if test(mode)), "special file")
    return f"not a regular file ({kind})"


def read_source_bytes(path: str | os.PathLike[str], *, limit: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of the regular file at ``path`` (symlinks followed), or
    :class:`SourceFileSkipped` saying why not.

    Why each step: the type is checked *before* opening, because opening a FIFO blocks
    until a writer appears and opening a device can have side effects; the open itself is
    non-blocking and the type checked again on the open descriptor, in case the path was
    swapped in between; the read asks for at most ``limit + 1`` bytes, so a file that
    grows while read, or one whose size the kernel misreports (``/proc``), still cannot
    take more than the limit in memory.
    """
    try:
        mode = os.stat(path).st_mode
    except OSError as e:
        raise SourceFileSkipped(_os_reason(e, path)) from e
    if not stat.S_ISREG(mode):
        raise SourceFileSkipped(_not_regular(mode))
    too_large = f"larger than the {_size_text(limit)} limit for one file"
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY)
    except OSError as e:
        raise SourceFileSkipped(_os_reason(e, path)) from e
    try:
        with os.fdopen(fd, "rb") as fh:
            info = os.fstat(fh.fileno())
            if not stat.S_ISREG(info.st_mode):
                raise SourceFileSkipped(_not_regular(info.st_mode))
            if info.st_size > limit:
                raise SourceFileSkipped(f"{too_large} ({info.st_size} bytes)")
            data = fh.read(limit + 1)
    except OSError as e:
        raise SourceFileSkipped(_os_reason(e, path)) from e
    if len(data) > limit:
        raise SourceFileSkipped(f"{too_large} (it held more than its reported size)")
    return data


FORMATS: dict[str, str] = {
    ".txt": "text",
    ".md": "markdown",
    ".markdown": "markdown",
    ".rst": "rst",
    ".html": "html",
    ".htm": "html",
}


@dataclass(frozen=True)
class Block:
    """One heading or paragraph. ``level`` is 0 for paragraphs, 1-6 for headings."""

    text: str
    raw: str
    level: int = 0

    @property
    def is_heading(self) -> bool:
        return self.level > 0


@dataclass(frozen=True)
class ParsedDocument:
    title: str
    blocks: tuple[Block, ...]


def format_for(path: PurePath) -> str | None:
    """The reader name for a file suffix, or ``None`` when the type is unsupported."""
    return FORMATS.get(path.suffix.lower())


def parse_document(raw: str, fmt: str, *, file_name: str) -> ParsedDocument:
    """Parse ``raw`` with the reader for ``fmt``; the title falls back to the file stem."""
    if fmt == "markdown":
        blocks, extra_title = _markdown_blocks(raw), None
    elif fmt == "rst":
        blocks, extra_title = _rst_blocks(raw), None
    elif fmt == "html":
        blocks, extra_title = _html_blocks(raw)
    elif fmt == "text":
        blocks, extra_title = _paragraph_blocks(raw.split("\n")), None
    else:
        raise ValueError(f"unknown format {fmt!r}")
    kept = tuple(b for b in blocks if b.text)
    heading = next((b.text for b in kept if b.is_heading), None)
    title = heading or extra_title or PurePath(file_name).stem or file_name
    return ParsedDocument(title=canonical_inline(title), blocks=kept)


def _paragraph_blocks(lines: list[str]) -> list[Block]:
    """Blank-line separated paragraphs of ``lines`` (plain text)."""
    blocks: list[Block] = []
    current: list[str] = []

    def flush() -> None:
        if current:
            raw = "\n".join(current)
            blocks.append(Block(text=canonical_block(raw), raw=raw))
            current.clear()

    for line in lines:
        if line.strip():
            current.append(line)
        else:
            flush()
    flush()
    return blocks


# --- Markdown -------------------------------------------------------------------------

_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_QUOTE = re.compile(r"^ {0,3}> ?")
_BULLET = re.compile(r"^\s*(?:[-*+]|\d{1,9}[.)])\s+")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")
_LINK_DEF = re.compile(r"^ {0,3}\[[^\]]+\]:\s+\S+")
_MDBOOK = re.compile(r"^\s*\{\{#\w+[^}]*\}\}\s*$")
_HR = re.compile(r"^ {0,3}([-*_])(\s*\1){2,}\s*$")
_COMMENT = re.compile(r"<!--.*?-->", re.S)

_IMAGE = re.compile(r"!\[([^\]]*)\]\([^)]*\)")
_LINK = re.compile(r"\[([^\]]+)\](?:\([^)]*\)|\[[^\]]*\])", re.S)
_CODE_SPAN = re.compile(r"(`+)(.+?)\1")
_STRONG = re.compile(r"(?<![\w*])(\*\*|__)(?=\S)(.+?)(?<=\S)\1(?![\w*])", re.S)
_EMPH = re.compile(r"(?<![\w*])([*_])(?=\S)(.+?)(?<=\S)\1(?![\w*])", re.S)
_INLINE_TAGS = re.compile(
    r"</?(?:a|abbr|b|br|code|del|div|em|figcaption|figure|i|img|ins|kbd|Listing|mark|"
    r"p|q|s|small|span|strong|sub|sup|u|var)(?:\s[^<>]*)?/?>"
)


def _markdown_inline(text: str) -> str:
    """Reduce inline Markdown to its text. Code spans are protected first so that
    ``Vec<T>`` or ``a_b_c`` inside backticks survive untouched."""
    spans: list[str] = []

    def keep(m: re.Match[str]) -> str:
        spans.append(m.group(2).strip())
        return f"\x00{len(spans) - 1}\x00"

    text = _CODE_SPAN.sub(keep, text)
    text = _IMAGE.sub(r"\1", text)
    text = _LINK.sub(r"\1", text)
    text = _INLINE_TAGS.sub("", text)
    text = _STRONG.sub(r"\2", text)
    text = _EMPH.sub(r"\2", text)
    text = html.unescape(text)
    return re.sub(r"\x00(\d+)\x00", lambda m: spans[int(m.group(1))], text)


def _markdown_blocks(raw: str) -> list[Block]:
    lines = _COMMENT.sub("", raw).split("\n")
    blocks: list[Block] = []
    para_raw: list[str] = []
    para_text: list[str] = []
    code_raw: list[str] = []
    code_text: list[str] = []
    fence: str | None = None

    def flush() -> None:
        if para_raw:
            text = canonical_block(_markdown_inline("\n".join(para_text)))
            blocks.append(Block(text=text, raw="\n".join(para_raw)))
            para_raw.clear()
            para_text.clear()

    for i, source in enumerate(lines):
        line = source
        while _QUOTE.match(line):
            line = _QUOTE.sub("", line, count=1)
        if fence is not None:
            if line.strip().startswith(fence) and not line.strip().strip(fence[0]):
                fence = None
                if code_raw:
                    code = canonical_block("\n".join(code_text))
                    blocks.append(Block(text=code, raw="\n".join(code_raw)))
                code_raw.clear()
                code_text.clear()
            elif not _MDBOOK.match(line):
                code_raw.append(source)
                code_text.append(line)
            continue
        fence_match = _FENCE.match(line)
        if fence_match:
            flush()
            fence = fence_match.group(1)
            continue
        if not line.strip() or _MDBOOK.match(line) or _LINK_DEF.match(line):
            flush()
            continue
        atx = _ATX.match(line)
        if atx:
            flush()
            title = canonical_inline(_markdown_inline(atx.group(2) or ""))
            blocks.append(Block(text=title, raw=source, level=len(atx.group(1))))
            continue
        setext = _SETEXT.match(line)
        if setext and para_raw and len(para_raw) == 1 and i > 0:
            heading_raw = para_raw[0] + "\n" + source
            title = canonical_inline(para_text[0])
            para_raw.clear()
            para_text.clear()
            level = 1 if setext.group(1).startswith("=") else 2
            blocks.append(Block(text=title, raw=heading_raw, level=level))
            continue
        if _HR.match(line):
            flush()
            continue
        if _TABLE_RULE.match(line) and "|" in line:
            continue
        text = line
        if _BULLET.match(line) or line.lstrip().startswith("|"):
            flush()
            text = _BULLET.sub("", line, count=1)
        if text.lstrip().startswith("|"):
            text = " ; ".join(cell.strip() for cell in text.strip().strip("|").split("|"))
        para_raw.append(source)
        para_text.append(text)
    flush()
    if code_raw:
        blocks.append(Block(text=canonical_block("\n".join(code_text)), raw="\n".join(code_raw)))
    return blocks


# --- reStructuredText -----------------------------------------------------------------

_RST_ADORNMENT = re.compile(r"^([!-/:-@\[-`{-~])\1{2,}\s*$")
_RST_DIRECTIVE = re.compile(r"^\.\.(\s|$)")
_RST_ROLE = re.compile(r":[\w.+-]+:`([^`<]*?)(?:\s*<[^>]*>)?`")
_RST_REF = re.compile(r"`([^`<]+?)(?:\s*<[^>]*>)?`__?")
_RST_LITERAL = re.compile(r"``(.+?)``")
_RST_STRONG = re.compile(r"\*\*(.+?)\*\*")
_RST_EMPH = re.compile(r"(?<![\w*])\*(?=\S)(.+?)(?<=\S)\*(?![\w*])")


def _rst_inline(text: str) -> str:
    text = _RST_LITERAL.sub(r"\1", text)
    text = _RST_ROLE.sub(r"\1", text)
    text = _RST_REF.sub(r"\1", text)
    text = _RST_STRONG.sub(r"\1", text)
    return _RST_EMPH.sub(r"\1", text)


def _rst_blocks(raw: str) -> list[Block]:
    lines = raw.split("\n")
    blocks: list[Block] = []
    styles: list[str] = []
    para_raw: list[str] = []
    skip_indented = False

    def flush() -> None:
        if para_raw:
            text = canonical_block("\n".join(_rst_inline(x) for x in para_raw))
            blocks.append(Block(text=text, raw="\n".join(para_raw)))
            para_raw.clear()

    i = 0
    while i < len(lines):
        line = lines[i]
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if skip_indented:
            if line.strip() and not line[:1].isspace():
                skip_indented = False
            else:
                i += 1
                continue
        over = _RST_ADORNMENT.match(line)
        if over and nxt.strip() and i + 2 < len(lines) and lines[i + 2].strip() == line.strip():
            flush()
            style = "over" + over.group(1)
            if style not in styles:
                styles.append(style)
            blocks.append(
                Block(
                    text=canonical_inline(_rst_inline(nxt)),
                    raw="\n".join(lines[i : i + 3]),
                    level=min(styles.index(style) + 1, 6),
                )
            )
            i += 3
            continue
        under = _RST_ADORNMENT.match(nxt)
        if (
            under
            and line.strip()
            and not para_raw
            and not _RST_ADORNMENT.match(line)
            and len(nxt.rstrip()) >= len(line.rstrip())
        ):
            style = "under" + under.group(1)
            if style not in styles:
                styles.append(style)
            blocks.append(
                Block(
                    text=canonical_inline(_rst_inline(line)),
                    raw=line + "\n" + nxt,
                    level=min(styles.index(style) + 1, 6),
                )
            )
            i += 2
            continue
        if _RST_DIRECTIVE.match(line):
            flush()
            skip_indented = True
            i += 1
            continue
        if not line.strip():
            flush()
        else:
            para_raw.append(line)
        i += 1
    flush()
    return blocks


# --- HTML -----------------------------------------------------------------------------

_SKIP_TAGS = frozenset({"script", "style", "noscript", "template", "svg", "head", "iframe"})
_HEADINGS = {f"h{n}": n for n in range(1, 7)}
_BLOCK_TAGS = frozenset(
    {
        "address", "article", "aside", "blockquote", "body", "br", "dd", "details",
        "dialog", "div", "dl", "dt", "fieldset", "figcaption", "figure", "footer", "form",
        "header", "hr", "html", "li", "main", "nav", "ol", "p", "pre", "section",
        "summary", "table", "tbody", "td", "tfoot", "th", "thead", "tr", "ul",
    }
)  # fmt: skip


class _TextExtractor(HTMLParser):
    """Collects text per block element; tracks skipped subtrees and the ``<title>``."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.blocks: list[Block] = []
        self.title_parts: list[str] = []
        self._buffer: list[str] = []
        self._skip_depth = 0
        self._in_title = False
        self._heading_level = 0

    def _flush(self) -> None:
        raw = "".join(self._buffer)
        self._buffer.clear()
        text = canonical_inline(raw)
        if text:
            self.blocks.append(Block(text=text, raw=raw.strip(), level=self._heading_level))

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":
            self._in_title = True
        elif tag in _SKIP_TAGS:
            self._skip_depth += 1
        elif tag in _HEADINGS:
            self._flush()
            self._heading_level = _HEADINGS[tag]
        elif tag in _BLOCK_TAGS:
            self._flush()

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _BLOCK_TAGS:
            self._flush()

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        elif tag in _SKIP_TAGS:
            self._skip_depth = max(0, self._skip_depth - 1)
        elif tag in _HEADINGS:
            self._flush()
            self._heading_level = 0
        elif tag in _BLOCK_TAGS:
            self._flush()

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title_parts.append(data)
        elif not self._skip_depth:
            self._buffer.append(data)

    def close(self) -> None:
        super().close()
        self._flush()


def _html_blocks(raw: str) -> tuple[list[Block], str | None]:
    parser = _TextExtractor()
    parser.feed(raw)
    parser.close()
    title = canonical_inline("".join(parser.title_parts)) or None
    return parser.blocks, title

"""PDF through pypdf: the text layer page by page, with page numbers and page labels.

Two steps, so that a shard can re-derive a document from what it stores:

1. :func:`extract_pdf` (bytes → extraction): pypdf's text of every page as it comes
   (the *raw* text the inspect sidecar compares against), each page's label (what the
   document prints or a viewer shows, e.g. ``iv``; pypdf gives the page number when the
   file defines none), the metadata title and the first outline (bookmark) entry.
   Stored as canonical JSON in the shard's ``raw_text``.
2. :func:`pdf_blocks` (extraction → blocks, pure): per page, paragraphs at blank lines
   with PDF artifacts folded (:func:`~aborist.corpus.canonicalize.fold_pdf_text`:
   ligatures, words hyphenated at line ends), each with the locator
   ``{"page": n, "page_label": "…"}`` (``n`` 1-based).

Refused, one reason each (:class:`~aborist.corpus.readers.source.SourceFileSkipped`):
an encrypted file that does not open with the empty password; a file with no text layer
at all (scanned or image-only; OCR is not offered), or one whose text is all white space;
a file pypdf cannot read (broken
cross-reference tables it cannot rebuild, truncated or malformed files). pypdf repairs
what it can in its non-strict mode (a wrong ``startxref`` is rebuilt from the objects),
and such files are read. A file whose extraction takes longer than :data:`PDF_SECONDS`
(pypdf has no time limit of its own) or whose page contents unpack to more than
:data:`MAX_CONTENT_BYTES` is refused too.
"""

from __future__ import annotations

import io
import json
import logging
import time
import warnings
from typing import Any

from aborist.corpus.canonicalize import canonical_block, canonical_inline, fold_pdf_text
from aborist.corpus.readers.model import Block, Locator
from aborist.corpus.readers.source import SourceFileSkipped

__all__ = ["EXTRACTION_VERSION", "MAX_CONTENT_BYTES", "PDF_SECONDS", "extract_pdf", "pdf_blocks"]

EXTRACTION_VERSION = "pdf-extract-1"
_TITLE_CHARS = 80

PDF_SECONDS = 60.0
"""Wall-clock limit on extracting one PDF's text. pypdf has none and bounds only each
step (a stream's decoded size, a page's form invocations), so 1.5 KB that make one page
draw a large form 5,000 times kept it busy for about 25 minutes; real files take well
under a second a page. Checked before each page, before every form is drawn (``Do``) and
every :data:`_CHECK_EVERY` content operators (also inside forms), so the overrun is at
most one stream's parse."""

MAX_CONTENT_BYTES = 256 * 1024 * 1024
"""Limit on the decoded size of all pages' content streams together. pypdf keeps every
stream it decodes (up to 75 MB each) for as long as the file is open: ten pages of 70 MB
of blanks, a 680 KB file, took 781 MB and 67 s."""

_CHECK_EVERY = 64


class _OutOfTime(BaseException):
    """Raised from inside pypdf when :data:`PDF_SECONDS` are up: a ``BaseException`` so
    that pypdf's ``except Exception`` around each form XObject cannot swallow it."""


#: The operator that draws an XObject (a form is parsed on every draw).
_DRAW = frozenset({b"Do", "Do"})


class _Budget:
    """The time and the decoded content bytes one extraction may still take."""

    def __init__(self) -> None:
        self.seconds = PDF_SECONDS
        self._end = time.monotonic() + PDF_SECONDS
        self._operators = 0
        self.content_bytes = 0

    def check_time(self) -> None:
        if time.monotonic() > self._end:
            raise _OutOfTime

    def visit(self, operator: Any, operands: Any, cm: Any, tm: Any) -> None:
        """pypdf's ``visitor_operand_before``: called for every content operator."""
        self._operators += 1
        # before every "Do" too: one form XObject may take seconds to parse and holds no
        # operator of its own to count (70 MB of blanks), so 63 draws never reached a check
        if operator in _DRAW or self._operators % _CHECK_EVERY == 0:
            self.check_time()

    def add_content(self, page: Any) -> None:
        """Count the decoded size of ``page``'s content streams (already decoded and
        kept by pypdf when its text was extracted, so reading them costs nothing)."""
        try:
            contents = page.get_contents()
            self.content_bytes += len(contents.get_data()) if contents is not None else 0
        except Exception:  # contents pypdf could not decode gave no text either
            return
        if self.content_bytes > MAX_CONTENT_BYTES:
            raise SourceFileSkipped(
                f"PDF whose page contents unpack to more than {MAX_CONTENT_BYTES} bytes (a "
                "decompression bomb; the limit bounds the memory and time one file takes)"
            )


# pypdf reports recoverable damage through logging; without a handler those lines would
# reach stderr through logging's last-resort handler, one per damaged object.
logging.getLogger("pypdf").addHandler(logging.NullHandler())
logging.getLogger("pypdf").propagate = False


def _first_outline_title(outline: Any) -> str:
    stack = list(reversed(outline))
    while stack:
        item = stack.pop()
        if isinstance(item, list):
            stack.extend(reversed(item))
            continue
        title = getattr(item, "title", None)
        if isinstance(title, str) and title.strip():
            return title
    return ""


def extract_pdf(data: bytes) -> str:
    """The extraction of a PDF's text layer as canonical JSON; raises
    :class:`SourceFileSkipped` naming why a file cannot be read."""
    from pypdf import PdfReader
    from pypdf.errors import DependencyError, FileNotDecryptedError

    budget = _Budget()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            reader = PdfReader(io.BytesIO(data), strict=False)
            if reader.is_encrypted:
                try:
                    opened = reader.decrypt("")
                except (DependencyError, NotImplementedError) as e:
                    raise SourceFileSkipped(f"encrypted PDF that cannot be opened: {e}") from e
                if not opened:
                    raise SourceFileSkipped(
                        "encrypted PDF: it needs a password (aborist reads only PDFs that "
                        "open without one)"
                    )
            pages = _pages(reader, budget)
            meta = reader.metadata
            title = str(meta.title or "") if meta is not None else ""
            try:
                outline_title = _first_outline_title(reader.outline)
            except Exception:  # a broken outline costs the fallback title, not the file
                outline_title = ""
    except SourceFileSkipped:
        raise
    except _OutOfTime:
        raise SourceFileSkipped(
            f"PDF whose text takes longer than {budget.seconds:g} s to extract (pypdf has "
            "no time limit of its own; a file that makes it spin is refused)"
        ) from None
    except FileNotDecryptedError as e:
        raise SourceFileSkipped(f"encrypted PDF: {e}") from e
    except Exception as e:
        # pypdf raises many kinds (PdfReadError, KeyError, ValueError, RecursionError …)
        # on hostile files; each is one skipped file, never a traceback.
        raise SourceFileSkipped(f"malformed PDF ({type(e).__name__}: {e})"[:300]) from e
    if not pages:
        raise SourceFileSkipped("PDF with no pages")
    if not any(canonical_inline(p["text"]) for p in pages):
        if any(p["text"] for p in pages):  # text drawn, none of it readable
            what = (
                "only white space"
                if all(not p["text"].strip() for p in pages)
                else "only control or zero-width characters (a font with no Unicode map?)"
            )
            raise SourceFileSkipped(
                f"no text on any of its {len(pages)} page(s): its text layer holds {what}"
            )
        raise SourceFileSkipped(
            f"no text layer on any of its {len(pages)} page(s) (a scanned or image-only "
            "PDF; OCR is not offered)"
        )
    doc = {
        "extraction": EXTRACTION_VERSION,
        "title": title,
        "outline_title": outline_title,
        "pages": pages,
    }
    return json.dumps(doc, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def _pages(reader: Any, budget: _Budget) -> list[dict[str, str]]:
    """Every page's label and text, within ``budget``."""
    budget.check_time()
    labels = list(reader.page_labels)
    pages = []
    for i, page in enumerate(reader.pages):
        budget.check_time()
        text = page.extract_text(visitor_operand_before=budget.visit) or ""
        budget.add_content(page)
        label = labels[i] if i < len(labels) else str(i + 1)
        pages.append({"label": str(label), "text": text})
    return pages


def pages_without_text(raw: str) -> list[int]:
    """1-based numbers of the pages of an extraction that have no text layer."""
    pages = json.loads(raw)["pages"]
    return [i for i, p in enumerate(pages, start=1) if not canonical_inline(p["text"])]


def pdf_blocks(raw: str) -> tuple[list[Block], str | None]:
    """Blocks and title of an extraction made by :func:`extract_pdf`. The title is the
    metadata title, else the first outline entry, else the first line of text when it is
    short enough to be a heading (else ``None``: the file name)."""
    doc = json.loads(raw)
    blocks: list[Block] = []
    first_line = ""
    for number, page in enumerate(doc["pages"], start=1):
        text: str = page["text"]
        locator = Locator(page=number, page_label=page["label"])
        for para in _paragraphs(text):
            canonical = canonical_block(fold_pdf_text(para))
            if canonical:
                blocks.append(Block(text=canonical, raw=para.strip(), locator=locator))
                if not first_line:
                    first_line = canonical_inline(fold_pdf_text(para.strip().split("\n")[0]))
                    first_line = first_line if len(first_line) <= _TITLE_CHARS else "-"
    title = canonical_inline(doc.get("title", "")) or canonical_inline(doc.get("outline_title", ""))
    return blocks, title or first_line.strip("-") or None


def _paragraphs(text: str) -> list[str]:
    """A page's text cut at blank lines (lines of only spaces count as blank)."""
    out: list[str] = []
    current: list[str] = []
    for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        if line.strip():
            current.append(line)
        elif current:
            out.append("\n".join(current))
            current = []
    if current:
        out.append("\n".join(current))
    return out

"""Decoding and canonical text: the first half of ``canonicalization_version``.

Everything the verifier later tests by substring is the *canonical* text, so the rules
here are deliberately few, total and deterministic (docs/corpus.md, "Canonicalization"):

1. Decode: UTF-8 (BOM stripped), or UTF-16 / UTF-32 when a BOM says so. Anything else
   is refused as an unknown encoding rather than guessed; a NUL byte in a file without a
   UTF-16/32 BOM marks it as binary.
2. Unicode NFC.
3. Line endings ``\\r\\n`` / ``\\r`` / U+2028 / U+2029 become ``\\n``.
4. Tabs, no-break spaces and every other Unicode space separator become one ASCII space;
   zero-width characters and soft hyphens are removed; other control characters dropped.
5. Runs of spaces collapse to one; lines are stripped.
6. Blank lines separate paragraphs (joined by one blank line); the line breaks inside a
   paragraph are soft and become single spaces, so a sentence reads the same however the
   source wrapped it.

PDF text extraction has artifacts of its own that :func:`fold_pdf_text` removes before
these rules (since ``canon-2``): typographic ligatures and words hyphenated at line ends.

Bumping any rule here, or in :mod:`aborist.corpus.readers`, bumps
:data:`CANONICALIZATION_VERSION`, which is part of every cache key.
"""

from __future__ import annotations

import codecs
import re
import unicodedata

from aborist.errors import InputError

__all__ = [
    "CANONICALIZATION_VERSION",
    "BinaryFileError",
    "UnknownEncodingError",
    "canonical_block",
    "canonical_inline",
    "decode_source",
    "fold_pdf_text",
]

CANONICALIZATION_VERSION = "canon-5"

_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)

_ZERO_WIDTH = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff\u00ad"), None)
_LIGATURES = {0xFB00: "ff", 0xFB01: "fi", 0xFB02: "fl", 0xFB03: "ffi", 0xFB04: "ffl",
              0xFB05: "st", 0xFB06: "st"}  # fmt: skip
_LINE_END_HYPHEN = re.compile(r"(?<=[^\W\d_])[-\u2010]\n[ \t]*(?=[^\W\d_A-Z])")
_LINE_BREAKS = re.compile("\r\n|[\r\u2028\u2029\x85\x0b\x0c]")
_SPACES = re.compile(r"[ \t]+")
_CONTROL = re.compile("[\x00-\x08\x0e-\x1f\x7f-\x84\x86-\x9f]")
_OTHER_SPACES = re.compile(
    "[" + "".join(chr(c) for c in range(0x80, 0x3001) if unicodedata.category(chr(c)) == "Zs") + "]"
)


class BinaryFileError(InputError):
    """The file holds binary data (a NUL byte outside a UTF-16/32 text)."""


class UnknownEncodingError(InputError):
    """The bytes are not UTF-8 and carry no BOM naming another Unicode encoding."""


def decode_source(data: bytes, *, name: str) -> str:
    """Decode ``data`` by rule 1; raise a :class:`BinaryFileError` or
    :class:`UnknownEncodingError` whose message names the file and the offending byte."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            try:
                return data.decode(encoding).lstrip("\ufeff")
            except UnicodeDecodeError as e:
                raise UnknownEncodingError(
                    f"{name}: starts with a {encoding} byte-order mark but is not valid "
                    f"{encoding} (byte offset {e.start})"
                ) from e
    if b"\x00" in data[:8192]:
        raise BinaryFileError(
            f"{name}: binary file (NUL byte at offset {data.index(0)}); expected text"
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise UnknownEncodingError(
            f"{name}: not UTF-8 (byte 0x{data[e.start]:02x} at offset {e.start}); "
            "re-save the file as UTF-8"
        ) from e


def _clean_chars(text: str) -> str:
    text = unicodedata.normalize("NFC", text)
    text = _LINE_BREAKS.sub("\n", text).translate(_ZERO_WIDTH)
    text = _CONTROL.sub("", text)
    return _OTHER_SPACES.sub(" ", text)


def fold_pdf_text(text: str) -> str:
    """Undo what laying out text on a page did to it, for text extracted from a PDF:

    * the Latin ligatures U+FB00-FB06 (``ﬁ``, ``ﬂ``, ``ﬀ``, ``ﬃ``, ``ﬄ``, ``ﬅ``, ``ﬆ``)
      become their letters, so ``inﬂuenza`` is found by ``influenza``;
    * a word hyphenated at a line end is joined: a letter, ``-`` (or U+2010), a line
      break, then a lower-case letter (``conven-\ntional`` → ``conventional``). A
      hyphen before a capital or a digit is kept with the line break (``COVID-\n19``
      stays two words), and so is a compound that happens to break at its own hyphen
      (``well-\nknown`` becomes ``wellknown``: extraction cannot tell the two apart, as
      pdftotext cannot).

    Only for PDF: text formats are read as their authors wrote them (folding ligatures
    in every format moved three COVID-QA questions and lost one; docs/corpus.md).
    Soft hyphens are removed for every format by the rules above."""
    return _LINE_END_HYPHEN.sub("", text.translate(_LIGATURES))


def canonical_inline(text: str) -> str:
    """Rules 2-5 on a run of text with no paragraph structure: one line, single spaces."""
    cleaned = _clean_chars(text).replace("\n", " ")
    return _SPACES.sub(" ", cleaned).strip()


def canonical_block(text: str) -> str:
    """Rules 2-6 on a block that may hold several paragraphs (blank-line separated)."""
    lines = [_SPACES.sub(" ", line).strip() for line in _clean_chars(text).split("\n")]
    paragraphs: list[str] = []
    current: list[str] = []
    for line in lines:
        if line:
            current.append(line)
        elif current:
            paragraphs.append(" ".join(current))
            current = []
    if current:
        paragraphs.append(" ".join(current))
    return "\n\n".join(paragraphs)

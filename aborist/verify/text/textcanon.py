"""Text canonicalization shared by both sides of the verifier (docs/verifier.md).

The verifier compares an answer with evidence *lexically*. Two texts that a reader would
call "the same words" must compare equal, so both sides go through the same steps:

1. Unicode NFC.
2. Typographic double quotes (“ ” „ ‟ « » 〝 〞 ＂) become ``"``; typographic single
   quotes and primes (‘ ’ ‚ ‛ ′ ＇) become ``'``.
3. Hyphens and dashes (‐ ‑ ‒ – — ― − ﹘ ﹣ －) become ``-``; the ellipsis ``…`` becomes ``...``.
4. Every run of whitespace (including NBSP, zero-width space and line breaks) becomes one
   space; leading and trailing whitespace is removed. Zero-width joiners and the BOM are
   dropped.
5. A quotation written with two backquotes and two apostrophes standing alone
   (`` Girl You Know It 's True '', as tokenized corpora write it) becomes "Girl You
   Know It 's True".

The *match form* of a text goes one step further: it is the sequence of its word tokens
(``tokens``), case-folded, joined by single spaces and padded with one space on each side.
"Token sequence A occurs in B" is then the C-speed test ``match_form(A) in match_form(B)``,
which can only succeed on token boundaries. Punctuation and case are therefore not part of
what "verbatim" means here; docs/verifier.md states this rule.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from functools import lru_cache

__all__ = [
    "CANONICALIZATION_VERSION",
    "NUMBER_WORDS",
    "STOPWORDS",
    "canonical_lines",
    "canonical_tokens",
    "canonicalize",
    "clear_memo",
    "content_tokens",
    "match_form",
    "token_spans",
    "tokens",
]

CANONICALIZATION_VERSION = "textcanon-2"

_TYPOGRAPHIC: dict[str, str] = {
    "“": '"',
    "”": '"',
    "„": '"',
    "‟": '"',
    "«": '"',
    "»": '"',
    "〝": '"',
    "〞": '"',
    "＂": '"',
    "‘": "'",
    "’": "'",
    "‚": "'",
    "‛": "'",
    "′": "'",
    "＇": "'",
    "‐": "-",
    "‑": "-",
    "‒": "-",
    "–": "-",
    "—": "-",
    "―": "-",
    "−": "-",
    "﹘": "-",
    "﹣": "-",
    "－": "-",
    "…": "...",
    "\u200b": "",
    "\u200c": "",
    "\u200d": "",
    "\u2060": "",
    "\ufeff": "",
}

_TYPOGRAPHIC_RE = re.compile("[" + re.escape("".join(_TYPOGRAPHIC)) + "]")
# A number keeps its inner separators ("3.5", "1,000") unless letters follow ("1990s",
# "4th" are one token); otherwise a token is a run of
# letters and digits. The underscore is punctuation.
_TOKEN = re.compile(r"\d+(?:[.,]\d+)*(?![^\W_])|[^\W_]+")

STOPWORDS: frozenset[str] = frozenset(
    """
    a about above after again against all also am an and any are as at be because been
    before being below between both but by can could did do does doing down during each
    few for from further had has have having he her here hers herself him himself his
    how i if in into is it its itself just me more most my myself no nor not now of off
    on once only or other our ours ourselves out over own same she should so some such
    than that the their theirs them themselves then there these they this those through
    to too under until up very was we were what when where which while who whom whose
    why will with would you your yours yourself yourselves s t d ll m re ve yes
    """.split()  # noqa: SIM905
)

NUMBER_WORDS: dict[str, str] = {
    "zero": "0",
    "one": "1",
    "two": "2",
    "three": "3",
    "four": "4",
    "five": "5",
    "six": "6",
    "seven": "7",
    "eight": "8",
    "nine": "9",
    "ten": "10",
    "eleven": "11",
    "twelve": "12",
    "thirteen": "13",
    "fourteen": "14",
    "fifteen": "15",
    "sixteen": "16",
    "seventeen": "17",
    "eighteen": "18",
    "nineteen": "19",
    "twenty": "20",
    "thirty": "30",
    "forty": "40",
    "fifty": "50",
    "sixty": "60",
    "seventy": "70",
    "eighty": "80",
    "ninety": "90",
    "hundred": "100",
    "thousand": "1000",
    "million": "1000000",
    "dozen": "12",
}


def canonicalize(text: str) -> str:
    """NFC, typographic quotes/dashes/ellipsis to ASCII, whitespace collapsed, stripped."""
    if len(text) <= _MEMO_MAX_CHARS:
        return _canonicalize_memo(text)
    return _canonicalize(text)


def _canonicalize(text: str) -> str:
    if not text.isascii():
        text = unicodedata.normalize("NFC", text)
        text = _TYPOGRAPHIC_RE.sub(lambda m: _TYPOGRAPHIC[m.group()], text)
    return " ".join(_backquote_quotations(text).split())


def _backquote_quotations(text: str) -> str:
    """Step 5: a quotation written `` like this '' reads "like this" (the marks may stand
    on two lines: a soft wrap changes nothing). Nested ones are read from the inside out,
    until none is left, so the canonical form is stable: the 400-character bound allows
    at most about 70 levels, so at most that many passes."""
    while "``" in text:
        read = _PTB_QUOTE.sub(r'"\1"', text)
        if read == text:
            break
        text = read
    return text


#: A quotation written the tokenized-corpus way, two backquotes and two apostrophes each
#: standing alone as a word: `` Girl You Know It 's True '' (ClapNQ, the Penn Treebank,
#: LaTeX). It is read as the quotation "Girl You Know It 's True" (step 5 of
#: docs/verifier.md §1). Bounded to 400 characters, no backquote pair or apostrophe pair
#: inside; a Markdown fence (```) or a Python empty string ('') is no such word.
_PTB_QUOTE = re.compile(
    r"(?<![^\s(\[])``\s+((?:(?!``|'').){1,400}?)\s+''(?![^\s.,;:!?)\]])", re.DOTALL
)


def canonical_lines(text: str) -> str:
    """The canonical form of every line of ``text``, the lines joined by ``\n``: what a
    reader of line structure (blank lines, headings, list items) reads, so that it sees
    the same characters as every other rule. The line breaks are those of
    :meth:`str.splitlines` (LF, CR LF, CR, U+2028 …); a line of only whitespace or
    zero-width characters is blank. ``canonicalize(canonical_lines(t)) == canonicalize(t)``."""
    if _LINE_BREAK.search(text) is None:
        return canonicalize(text)
    text = _backquote_quotations(text)  # a quotation may run over a line break
    return "\n".join(_canonicalize(line) for line in text.splitlines())


#: The characters :meth:`str.splitlines` breaks at.
_LINE_BREAK = re.compile("[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]")


# Answers are short and looked at by several strategies; memoizing the pure functions on
# short inputs keeps verification fast without changing any result.
_MEMO_MAX_CHARS = 2000
_canonicalize_memo = lru_cache(maxsize=8192)(_canonicalize)


@lru_cache(maxsize=8192)
def _tokens_memo(text: str) -> tuple[str, ...]:
    return tuple(t.casefold() for t in _TOKEN.findall(_canonicalize(text)))


def tokens(text: str) -> list[str]:
    """Case-folded word tokens of the canonical form of ``text``."""
    if len(text) <= _MEMO_MAX_CHARS:
        return list(_tokens_memo(text))
    return canonical_tokens(_canonicalize(text))


def clear_memo() -> None:
    """Drop the memo caches (benchmarks use it to measure cold calls)."""
    _canonicalize_memo.cache_clear()
    _tokens_memo.cache_clear()
    _token_spans_memo.cache_clear()


def canonical_tokens(canonical_text: str) -> list[str]:
    """:func:`tokens` of a text that is already canonical (skips re-canonicalizing)."""
    return [t.casefold() for t in _TOKEN.findall(canonical_text)]


def token_spans(canonical_text: str) -> list[tuple[str, int, int]]:
    """``(token, start, end)`` over an already canonical text (used by inspect/spotlight)."""
    if len(canonical_text) <= _SPANS_MEMO_MAX_CHARS:
        return list(_token_spans_memo(canonical_text))
    return _token_spans(canonical_text)


def _token_spans(canonical_text: str) -> list[tuple[str, int, int]]:
    return [(m.group().casefold(), m.start(), m.end()) for m in _TOKEN.finditer(canonical_text)]


# Evidence chunks are spotlit again for every answer that cites them; remembered for the
# last 1,024 texts of up to one chunk's size.
_SPANS_MEMO_MAX_CHARS = 4000


@lru_cache(maxsize=1024)
def _token_spans_memo(canonical_text: str) -> tuple[tuple[str, int, int], ...]:
    return tuple(_token_spans(canonical_text))


def content_tokens(toks: list[str]) -> list[str]:
    """Tokens that carry content: not a stopword (numbers always carry content)."""
    return [t for t in toks if t not in STOPWORDS]


def match_form(toks: Sequence[str]) -> str:
    """Space-padded token sequence, so ``match_form(a) in match_form(b)`` is a token match."""
    return " " + " ".join(toks) + " " if toks else " "

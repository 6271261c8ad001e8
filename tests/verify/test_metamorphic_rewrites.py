"""Canonical-equivalence rewrites for the verifier's metamorphic tests
(tests/verify/test_metamorphic.py, docs/verifier.md §1).

Each rewrite maps a text to one that :func:`aborist.verify.text.textcanon.canonicalize`
sends to the same canonical form, so a verdict must not see the difference. Rewrites that
change a line's first characters or add line breaks leave the line structure alone where
docs/verifier.md §1 says it is meaningful: a line break is never added to an answer (a line
is a unit, a claim line), and never where the next line would open a Markdown heading, list
item or table row, or where it would make a blank line; a list marker at a line's start is
never rewritten.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable

from aborist.verify.text.textcanon import canonicalize

__all__ = ["LINE_SAFE", "REWRITES", "Rewrite"]

Rewrite = Callable[[str], str]

_WORD_HYPHEN = re.compile(r"(?<=\S)-(?=\S)|(?<=\S) - (?=\S)")
_DASHES = re.compile(r"(?<=\S)[\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe58\ufe63\uff0d]")


def hyphen_u2010(text: str) -> str:
    """A word-inner or spaced ASCII hyphen becomes U+2010 HYPHEN."""
    return _WORD_HYPHEN.sub(lambda m: m.group().replace("-", "\u2010"), text)


def hyphen_u2013(text: str) -> str:
    """A word-inner or spaced ASCII hyphen becomes U+2013 EN DASH."""
    return _WORD_HYPHEN.sub(lambda m: m.group().replace("-", "\u2013"), text)


def _cycling(pattern: re.Pattern[str], old: str, new: str) -> Rewrite:
    """Each match of ``pattern`` gets its ``old`` replaced by the next character of ``new``."""

    def rewrite(text: str) -> str:
        count = 0

        def one(m: re.Match[str]) -> str:
            nonlocal count
            count += 1
            return m.group().replace(old, new[count % len(new)])

        return pattern.sub(one, text)

    return rewrite


#: The other hyphens and dashes canonicalization maps to "-", taken in turn.
other_dashes = _cycling(_WORD_HYPHEN, "-", "\u2011\u2012\u2014\u2015\u2212\ufe58\ufe63\uff0d")
#: Whitespace other than the space, taken in turn: tab, thin, narrow no-break, ideographic.
other_spaces = _cycling(re.compile(r"(?<=\S) (?=\S)"), " ", "\t\u2009\u202f\u3000\u2002")


def dashes_ascii(text: str) -> str:
    """Every typographic hyphen or dash after a non-space character becomes ``-``."""
    return _DASHES.sub("-", text)


_OPEN_SINGLE = re.compile(r"(?:(?<=^)|(?<=[\s(\[\"“]))'(?=\w)", re.M)


def curly_quotes(text: str) -> str:
    """Straight quotes become typographic ones: double quotes alternate “ and ”
    (balanced), a single quote that opens a word becomes ‘ and every other one ’."""
    count = 0

    def double(_m: re.Match[str]) -> str:
        nonlocal count
        count += 1
        return "\u201c" if count % 2 else "\u201d"

    text = re.sub('"', double, text)
    text = _OPEN_SINGLE.sub("\u2018", text)
    return text.replace("'", "\u2019")


def straight_quotes(text: str) -> str:
    """Typographic quotes and primes become ASCII ``"`` and ``'``."""
    text = re.sub("[\u201c\u201d\u201e\u201f\u00ab\u00bb\u301d\u301e\uff02]", '"', text)
    return re.sub("[\u2018\u2019\u201a\u201b\u2032\uff07]", "'", text)


def other_quotes(text: str) -> str:
    """Straight double quotes become « and » (balanced) and single quotes U+2032 PRIME."""
    count = 0

    def double(_m: re.Match[str]) -> str:
        nonlocal count
        count += 1
        return "\u00ab" if count % 2 else "\u00bb"

    return re.sub('"', double, text).replace("'", "\u2032")


def nbsp(text: str) -> str:
    """Every space between two non-space characters becomes NO-BREAK SPACE."""
    return re.sub(r"(?<=\S) (?=\S)", "\u00a0", text)


def double_space(text: str) -> str:
    """Every space between two non-space characters becomes two spaces."""
    return re.sub(r"(?<=\S) (?=\S)", "  ", text)


#: What a line must not start with once a break is put before it (docs/verifier.md §19.1).
_BLOCK_START = re.compile(r"#{1,6}\s|[-*+•]\s|\d{1,3}[.)]\s|\|")


_MARKER = re.compile(r"[-*+•]|\d{1,3}[.)]")


def soft_wrap(text: str) -> str:
    """Every fourth space between two non-space characters becomes a line break, unless
    the new line would open a heading, a list item or a table row in its canonical form
    (``– 10 April`` opens a list item like ``- 10 April``), the space follows a list
    item's marker, or it is in a Markdown heading line or table row (one line each): a
    soft wrap inside a paragraph or list item."""
    out: list[str] = []
    n = 0
    last = 0
    for m in re.finditer(r"(?<=\S) (?=\S)", text):
        n += 1
        if n % 4 or _BLOCK_START.match(canonicalize(text[m.end() : m.end() + 8])):
            continue
        head = canonicalize(text[text.rfind("\n", 0, m.start()) + 1 : m.start()])
        if _MARKER.fullmatch(head) or head.startswith(("#", "|")):
            continue  # after a list item's marker, or in a heading line or table row
        out.append(text[last : m.start()] + "\n")
        last = m.end()
    out.append(text[last:])
    return "".join(out)


def nfd(text: str) -> str:
    """Unicode NFD (accented letters as base letter + combining mark)."""
    return unicodedata.normalize("NFD", text)


def _inside_words(text: str, mark: str) -> str:
    """``mark`` after the second letter of every word of four letters or more."""
    return re.sub(r"(?<![^\W\d_])([^\W\d_]{2})(?=[^\W\d_]{2})", lambda m: m.group(1) + mark, text)


def zero_width_joiner(text: str) -> str:
    """U+200D ZERO WIDTH JOINER inside every word of four letters or more."""
    return _inside_words(unicodedata.normalize("NFC", text), "\u200d")


def zero_width_space(text: str) -> str:
    """U+200B ZERO WIDTH SPACE inside every word of four letters or more."""
    return _inside_words(unicodedata.normalize("NFC", text), "\u200b")


def ellipsis(text: str) -> str:
    """Three full stops become U+2026 HORIZONTAL ELLIPSIS."""
    return text.replace("...", "\u2026")


def crlf(text: str) -> str:
    """Every line break becomes CR LF (the lines stay the same)."""
    return text.replace("\n", "\r\n")


def padded(text: str) -> str:
    """A byte order mark and a no-break space before the text, a space after it."""
    return "\ufeff\u00a0" + text + " "


def zero_width_everywhere(text: str) -> str:
    """U+200B ZERO WIDTH SPACE between every two characters that are not whitespace:
    inside pointer tags (``[E\u200b1\u200b]``), numbers, list markers and quotation marks
    too."""
    return re.sub(r"(?<=\S)(?=\S)", "\u200b", unicodedata.normalize("NFC", text))


REWRITES: dict[str, Rewrite] = {
    "hyphen_u2010": hyphen_u2010,
    "hyphen_u2013": hyphen_u2013,
    "other_dashes": other_dashes,
    "dashes_ascii": dashes_ascii,
    "curly_quotes": curly_quotes,
    "other_quotes": other_quotes,
    "straight_quotes": straight_quotes,
    "nbsp": nbsp,
    "double_space": double_space,
    "other_spaces": other_spaces,
    "soft_wrap": soft_wrap,
    "nfd": nfd,
    "zero_width_joiner": zero_width_joiner,
    "zero_width_space": zero_width_space,
    "zero_width_everywhere": zero_width_everywhere,
    "ellipsis": ellipsis,
    "crlf": crlf,
    "padded": padded,
}

#: Rewrites that may run on an answer: every one but the line breaks (a line is a unit).
LINE_SAFE = frozenset(REWRITES) - {"soft_wrap"}

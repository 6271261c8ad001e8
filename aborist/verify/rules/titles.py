"""Quoted titles: is a quotation a whole title of the evidence or a piece of a longer one
(docs/verifier.md §19.6, §19.15)? Pure: the standard library and the verifier's own text
helpers.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from aborist.verify.evidence import EvidenceObject
from aborist.verify.text.textcanon import STOPWORDS, canonicalize, match_form, tokens

__all__ = ["heading_titles", "is_title_like", "stops_inside_heading", "whole_title"]


#: A word of a title, an inner apostrophe kept ("M'Henry", "O'Brien": not "M" and "Henry").
_WORD = r"[^\W_]+(?:'[^\W_]+)*"
_TITLE_WORD = re.compile(_WORD)


def is_title_like(quote: str) -> bool:
    """A quotation that reads as a title: its first word that is not a stopword and its
    last word are capitalized (``"Rug Swept"``, ``"the Secret Number"``)."""
    words = _TITLE_WORD.findall(canonicalize(quote))
    lead = [w for w in words if w.lower() not in STOPWORDS]
    return bool(lead) and lead[0][0].isupper() and words[-1][0].isupper()


#: Small words that sit inside titles ("Gang of Four", "Access to Names in Outer Scopes").
_TITLE_CONNECTORS = frozenset(["of", "the", "and", "to", "for", "a", "an", "in"])


def whole_title(quote: str, evidence: Sequence[EvidenceObject], unit: str = "") -> bool:
    """Does some occurrence of the quotation stand alone: not preceded or followed, across
    a single space, hyphen or a subtitle's colon, by another capitalized word
    (``"Rug Swept"`` inside ``Under Rug Swept``, ``"operations"`` inside ``Boolean
    operations`` are fragments)? For a title-like quotation a capitalized stopword
    (``Under``) and a capitalized word across a title connector (``Gang of Four``) count
    too; for any other quotation only capitalized words that are not stopwords. A word
    the unit itself puts beside the quotation does not count (``Emrich "Imi"
    Lichtenfeld``: the nickname inside the name). Everything is read on the canonical
    quotation, its length too (an NFD quotation is longer than the unit's)."""
    quote = canonicalize(quote)
    toks = tokens(quote)
    if not toks:
        return True
    title = is_title_like(quote)
    last_word = _TITLE_WORD.findall(quote)[-1:]
    words_cap_last = bool(last_word) and last_word[0][0].isupper()
    own: set[str] = set()
    canon_unit = canonicalize(unit)
    at = canon_unit.find('"' + quote)
    if at >= 0:
        left = re.search(r"([^\W_]+)[^\w\"]*$", canon_unit[:at])
        right = re.match(r"[^\w\"]*([^\W_]+)", canon_unit[at + len(quote) + 2 :])
        own = {m.group(1).lower() for m in (left, right) if m}
    body = r"[\W_]+".join(re.escape(t) for t in toks)
    pattern = re.compile(r"(?i)(?<![^\W_])" + body + r"(?![^\W_])")
    for ev in evidence:
        # only the sentences the quotation occurs in (the whole text if it crosses more)
        spans = ev.passage.occurrences(toks, 3)
        sents = ev.passage.sentences
        texts = [" ".join(x.text for x in sents[a : b + 1]) for a, b in spans] or [
            ev.canonical_text
        ]
        for m in (m for text in texts for m in pattern.finditer(text)):
            if title and quote[:1].isupper() and not m.group(0)[:1].isupper():
                continue  # "The types covered" is not the title "Types"
            text = m.string
            marked = _evidence_quote(text, m.start(), m.end())
            if marked == "longer":
                continue  # the evidence's own quotation marks give a longer title
            if marked == "whole":
                return True  # ... or exactly this one
            before = re.search(
                rf"(?:({_WORD}) )?({_WORD})(?:[ -]|: )[\"']?$",
                text[max(0, m.start() - 60) : m.start()],
            )
            after = re.match(rf"[\"']?[ -]({_WORD})(?: ({_WORD}))?", text[m.end() : m.end() + 60])
            multi = title and len(toks) > 1
            joined_before = before is not None and (
                (
                    before.group(2)[0].isupper()
                    and before.group(2).lower() not in own
                    and (title or before.group(2).lower() not in STOPWORDS)
                )
                or (
                    (multi or quote[:1].isupper())
                    and before.group(2) in _TITLE_CONNECTORS
                    and bool(before.group(1))
                    and before.group(1)[0].isupper()
                )
            )
            joined_after = after is not None and (
                (
                    after.group(1)[0].isupper()
                    and after.group(1).lower() not in STOPWORDS
                    and after.group(1).lower() not in own
                )
                or (
                    (multi or words_cap_last)
                    and after.group(1) in _TITLE_CONNECTORS
                    and bool(after.group(2))
                    and after.group(2)[0].isupper()
                )
            )
            if not joined_before and not joined_after:
                return True
    return False


def _evidence_quote(text: str, start: int, end: int) -> str:
    """``"whole"`` when ``text[start:end]`` is exactly a quotation of ``text``,
    ``"longer"`` when it is inside one that holds more words ("Handling Potential
    Failure" inside "Handling Potential Failure with Result"), else ``""``."""
    if text.count('"', 0, start) % 2 == 0:
        return ""
    close = text.find('"', end)
    if close < 0:
        return ""
    opened = text.rfind('"', 0, start)
    rest = text[opened + 1 : start] + " " + text[end:close]
    return "longer" if _TITLE_WORD.search(rest) else "whole"


#: A numbered heading's title ("**PEP 492** - Coroutines with async and await syntax The
#: proposal …"): after a capitalized word, a number and a dash, up to a sentence's end, a
#: line's end, or a capitalized word that opens the next sentence ("The", "This" …).
_NUMBERED = re.compile(
    r"(?<![\w.])[A-Z][A-Za-z]*\s+\d[\d.]*\**\s+[-–—]\s+"
    r"(.+?)(?=\s+(?:The|A|An|This|These|It|Its|See|In|For|Also)\s|[.!?:;](?:\s|$)|\n|$)"
)


def heading_titles(ev: EvidenceObject) -> list[str]:
    """The whole heading units of an evidence object (§19.20): its own title, the title
    of every numbered heading ("PEP 492 - Coroutines with async and await syntax"), and
    a whole text of at most twelve tokens with no final full stop."""
    title = canonicalize(ev.title).replace("*", "").strip()
    out = [title] if title else []  # canonical like the text it is taken out of
    text = canonicalize(ev.text).replace("*", "")
    out += [m.group(1) for m in _NUMBERED.finditer(text)]
    # the canonical text is one line (§1): the short heading line is an object whose whole
    # text is one (a heading given as evidence of its own), not a line inside a longer text
    whole = text.strip()
    if whole and not whole.endswith((".", "!", "?")) and len(tokens(whole)) <= 12:
        out.append(whole)
    return out


@dataclass(frozen=True)
class _HeadingView:
    """What :func:`stops_inside_heading` reads of one evidence object, derived once per
    object: its heading units with their token forms (and those forms without a leading
    article), the token forms of its quotations, and the token form of its text with every
    heading unit taken out."""

    units: tuple[str, ...]
    forms: tuple[str, ...]
    bare: frozenset[str]
    quoted: frozenset[str]
    rest: str


def _view(ev: EvidenceObject) -> _HeadingView:
    """The object's :class:`_HeadingView`, kept on the (frozen, immutable) object after its
    first use: a pure function of its title and text."""
    view = ev.__dict__.get("_heading_view")
    if view is None:
        units = heading_titles(ev)
        forms = tuple(match_form(tokens(u)) for u in units)
        rest = canonicalize(ev.text).replace("*", "")
        for u in sorted(units, key=len, reverse=True):
            rest = rest.replace(u, " ")
        view = _HeadingView(
            units=tuple(units),
            forms=forms,
            bare=frozenset(re.sub(r"^ (?:the|an?) ", " ", f) for f in forms),
            quoted=frozenset(
                match_form(tokens(x))
                for x in re.findall(r'"([^"]+)"', canonicalize(ev.title + "\n" + ev.text))
            ),
            rest=match_form(tokens(rest)),
        )
        object.__setattr__(ev, "_heading_view", view)
    return view


def stops_inside_heading(quote: str, evidence: Sequence[EvidenceObject]) -> str:
    """The heading unit the quotation is only a piece of (it stops where the heading goes
    on, or starts inside it), or ``""``: a quotation that is a whole heading title, or that
    the evidence also writes outside every heading unit, is not a fragment of one."""
    toks = tokens(quote)
    if not toks:
        return ""
    want = match_form(toks)
    piece = ""
    for ev in evidence:
        view = _view(ev)
        if want in view.forms or want in view.bare or want in view.quoted:
            return ""  # a whole heading title ("The "nonlocal" statement"), or a whole quotation
        if want in view.rest:
            return ""  # also written where no heading holds it
        piece = piece or next(
            (u for u, f in zip(view.units, view.forms, strict=True) if want in f), ""
        )
    return piece

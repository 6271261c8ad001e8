"""Cutting evidence and claims into sentences (docs/verifier.md §19.1).

At a blank line; at a line that starts a Markdown heading, list item or table row (a
heading line is a sentence alone); inside a list flattened onto one line (``- A - B``);
and after ``.``, ``!`` or ``?`` before a capital, a digit, a quote or a bracket — not after
an ellipsis, a one-letter initial or a common abbreviation (``Gen.``, ``e.g.``, ``U.S.``,
``Ph.`` …). A period glued to a capital ("century.First", "1989.James", "(GCHQ).The") is a
break after a lower-case word, a number or a closing bracket.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from aborist.verify.text.textcanon import STOPWORDS, canonical_lines, canonicalize, tokens

__all__ = [
    "COPULAS",
    "PRONOUNS",
    "claim_parts",
    "continues",
    "is_participle",
    "passive_auxiliary",
    "relative_clause",
    "split_sentences",
]

_ABBREV = frozenset(
    """
    mr mrs ms dr st jr sr vs etc inc co corp ltd no fig prof gen col lt sgt rev u.s e.g
    i.e approx dept est cf al ca op vol pp ed eds mt ft ph lit a.k.a f.k.a n.k.a
    """.split()  # noqa: SIM905
)
_BLOCK_BREAK = re.compile(r"\n[ \t]*\n|\n(?=[ \t]*(?:#{1,6}\s|[-*+•]\s|\d{1,3}[.)]\s|\|))")
_END = re.compile(r"(?<!\.\.)[.!?][\"')\]]*(\s*)(?=[\"'(\[]?[A-Z0-9])")
_ITEM = re.compile(r"^[ \t]*[-*•+][ \t]")
_INLINE_ITEM = re.compile(r"[ \t][-*•+][ \t](?=[A-Z])")
_HEADING = re.compile(r"^[ \t]*#{1,6}\s")


def _blocks(text: str) -> list[str]:
    """Paragraphs, list items and table rows; a Markdown heading line is a block alone."""
    blocks: list[str] = []
    for block in _BLOCK_BREAK.split(text):
        lines = block.split("\n")
        current: list[str] = []
        for line in lines:
            if _HEADING.match(line):
                if current:
                    blocks.append("\n".join(current))
                blocks.append(line)
                current = []
            else:
                current.append(line)
        if current:
            blocks.append("\n".join(current))
    # a list flattened onto one line ("- Race conditions, … - Deadlocks, …"): one item each
    # (read on the block's canonical form: a soft line break inside it is a space)
    return [
        item
        for b in blocks
        for item in (_INLINE_ITEM.split(canonicalize(b)) if _ITEM.match(b) else [b])
    ]


def _glued_break(word: str, canon: str, m: re.Match[str]) -> bool:
    """A period glued to the next sentence ("century.First", "in 1989.James",
    "(GCHQ).The") ends a sentence after a lower-case word or a number of two characters
    or more, a closing bracket or quote allowed between, and before a capital letter."""
    core = word.rstrip(")]\"'")
    nxt = canon[m.end() : m.end() + 1]
    if not nxt.isalpha() or not nxt.isupper() or len(core) < 2:
        return False
    tail = core[-2:]
    return (tail.isalpha() and tail.islower()) or tail.isdigit() or core != word


def _last_word(head: str) -> str:
    """The run of non-space characters ``head`` ends with ("" after a space). Read from the
    right: a search for the last non-space run scans the whole head, and the head grows over every
    boundary that is skipped ("A. B. C. …"), which made splitting quadratic."""
    if not head or head[-1].isspace():
        return ""
    return head.rsplit(maxsplit=1)[-1]


def split_sentences(text: str) -> list[str]:
    """Cut ``text`` into sentences (canonical form); rules in the module docstring. Every
    rule reads :func:`canonical_lines` of the text: the line structure, in the characters
    every other rule sees (an NBSP after a list marker, a U+2013 between two list items
    flattened onto one line, a CR LF, a line of only an NBSP are what their canonical forms
    are)."""
    text = canonical_lines(text)
    if "\n" not in text and _END.search(text) is None and not _ITEM.match(text):
        return [text] if text else []
    out: list[str] = []
    for block in _blocks(text):
        canon = " ".join(block.split())  # lines already canonical: only the breaks go
        if not canon:
            continue
        start = 0
        for m in _END.finditer(canon):
            before = _last_word(canon[start : m.start()])
            word = before.lower().lstrip("(\"'[")
            if len(word) == 1 and word.isalpha():
                continue
            if word in _ABBREV:
                continue
            if not m.group(1) and not _glued_break(before, canon, m):
                continue  # "U.S.A", "Node.Js", "3.5": no space, so only after a word
            out.append(canon[start : m.end()].strip())
            start = m.end()
        tail = canon[start:].strip()
        if tail:
            out.append(tail)
    return [s for s in out if s]


_PARTS = re.compile(
    r",\s+(?:and|but|while|whereas|although|though)\s+|,\s+(?=(?:which|who|whom|whose|where)\b)"
    r"|[,;:]\s+|\s+-\s+"
    r"|\s+(?:and|but)\s+(?=(?:it|he|she|they|this|these|its|his|her|their|the)\b)",
    re.I,
)
#: A clause opened by one of these is asserted only with the clause after it
#: ("If any of the rules are violated, the program won't compile"): never a part alone.
_SUBORDINATORS = frozenset(
    [
        "if",
        "when",
        "whenever",
        "unless",
        "although",
        "though",
        "because",
        "since",
        "while",
        "after",
        "before",
        "once",
        "until",
        "as",
        "whereas",
        "provided",
    ]
)


_RELATIVE = frozenset(["which", "who", "whom", "whose", "where", "that"])


def relative_clause(part: str) -> bool:
    """Does ``part`` open with a relative pronoun ("which …", "in which …", "who …")?
    Such a clause says something *of* the clause before it."""
    head = tokens(part)[:2]
    return bool(head) and (head[0] in _RELATIVE or (len(head) > 1 and head[1] in _RELATIVE))


def claim_parts(text: str) -> list[str]:
    """The clauses of a claim for the multi-sentence rule; pieces with fewer than two
    content tokens are joined to the piece before them."""
    pieces = [
        p.strip()
        for sentence in split_sentences(text)
        for p in _PARTS.split(sentence)
        if p and p.strip()
    ]
    parts: list[str] = []
    bound = False  # the last part opened a subordinate clause: the next one belongs to it
    for p in pieces:
        n = sum(1 for t in tokens(p) if t not in STOPWORDS)
        first = tokens(p)[:1]
        opens = bool(first) and first[0] in _SUBORDINATORS
        if parts and bound:
            parts[-1] = parts[-1] + " " + p
            bound = False
        elif parts and n < 2 and not opens:
            parts[-1] = parts[-1] + " " + p
        else:
            parts.append(p)
            bound = opens
    if bound and len(parts) > 1:
        parts[-2:] = [parts[-2] + " " + parts[-1]]
    if len(parts) > 1 and sum(1 for t in tokens(parts[0]) if t not in STOPWORDS) < 2:
        parts[1] = parts[0] + " " + parts[1]
        parts = parts[1:]
    return parts


#: A sentence that opens with one of these continues the subject of the one before.
PRONOUNS = frozenset(["he", "she", "it", "they", "his", "her", "its", "their"])
#: The copulas a subject-continuing sentence opens with ("This *is* …"); one list for the
#: verifier (§19.12, §19.18).
COPULAS = frozenset(["is", "was", "are", "were"])
#: Irregular past participles a passive is built with ("was *made* by", "is *held* in").
_PARTICIPLES = frozenset(
    """
    made built held kept left found done set put sent told sold brought bought thought
    caught taught led read said paid won run cut hit let lost met meant felt heard
    """.split()  # noqa: SIM905
)
#: Adverbs that may stand between a passive's auxiliary and its participle.
_ADVERBS = frozenset("not also often then first always never still".split())  # noqa: SIM905


def is_participle(word: str) -> bool:
    """Is ``word`` (lower case) read as a past participle: a regular one (``-ed``,
    ``-en``, ``-wn``) or an irregular one of :data:`_PARTICIPLES`?"""
    return word.endswith(("ed", "en", "wn")) or word in _PARTICIPLES


def passive_auxiliary(toks: Sequence[str], k: int) -> bool:
    """Is the form of *be* at ``toks[k]`` a passive's auxiliary, not a copula of
    identity: a participle follows it, one adverb between allowed ("was *formed* in",
    "is often *managed*")?"""
    nxt = toks[k + 1] if k + 1 < len(toks) else ""
    if nxt in _ADVERBS or nxt.endswith("ly"):
        nxt = toks[k + 2] if k + 2 < len(toks) else ""
    return bool(nxt) and is_participle(nxt)


def continues(before: Sequence[str], sentence: Sequence[str]) -> bool:
    """Does ``sentence`` continue the subject of the sentence ``before`` it: it opens with
    a pronoun, or with "the" and a noun of the kind ``before`` says its subject is ("…
    is a professional football club based in Liverpool. *The club* has won …")?"""
    if not sentence:
        return False
    if sentence[0] in PRONOUNS:
        return True
    if sentence[0] != "the" or len(sentence) < 2:
        return False
    k = next((i for i, t in enumerate(before) if t in COPULAS), -1)
    if k < 0:
        return False
    kind: list[str] = []
    for t in before[k + 1 : k + 8]:
        if t in STOPWORDS and kind:
            break
        if t not in STOPWORDS:
            kind.append(t)
    return sentence[1] in kind

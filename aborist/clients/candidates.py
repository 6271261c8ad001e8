"""The offline answerer's candidates: whole sentences, and the lists, lead-ins,
continued ("It …"), described (a subjectless description after its term) and paired
("The a stands for …" after the sentence naming X) candidates built from them. Which of
them answers is :mod:`aborist.clients.extractive`'s ranking; the rules are in its module
doc and in docs/pipeline.md ("Extractive answerer"). Pure and deterministic.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from aborist.clients.relation import _CATEGORY, _PRONOUN, _verb
from aborist.clients.terms import passage_languages, text_keys
from aborist.corpus.lexicon import STOPWORDS

__all__ = ["ABBREVIATIONS", "Candidate", "candidates", "whole_sentences"]

MIN_SENTENCE_CHARS = 20
MAX_SENTENCE_CHARS = 600
_DECORATION = re.compile(r"([*=#~^_-])\1{3,}")
_ENDS = re.compile(r"[.!?][\"'’”)\]]*$")  # a whole sentence, not a heading or a lead-in

# ---------------------------------------------------------------------------------------
# Whole sentences

#: Lower-cased, without the final full stop; a full stop after one never ends a sentence
#: ("etc." often does, so it is not here).
ABBREVIATIONS = frozenset(
    {
        "e.g", "i.e", "cf", "vs", "viz", "approx", "ca", "al",
        "mr", "mrs", "ms", "dr", "prof", "rev", "hon", "st", "mt", "ft", "jr", "sr",
        "gen", "col", "lt", "sgt", "capt", "cmdr", "adm", "maj", "gov", "sen", "rep", "pres",
        "no", "nos", "fig", "figs", "vol", "vols", "ch", "sec", "pp", "ed", "eds",
        "inc", "ltd", "co", "corp", "dept", "univ", "assn", "bros",
        "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec",
    }
)  # fmt: skip
_BOUNDARY = re.compile(r"[.!?][\"'’”)\]]*(?=\s+[\"'“‘(\[`*_]*[A-Z0-9])")
_WORD_OPENERS = "([\"'“‘"
_INITIAL = re.compile(r"^(?:[A-Z]\.)*[A-Z]$")
_PAIRS = (("“", "”"), ("(", ")"), ("[", "]"))


def _balanced(text: str) -> bool:
    return text.count('"') % 2 == 0 and all(text.count(o) <= text.count(c) for o, c in _PAIRS)


def _ends_sentence(head: str) -> bool:
    """Whether the full stop that closes ``head`` ends a sentence (not an abbreviation)."""
    if not head.endswith("."):
        return True
    # the last word, read from the right (a search for it scanned the whole head, which
    # grows over every skipped full stop: quadratic on "A. B. C. …")
    end = len(head) - 1
    start = end
    while start > 0 and not head[start - 1].isspace() and head[start - 1] not in _WORD_OPENERS:
        start -= 1
    if start == end:
        return True
    word = head[start:end]
    return word.lower() not in ABBREVIATIONS and not _INITIAL.match(word)


def whole_sentences(paragraph: str) -> list[str]:
    """The sentences of one paragraph (no line break inside), closing quotes kept."""
    out: list[str] = []
    start = 0
    for m in _BOUNDARY.finditer(paragraph):
        if _ends_sentence(paragraph[start : m.start() + 1]) and _balanced(
            paragraph[start : m.end()]
        ):
            out.append(paragraph[start : m.end()].strip())
            start = m.end()
    out.append(paragraph[start:].strip())
    return [s for s in out if s]


# ---------------------------------------------------------------------------------------
# Candidates and scoring


@dataclass(frozen=True, slots=True)
class Candidate:
    pointer_id: str
    order: int
    # sentence | lead (ends with ":") | list | continued ("It …" after X) | described (a
    # subjectless description after its term) | paired ("The a stands for" after X)
    kind: str
    text: str  # what is scored against the question
    context: str  # what the relation is looked for in (a list's heading and lead-in)
    keys: frozenset[str]
    lines: tuple[str, ...]  # what the answer says
    languages: frozenset[str] = frozenset()  # the languages its passage names
    glossed: frozenset[str] = frozenset()  # operators it names by their passage's gloss
    heading: frozenset[str] = frozenset()  # the category noun of its section's heading
    section: frozenset[str] = frozenset()  # every key of its section's heading


_HEADING = re.compile(r"^[^\W\d_][\w\s'’“”\"`,&/?—–-]{0,79}$")  # a title, not code or a lead-in
_ITEM_MAX_CHARS = 300


def _usable(sentence: str, ends: re.Pattern[str] = _ENDS) -> bool:
    return (
        MIN_SENTENCE_CHARS <= len(sentence) <= MAX_SENTENCE_CHARS
        and "[E" not in sentence
        and not _DECORATION.search(sentence)
        and bool(ends.search(sentence))
        and any(c.isalpha() for c in sentence)
    )


def _lists(lines: list[str], i: int) -> tuple[str, ...]:
    """The item lines after lead-in line ``i``: one short whole sentence each."""
    items: list[str] = []
    for item in lines[i + 1 :]:
        if len(item) > _ITEM_MAX_CHARS or len(whole_sentences(item)) != 1 or not _usable(item):
            break
        items.append(item)
    return tuple(items) if len(items) >= 2 else ()


_LEAD = re.compile(r":$")


#: A line naming what the paragraph after it describes: a call signature such as
#: ``str.join(iterable)`` or ``object.__init__(self[, ...])``.
_SIGNATURE = re.compile(r"^[A-Za-z_][\w.]*\((?:[^()]|\([^()]*\))*\)(?:\s*->\s*\S.*)?$")
_GRAMMAR = re.compile(r"::=")  # a grammar rule between a term and its description
#: The second word of a description that has no subject of its own: "Return a string …",
#: "Called after the instance …", "Suspend the execution …".
#: "This technique is …": a demonstrative and its noun stand for the sentence before.
_DEMONSTRATIVE = re.compile(r"^(?:This|These|That|Such)\s+[a-z]+\s+([a-z]+)\b")
#: An operator glossed in its passage: ``The "%" (modulo) operator`` — the passage's
#: later "the modulo operator" names "%".
_GLOSS = re.compile(r"[\"“]([^\w\s\"“”]{1,3})[\"”]\s*\(([a-z][a-z -]{2,30})\)")
#: A sentence opening with one of these continues the one before it: what it leads to
#: ("Instead, …") or how it is done ("By using leading dots …").
_CONNECTIVE = re.compile(
    r"^(?:(?:Instead|Otherwise|In that case|As a result|Consequently),|By [a-z]+ing)\s"
)
_SUBJECTLESS = frozenset(
    {"a", "an", "the", "by", "after", "before", "when", "whenever", "if", "to", "from",
     "with", "its", "their", "true", "false", "none", "whether", "each", "all"}
)  # fmt: skip


def _subjectless(sentence: str) -> bool:
    words = sentence.split(maxsplit=2)
    return (
        len(words) == 3
        and words[0].isalpha()
        and words[0][0].isupper()
        and words[0].lower() not in STOPWORDS
        and words[1].strip("\"'“”`").lower() in _SUBJECTLESS
    )


def candidates(
    evidence: tuple[tuple[str, str], ...],
    lists: bool,
    keywords: frozenset[str] = frozenset(),
    pairs: bool = False,
) -> list[Candidate]:
    out: list[Candidate] = []

    def add(pid: str, kind: str, text: str, context: str, lines: tuple[str, ...]) -> None:
        scored = f"{context} {' '.join(lines)}" if kind == "list" else text
        scored = context if kind == "followed" else scored  # scored as the sentence before
        keys = text_keys(scored, keywords, heading)
        said = f"{text} {' '.join(lines)}".lower()
        named = frozenset(sym for sym, word in glosses if re.search(rf"\b{word}\b", said))
        section = text_keys(heading, keywords) if heading else frozenset()
        out.append(
            Candidate(
                pid, len(out), kind, text, context, keys, lines, languages, named,
                section & _CATEGORY, section,
            )
        )  # fmt: skip

    for pid, text in evidence:
        languages = passage_languages(text)
        glosses = {(sym, re.escape(word.lower())) for sym, word in _GLOSS.findall(text)}
        lines = [" ".join(line.split()) for line in text.splitlines() if line.strip()]
        heading, prev, term = "", "", ""
        for i, line in enumerate(lines):
            parts = whole_sentences(line)
            if _HEADING.match(line) and not _ENDS.search(line):
                heading, prev, term = line, "", line
                continue
            if _SIGNATURE.match(line):  # the name is the subject: "object.__del__ Called …"
                prev, term = "", line.split("(", 1)[0]
                continue
            if _GRAMMAR.search(line):
                continue
            if lists and line.endswith(":") and (items := _lists(lines, i)):
                add(pid, "list", parts[-1], f"{heading} {parts[-1]}", items)
            if term and parts and _usable(parts[0]) and _subjectless(parts[0]):
                # "str.join(iterable)" / "Return a string …": the term is the subject
                add(pid, "described", f"{term} {parts[0]}", term, (parts[0],))
            term = ""
            for k, sentence in enumerate(parts):
                if _usable(sentence):
                    add(pid, "sentence", sentence, sentence, (sentence,))
                    if pairs and k and _usable(parts[k - 1]):
                        # "Arc<T> is a type like Rc<T> … The a stands for atomic": the
                        # sentence before names what the letter is of
                        add(pid, "paired", f"{parts[k - 1]} {sentence}", sentence,
                            (parts[k - 1], sentence))  # fmt: skip
                    if prev and _CONNECTIVE.match(sentence):
                        # "… does not include checks. Instead, if overflow occurs, Rust
                        # performs …": the second says what the first leads to
                        add(pid, "followed", f"{prev} {sentence}", prev, (prev, sentence))
                    opens = (_PRONOUN.match(sentence), _DEMONSTRATIVE.match(sentence))
                    if prev and any(m and _verb(m.group(1), True) for m in opens):
                        # "It terminates …" continues the sentence before it, across a
                        # paragraph break too: the two are answered together
                        add(pid, "continued", f"{heading} {prev} {sentence}", prev,
                            (prev, sentence))  # fmt: skip
                elif _usable(sentence, _LEAD):  # "The if statement is used for …:"
                    add(pid, "lead", sentence, sentence, (sentence,))
                prev = sentence if _usable(sentence) else ""
    return out

"""Where the question's frame puts another filler than the span (docs/verifier.md §19.17).

Five tests ask whether the words *around* a bare span show it to be the answer. Each can
only take a rung away (the span is then held at partial grade with ``NOT_ANSWER_ANCHORED``);
none can vouch for anything.

* **A reversed direction** (:func:`reversed_direction`). An ordered pair of the question
  ("from *right to left*", "right-to-left") names a direction. When the span's sentence
  states the pair the other way round ("left-to-right chaining") and never in the
  question's order, the span is what goes the other way.
* **The question's type word on another token** (:func:`typed_elsewhere`). A
  ``which``/``what`` + noun question ("Which *trait* …?") asks for a thing of that type.
  When the span's sentence puts that noun, in lower case, directly beside another name or
  code-like token ("the std::process::Termination *trait*", "*trait* Display") and never
  beside the span, nor after a list the span ends with, the sentence says which thing is
  of that type, and it is not the span.
* **The same frame with another filler** (:func:`same_frame`). The question's terms
  within a few tokens of the span are its *frame*. When another sentence of the evidence,
  which does not hold the span and holds more of the question's terms than the span's own
  sentence(s), has a filler of the span's kind (a number, a code-like token, a name: as in
  :func:`aborist.verify.rules.rival.span_kind`) that is another thing, that neither the
  span's sentence nor the question names, and whose own frame holds every term of the
  span's frame and more, that sentence fills the question's relation and the span answers
  something else.
* **The evidence's own name** (:func:`named_elsewhere`). For a question that asks what
  something is called, "This is called *a buffer overread*" (in the span's sentence or
  one of the next two) names it; a span that is not that name answers something else.
* **The rest of a list** (:func:`outside_list`). A question that names two or more names
  of a list of the span's sentence, not all of its items, asks for a remaining item; a
  span outside that list is not it.

Pure: the standard library and the verifier's own modules.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence

from aborist.verify.rules.locality import Sentence, stem
from aborist.verify.rules.rival import (
    _CODE,
    _ITEM_BREAK,
    _LIST_BREAK,
    _form,
    kind_fillers,
    span_kind,
)
from aborist.verify.text.textcanon import STOPWORDS, canonicalize, token_spans, tokens

__all__ = [
    "asked_type",
    "named_elsewhere",
    "outside_list",
    "reversed_direction",
    "same_frame",
    "typed_elsewhere",
]

#: An ordered pair: "from X to Y", "X to Y", "X-to-Y" (one word each side).
_PAIR = re.compile(r"(?i)\b(?:from\s+)?([a-z]+)(?:\s+to\s+|-to-)([a-z]+)\b")


def _pairs(text: str) -> set[tuple[str, str]]:
    out = set()
    for m in _PAIR.finditer(canonicalize(text)):
        a, b = m.group(1).lower(), m.group(2).lower()
        if a != b and a not in STOPWORDS and b not in STOPWORDS:
            out.add((a, b))
    return out


def reversed_direction(question: str, sentences: Sequence[str]) -> str:
    """The question's ordered pair ("right to left") that ``sentences`` (the span's own)
    state reversed ("left-to-right") and never in order, as ``"right to left"``, or
    ``""``."""
    want = _pairs(question)
    if not want:
        return ""
    have: set[tuple[str, str]] = set()
    for s in sentences:
        have |= _pairs(s)
    for a, b in sorted(want):
        if (b, a) in have and (a, b) not in have:
            return f"{a} to {b}"
    return ""


#: What ends a one-word type phrase ("Which trait *must* …", "which city *is* …"); so
#: does a verb in ``-s`` or ``-ed`` ("Which type *enables* …").
_CLOSES = STOPWORDS | frozenset({"must", "may", "might", "shall", "", "?"})


def asked_type(question: str) -> str:
    """The noun a ``which``/``what`` question asks a thing of ("Which *trait* …?" →
    ``trait``), or ``""``: the first word after the question word, when it is a
    lower-case content word of the question and no number."""
    words = canonicalize(question).split()
    for i, w in enumerate(words[:-1]):
        if w.lower() in ("which", "what"):
            nxt = words[i + 1].strip(",;:?!.()\"'")
            after = words[i + 2].strip(",;:?!.()\"'").lower() if i + 2 < len(words) else ""
            closes = after in _CLOSES or (after.endswith(("s", "ed")) and not after.endswith("ss"))
            if nxt.islower() and nxt.isalpha() and nxt not in STOPWORDS and closes:
                return nxt
            return ""
    return ""


_STRIP = ",;:.!?()[]\"'“”‘’"


def _namelike(word: str, first: bool) -> bool:
    """A name or a code-like token: a capitalized word that does not open its sentence,
    a quoted word, or a code-like token (``x()``, ``Rc<T>``, ``a::b``, ``snake_case``)."""
    bare = word.strip(_STRIP)
    if not bare or bare.lower() in STOPWORDS:
        return False
    if word[:1] in "\"“'‘" or "::" in bare or _CODE.fullmatch(bare) or _code(word):
        return True
    return not first and bare[:1].isupper()


def _macro(word: str) -> bool:
    """A Rust macro's name with its ``!`` (``eprintln!``), not a word ending a sentence."""
    return word.endswith("!") and bool(_CODE.fullmatch(word.strip(_STRIP) + "!"))


def _code(word: str) -> bool:
    """A quoted word or a code-like token (a Rust macro keeps its ``!``: ``eprintln!``)."""
    bare = word.strip(_STRIP)
    return bool(bare) and (
        word[:1] in "\"“'‘`"
        or "::" in bare
        or bool(_CODE.fullmatch(bare))
        or _macro(word.strip(_STRIP.replace("!", "")))
    )


def _is_type(word: str, noun: str) -> bool:
    bare = word.strip(_STRIP)
    return bare in (noun, noun + "s", noun + "es")


#: Small words inside a name after a type word ("Johannes *de* Decker", "Bank *of* England").
_NAME_JOINS = frozenset(["de", "van", "von", "der", "da", "di", "du", "le", "la", "of"])


def typed_elsewhere(question: str, span: str, sentences: Sequence[str]) -> str:
    """The token of ``sentences`` (the span's own) that the question's type word
    (:func:`asked_type`) directly types when it never types the span, or ``""``. A token
    the question names (its subject) is not a rival; a span that a list ending in typed
    items belongs to ("the Display and Debug traits") is typed too."""
    noun = asked_type(question)
    if not noun:
        return ""
    span_form = _form(span)
    q_toks = set(tokens(question))
    plain_names = span_kind(span) == "code"  # technical prose: "the iter method"
    typed: list[str] = []
    span_typed = False
    for s in sentences:
        words = canonicalize(s).split()
        for i, w in enumerate(words):
            if not _is_type(w, noun):
                continue
            for j in (i - 1, i + 1):
                if not 0 <= j < len(words):
                    continue
                plain = (
                    plain_names
                    and j == i - 1
                    and j > 0
                    and words[j - 1] == "the"
                    and words[j].isalpha()
                    and words[j].islower()
                    and words[j] not in STOPWORDS
                )
                if not plain and not _namelike(words[j], j == 0):
                    continue
                # before the type word, a name is its thing only after "the" ("a British
                # film director": a modifier); right after it, a name is the thing it types,
                # a title before a name ("sent *lawyer* Johannes de Decker"; 2.5.1)
                if not _code(words[j]) and j == i - 1 and (j == 0 or words[j - 1] != "the"):
                    continue
                if j == i - 1 and words[j][-1:] in ",;:.!?)" and not _macro(words[j]):
                    continue  # "… Termination, trait" is no compound
                if j == i + 1 and w[-1:] in ",;:.":
                    continue
                lo = hi = j  # the list that runs up to the type word ("A, B and C traits")
                while j == i - 1 and lo > 0:
                    prev = words[lo - 1]
                    if prev.lower() not in ("and", "or") and not _namelike(prev, lo == 1):
                        break
                    lo -= 1
                # … or the whole name after it: "lawyer Johannes de Decker" (not a list
                # after it: "the prefix '0b', '0o' …" types its first item only)
                while j == i + 1 and hi + 1 < len(words) and words[hi][-1:] not in ".,;:!?":
                    nxt = words[hi + 1]
                    if nxt.lower() not in _NAME_JOINS and not _namelike(nxt, False):
                        break
                    hi += 1
                run = " ".join(words[lo : hi + 1])
                if span_form in _form(run) or _form(words[j]) in span_form:
                    span_typed = True
                    continue
                tok = words[j].strip(_STRIP) + ("!" if _macro(words[j].rstrip(",;:.?)")) else "")
                if hi > j:  # the whole name after the type word
                    tok = " ".join(words[j : hi + 1]).strip(_STRIP)
                if set(tokens(tok)) <= q_toks:
                    continue  # the question's own subject
                typed.append(tok)
    if span_typed or not typed:
        return ""
    return typed[0]


#: A question that asks what something is called ("What is it *called* when …?").
_ASKS_CALLED = re.compile(r"(?i)^\s*what\b.*\b(?:called|named|known as|termed)\b")
#: The evidence naming what it has just described: "This is called a buffer overread".
_DEMONSTRATIVE_NAME = re.compile(
    r"(?i)\b(?:this|that|these|such \w+)\s+(?:is|are|was|were)\s+"
    r"(?:(?:also|often|usually|sometimes)\s+)?"
    r"(?:called|named|termed|known as|referred to as)\s+"
    r"([^,;:.()\"]{1,60}?)\s*(?=[,;:.()]|\band\b|$)"
)
#: How many sentences after the span's a demonstrative naming may open.
NAMING_REACH = 2
_REFERS_BACK = re.compile(r"(?i)^\W*(?:this|that|these|such)\b")


def named_elsewhere(question: str, span: str, own: Sequence[str], after: Sequence[str] = ()) -> str:
    """For a question that asks what something is called, the name the evidence gives what
    it describes ("This is called *a buffer overread*") in the span's own sentence(s)
    ``own``, or in the first of the sentences ``after`` them (at most
    :data:`NAMING_REACH`) that opens with a demonstrative, when the name is not the span
    (nor the span a part of it); else ``""``."""
    if not _ASKS_CALLED.search(question):
        return ""
    back = [t for t in after[:NAMING_REACH] if _REFERS_BACK.match(t)][:1]
    texts = [*own, *back]
    span_form = _form(span)
    for t in texts:
        for m in _DEMONSTRATIVE_NAME.finditer(canonicalize(t)):
            name = m.group(1).strip()
            if len(tokens(name)) > 6 or not tokens(name):
                continue
            if span_form in _form(name) or _form(name) in span_form:
                return ""
            return name
    return ""


#: The tokens on each side of a filler that make its frame.
FRAME_WINDOW = 4


def _find(seq: Sequence[str], sub: Sequence[str]) -> list[int]:
    n = len(sub)
    return [i for i in range(len(seq) - n + 1) if n and tuple(seq[i : i + n]) == tuple(sub)]


def _frame(toks: Sequence[str], at: int, n: int, anchors: frozenset[str]) -> frozenset[str]:
    lo, hi = max(0, at - FRAME_WINDOW), at + n + FRAME_WINDOW
    window = [*toks[lo:at], *toks[at + n : hi]]
    return anchors & frozenset(stem(t) for t in window)


def same_frame(
    span: str,
    question: str,
    anchors: frozenset[str],
    sentences: Sequence[Sentence],
    reached: Sequence[int],
    others: Sequence[Sentence] = (),
) -> str:
    """Why another sentence fills the span's frame with another filler (see the module
    text), or ``""``. ``sentences`` are the span's object's, ``reached`` the indices of the
    span's own sentence(s) with any bridge the support test followed, ``others`` the
    sentences of the other cited objects."""
    kind = span_kind(span)
    if kind not in ("number", "code"):
        return ""
    span_toks = tokens(span)
    span_form = _form(span)
    mine = [sentences[i] for i in reached if 0 <= i < len(sentences)]
    frame: frozenset[str] = frozenset()
    have: frozenset[str] = frozenset()
    near = ""
    for s in mine:
        have |= anchors & s.stems
        near += _form(s.text)
        for at in _find(s.toks, span_toks):
            frame |= _frame(s.toks, at, len(span_toks), anchors)
    if not frame:
        return ""
    own = set(span_toks) - STOPWORDS
    for i, s in enumerate([*sentences, *others]):
        if i in reached or span_form in _form(s.text):
            continue
        got = anchors & s.stems
        if len(got) <= len(have) or not frame <= got:
            continue
        for f in kind_fillers(kind, s.text, question):
            ftoks = tokens(f)
            if not ftoks or _form(f) in near or own & set(ftoks):
                continue
            for at in _find(s.toks, ftoks):
                theirs = _frame(s.toks, at, len(ftoks), anchors)
                if frame < theirs:
                    where = f"sentence {i + 1}" if i < len(sentences) else "another object"
                    return (
                        f"frame: {where} puts {f!r} where the span stands, with "
                        f"{len(theirs)} of the question's terms around it"
                    )
    return ""


def outside_list(question: str, span: str, sentences: Sequence[str], min_named: int = 2) -> str:
    """A list of the span's sentence(s) of which the question names at least
    ``min_named`` distinct items that are names ("… *with Richard Helm, Ralph Johnson, and
    John Vlissides*?"), and not every item, while the span stands outside it: returned as
    its named items joined by ``, ``; else ``""``. Such a question asks for the list's
    remaining item, which the span is not. The stretches and items are those of
    :func:`aborist.verify.rules.rival.list_siblings`."""
    q_form = _form(question)
    span_form = _form(span)
    for s in sentences:
        canon = canonicalize(s)
        bounds = sorted({m.start() for m in _LIST_BREAK.finditer(canon)} | {len(canon)})
        for a, b in itertools.pairwise(bounds):
            stretch = canon[a:b].strip(" :;()[].!?-")
            items = [_form(x) for x in _ITEM_BREAK.split(stretch)]
            items = [x for x in items if x.strip()]
            if len(items) < min_named + 1 or span_form in _form(stretch):
                continue
            named = sorted({x.strip() for x in items if len(x.split()) <= 4 and x in q_form})
            wanted = {f" {n} " for n in named}
            names = sorted({x for x in stretch_names(stretch) if _form(x) in wanted})
            rest = [x for x in items if not _ends_named(x, q_form)]
            if len(names) >= min_named and rest:
                return ", ".join(names)
    return ""


def _ends_named(item: str, q_form: str) -> bool:
    """Does the question name the item, or the end of it (the first item of a stretch
    carries the clause's head: "is an English *comedian*")?"""
    words = item.split()
    return any(
        " " + " ".join(words[i:]) + " " in q_form for i in range(max(0, len(words) - 4), len(words))
    )


def stretch_names(stretch: str) -> list[str]:
    """The items of a list stretch that are names (:func:`span_kind` ``"name"``)."""
    return [x.strip() for x in _ITEM_BREAK.split(stretch) if span_kind(x.strip()) == "name"]


#: Prepositions that attach a qualifier to the value right before them ("November 11,
#: 2006, *for* Japan", "6 *of* 57 patients", "$499 *in* the US").
_QUALIFYING = frozenset(["for", "in", "of", "on", "at"])
_MONTH_WORDS = frozenset(
    "january february march april may june july august september october november december".split()  # noqa: SIM905
)


def _runs(kind: str, canon: str) -> list[tuple[int, int]]:
    """``(first, end)`` token ranges of the candidates of ``kind`` in ``canon``: runs of
    numbers and month names for a number or date, of capitalized words (not the first
    word) for a name."""
    spans = token_spans(canon)
    out: list[tuple[int, int]] = []
    start = -1
    for k, (tok, a, _b) in enumerate([*spans, ("", len(canon), len(canon))]):
        if kind == "number":
            member = bool(tok) and (tok[0].isdigit() or tok in _MONTH_WORDS)
        else:
            member = bool(tok) and k > 0 and canon[a].isupper() and tok not in STOPWORDS
        if member and start < 0:
            start = k
        elif not member and start >= 0:
            out.append((start, k))
            start = -1
    return out


def _qualifier(toks: Sequence[str], end: int, starts: frozenset[int]) -> list[str]:
    """The words a qualifying preposition right after a candidate (ending at token ``end``)
    attaches to it: up to three, stopping at ``and``/``or``/``but`` or another candidate
    (its first token in ``starts``)."""
    if end >= len(toks) or toks[end] not in _QUALIFYING:
        return []
    out: list[str] = []
    for k in range(end + 1, min(len(toks), end + 4)):
        if toks[k] in ("and", "or", "but") or (k in starts and out):
            break
        out.append(toks[k])
    return out


def qualified_elsewhere(
    question: str, span: str, sentences: Sequence[str]
) -> tuple[str, str] | None:
    """A value's own qualifier (2.5.1): in a sentence that gives values of the span's kind
    each with a qualifier right after it ("November 11, 2006, for Japan and November 17,
    2006, for North America"; "(6 of 57 patients) … (11 of 28 patients)"), the span's
    qualifier names something the question does not, and another value's qualifier holds
    a question term the span's lacks: the sentence says the span of something else.
    Returns the span's qualifier and the other value with its own, or ``None``. Names and
    numbers only; a value the question names is no rival."""
    kind = span_kind(span)
    if kind not in ("number", "name"):
        return None
    want = [t for t in tokens(span) if t not in STOPWORDS]
    asked = {stem(t) for t in tokens(question) if t not in STOPWORDS} - {stem(t) for t in want}
    for text in sentences:
        canon = canonicalize(text)
        toks = [t for t, _a, _b in token_spans(canon)]
        runs = _runs(kind, canon)
        starts = frozenset(a for a, _b in runs)
        mine: list[tuple[frozenset[str], str]] = []
        others: list[tuple[frozenset[str], str]] = []
        for a, b in runs:
            run = [t for t in toks[a:b] if t not in STOPWORDS]
            words = _qualifier(toks, b, starts)
            qual = frozenset(stem(t) for t in words if t not in STOPWORDS)
            said = " ".join([toks[b], *words]) if words else ""
            if run == want:
                mine.append((qual, said))
            elif not {stem(t) for t in run} <= asked and qual:
                others.append((qual, " ".join([*toks[a:b], said])))
        # every occurrence of the span is said of something the question does not name,
        # and another value is said of a question term the span's qualifier lacks
        if not mine or not all(q - asked for q, _ in mine):
            continue
        for qual, value in others:
            if all((qual & asked) - q for q, _ in mine):
                return mine[0][1], value
    return None

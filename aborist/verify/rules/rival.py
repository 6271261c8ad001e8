"""A bare span against its rivals: where else the evidence answers the question
(docs/verifier.md §19.14).

A bare answer ("i32", "7", "RefCell<T>") is checked by :func:`aborist.verify.support.
answers_question`: its sentence must share the question's terms. A sentence shares terms
with a question far more often than it answers it, so two more tests ask whether the
evidence *itself* puts the question's relation somewhere else:

* **Another member of the series.** An ordinal or a count of times in the question ("the
  *second* parameter", "called *twice*") names which of several like things is asked
  about. When the span's sentence gives the same head word another ordinal and never the
  question's ("The *first* parameter … is an i32"), the span belongs to another member.
* **A rival clause.** When another clause of the evidence (a sentence of any cited
  object, or another clause of the span's own sentence) holds more of the question's
  terms than the span's own clause, among them every term of the *relation* the span's
  clause holds (a question word that is not part of a name or code-like token the
  question names), at least two of them and three quarters of them all, does not hold
  the span, and offers a *rival filler* of the span's kind (a number or date for a number
  or date, a code-like token for a code-like span, a capitalized name for a name) that is
  another thing than the span and that neither the span's own sentence nor the question
  names (unless the question lists code-like candidates: "Which of Rc<T>, Box<T> and
  RefCell<T> …"), then that clause states the relation asked about with another filler,
  and the span answers something else ("If you roll a 3 … gets a fancy new hat. If you
  roll a 7, your player loses a fancy hat." for "Which number do you roll to get a fancy
  new hat?" → ``7``). A filler the span's sentence names too is the bridge of a two-hop
  question (the clause leads to the span), not a rival — unless it is another item of a
  list the span is an item of ("recv and try_recv", :func:`list_siblings`), which is a
  rival of any form. The span's own sentence is cut at ``;``, a colon, and ``and``/
  ``but`` after a comma or before a new subject; a plain phrase meets a name the other
  clause gives ("known as the defender") or the phrase the question's which-noun heads
  ("the from function", :func:`asked_phrases`) (docs/verifier.md §19.15).

Two readings widen the rival clause (docs/verifier.md §19.17): a name of the question
abbreviated by its initials ("the U.S.") is that name (:func:`name_initials`), and for a
who-question a clause giving the relation's agent phrase need not hold the span
sentence's circumstance terms (its rival is then that agent phrase).

Both tests only ever take a rung away from a bare span; neither can vouch for anything.
Pure: the standard library and the verifier's own modules.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Sequence

from aborist.verify.rules.locality import Sentence, stem
from aborist.verify.rules.roles import agent_phrases, question_frame
from aborist.verify.text.anchors import value_keys
from aborist.verify.text.textcanon import STOPWORDS, canonicalize, tokens

__all__ = [
    "asked_phrases",
    "kind_fillers",
    "list_siblings",
    "name_initials",
    "other_member",
    "relation_terms",
    "rival_clause",
    "span_kind",
]

#: The value keys that name a member of a series: ordinals and counts of times.
_SERIES_KINDS = ("o:", "x:")

#: (The look-behinds skip a start one to three characters into a token a letter starts:
#: the match from that letter covers it, and trying each start made long tokens quadratic.)
_CODE = re.compile(
    r"(?<![A-Za-z_])(?<![A-Za-z_][\w.:])(?<![A-Za-z_][\w.:]{2})"
    r"[A-Za-z_][\w.:]*(?:\(\)|<[^<>\s]*>)|\b\w*_\w+\b|--[\w-]+|\"[^\"\s]+\"|\b[A-Za-z]+\d+\b"
    r"|\b[a-z_][a-z0-9_]*!(?![\w=])"  # a Rust macro: println!, eprintln!, vec!
)
#: A capitalized word, with the number that names it if one follows ("PEP 448").
_NAME = re.compile(r"(?<![\w.])[A-Z][\w'’-]*(?:\s+\d[\d.]*\b)?")


def _dated(tok: str) -> bool:
    """Is ``tok`` a number or a month name ("may" is a month here, not a modal: the span
    has a number beside it)?"""
    return tok == "may" or any(k.startswith(("n:", "m:")) for k in value_keys([tok]))


def _series_heads(toks: Sequence[str]) -> set[tuple[str, str]]:
    """``(key, head stem)`` for every ordinal or count of times in ``toks`` and the first
    content word within two tokens after it ("second parameter" → ``("o:2", "paramet")``)."""
    out: set[tuple[str, str]] = set()
    for i, t in enumerate(toks):
        key = next(iter(value_keys([t])), "")
        if not key.startswith(_SERIES_KINDS):
            continue
        head = next((u for u in toks[i + 1 : i + 3] if u not in STOPWORDS), "")
        if head and not value_keys([head]):
            out.add((key, stem(head)))
    return out


def other_member(question: str, span: str, reached: Sequence[Sentence]) -> list[str]:
    """The question's ordinals and counts of times ("the *second* parameter") whose head
    word the span's ``reached`` sentences give another ordinal of the same kind and never
    the question's ("The *first* parameter … is an i32"). Returned as the question's keys
    (``["o:2"]``)."""
    want = _series_heads(tokens(question))
    if not want:
        return []
    have: set[tuple[str, str]] = set()
    for s in reached:
        have |= _series_heads(s.toks)
    span_keys = value_keys(tokens(span))
    out = []
    for key, head in sorted(want):
        same_head = {k for k, h in have if h == head and k not in span_keys}
        if same_head and key not in same_head and all(k[:2] == key[:2] for k in same_head):
            out.append(key)
    return out


def span_kind(span: str) -> str:
    """``"number"``, ``"code"``, ``"name"`` or ``""`` (a plain phrase: no rival test)."""
    toks = [t for t in tokens(span) if t not in STOPWORDS or t == "may"]
    dated = [t for t in toks if _dated(t)]
    if toks and len(dated) == len(toks) and any(value_keys([t]) for t in toks):
        return "number"  # a count, a year or a date ("May 30, 1943")
    text = canonicalize(span).strip()
    if _CODE.search(text):
        return "code"
    if _NAME.match(text.removeprefix("the ").removeprefix("The ")):
        return "name"
    return ""


def _fillers(kind: str, text: str, question: str, agent_of: frozenset[str]) -> list[str]:
    """The fillers of ``kind`` a clause offers that the question does not name itself;
    for a question that asks for the agent of a relation ("Who cleans up …?"), also the
    agent phrases of that relation ("cleaned up by *the operating system*"); and the
    phrases that answer what the question asks for by its own words (:func:`asked_phrases`)."""
    agents = agent_phrases(text, agent_of) if agent_of else []
    return agents + asked_phrases(question, text) + kind_fillers(kind, text, question)


#: A name a clause gives something ("known as *the defender*,").
_NAMING = re.compile(
    r"\b(?:known as|called|named|referred to as)\s+([^,;:.()\"]{1,60}?)\s*(?=[,;:.()]|$)"
)
_ASKS_NAME = re.compile(r"(?i)\b(?:called|named|known as|name of)\b")


def asked_phrases(question: str, text: str) -> list[str]:
    """Phrases of ``text`` that fill what the question asks for by its own words: for a
    question asking what something is *called* (``called``, ``named``, ``known as``), a
    name the clause gives (``known as the defender``, at most four tokens); for ``which``/
    ``what`` + noun, a phrase the clause heads with that noun (``the from function`` for
    "Which function …?")."""
    out: list[str] = []
    canon = canonicalize(text)
    if _ASKS_NAME.search(question):
        out += [m.group(1) for m in _NAMING.finditer(canon) if len(tokens(m.group(1))) <= 4]
    qt = tokens(question)
    tail = _gap_words(qt)
    if tail:  # "What is cons short for?" → "(short for construct function)"
        pat = rf"(?i)\b{re.escape(tail[0])}\s+{re.escape(tail[1])}\s+([^,;:.()\"]{{1,60}}?)"
        out += [
            m.group(1)
            for m in re.finditer(pat + r"\s*(?=[,;:.()]|$)", canon)
            if len(tokens(m.group(1))) <= 4
        ]
    for i, t in enumerate(qt[:-1]):
        if t in ("which", "what") and qt[i + 1] not in STOPWORDS:
            head = re.escape(qt[i + 1])
            pat = rf"(?i)\bthe ((?:[^\s,;:.()]+ ){{1,2}}){head}(?:s|es)?\b"
            out += [m.group(1) + qt[i + 1] for m in re.finditer(pat, canon)]
            break
    return [f for f in out if not set(tokens(f)) <= set(qt)]


#: Prepositions a question can end on, its gap right after them ("… short *for*?").
_GAP_PREPOSITIONS = frozenset("for of to by from with as in on at about".split())  # noqa: SIM905


def _gap_words(qt: Sequence[str]) -> tuple[str, str] | tuple[()]:
    """The content word and the preposition a ``what``/``which`` question ends on, whose
    object is the gap the answer fills ("What is cons *short for*?"), or ``()``."""
    if len(qt) < 3 or qt[0] not in ("what", "which") or qt[-1] not in _GAP_PREPOSITIONS:
        return ()
    word = qt[-2]
    return () if word in STOPWORDS else (word, qt[-1])


def kind_fillers(kind: str, text: str, question: str) -> list[str]:
    """The candidates of ``kind`` (:func:`span_kind`) ``text`` offers that the question
    does not name: numbers and dates, code-like tokens, capitalized names (not a
    sentence's first word)."""
    q = canonicalize(question)
    if kind == "number":
        asked = value_keys(tokens(q))
        return [t for t in tokens(text) if (k := value_keys([t])) and not k & asked]
    if kind == "code":
        return [m.group() for m in _CODE.finditer(text) if m.group() not in q]
    if kind != "name":
        return []
    words = set(tokens(q))
    found = []
    for m in _NAME.finditer(text):
        if m.start() == 0:
            continue  # a sentence's first word is capitalized whatever it is
        toks = [t for t in tokens(m.group()) if t not in STOPWORDS]
        if toks and not set(toks) <= words:
            found.append(" ".join(toks))
    return found


def _form(text: str) -> str:
    return " " + " ".join(tokens(text)) + " "


def _distinct(
    kind: str,
    clause: str,
    question: str,
    span_toks: Sequence[str],
    near: str,
    agent_of: frozenset[str] = frozenset(),
    siblings: frozenset[str] = frozenset(),
) -> bool:
    """Does ``clause`` offer a filler that is another thing than the span (no word in
    common with it) and that the span's own sentence (``near``, a match form) does not
    name? A filler the question names is its subject, not a rival, unless the question
    lists the candidates (``question`` is then ``""``). A filler listed beside the span
    (one of its ``siblings``, match forms) is an alternative to it, not a bridge, and a
    rival filler of any form."""
    own, span_form = set(span_toks), _form(" ".join(span_toks))
    if any(x in _form(clause) for x in siblings):
        return True  # another item of the span's own list, whatever its form
    for f in _fillers(kind, clause, question, agent_of):
        ftoks = tokens(f)
        if not ftoks or (_form(f) in near and _form(f) not in siblings):
            continue
        if kind == "code" and _form(f) != span_form:
            return True  # identifiers differ by any character ("--ignored", "--include-ignored")
        if not (own & set(ftoks)) - STOPWORDS or _numbers(ftoks) ^ _numbers(span_toks):
            return True  # another name, or the same name with another number (PEP 448)
    return False


def _numbers(toks: Sequence[str]) -> frozenset[str]:
    return frozenset(k for k in value_keys(toks) if k.startswith("n:"))


def relation_terms(question: str, anchors: frozenset[str]) -> frozenset[str]:
    """The anchors that name the relation rather than a thing: not part of a name or a
    code-like token of the question (those are the subject or the alternatives)."""
    things = {stem(t) for m in _CODE.finditer(question) for t in tokens(m.group())}
    for m in _NAME.finditer(question):
        if m.start() > 0:
            things |= {stem(t) for t in tokens(m.group())}
    return anchors - things


def _asked_kind(question: str) -> frozenset[str]:
    """The stems of the noun after a ``which``/``what`` and of its ``of`` complement
    ("Which *method* of the *receiver* blocks …?"): where the span's sentence lists
    candidates, it names their kind, which that sentence states of all of them, not the
    relation."""
    toks = tokens(question)
    for i, t in enumerate(toks[:-1]):
        if t in ("which", "what") and toks[i + 1] not in STOPWORDS:
            head = [toks[i + 1]]
            rest = toks[i + 2 : i + 5]
            if rest[:1] == ["of"]:  # "which method of the receiver"
                rest = rest[2:] if rest[1:2] == ["the"] else rest[1:]
                head += rest[:1]
            return frozenset(stem(w) for w in head)
    return frozenset()


#: Where a list ends: a clause break, a bracket, or the sentence's end.
_LIST_BREAK = re.compile(r"[:;()\[\]]|[.!?](?=\s|$)|\s-\s|^|$")
#: Between the items of a list.
_ITEM_BREAK = re.compile(r"\s*,\s*(?:(?:and|or)\s+)?|\s+(?:and|or)\s+")


def list_siblings(span: str, text: str, max_tokens: int = 3) -> frozenset[str]:
    """The match forms of the other items of a list the span is a whole item of in
    ``text`` ("The receiver has two useful methods: recv and try_recv." → ``recv`` for
    ``try_recv``): the stretch between two list breaks, cut at commas and ``and``/``or``;
    only items of at most ``max_tokens`` tokens count."""
    span_form = _form(span)
    canon = canonicalize(text)
    bounds = sorted({m.start() for m in _LIST_BREAK.finditer(canon)} | {len(canon)})
    out: set[str] = set()
    for a, b in itertools.pairwise(bounds):
        items = [_form(x) for x in _ITEM_BREAK.split(canon[a:b].strip(" :;()[].!?-"))]
        items = [x for x in items if x.strip()]
        if len(items) < 2 or span_form not in items:
            continue
        out |= {x for x in items if x != span_form and len(x.split()) <= max_tokens}
    return frozenset(out)


#: Where a sentence's clauses meet: ``;``, a colon before a space, and ``and``/``but``
#: after a comma or before a new subject ("… holds the cup and the second yacht …").
_CLAUSE_BREAK = re.compile(
    r"\s*(?:;|:(?=\s)|,\s+(?:and|but)\s+|\s(?:and|but)\s+(?=(?:the|an?|it|they|we|you|he|she)\s))\s*"
)


def _clauses(s: Sentence) -> list[str]:
    return [c for c in (p.strip() for p in _CLAUSE_BREAK.split(canonicalize(s.text))) if c]


#: A run of two or more capitalized words ("United States").
_NAME_RUN = re.compile(r"\b[A-Z][a-z]+(?:\s+[A-Z][a-z]+)+\b")


def name_initials(question: str) -> list[tuple[re.Pattern[str], frozenset[str]]]:
    """For every run of two or more capitalized words of the question ("United States")
    after its first word, the pattern of its initials as the evidence abbreviates it
    (``U.S.``, ``US``) and the stems of the run's words, which a text holding the
    abbreviation names (docs/verifier.md §19.17)."""
    out = []
    for m in _NAME_RUN.finditer(question):
        words = m.group().split()
        if m.start() == 0:
            words = words[1:]  # a question's first word is capitalized whatever it is
        if len(words) < 2:
            continue
        tail = r"(?:\.(?!\w)|(?!\w|\.\w))"  # "U.S." or "US", not "U.S.S.R."
        pat = r"(?<![\w.])" + r"\.?".join(w[0] for w in words) + tail
        out.append((re.compile(pat), frozenset(stem(w.lower()) for w in words)))
    return out


def _held(
    text: str,
    anchors: frozenset[str],
    abbreviations: Sequence[tuple[re.Pattern[str], frozenset[str]]],
) -> frozenset[str]:
    """The question's terms ``text`` holds, with the names it abbreviates by their initials."""
    got = anchors & frozenset(stem(t) for t in tokens(text))
    for pat, stems in abbreviations:
        if pat.search(text):
            got |= anchors & stems
    return got


def _with_abbreviations(
    question: str, abbreviations: Sequence[tuple[re.Pattern[str], frozenset[str]]], clause: str
) -> str:
    """``question`` with the abbreviations of its names ``clause`` writes ("DCP"): its
    subject, not a rival filler (``""`` stays ``""``: the question lists candidates)."""
    if not question:
        return question
    return question + "".join(" " + m.group() for p, _ in abbreviations for m in p.finditer(clause))


def rival_clause(
    span: str,
    question: str,
    anchors: frozenset[str],
    sentences: Sequence[Sentence],
    reached: Sequence[int],
    others: Sequence[Sentence] = (),
    initials: bool = False,
    agents: bool = False,
) -> str:
    """Why another clause of the evidence answers the question with a rival filler (see
    the module text), or ``""``. ``sentences`` are the span's object's, ``reached`` the
    indices of the span's own sentence(s) (with any bridge the support test followed),
    ``others`` the sentences of the other evidence objects cited with it. With
    ``initials``, a clause that abbreviates a name of the question by its initials
    ("the U.S." for "the United States", :func:`name_initials`) holds that name's terms.
    With ``agents``, a clause that gives the agent of the question's relation ("cleaned up
    *by the operating system*" for "who cleans up …?") need not hold every relation term
    of the span's sentence (docs/verifier.md §19.17)."""
    kind = span_kind(span)
    agent_of = question_frame(question).agent_of
    own_text = " ".join(sentences[i].text for i in reached if 0 <= i < len(sentences))
    listed_with = list_siblings(span, own_text)  # its list's other items: a kind of their own
    asks = bool(
        _ASKS_NAME.search(question) or _asked_kind(question) or _gap_words(tokens(question))
    )
    if not (kind or agent_of or listed_with or asks) or len(anchors) < 2:
        return ""
    span_toks = tokens(span)
    span_form = _form(span)
    strong = max(2, math.ceil(0.75 * len(anchors)))
    relation = relation_terms(canonicalize(question), anchors)

    abbreviations = name_initials(question) if initials else []
    agent_first = agents and bool(agent_of)
    if listed_with:
        relation -= _asked_kind(question)
    # a question that lists code-like candidates itself ("Which of Rc<T>, Box<T> and
    # RefCell<T> …") offers its other candidates as rivals
    listed = kind == "code" and span_form in _form(question)
    for i, s in enumerate([*sentences, *others]):
        if i in reached:
            # beside its own sentence, only a sibling clause cut at ";" can compete
            clauses = _clauses(s)
            mine = [c for c in clauses if span_form in _form(c)]
            if len(clauses) < 2 or not mine:
                continue
            context = " ".join(mine)
            rivals = [c for c in clauses if span_form not in _form(c)]
            where = f"another clause of sentence {i + 1}"
        elif span_form in _form(s.text):
            continue
        else:
            context, rivals = own_text, [s.text]
            where = f"sentence {i + 1}" if i < len(sentences) else "a sentence of another object"
        have = _held(context, anchors, abbreviations)
        for clause in rivals:
            got = _held(clause, anchors, abbreviations)
            if len(got) <= len(have) or len(got) < strong:
                continue
            related = have & relation <= got
            if not related and not (agent_first and agent_phrases(clause, agent_of)):
                continue  # the relation's agent phrase states who does it, whatever else
            of_kind = kind if related else ""  # let in by that phrase, its rival is that
            q = _with_abbreviations("" if listed else question, abbreviations, clause)
            sibs = list_siblings(span, context)
            if _distinct(of_kind, clause, q, span_toks, _form(context), agent_of, sibs):
                return (
                    f"rival: {where} holds {len(got)} of the question's terms with another {kind}"
                )
    return ""

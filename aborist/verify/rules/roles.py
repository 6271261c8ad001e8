"""Roles of a bare answer span in its sentence (docs/verifier.md §19.9).

A bare span (a name, a date, a short phrase) restates no relation of its own, so its
sentence sharing a term with the question (:func:`aborist.verify.support.answers_question`)
does not yet show that it *answers* the question: "directed by Robert Zemeckis and written
by Neil Gaiman" holds the question's "directed" and both names. This module looks at the
words around one occurrence of the span in its sentence and names a **role conflict** —
positive lexical evidence that the span fills another slot than the one the question asks
for. No conflict is not proof of an answer; a conflict is proof of a non-answer.

The rules, each from the shape of the question (:class:`QuestionFrame`); the table in
docs/verifier.md §19.9 is the specification:

* **excluded** — the question rules a word of the span out itself ("Which statement …
  excluding globals?" → ``global``).
* **number** — a bare number (with at most one lower-case unit word: ``32 bits``)
  answers only a question that asks for a quantity or a time (``how many/much/old/long``,
  ``when``, ``year``, ``number``, ``age`` …).
* **type** — for "Which/What N …", the evidence names another thing right after the kind
  N (a common noun: "the American animated television series *South Park*") and never
  the span.
* **agent** — the question asks for the agent of a relation ("directed by whom?", "Who
  wrote …?", "Which argument gives …?") and the sentence states that relation's agent
  phrase (``directed by Y``, ``given by Y``) without the span in ``Y``.
* **object** — the question asks for the object of its final verb ("What does the call
  block?", "What do lambda expressions create?"): the span must stand right after a form
  of that verb, or right before it with only a form of *be* between (passive).
* **contrast / place** — the span is the object of a contrast word (``behind Walmart``,
  ``than``, ``unlike`` …) or, for a "who" question, of a place preposition (``at``,
  ``in``, ``out of`` …) that the question does not use.

A fifth kind of conflict, another sentence stating every term of the question, needs the
whole evidence object and lives in :mod:`aborist.verify.support`.

All tests are on the canonical sentence text (punctuation matters for the agent phrase:
it ends at a comma, bracket or clause mark).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from aborist.verify.rules.locality import stem
from aborist.verify.text.textcanon import STOPWORDS, canonicalize, tokens

__all__ = [
    "QuestionFrame",
    "agent_phrases",
    "echoes_question",
    "other_alternative",
    "question_frame",
    "role_conflict",
]

_WH = frozenset(["who", "whom", "whose", "what", "which", "where", "when", "how"])
#: Words whose object is the other party of a comparison or contrast.
CONTRAST = frozenset(
    """
    behind than unlike versus vs against except besides beside instead rather
    """.split()  # noqa: SIM905
)
#: Prepositions of place: their object is a place, never the person a "who" asks for.
PLACE = frozenset(
    [
        "at",
        "on",
        "in",
        "into",
        "onto",
        "from",
        "near",
        "inside",
        "outside",
        "within",
        "through",
        "throughout",
        "out",
    ]
)
GOVERNORS = CONTRAST | PLACE | frozenset(["to", "for", "with", "about", "of", "by"])
_ADJUNCT = GOVERNORS | frozenset(["as"])
#: Words that open a subordinate clause of a question ("What do we use … *when* nothing
#: should happen?"): a verb after one is not the question's main verb.
SUBORDINATORS = frozenset(
    "when whenever if unless while because after before until once since whereas".split()  # noqa: SIM905
)
#: Contrast words that name the exception to a relation: the slot a negated question
#: ("When does it *not* print …?") asks for.
EXCEPTIVE = frozenset(["except", "besides", "unless"])
_NEGATORS = frozenset(["not", "never", "cannot"])
_EXCLUDING = frozenset(["excluding", "except", "not", "without", "besides", "other", "than"])
_DETERMINERS = frozenset(["the", "a", "an", "his", "her", "its", "their", "our", "my", "your"])
_COMPOUND = frozenset(["out", "instead", "ahead", "outside", "inside"])
_PERFECT = frozenset(["has", "have", "had"])
_BE = frozenset(["is", "are", "was", "were", "be", "been", "being", "get", "gets", "got"])
_QUANTITY = re.compile(
    r"(?i)\b(?:how\s+(?:many|much|old|long|far|large|big|tall|high|often)|when|year|years|"
    r"date|number|age|percent|percentage|population|amount|count|size|length|height|"
    r"century|decade|time|times|score|rate|price|cost)\b"
)
_CHOICE = re.compile(r"(?i)\bor\b")
#: A number with at most one lower-case unit word ("32 bits", "1,200"), not a name.
_NUMBER_SPAN = re.compile(r"^\W*\d[\d.,]*(?:\s+[a-z][a-z%-]*)?\W*$")
#: Irregular past forms whose lemma the suffix stemmer cannot reach.
_IRREGULAR = {
    "wrote": "write",
    "written": "write",
    "gave": "give",
    "given": "give",
    "took": "take",
    "taken": "take",
    "made": "make",
    "built": "build",
    "drew": "draw",
    "drawn": "draw",
    "sang": "sing",
    "sung": "sing",
    "began": "begin",
    "begun": "begin",
    "chose": "choose",
    "chosen": "choose",
    "led": "lead",
    "held": "hold",
    "won": "win",
    "found": "find",
    "founded": "found",
    "sold": "sell",
    "told": "tell",
    "shot": "shoot",
    "spoke": "speak",
    "spoken": "speak",
    "bought": "buy",
    "brought": "bring",
    "thought": "think",
    "taught": "teach",
    "caught": "catch",
    "ran": "run",
    "known": "know",
    "knew": "know",
    "grew": "grow",
    "grown": "grow",
    "threw": "throw",
    "thrown": "throw",
    "flew": "fly",
    "flown": "fly",
    "did": "do",
    "done": "do",
    "saw": "see",
    "seen": "see",
    "became": "become",
    "left": "leave",
    "met": "meet",
    "paid": "pay",
    "played": "play",
    "sent": "send",
    "set": "set",
    "put": "put",
    "kept": "keep",
    "struck": "strike",
    "stood": "stand",
}


def lemma(tok: str) -> str:
    """The stem of ``tok``, irregular verb forms (``wrote``, ``written``) first mapped
    to their base form, so the two meet."""
    return stem(_IRREGULAR.get(tok, tok))


def _verb_like(tok: str) -> bool:
    """A finite verb by its shape: an irregular past form, or a word ending in ``-s`` /
    ``-ed`` ("wrote", "gives", "directed"; not "game", "novel", "album")."""
    return tok in _IRREGULAR or (
        len(tok) > 3 and tok.endswith(("s", "ed")) and not tok.endswith("ss")
    )


@dataclass(frozen=True)
class QuestionFrame:
    """What the question's shape says about the slot it asks for."""

    toks: tuple[str, ...]
    words: frozenset[str]
    choice: bool
    agent_of: frozenset[str]
    object_of: str
    excluded: frozenset[str]
    who: bool
    type_phrase: tuple[str, ...]
    quantity: bool
    negated: bool = False
    object_word: str = ""


@lru_cache(maxsize=4096)
def question_frame(question: str, clauses: bool = True) -> QuestionFrame:
    """Parse the slot a question asks for (rules in the module docstring). With
    ``clauses`` (§19.18) a subordinate clause does not lend the object rule its verb and a
    negated question is marked (its exception is the slot it asks for)."""
    toks = tuple(tokens(question))
    agent: set[str] = set()
    wh = ""
    for i, t in enumerate(toks):
        if t not in _WH:
            continue
        wh = t
        # "directed by whom": the agent of "directed"
        if i >= 2 and toks[i - 1] == "by":
            agent.add(lemma(toks[i - 2]))
        if i == 0 or toks[i - 1] not in GOVERNORS:
            # the wh-phrase is the subject of an active verb: "Who wrote …", "Which
            # argument gives …", "Which company has published …" (never after a be-form)
            j = i + 1 if t in {"who", "whom"} else i + 2
            while j < len(toks) and toks[j] in _PERFECT:
                j += 1
            if t not in {"who", "whom"} and (i + 1 >= len(toks) or toks[i + 1] in STOPWORDS):
                j = len(toks)
            if j < len(toks) and toks[j] not in STOPWORDS and _verb_like(toks[j]):
                agent.add(lemma(toks[j]))
        break
    obj = ""
    # "What does the call block?": the object of the question's last word, a verb
    m = re.match(r"(?i)^\s*what\s+(?:do|does|did)\s+(.+?)\W*$", question)
    if m:
        rest = tokens(m.group(1))
        sub = next((k for k, t in enumerate(rest) if k and t in SUBORDINATORS), -1)
        if sub > 0 and clauses:
            # a subordinate clause ("… when nothing should happen?") ends the question with
            # its own verb; the main clause's verb stands before its first adjunct ("we
            # *use* as the code for the arm"), §19.18
            head = rest[:sub]
            head = head[: next((k for k, t in enumerate(head) if k and t in _ADJUNCT), sub)]
            if len(head) >= 2 and head[-1] not in STOPWORDS:
                obj = head[-1]
        elif len(rest) >= 2 and rest[-1] not in STOPWORDS and rest[-2] not in GOVERNORS:
            obj = rest[-1]
    excluded = frozenset(
        lemma(toks[k + 1])
        for k in range(len(toks) - 1)
        if toks[k] in _EXCLUDING and toks[k + 1] not in STOPWORDS
    )
    return QuestionFrame(
        toks=toks,
        words=frozenset(toks),
        choice=_CHOICE.search(question) is not None,
        agent_of=frozenset(agent),
        object_of=lemma(obj) if obj else "",
        object_word=obj,
        excluded=excluded,
        who=wh in {"who", "whom"},
        type_phrase=_type_phrase(toks),
        quantity=_QUANTITY.search(question) is not None,
        negated=clauses
        and any(
            t in _NEGATORS or (t == "t" and k and toks[k - 1].endswith("n"))  # "doesn't"
            for k, t in enumerate(toks)
        ),
    )


_WORD = re.compile(r"[^\W_]+")


def _type_phrase(toks: tuple[str, ...]) -> tuple[str, ...]:
    """The words after ``which``/``what`` up to the first stopword ("Which American
    animated television series created by …" → ``american animated television series
    created``): the kind of thing asked for, and perhaps a verb after it."""
    for i, t in enumerate(toks):
        if t in {"which", "what"}:
            out: list[str] = []
            for u in toks[i + 1 :]:
                if u in STOPWORDS:
                    break
                out.append(u)
            return tuple(out)
        if t in _WH:
            return ()
    return ()


def _lower_head(m: re.Match[str]) -> bool:
    head = m.string[: m.start(1)].rstrip(' "').rsplit(" ", 1)[-1]
    return head[:1].islower()


def _typed(evidence: str, phrase: tuple[str, ...]) -> list[str]:
    """The names the evidence types as the longest prefix (two words or more) of
    ``phrase`` that it uses right before a name: ``the American animated television
    series "South Park"`` → ``["South Park"]``."""
    text = canonicalize(evidence)
    for k in range(len(phrase), 1, -1):
        body = r"[\W_]+".join(re.escape(t) for t in phrase[:k])
        pat = re.compile(r"(?<![^\W_])(?i:" + body + r")\s+\"?((?:[A-Z0-9][^\s\",;:()]*\s?){1,5})")
        # the kind is a common noun (its last word lower case), not part of a name
        found = [
            m.group(1).strip() for m in pat.finditer(text) if m.group(0)[0:1] and _lower_head(m)
        ]
        if found:
            return found
    return []


#: ``V by Y``, also with a particle between (``cleaned up by``, ``carried out by``).
_AGENT = re.compile(r"(?i)\b([^\W_]+)(?:\s+(?:up|out|off|down|away|back|over))?\s+by\s+")
_PHRASE_END = re.compile(r"[,;:()\[\]]|\.\s|\.$|\s-\s")
_NEXT_AGENT = re.compile(r"(?i)(?:\s+and)?\s+[^\W_]+\s+by\s")


def _span_pattern(span_toks: tuple[str, ...]) -> re.Pattern[str]:
    body = r"[\W_]+".join(re.escape(t) for t in span_toks)
    return re.compile(r"(?i)(?<![^\W_])" + body + r"(?![^\W_])")


def _agent_phrases(sentence: str, relations: frozenset[str]) -> list[tuple[int, int]]:
    """Character ranges of the agent phrases ``V by Y`` of ``sentence`` whose ``V`` is one
    of ``relations`` (lemmas); ``Y`` ends at a clause mark or the next agent phrase."""
    out: list[tuple[int, int]] = []
    for m in _AGENT.finditer(sentence):
        if lemma(m.group(1).lower()) not in relations:
            continue
        start = m.end()
        rest = sentence[start:]
        end = len(rest)
        for pat in (_PHRASE_END, _NEXT_AGENT):
            hit = pat.search(rest)
            if hit:
                end = min(end, hit.start())
        out.append((start, start + end))
    return out


def agent_phrases(sentence: str, relations: frozenset[str]) -> list[str]:
    """The agent phrases ``Y`` of ``V by Y`` in ``sentence`` (canonicalized here) whose
    ``V`` is one of ``relations``."""
    text = canonicalize(sentence)
    return [text[a:b].strip() for a, b in _agent_phrases(text, relations)]


def _governor(sentence: str, at: int) -> str:
    """The preposition governing the phrase that starts at ``at`` (determiners and
    quotes skipped), or ``""``."""
    before = [w.lower() for w in _WORD.findall(sentence[max(0, at - 80) : at])]
    while before and before[-1] in _DETERMINERS:
        before.pop()
    if not before:
        return ""
    word = before[-1]
    if word == "of" and len(before) > 1 and before[-2] in _COMPOUND:
        word = before[-2]  # "out of", "instead of", "ahead of"
    # only a preposition directly before the phrase (no comma or bracket between)
    gap = sentence[:at].rstrip(" \"'")
    if gap and not gap[-1].isalnum():
        return ""
    return word if word in GOVERNORS else ""


def verb_base(tok: str) -> str:
    """A verb form's base for comparing forms of one verb, short ones too (``use`` =
    ``uses`` = ``used`` = ``using``, which the 7-letter stemmer leaves apart): irregular
    forms mapped, one suffix ``-ing``/``-ed``/``-es``/``-s`` and a final ``e`` dropped."""
    t = _IRREGULAR.get(tok, tok)
    for suffix in ("ing", "ed", "es", "s"):
        if t.endswith(suffix) and len(t) - len(suffix) >= 2 and not t.endswith("ss"):
            t = t[: -len(suffix)]
            break
    return t[:-1] if len(t) > 2 and t.endswith("e") else t


def _object_ok(sentence: str, start: int, end: int, verb: str) -> bool:
    before = [w.lower() for w in _WORD.findall(sentence[max(0, start - 120) : start])]
    after = [w.lower() for w in _WORD.findall(sentence[end : end + 120])]
    base = verb_base(verb)

    def same(w: str) -> bool:
        return verb_base(w) == base or lemma(w) == lemma(verb)

    # active: "… block the current thread" (the span within 3 words after the verb)
    if any(same(w) for w in before[-3:]):
        return True
    # passive: "anonymous functions are created" (only be-forms between)
    for k, w in enumerate(after[:4]):
        if same(w):
            return k > 0 and all(x in _BE for x in after[:k])
    return False


def role_conflict(
    span: str, question: str | None, sentence: str, evidence: str = "", clauses: bool = True
) -> str:
    """Why the span, at every occurrence in ``sentence``, fills another slot than the one
    ``question`` asks for; ``""`` when some occurrence has no conflict. ``clauses`` is
    ``VerifierPolicy.answer_role_clauses`` (§19.18)."""
    if not question:
        return ""
    frame = question_frame(question, clauses)
    span_toks = tuple(tokens(span))
    content = [t for t in span_toks if t not in STOPWORDS]
    if not content:
        return ""
    if any(lemma(t) in frame.excluded for t in content):
        return "excluded: the question itself rules the span out"
    if (
        _NUMBER_SPAN.match(canonicalize(span))
        and not frame.quantity
        and not _typed_number(span_toks, frame, sentence)
    ):
        return "number: the question does not ask for a quantity or a time"
    if evidence and frame.type_phrase:
        named = _typed(evidence, frame.type_phrase)
        if named and not any(tuple(tokens(x))[: len(span_toks)] == span_toks for x in named):
            return f"type: the evidence names another {' '.join(frame.type_phrase)!r}"
    text = canonicalize(sentence)
    agents = _agent_phrases(text, frame.agent_of) if frame.agent_of else []
    reasons: list[str] = []
    for m in _span_pattern(span_toks).finditer(text):
        if agents and not any(a <= m.start() and m.end() <= b for a, b in agents):
            reasons.append("agent: the sentence names the question's agent elsewhere")
            continue
        if frame.object_of and not _object_ok(text, m.start(), m.end(), frame.object_word):
            reasons.append(f"object: not the object of {frame.object_of!r}")
            continue
        gov = _governor(text, m.start())
        if gov in CONTRAST or (frame.who and gov in PLACE):
            if gov in frame.words or (gov in EXCEPTIVE and frame.negated):
                return ""
            reasons.append(f"governor: the object of {gov!r}, which the question lacks")
            continue
        return ""
    return reasons[0] if reasons else ""


def _typed_number(span_toks: tuple[str, ...], frame: QuestionFrame, sentence: str) -> bool:
    """Does the sentence name the number as the kind of thing the question asks for: is
    the nearest word before it (only stopwords between, at most three tokens back) a word
    of the question's ``which/what N`` phrase, or the verb it asks the object of
    ("introduced in *version* 3.6", "with a *value* of 80", "*prints* 42"; not "an integer
    type that takes up 32 bits")?"""
    wanted = {lemma(t) for t in frame.type_phrase if t not in STOPWORDS}
    if frame.object_of:
        wanted.add(frame.object_of)
    if not wanted:
        return False
    toks = tokens(sentence)
    k = len(span_toks)
    for i in range(len(toks) - k + 1):
        if tuple(toks[i : i + k]) == span_toks:
            before = [t for t in toks[max(0, i - 3) : i] if t not in STOPWORDS]
            if before and lemma(before[-1]) in wanted:
                return True
    return False


_OR = re.compile(r"(?i)\s+or\s+")
_CAP_RUN_END = re.compile(
    r"((?:[A-Z0-9][^\s,?]*)(?:\s+(?:of|for|the|and|de|la|van|von|[A-Z0-9][^\s,?]*))*)\W*$"
)


def other_alternative(question: str, span_toks: list[str]) -> frozenset[str]:
    """Stems of the alternative a choice question offers beside the span ("Who is older,
    Glenn Hughes or Ross Lynch?" with the span ``Glenn Hughes`` → ``ross``, ``lynch``): the
    other candidate is not a term of the relation asked about, so it does not anchor the
    span's sentence. Empty when the question offers no choice or the span is not one."""
    canon = canonicalize(question)
    m = _OR.search(canon)
    if m is None or not span_toks:
        return frozenset()
    left, right = canon[: m.start()], canon[m.end() :]
    form = " " + " ".join(span_toks) + " "
    if form in " " + " ".join(tokens(left)) + " ":
        other = re.split(r"[?,;]", right, maxsplit=1)[0]
    elif form in " " + " ".join(tokens(right)) + " ":
        run = _CAP_RUN_END.search(left)
        other = run.group(1) if run else left.rsplit(",", 1)[-1]
    else:
        return frozenset()
    return frozenset(lemma(t) for t in tokens(other) if t not in STOPWORDS) | frozenset(
        stem(t) for t in tokens(other)
    )


_CHOICE = re.compile(r"(?i)\b(?:or|between|either|both|which one|which of|whichever)\b")


def echoes_question(question: str, span: str, span_toks: Sequence[str]) -> bool:
    """Does the span only repeat a run of the question's own words, in a question that
    offers no choice ("After installing ripgrep, what command do I run?" → ``ripgrep``;
    "What does upgrade give back on a Weak<T>?" → ``Weak<T>``)? Such a span tells the
    asker nothing the question did not; only a question that names its candidates ("X or
    Y", "between X and Y", "which one", "which of") is answered by one of its own words.
    The run must be the question's own, word for word: a name built from the question's
    words ("Tuple structs" for "structs that look similar to tuples") is not a repeat."""
    if _CHOICE.search(canonicalize(question)) or not any(t not in STOPWORDS for t in span_toks):
        return False
    form = " " + " ".join(span_toks) + " "
    if form not in " " + " ".join(tokens(question)) + " ":
        return False
    # and as written: ``::1`` is not the ``1`` of "Listing 6-1"
    written = re.escape(canonicalize(span).strip(" .!?\"'").casefold())
    return (
        re.search(rf"(?<![\w:<>/.-]){written}(?![\w:<>/-])", canonicalize(question).casefold())
        is not None
    )

"""The offline default answerer: deterministic extraction of evidence sentences.

With no model server configured, ``aborist query`` still answers: the
:class:`ExtractiveClient` reads the question and the tagged evidence back out of the
prompt (:func:`aborist.prompts.parse_messages`), scores every whole evidence sentence, and
answers with the best sentences verbatim, each tagged with its evidence pointer:

- claim-lattice mode: ``<sentence> [E2]`` per line;
- quote mode: ``"<sentence>" [E2]`` per line (bare when the sentence holds ``"`` itself).

**Whole sentences.** A paragraph (a line) is cut after ``.``, ``!`` or ``?`` only where a
new sentence can start, never after an abbreviation (:data:`ABBREVIATIONS`: ``Gen.``,
``e.g.``, ``i.e.``, ``Dr.`` …) or a one-letter initial (``Robert E. Lee``), and never
inside an open quotation or bracket; closing quotes stay with their sentence.

**The question's relation** (:func:`question_relation`). The question's shape names what
an answer must say about its *anchor* (the words after the question frame): a definition
for "what is X" / "what does X do" (X is the sentence's subject before a defining verb, or
"… called X"), a count for "how many" (a number), a cause for "why" (because, since, so
that …), an expansion for "what does X stand for", a condition for "when does X run" (when, if,
after, until …), a comparison for "difference between
X and Y" (both sides and a contrast cue, or a definition of either). For "what are the X"
a *list* stands in the relation too: a lead-in ending with ``:`` whose heading or own
words hold X, followed by one-sentence item lines; the answer is then the items. An
"It …" sentence is answered with the sentence before it. The table, with examples, is in
docs/pipeline.md ("Extractive answerer"). Frames: "what is X supposed to return" and
"what does X do when …" ask what X does ("supposed to return" need not be repeated); "…
in Python" qualifies the question, it is not part of X; "the A in X stand for" asks what
the letter stands for; "how is X different from Y" is a comparison; "when would I use
X" asks what X is used for; generic parameters ("Box<T>") are not part of the anchor. A
definition has the whole anchor as its subject ("The integer type is …" does not define
"the default integer type"). A comparison stated in so many words (unlike, whereas,
rather than) or by defining a side ranks above a sentence naming both sides with "but".

**Candidates** (:mod:`aborist.clients.candidates`). Besides whole sentences, lists,
lead-ins and "It …" sentences: a *described* term — a subjectless description ("Return a
string …", "Called after the instance …") in the paragraph right after a call signature
(``str.join(iterable)``) or a heading ("Await expression"), grammar rules in between
skipped — has the term as its subject, so it defines it and is scored with it; for "what
does the A in X stand for" a sentence "The a stands for …" is *paired* with the sentence
before it, which names X; a sentence opening with "Instead," / "Otherwise," / "As a
result," or "By <verb>ing" *follows* the one it continues and is answered after it
(scored as that one); "This technique is …" continues the sentence before it as "It …"
does, and the two give the reason a "why" question asks for when they hold a cause cue.

**Words and corpus** (:mod:`aborist.clients.terms`). Identifiers are whole keys
(``__init__`` meets ``__init__``, never ``__init_subclass__``); a Python/Rust keyword that
is an English function word (``else``, ``for``, ``is``, ``with`` …) is a key when the
question names it as code (quoted, after an article, beside an operator), and a sentence
holds it where it names it so too or its section heading does; a keyword named after an
article meets the word it abbreviates (``a const`` / "constants"). A language the
question names (of a fixed list) leaves out the passages naming another language but not
it; when the question only qualifies itself with it ("… in Python") and more passages
name it than any other, it is a cue, not a word a sentence must hold; otherwise a
candidate must hold it. It is never weighed in the coverage.

**Order.** Every candidate covering at least :data:`MIN_COVERAGE` of the question's
IDF-weighted content keys (question-frame words such as "many" or "difference" left out,
and the verb of "what happens …" and "how does X work"; the *optional* closing verb of
"when does X run" left out of this gate but weighed in the ranking) is ranked; a sentence
holds the category noun of its section's heading (``The "return" statement``: the
sentences under it are of a statement). Those in the
question's relation come first, and of them (``extractive/7``) those under a section
heading naming the question's words and nothing else (category nouns and languages
aside: ``The Slice Type`` for "what is a slice"); then by coverage; ties go to the
sentence holding more of the question's adjacent word pairs (pairs of two stopwords
aside), then to the one where such a pair comes first, then to the one sharing more of the
question's words (each weighted by its IDF among the evidence sentences), then to evidence
order.

**What no sentence sharing words passes.** When the question asks how many, why, when,
what X stands for, or the difference between X and Y, only a candidate stating that
answers (a number, a cause cue, a condition or time cue, an expansion, a contrast or a
definition of a side); when none does, the answerer refuses. A candidate holding no key
beyond the question's own (languages aside) only restates it and is no answer. An
operator the question names as a word of its own ("what does // do", "the ? operator")
is invisible to the content keys, so a candidate that does not hold it — or the word
its passage glosses it with, ``"%" (modulo)`` — is no answer. So is one (``extractive/8``)
that does not say a code term the question names (the last name of ``list.sort()``,
``std::sync::mpsc``: :func:`~aborist.clients.terms.code_terms`) or the asker's action, the
verb of "how do I *sort* …" / "can I *share* …" or of its complement ("how do I force X
to be *passed* …"; light verbs such as get, use, make aside:
:func:`~aborist.clients.terms.action_verbs`; file and site names such as ``Cargo.lock`` are
not code terms). And when a name the question asks about (a capitalized word after its
first, a language aside: "… with *Valgrind*", "*BTreeMap* or *HashMap*") is held by no
evidence candidate nor section heading, the evidence is not about it: it refuses
(:func:`named`).

**The question asked** (:func:`asked_part`, ``extractive/8``). A question whose last clause
after ``:`` or ``;`` is itself a question ("Coming from C, where a bool is an int: how big
is a Boolean?") asks that clause; the words before it are the asker's context, weighed in
the ranking and never required. "Is it true that X?" asks about X. The measure of "how
big / long / old …" and the asker's hedges (actually, exactly, really …) are frame words
an answer need not hold.

**Refusal.** When no sentence covers :data:`MIN_COVERAGE` (or none passes the rules
above), the answer is
:data:`~aborist.prompts.CANNOT_ANSWER` followed by one line naming the closest passages
(the pointers of the best-covering sentences, at most :data:`MAX_SENTENCES`):
``Closest passages: [E2] [E5]``. The verifier labels it ``UNGROUNDED`` (neither line is a
supported claim), and ``aborist query`` prints those passages (:func:`closest_passages`).

Everything here is pure and deterministic (ties are broken by evidence order, then
position), so the same prompt always gives the same bytes.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

from aborist.clients.base import ChatClient, ChatResult, Messages
from aborist.clients.candidates import ABBREVIATIONS, Candidate, candidates, whole_sentences
from aborist.clients.relation import (
    _CATEGORY,
    _FRAME_WORDS,
    _GENERIC,
    _NUMBER_WORDS,
    _QUALIFIER,
    _in_relation,
    contrasts,
    question_relation,
)
from aborist.clients.terms import (
    LANGUAGES,
    action_verbs,
    code_terms,
    main_language,
    named_keywords,
    named_language,
    passage_languages,
    qualifier_language,
    question_keys,
    says_verb,
    stemmed,
    text_keys,
)
from aborist.corpus.lexicon import STOPWORDS, light_stem
from aborist.prompts import CANNOT_ANSWER, MODE_QUOTE, parse_messages

__all__ = [
    "ABBREVIATIONS",
    "CLOSEST_PREFIX",
    "EXTRACTIVE_VERSION",
    "MAX_SENTENCES",
    "MIN_COVERAGE",
    "ExtractiveClient",
    "asked_part",
    "closest_passages",
    "extract",
    "named",
    "question_relation",
    "whole_sentences",
]

EXTRACTIVE_VERSION = "extractive/8"
MAX_SENTENCES = 3
MIN_COVERAGE = 0.6
CLOSEST_PREFIX = "Closest passages:"
_WORD = re.compile(r"\w*[^\W_]\w*")  # identifiers whole, as in aborist.clients.terms

#: Relations only a candidate stating them answers: a sentence without a number does not
#: say how many, one without an expansion what X stands for, one without a cause why.
_CLOSED = frozenset({"count", "abbreviation", "cause", "comparison", "condition"})
#: Question frames whose verb asks for what follows, not for itself: "what happens if …"
#: (a consequence), "how does X work" (a mechanism); an answer need not repeat the verb.
_FRAMES = (
    (re.compile(r"(?i)\bwhat\s+(?:happens|happened|(?:will|would|could)\s+happen)\b"), "happen"),
    (re.compile(r"(?i)^how\s+(?:does|do|did|would|will|can)\s.+\swork\W*$"), "work"),
)
_OPERATOR = re.compile(r"[-+*/%=<>!&|^~?@]+")
_NAME = re.compile(r"[^\W_]+|\w+")  # a dotted name's parts: "list.sort()" holds "sort"
_SYMBOL_TRIM = "\"'`‘’“”()[],;:"


def _frame_keys(question: str) -> set[str]:
    # "how do relative imports work in Python": the qualifier is not part of the frame
    q = _QUALIFIER.sub("", question.strip().rstrip("?.! "))
    return {light_stem(verb) for pattern, verb in _FRAMES if pattern.search(q)}


def _symbols(question: str) -> frozenset[str]:
    """The operators the question names as words of their own ("what does // do", "the ?
    operator", "is and =="): no content key holds them, so an answer must (a lone "-" is
    a dash, and the closing question mark is not asked about)."""
    tokens = (t.strip(_SYMBOL_TRIM) for t in question.strip().rstrip("?.! ").split())
    return frozenset(t for t in tokens if t != "-" and _OPERATOR.fullmatch(t))


def _holds_symbols(symbols: frozenset[str], s: Candidate) -> bool:
    """The operators are in the candidate, or named by the word its passage glosses them
    with (``"%" (modulo)`` … "the modulo operator")."""
    return symbols <= set(_OPERATOR.findall(f"{s.text} {' '.join(s.lines)}")) | s.glossed


def named(question: str) -> set[str]:
    """The keys of the names the question asks about (``extractive/8``): its capitalized
    words after the first ("… a Kubernetes ingress controller", "… with Valgrind",
    "BTreeMap"), languages aside (a corpus cue, :func:`_of_language`)."""
    words = re.findall(r"[^\W\d_][\w’']*", question)[1:]
    return {stemmed(w.lower()) for w in words if w[0].isupper() and len(w) > 1} - LANGUAGES


def _titles(section: frozenset[str], core: set[str]) -> bool:
    """Whether a section heading names the question's words and nothing else, category
    nouns and language names aside: "The Slice Type" is the section about slices,
    "Extending Cargo with Custom Commands" is not the section about Cargo."""
    return bool(section) and core <= section and not section - core - _CATEGORY - LANGUAGES


@dataclass(frozen=True, slots=True)
class _Musts:
    """What every answer must say, whatever its coverage: the language the question names
    when it is not only a corpus cue ("… in Java" over evidence not of Java), the operators
    it names, the code terms it names ("list.sort()") and the asker's action ("how do I
    sort …"), and something the question does not say."""

    language: str
    symbols: frozenset[str]
    terms: frozenset[str]
    verbs: tuple[str, ...]
    asked: frozenset[str]  # every word of the question, frame and languages included

    @classmethod
    def of(cls, question: str, language: tuple[str, bool]) -> _Musts:
        return cls(
            "" if language[1] else language[0],
            _symbols(question),
            frozenset(code_terms(question)),
            action_verbs(question),
            frozenset(question_keys(question) | LANGUAGES),
        )

    def said_by(self, s: Candidate) -> bool:
        if self.language and self.language not in s.keys:
            return False
        if not _holds_symbols(self.symbols, s):
            return False
        text = f"{s.text} {' '.join(s.lines)}"
        # names as written ("list.sort()") and plain words ("sort_by", which _NAME splits)
        said = {w.lower() for w in (*_NAME.findall(text), *re.findall(r"\w+", text))}
        if not self.terms <= said:
            return False  # "… adds complexity" is no answer to "the complexity of list.sort()"
        if self.verbs and not any(says_verb(v, said) for v in self.verbs):
            return False  # "… a HashMap's keys and values" is no answer to how to sort one
        # "Update to a newer Rust version." says nothing the question does not
        return bool(text_keys(" ".join(s.lines)) - self.asked)


def _ranked(
    question: str,
    pool: list[Candidate],
    min_coverage: float,
    language: tuple[str, bool] = ("", True),
    context: frozenset[str] = frozenset(),
) -> tuple[list[Candidate], list[tuple[float, Candidate]]]:
    """The candidates at or above ``min_coverage``, best first, and every candidate with
    its coverage (for a refusal's closest passages). ``language``: the language the
    question names and whether it is only a corpus cue (:func:`_of_language`); never a
    word weighed in the coverage, it must otherwise be held by the candidate itself.
    ``context``: the keys of the asker's preamble (:func:`asked_part`), weighed in the
    ranking but not in the gate."""
    rel = question_relation(question)
    wanted = question_keys(question) - _FRAME_WORDS - rel.frame - _frame_keys(question)
    optional = rel.optional | (context - wanted - LANGUAGES - _FRAME_WORDS)
    wanted = (wanted | optional) - {language[0]}
    musts = _Musts.of(question, language)
    if rel.kind == "definition" and rel.plural:  # "the three rules": the list's length
        wanted -= {light_stem(w) for w in _NUMBER_WORDS}
    if not wanted or not pool:
        return [], []

    df = Counter(k for s in pool for k in s.keys & wanted)
    n = len(pool)
    idf = {k: math.log((n + 1) / (df.get(k, 0) + 0.5)) for k in wanted}
    total = sum(idf.values())
    # the gate leaves the optional words out: "when does X run" passes on X alone
    gate = sum(v for k, v in idf.items() if k not in optional) or total
    # a type's generic parameters are not the question's words: "Box<T>" makes no (box, t)
    q_words = _WORD.findall(_GENERIC.sub("", question).lower())
    words = set(q_words)
    pairs = {
        (stemmed(a), stemmed(b))
        for a, b in pairwise(q_words)
        if not (a in STOPWORDS and b in STOPWORDS)
    }
    pool_words = [_WORD.findall(s.text.lower()) for s in pool]
    shared_words = [words.intersection(w) for w in pool_words]
    wdf = Counter(w for shared in shared_words for w in shared)
    widf = {w: math.log((n + 1) / (wdf.get(w, 0) + 0.5)) for w in words}
    scored = []
    every = []
    for s, tokens, shared in zip(pool, pool_words, shared_words, strict=True):
        held = s.keys | s.heading  # a sentence under "The "return" statement" is of one
        covered = sum(idf[k] for k in held & wanted) / total
        passes = sum(idf[k] for k in held & wanted - optional) / gate
        every.append((covered, s))
        if passes < min_coverage and not (
            # "the difference between X and Y": defining one side holds half the question
            rel.kind == "comparison" and covered >= min_coverage / 2 and _in_relation(rel, s)
        ):
            continue
        # a list that spells out "the X" outranks a sentence in relation, which outranks
        # any other sentence; a list, a lead-in or an "It …" sentence is only ever an
        # answer in relation
        related = int(_in_relation(rel, s))
        free = s.kind in ("sentence", "described", "followed")  # may answer outside it
        if (not related and not free) or not musts.said_by(s):
            continue
        # a list, or a comparison stated in so many words or by defining a side, says
        # more than a sentence that only mentions both sides with "but"
        related += related and (
            s.kind == "list" or (rel.kind == "comparison" and contrasts(rel, s))
        )
        hits = [(i, p) for i, p in enumerate(pairwise(map(stemmed, tokens))) if p in pairs]
        adjacent = len({p for _, p in hits})
        first = hits[0][0] if hits else len(tokens)
        weight = round(sum(widf[w] for w in shared), 9)
        # stating it in the section about X ("The Slice Type" for "What is a slice?")
        titled = int(bool(related) and _titles(s.section, wanted - optional))
        scored.append((-related, -titled, -covered, -adjacent, first, -weight, s.order, s))
    scored.sort(key=lambda t: t[:7])
    if scored and scored[0][0] < 0:  # something states the relation: answer with that only
        scored = [t for t in scored if t[0] < 0]
    elif rel.kind in _CLOSED:  # nothing says how many, why, or what X stands for
        scored = []
    if not _names_held(question, wanted, pool):
        return [], every  # "… with Valgrind?" over evidence never naming Valgrind
    return [t[-1] for t in scored], every


def _names_held(question: str, wanted: set[str], pool: list[Candidate]) -> bool:
    """Whether every name the question asks about (:func:`named`) is held by some
    candidate or section heading of the evidence."""
    held = frozenset().union(*(s.keys | s.section for s in pool))
    return named(question) & wanted <= held


#: "Coming from C, where a bool is an int: how big is …", "In C I can write x = y = 6; can
#: I chain …": the question asked is the last clause, the rest is the asker's context
_ASKED = re.compile(
    r"^(?P<context>.+?\w.*?)[:;]\s+(?P<asked>(?:what|how|why|when|where|which|who|whose|can|could"
    r"|is|are|does|do|did|should|would|will|may|must)\b[^:;]+\?)\s*$",
    re.IGNORECASE,
)
#: A clause that is itself a question: it opens with a question word.
_QUESTION_OPENING = re.compile(
    r"(?i)^\s*(?:what|how|why|when|where|which|who|whose|can|could|is|are|does|do|did"
    r"|should|would|will|may|must)\b"
)
#: "Is it true that X?": the claim to check is X
_TRUE_THAT = re.compile(r"(?i)^(?:is\s+it\s+(?:true|the\s+case|correct)\s+that)\s+(?P<x>.+)$")


def asked_part(question: str) -> tuple[str, frozenset[str]]:
    """The question asked and the keys of the asker's context before it: "Coming from C:
    what sign does …" asks "what sign does …" (C is context, weighed in the ranking,
    never required); "Is it true that X?" asks about X ("true" is not a word to find)."""
    q = " ".join(question.split())
    context: frozenset[str] = frozenset()
    # a context is not itself a question ("What is the difference …; which should I use?"
    # asks both parts)
    if (m := _ASKED.match(q)) and not _QUESTION_OPENING.match(m.group("context")):
        q, context = m.group("asked"), frozenset(question_keys(m.group("context")))
        q = q[0].upper() + q[1:]
    if m := _TRUE_THAT.match(q):
        q = m.group("x")
        q = q[0].upper() + q[1:]
    return q, context


def _of_language(
    question: str, evidence: tuple[tuple[str, str], ...]
) -> tuple[tuple[tuple[str, str], ...], tuple[str, bool]]:
    """The evidence for a question naming one language (a passage naming another and not
    it is left out), the language, and whether it is only a corpus cue: the question only
    qualifies itself with it ("… in Python") and the evidence is of it (more passages name
    it than any other). Else a candidate must hold the language itself."""
    language = named_language(question)
    if language is None:
        return evidence, ("", True)
    main = main_language([t for _, t in evidence])
    kept = tuple(
        (p, t) for p, t in evidence if language in (named := passage_languages(t)) or not named
    )
    return kept, (language, main == language and qualifier_language(question) is not None)


def extract(
    question: str,
    evidence: tuple[tuple[str, str], ...],
    mode: str,
    *,
    max_sentences: int = MAX_SENTENCES,
    min_coverage: float = MIN_COVERAGE,
) -> str:
    """The extractive answer for ``question`` over ``(pointer_id, text)`` evidence."""
    question, context = asked_part(question)
    rel = question_relation(question)
    evidence, language = _of_language(question, evidence)
    keywords = frozenset(named_keywords(question))
    pool = candidates(
        evidence,
        lists=rel.kind == "definition" and rel.plural,
        keywords=keywords,
        pairs=rel.kind == "abbreviation" and len(rel.anchor[0]) == 1 and len(rel.anchor[0][0]) == 1,
    )
    ranked, every = _ranked(question, pool, min_coverage, language, context)
    lines: list[str] = []
    seen: set[str] = set()
    for s in ranked:
        for text in s.lines:
            if text.casefold() in seen or len(lines) == max_sentences:
                continue
            seen.add(text.casefold())
            # A sentence that holds double quotes itself cannot be wrapped in them; quote
            # mode then gives it bare, and the verifier's span strategy checks it verbatim.
            body = f'"{text}"' if mode == MODE_QUOTE and '"' not in text else text
            lines.append(f"{body} [{s.pointer_id}]")
        if len(lines) == max_sentences:
            break
    if lines:
        return "\n".join(lines)
    return _refusal(every, max_sentences)


def _refusal(every: list[tuple[float, Candidate]], max_sentences: int) -> str:
    closest: list[str] = []
    for covered, s in sorted(every, key=lambda t: (-t[0], t[1].order)):
        if covered > 0 and s.pointer_id not in closest:
            closest.append(s.pointer_id)
        if len(closest) == max_sentences:
            break
    if not closest:
        return CANNOT_ANSWER
    return f"{CANNOT_ANSWER}\n{CLOSEST_PREFIX} " + " ".join(f"[{p}]" for p in closest)


_CLOSEST = re.compile(rf"^{re.escape(CLOSEST_PREFIX)}((?:\s*\[E\d+\])+)\s*$", re.MULTILINE)


def closest_passages(answer: str) -> list[str]:
    """The pointers a refusal names as its closest passages (``[]`` for any other answer)."""
    if not answer.startswith(CANNOT_ANSWER):
        return []
    m = _CLOSEST.search(answer)
    return re.findall(r"E\d+", m.group(1)) if m else []


class ExtractiveClient(ChatClient):
    """A :class:`ChatClient` that answers from the evidence in its prompt, offline."""

    kind = "extractive"

    def __init__(
        self, *, max_sentences: int = MAX_SENTENCES, min_coverage: float = MIN_COVERAGE
    ) -> None:
        super().__init__(temperature=0.0)
        self.max_sentences = max_sentences
        self.min_coverage = min_coverage

    def _complete(
        self, messages: Messages, *, temperature: float, max_tokens: int | None
    ) -> ChatResult:
        # A re-prompt continues the first prompt; the evidence and question are the same,
        # and so is the extractive answer.
        parts = parse_messages(messages[:2])
        text = extract(
            parts.question,
            parts.evidence,
            parts.mode,
            max_sentences=self.max_sentences,
            min_coverage=self.min_coverage,
        )
        return ChatResult(text=text, model=EXTRACTIVE_VERSION, finish_reason="stop")

    def _profile(self) -> dict[str, Any]:
        return {
            "model": EXTRACTIVE_VERSION,
            "max_sentences": self.max_sentences,
            "min_coverage": self.min_coverage,
        }

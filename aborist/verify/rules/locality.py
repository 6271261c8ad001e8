"""Local support: a claim's words, polarity and quantities found together in one passage.

Before 2.0 a claim was "supported" when its content words occurred *anywhere* in an
evidence object, so "Rust uses garbage collection" was supported by a chapter that says
"some languages have garbage collection … Rust uses a third approach". Here support is
local (docs/verifier.md §19):

* **Sentences.** Every evidence object is cut into sentences once, when it is built
  (:func:`split_sentences`): at a blank line, at a line that starts a Markdown heading or
  list item, and after ``.``, ``!`` or ``?`` before a capital, a digit, a quote or a
  bracket — not after an ellipsis, a one-letter initial or a common abbreviation
  (``Gen.``, ``e.g.``, ``U.S.`` …). "century.First" (no space, a lower-case word before)
  is a break too.
* **Window.** A *passage* is ``support_window_sentences`` adjacent sentences of one
  object (default 1: one sentence).
* **A passage supports a claim** when it holds at least ``local_min_coverage`` of the
  claim's distinct content stems, every *anchor* of the claim (capitalized words,
  numbers, ordinals, months, comparative and direction words), and the same polarity
  (:func:`is_negated` of the claim equals that of the passage's sentences that hold
  claim words).
* **Parts.** A claim that no single passage supports may still be supported when it cuts
  into clauses (:func:`claim_parts`, at ``, and`` ``; `` ``, but`` ``, which`` …) and
  each clause is supported by some passage on its own.

Stems are a deliberately small suffix stripper (:func:`stem`) so that "approved" meets
"approve" and "languages" meets "language"; it never maps two different words of six
letters or fewer to one stem unless they differ only by such a suffix.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from aborist.verify.rules.swaps import dropped_cue, rearranged, substitution  # noqa: F401 (re-exported)
from aborist.verify.text.anchors import anchor_key, value_keys
from aborist.verify.text.dates import adjunct_keys, date_adjunct, normalize_dates
from aborist.verify.text.names import missing_name, name_runs
from aborist.verify.text.sentences import claim_parts, relative_clause, split_sentences
from aborist.verify.text.stems import stem
from aborist.verify.text.textcanon import (
    STOPWORDS,
    canonical_tokens,
    canonicalize,
    match_form,
    tokens,
)

if TYPE_CHECKING:
    from aborist.verify.rules.coref import SupportContext

__all__ = [
    "NEGATION_CUES",
    "Passage",
    "Sentence",
    "SupportResult",
    "anchor_keys",
    "build_sentence",
    "build_sentences",
    "claim_parts",
    "clear_memo",
    "content_stems",
    "find_support",
    "is_negated",
    "negated_outside",
    "question_anchors",
    "relative_clause",
    "split_sentences",
    "stem",
]

#: Polarity cues, case-insensitive. ``no-longer-used`` (a hyphenated "no") is not a cue.
NEGATION_CUES = (
    "not never cannot none nobody nothing nowhere neither nor without n't no "
    "fails to / failed to / fail to / unable to"
)
_NEGATION = re.compile(
    r"(?i)\b(?:not|never|cannot|none|nobody|nothing|nowhere|neither|nor|without)\b"
    r"|\bno\b(?!-)|n['\u2019]t\b|\b(?:fail(?:s|ed)?|unable)\s+to\b"
)


#: Question words and generic request words: never question anchors.
_QUESTION_GENERIC = frozenset(
    """
    what which who whom whose when where why how many much name named names called call
    kind type tell give list did does do also both either year
    """.split()  # noqa: SIM905
)


def clear_memo() -> None:
    """Drop the stem memo (benchmarks measure cold calls)."""
    stem.cache_clear()


def content_stems(toks: Iterable[str]) -> frozenset[str]:
    """Stems of the content tokens (not a stopword) of ``toks``."""
    return frozenset(stem(t) for t in toks if t not in STOPWORDS)


_CAPWORD = re.compile(r"[^\W_]+(?:'[^\W_]+)*")


def anchor_keys(text: str) -> frozenset[str]:
    """What a passage must hold for ``text``: its value keys, plus the stem of every
    capitalized word that is not a stopword (``Rust``, ``Abagnale``; a sentence-initial
    ``The`` is not an anchor)."""
    canon = canonicalize(text)
    keys = set(value_keys(canonical_tokens(canon)))
    for m in _CAPWORD.finditer(canon):
        w = m.group()
        if w[0].isupper():
            for t in canonical_tokens(w):
                if t not in STOPWORDS and anchor_key(t) is None:
                    keys.add("s:" + stem(t))
    return frozenset(keys)


def is_negated(text: str) -> bool:
    """Does ``text`` hold a polarity cue (:data:`NEGATION_CUES`)?"""
    return _NEGATION.search(text) is not None


_CUE_TOKENS = frozenset(
    [
        "not",
        "never",
        "cannot",
        "none",
        "nobody",
        "nothing",
        "nowhere",
        "neither",
        "nor",
        "without",
        "no",
    ]
)


def _governed(toks: Sequence[str]) -> list[tuple[int, int]]:
    """``(cue position, governed position)`` for every polarity cue of ``toks``: the cue
    governs the first content token within three tokens after it (``not faster`` →
    ``faster``; ``won't compile`` → ``compile``); ``-1`` when none follows."""
    out: list[tuple[int, int]] = []
    n = len(toks)
    for i, t in enumerate(toks):
        cue = (
            t in _CUE_TOKENS
            or (t == "t" and i > 0 and toks[i - 1].endswith("n"))
            or (t == "to" and i > 0 and toks[i - 1] in {"fail", "fails", "failed", "unable"})
        )
        if not cue:
            continue
        governed = -1
        for j in range(i + 1, min(n, i + 4)):
            if toks[j] not in STOPWORDS and toks[j] not in _CUE_TOKENS:
                governed = j
                break
        out.append((i, governed))
    return out


def negation_scope(toks: Sequence[str]) -> frozenset[str]:
    """Stems of the words the polarity cues of ``toks`` govern (``""`` for a cue that
    governs nothing)."""
    return frozenset(stem(toks[j]) if j >= 0 else "" for _i, j in _governed(toks))


def negated_outside(sentence_toks: Sequence[str], fragment_toks: Sequence[str]) -> bool:
    """Does a polarity cue *outside* an occurrence of the token sequence ``fragment_toks``
    in ``sentence_toks`` govern a word *inside* it? ("X was not opened in 1902": the
    fragment "opened in 1902" leaves out the "not" that governs "opened".) True only when
    every occurrence is so governed."""
    k = len(fragment_toks)
    want = list(fragment_toks)
    cues = _governed(sentence_toks)
    found = False
    for i in range(len(sentence_toks) - k + 1):
        if list(sentence_toks[i : i + k]) != want:
            continue
        found = True
        if not any((c < i or c >= i + k) and i <= g < i + k for c, g in cues):
            return False
    return found


@dataclass(frozen=True)
class Sentence:
    """One sentence of an evidence object, with what the support test looks at."""

    text: str
    toks: tuple[str, ...]
    form: str
    stems: frozenset[str]
    keys: frozenset[str]
    negated: bool
    scope: frozenset[str]


def build_sentence(s: str) -> Sentence | None:
    """One sentence's :class:`Sentence` (None when it has no token)."""
    toks = tuple(canonical_tokens(s))
    if not toks:
        return None
    negated = is_negated(s)
    return Sentence(
        s,
        toks,
        match_form(list(toks)),
        frozenset(stem(t) for t in toks),
        value_keys(toks),
        negated,
        negation_scope(toks) if negated else frozenset(),
    )


def build_sentences(text: str) -> tuple[Sentence, ...]:
    """The sentences of ``text`` (an evidence object's, computed once when it is built)."""
    return tuple(x for x in map(build_sentence, split_sentences(text)) if x is not None)


def question_anchors(
    question: str | None, unit_toks: Sequence[str], relation_verbs: bool = True
) -> frozenset[str]:
    """Content stems of the question that are not question words and not in the unit:
    the terms a bare answer's supporting sentence must share with the question. With
    ``relation_verbs`` a naming word used as a verb ("called with") is a term."""
    if not question:
        return frozenset()
    own = {stem(t) for t in unit_toks}
    toks = tokens(question)
    return frozenset(
        stem(t)
        for k, t in enumerate(toks)
        if t not in STOPWORDS
        and (t not in _QUESTION_GENERIC or (relation_verbs and _relation_verb(toks, k)))
        and stem(t) not in own
    )


#: The naming words of §19.5's question words that are also verbs of a relation.
_NAMING = frozenset(["called", "call", "named", "name"])
#: Prepositions after which a naming word is a relation's verb: "set_value *called
#: with*", "a street *named after* him" — not "what is it called when …".
_RELATION_PREPS = frozenset(["with", "by", "on", "from", "after", "for", "at", "into"])


def _relation_verb(toks: Sequence[str], k: int) -> bool:
    """Is the question word ``toks[k]`` a naming word used as the verb of the question's
    relation (followed by a preposition: "called with", "named after"; §19.18)?"""
    return toks[k] in _NAMING and k + 1 < len(toks) and toks[k + 1] in _RELATION_PREPS


class Passage:
    """The sentence index of one evidence object (built once, with the object): the
    sentences, the match form of all of them joined (``form``) with the offset at which
    each sentence starts in it, and an index from stem to the sentences holding it."""

    __slots__ = ("form", "index", "sentences", "starts")

    def __init__(self, sentences: tuple[Sentence, ...]) -> None:
        self.sentences = sentences
        index: dict[str, list[int]] = {}
        starts: list[int] = []
        at = 0
        for i, s in enumerate(sentences):
            starts.append(at)
            at += len(s.form) - 1  # sentence forms share their boundary space
            for st in s.stems:
                index.setdefault(st, []).append(i)
        self.index = {k: tuple(v) for k, v in index.items()}
        self.starts = tuple(starts)
        self.form = match_form([t for s in sentences for t in s.toks])

    def occurrences(self, toks: Sequence[str], window: int) -> list[tuple[int, int]]:
        """``(first, last)`` of every occurrence of the token sequence ``toks`` that lies
        within at most ``window`` adjacent sentences, in text order."""
        if not toks:
            return []
        form = match_form(list(toks))
        found: list[tuple[int, int]] = []
        pos = self.form.find(form)
        while pos != -1:
            first = bisect_right(self.starts, pos) - 1
            last = bisect_right(self.starts, pos + len(form) - 2) - 1
            # positions rise, so a repeated (first, last) is the one just found: a look at
            # the last one, not a scan of all (quadratic in the occurrences)
            if last - first < window and (not found or found[-1] != (first, last)):
                found.append((first, last))
            pos = self.form.find(form, pos + 1)
        return found

    def candidates(self, wanted: frozenset[str]) -> dict[int, int]:
        """Sentence index -> how many of ``wanted`` it holds (only sentences holding any)."""
        counts: dict[int, int] = {}
        for w in wanted:
            for i in self.index.get(w, ()):
                counts[i] = counts.get(i, 0) + 1
        return counts


@dataclass(frozen=True)
class SupportResult:
    """The best passage found for a claim, or why none supports it."""

    supported: bool
    evidence_id: str = ""
    first: int = -1
    last: int = -1
    coverage: float = 0.0
    reason: str = ""
    via: str = ""  # what the document context added (a pronoun's name, a dateline)

    def where(self) -> str:
        span = (
            f"{self.first + 1}" if self.first == self.last else f"{self.first + 1}-{self.last + 1}"
        )
        return f"{self.evidence_id} sentence {span}" + (f" ({self.via})" if self.via else "")


@dataclass(frozen=True, slots=True)
class _Sought:
    """What a passage must hold to support a text: its content stems (``wanted``), its
    anchors (capitalized stems ``caps``, numbers and other ``values``), the quotations'
    forms, its polarity (``negated``, the negation ``scope``) and a clause's antecedent."""

    toks: list[str]
    wanted: frozenset[str]
    caps: frozenset[str]
    values: frozenset[str]
    must_contain: Sequence[str]
    forms: list[str]
    negated: bool
    scope: frozenset[str]
    antecedent: frozenset[str]
    text: str = ""
    names: tuple[tuple[str, ...], ...] = ()


def _window_failure(
    s: _Sought, sents: Sequence[Sentence], stems: frozenset[str], keys: frozenset[str], cov: float
) -> str:
    """Why a window that covers enough of ``s.wanted`` still does not support it (a
    missing anchor or quotation, the other polarity, no antecedent, a swapped word), or
    "" when it does."""
    missing = sorted(k.split(":", 1)[1] for k in s.values - keys) + sorted(s.caps - stems)
    if missing:
        return f"ANCHOR_MISMATCH: {missing} not in the passage"
    name = missing_name(s.names, [x.text for x in sents])
    if name:
        return f"ANCHOR_MISMATCH: the name {name!r} is not a name of the passage"
    if s.forms:
        joined = " " + " ".join(x.form.strip() for x in sents) + " "
        absent = [q for q, f in zip(s.must_contain, s.forms, strict=True) if f not in joined]
        if absent:
            return f"quotation {absent[0]!r} not in it"
    holding = [x for x in sents if x.stems & s.wanted]
    scopes = frozenset().union(*(x.scope for x in holding))
    if s.negated:
        # a negated claim needs its cues to govern the same words in the passage
        mismatch = not any(x.negated for x in holding) or not s.scope <= scopes
        mismatch = mismatch or dropped_cue(s.scope, scopes, s.wanted)
    else:
        # an affirmative claim fails where a cue governs one of its words, or (when
        # some claim word is missing, perhaps the paraphrased predicate) any word
        mismatch = bool(scopes & (s.wanted | {""})) or (bool(scopes) and cov < 1.0)
    if mismatch:
        what = "negated" if s.negated else "affirmative"
        return f"POLARITY_MISMATCH: the claim is {what}, the passage is not"
    if s.antecedent and not s.antecedent & stems:
        return "NOT_LOCALLY_SUPPORTED: the clause's antecedent is not in the passage"
    return rearranged(s.text, s.toks, [(x.text, x.toks) for x in sents])


def find_support(
    text: str,
    objects: Sequence[tuple[str, Passage]],
    *,
    window: int,
    min_coverage: float,
    ignore: frozenset[str] = frozenset(),
    must_contain: Sequence[str] = (),
    antecedent: frozenset[str] = frozenset(),
    context: SupportContext | None = None,
    dated: frozenset[str] = frozenset(),
    whole_names: bool = True,
) -> SupportResult:
    """The first passage (object order, then sentence order) of at most ``window``
    adjacent sentences that supports ``text``; ``ignore`` are stems left out of the
    coverage (attribution cues of a quote's frame); every token sequence of
    ``must_contain`` (a unit's quotations) must occur verbatim in the passage. With a
    ``context`` (§19.12) sentences are read with their dates written out and a leading
    pronoun's name, and a claim's date adjunct may be dated by a dateline (``dated``: the
    keys the passage's dateline must hold). With ``whole_names`` every multi-word name of
    the claim must be a name of the passage (§19.21)."""
    if context is not None and context.date_forms:
        text = normalize_dates(text)
    forms = [match_form(tokens(q)) for q in must_contain]
    toks = tokens(text)
    wanted = content_stems(toks) - ignore
    anchors = anchor_keys(text) - {"s:" + s for s in ignore}
    negated = is_negated(canonicalize(text))
    scope = negation_scope(toks) if negated else frozenset()
    if not wanted:
        return SupportResult(False, reason="no content word to look for")
    caps = frozenset(k[2:] for k in anchors if k.startswith("s:"))
    values = anchors - {"s:" + c for c in caps}
    sought = _Sought(
        toks, wanted, caps, values, must_contain, forms, negated, scope, antecedent, text,
        tuple(name_runs(canonicalize(text))) if whole_names else (),
    )  # fmt: skip
    best = SupportResult(False, reason="no sentence holds enough words of the claim")
    for ev_id, passage in objects:
        found = _search(sought, ev_id, passage, window, min_coverage, context, dated, best)
        if found.supported:
            return found
        best = found
    if context is not None and context.datelines and not dated:
        split = date_adjunct(text)
        if split is not None:
            adjunct, rest = split
            r = find_support(
                rest, objects, window=window, min_coverage=min_coverage, ignore=ignore,
                must_contain=must_contain, antecedent=antecedent, context=context,
                dated=adjunct_keys(adjunct), whole_names=whole_names,
            )  # fmt: skip
            if r.supported:
                return r
    return best


def _search(
    s: _Sought,
    ev_id: str,
    passage: Passage,
    window: int,
    min_coverage: float,
    context: SupportContext | None,
    dated: frozenset[str],
    best: SupportResult,
) -> SupportResult:
    """The first supporting window of one object, or the nearest miss so far (``best``)."""
    wanted, need = s.wanted, len(s.wanted)
    counts = passage.candidates(wanted)
    if not counts:
        return best
    n_sent = len(passage.sentences)
    starts = sorted({j for i in counts for j in range(max(0, i - window + 1), i + 1)})
    for first in starts:
        last = min(first + window, n_sent) - 1
        sents = passage.sentences[first : last + 1]
        via = ""
        if context is not None:
            read = [context.read(ev_id, first + k, x) for k, x in enumerate(sents)]
            via = "; ".join(r[1] for r in read if r[1])
            sents = tuple(r[0] for r in read)
            held = sum(len(x.stems & wanted) for x in sents)
        else:
            # ``held`` counts a word once per sentence, so it bounds the window's coverage
            held = sum(counts.get(i, 0) for i in range(first, last + 1))
        if held < min_coverage * need:
            continue
        if len(sents) == 1:
            stems, keys = sents[0].stems, sents[0].keys
        else:
            stems = frozenset().union(*(x.stems for x in sents))
            keys = frozenset().union(*(x.keys for x in sents))
        cov = len(wanted & stems) / need
        reason = (
            f"passage covers {cov:.2f}"
            if cov < min_coverage
            else _window_failure(s, sents, stems, keys, cov)
        )
        if not reason and dated and context is not None:
            reason, dateline = context.dated_failure(ev_id, first, sents, dated)
            via = "; ".join(v for v in (via, dateline) if v)
        if not reason:
            return SupportResult(True, ev_id, first, last, cov, "", via)
        if not best.supported and cov >= best.coverage:  # the nearest miss so far
            best = SupportResult(False, ev_id, first, last, cov, reason)
    return best

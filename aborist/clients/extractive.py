"""The offline default answerer: deterministic extraction of evidence sentences.

With no model server configured, ``aborist query`` still answers: the
:class:`ExtractiveClient` reads the question and the tagged evidence back out of the
prompt (:func:`aborist.prompts.parse_messages`), scores every evidence sentence by how
much of the question's content it covers, and answers with the best sentences verbatim,
each tagged with its evidence pointer:

- claim-lattice mode: ``<sentence> [E2]`` per line;
- quote mode: ``"<sentence>" [E2]`` per line (bare when the sentence holds ``"`` itself).

Coverage is IDF-weighted over the evidence sentences themselves: a sentence sharing the
question's rarest terms covers more than one sharing only common ones; ties go to the
sentence holding more of the question's adjacent word pairs (pairs of two stopwords aside),
then to the one where such a pair comes first, then to the one sharing more of the
question's words (stopwords included, each weighted by the same IDF, so "else" outweighs
"of"), then to evidence order. When no sentence
covers at least :data:`MIN_COVERAGE` of the question, the answer is
:data:`~aborist.prompts.CANNOT_ANSWER`, which the verifier labels ``UNGROUNDED``: the
extractive answerer says plainly that the evidence does not answer the question rather
than offer its nearest sentence as an answer.

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
from aborist.corpus.lexicon import STOPWORDS, content_keys, light_stem, sentences
from aborist.prompts import CANNOT_ANSWER, MODE_QUOTE, parse_messages

__all__ = ["EXTRACTIVE_VERSION", "MAX_SENTENCES", "MIN_COVERAGE", "ExtractiveClient", "extract"]

EXTRACTIVE_VERSION = "extractive/2"
MAX_SENTENCES = 3
MIN_COVERAGE = 0.6
MIN_SENTENCE_CHARS = 20
MAX_SENTENCE_CHARS = 600
_DECORATION = re.compile(r"([*=#~^_-])\1{3,}")
_WORD = re.compile(r"[^\W_]+")
_ENDS = re.compile(r"[.!?][\"'’”)\]]*$")  # a whole sentence, not a heading or a lead-in


@dataclass(frozen=True, slots=True)
class _Sentence:
    pointer_id: str
    order: int
    text: str
    keys: frozenset[str]


def _candidates(evidence: tuple[tuple[str, str], ...], mode: str) -> list[_Sentence]:
    out: list[_Sentence] = []
    order = 0
    for pointer_id, text in evidence:
        for raw in sentences(text):
            sentence = " ".join(raw.split())
            if not MIN_SENTENCE_CHARS <= len(sentence) <= MAX_SENTENCE_CHARS:
                continue
            if "[E" in sentence or _DECORATION.search(sentence) or not _ENDS.search(sentence):
                continue  # a pointer look-alike, a heading underline, or not a whole sentence
            if not any(c.isalpha() for c in sentence):
                continue
            out.append(_Sentence(pointer_id, order, sentence, frozenset(content_keys(sentence))))
            order += 1
    return out


def extract(
    question: str,
    evidence: tuple[tuple[str, str], ...],
    mode: str,
    *,
    max_sentences: int = MAX_SENTENCES,
    min_coverage: float = MIN_COVERAGE,
) -> str:
    """The extractive answer for ``question`` over ``(pointer_id, text)`` evidence."""
    wanted = content_keys(question)
    pool = _candidates(evidence, mode)
    if not wanted or not pool:
        return CANNOT_ANSWER
    df = Counter(k for s in pool for k in s.keys & wanted)
    n = len(pool)
    idf = {k: math.log((n + 1) / (df.get(k, 0) + 0.5)) for k in wanted}
    total = sum(idf.values())
    q_words = _WORD.findall(question.lower())
    words = set(q_words)
    pairs = {
        (light_stem(a), light_stem(b))
        for a, b in pairwise(q_words)
        if not (a in STOPWORDS and b in STOPWORDS)
    }
    pool_words = [_WORD.findall(s.text.lower()) for s in pool]
    shared_words = [words.intersection(w) for w in pool_words]
    wdf = Counter(w for shared in shared_words for w in shared)
    widf = {w: math.log((n + 1) / (wdf.get(w, 0) + 0.5)) for w in words}
    scored = []
    for s, tokens, shared in zip(pool, pool_words, shared_words, strict=True):
        covered = sum(idf[k] for k in s.keys & wanted) / total
        if covered >= min_coverage:
            # Ties on content coverage go first to the sentence holding more of the
            # question's word pairs ("else clause", "with statement": a stopword that
            # names a Python statement is only told apart from its everyday use by its
            # neighbour), then to the one where such a pair comes first (a sentence that
            # opens with its subject, "The with statement is used to ...", defines it),
            # then to the one sharing more of the question's words, stopwords included,
            # each weighted by its rarity among the evidence sentences.
            hits = [(i, p) for i, p in enumerate(pairwise(map(light_stem, tokens))) if p in pairs]
            adjacent = len({p for _, p in hits})
            first = hits[0][0] if hits else len(tokens)
            weight = round(sum(widf[w] for w in shared), 9)
            scored.append((-covered, -adjacent, first, -weight, s.order, s))
    scored.sort(key=lambda t: t[:5])
    lines: list[str] = []
    seen: set[str] = set()
    for *_, s in scored:
        if s.text.casefold() in seen:
            continue
        seen.add(s.text.casefold())
        # A sentence that holds double quotes itself cannot be wrapped in them; quote
        # mode then gives it bare, and the verifier's span strategy checks it verbatim.
        quote = mode == MODE_QUOTE and '"' not in s.text
        body = f'"{s.text}"' if quote else s.text
        lines.append(f"{body} [{s.pointer_id}]")
        if len(lines) == max_sentences:
            break
    return "\n".join(lines) if lines else CANNOT_ANSWER


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

"""What a passage's neighbours in the document add to it (docs/verifier.md §19.12).

Local support (§19) reads one sentence. Two things a sentence leaves to the sentences
before it are read from them, and nothing else is:

* **A pronoun's antecedent.** A sentence whose subject is a pronoun (it opens with ``he
  she it they his her its their``) continues the subject of the sentence before it: the
  nearest earlier sentence in document order (evidence objects in pointer order, then
  sentence order; pronoun-led sentences in between are skipped, at most
  ``_MAX_CHAIN`` of them) that opens with a *name* — a run of capitalized words that
  are not stopwords, after an optional ``The``. The name's stems, and only those, count
  as words of the pronoun-led sentence. An earlier sentence that opens with anything
  else ends the search: the pronoun's referent is then unknown.
* **A dateline.** The nearest earlier sentence that is only a date
  (:func:`aborist.verify.text.dates.is_dateline`) dates the text after it; its numbers and
  months are what a claim's date adjunct is checked against.

:class:`SupportContext` holds the evidence in document order; it is built per verification
from the evidence as given (the order the model saw, ``E1, E2, …``), memoizes its answers
and is pure.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

from aborist.verify.policy import VerifierPolicy
from aborist.verify.rules.locality import build_sentence
from aborist.verify.text.dates import dateline_keys, dates_itself, is_dateline, normalize_dates
from aborist.verify.text.textcanon import STOPWORDS, canonical_tokens, canonicalize

if TYPE_CHECKING:
    from aborist.verify.rules.locality import Passage, Sentence

__all__ = ["PRONOUNS", "SupportContext", "pronoun_led", "subject_name", "support_context"]

#: A sentence opening with one of these has a pronoun for its subject (or its possessor).
PRONOUNS = frozenset(["he", "she", "it", "they", "his", "her", "its", "their"])
#: How many pronoun-led sentences a chain may skip on the way back to its name.
_MAX_CHAIN = 3
_WORD = re.compile(r"[^\W\d_][\w'’.-]*")
#: Lower-case words that may sit inside a name ("Bank of England", "Ludwig van Beethoven").
_NAME_JOINERS = frozenset(
    ["of", "de", "del", "der", "van", "von", "du", "la", "le", "da", "di", "y"]
)
_POSSESSIVE = frozenset(["his", "her", "its", "their"])


def pronoun_led(sentence: Sentence) -> bool:
    """Does ``sentence`` open with a pronoun (:data:`PRONOUNS`)?"""
    return bool(sentence.toks) and sentence.toks[0] in PRONOUNS


def subject_name(text: str) -> str:
    """The name ``text`` opens with (a run of capitalized words, lower-case joiners like
    ``of`` inside it, after an optional ``The``; at least one word that is not a
    stopword), or ``""``."""
    words = _WORD.findall(canonicalize(text).lstrip("#>*-• "))
    if words and words[0].lower() == "the":
        words = words[1:]
    name: list[str] = []
    for w in words:
        if w[0].isupper():
            name.append(w.rstrip(".'’"))
        elif name and w in _NAME_JOINERS:
            name.append(w)
        else:
            break
    while name and not name[-1][0].isupper():
        name.pop()
    toks = [t for w in name for t in canonical_tokens(w)]
    if not any(t not in STOPWORDS for t in toks):
        return ""
    return " ".join(name)


def _with_name(sentence: Sentence, name: str) -> str:
    """``sentence`` with its leading pronoun replaced by ``name`` (a possessive one by
    ``name's``)."""
    text = canonicalize(sentence.text)
    m = re.match(r"\W*(\w+)", text)
    if m is None:
        return text
    pronoun = m.group(1).lower()
    said = name + "'s" if pronoun in _POSSESSIVE else name
    return text[: m.start(1)] + said + text[m.end(1) :]


def support_context(
    objects: Sequence[tuple[str, Passage]], policy: VerifierPolicy
) -> SupportContext | None:
    """The context of ``objects`` (in document order) under ``policy``'s switches, or None
    when they are all off."""
    if not (policy.pronoun_antecedents or policy.dateline_dates or policy.date_forms):
        return None
    return SupportContext(
        objects,
        antecedents=policy.pronoun_antecedents,
        datelines=policy.dateline_dates,
        date_forms=policy.date_forms,
    )


@lru_cache(maxsize=65536)
def _dated(text: str) -> Sentence | None:
    """The sentence ``text`` with its dates written out, or None when it writes none
    otherwise."""
    canon = canonicalize(text)
    out = normalize_dates(canon)
    return build_sentence(out) if out != canon else None


class SupportContext:
    """The evidence in document order, for the rules that read a passage's neighbours."""

    __slots__ = (
        "_antecedent",
        "_dateline",
        "_objects",
        "_pos",
        "_read",
        "antecedents",
        "date_forms",
        "datelines",
    )

    def __init__(
        self,
        objects: Sequence[tuple[str, Passage]],
        *,
        antecedents: bool,
        datelines: bool,
        date_forms: bool,
    ) -> None:
        self._objects = tuple(objects)
        self._pos: dict[str, int] = {}
        for k, (ev_id, _p) in enumerate(self._objects):
            self._pos.setdefault(ev_id, k)
        self.antecedents, self.datelines, self.date_forms = antecedents, datelines, date_forms
        self._antecedent: dict[tuple[str, int], str] = {}
        self._read: dict[tuple[str, int], tuple[Sentence, str]] = {}
        self._dateline: dict[tuple[str, int], frozenset[str]] = {}

    def _before(self, ev_id: str, index: int) -> Iterator[Sentence]:
        """The sentences before sentence ``index`` of object ``ev_id``, nearest first."""
        k = self._pos.get(ev_id)
        if k is None:
            return
        yield from reversed(self._objects[k][1].sentences[:index])
        for _id, passage in reversed(self._objects[:k]):
            yield from reversed(passage.sentences)

    def antecedent(self, ev_id: str, index: int, sentence: Sentence) -> str:
        """The name a pronoun-led ``sentence`` (sentence ``index`` of object ``ev_id``)
        stands for, or ``""``."""
        if not self.antecedents or not pronoun_led(sentence):
            return ""
        key = (ev_id, index)
        if key not in self._antecedent:
            found = ""
            for skipped, earlier in enumerate(self._before(ev_id, index)):
                if pronoun_led(earlier):
                    if skipped >= _MAX_CHAIN:
                        break
                    continue
                found = subject_name(earlier.text)
                break
            self._antecedent[key] = found
        return self._antecedent[key]

    def dateline(self, ev_id: str, index: int) -> frozenset[str]:
        """The number and month keys of the nearest dateline before sentence ``index`` of
        object ``ev_id`` (empty when there is none)."""
        key = (ev_id, index)
        if key not in self._dateline:
            found: frozenset[str] = frozenset()
            for earlier in self._before(ev_id, index):
                if is_dateline(earlier.text):
                    found = dateline_keys(earlier.text)
                    break
            self._dateline[key] = found
        return self._dateline[key]

    def read(self, ev_id: str, index: int, sentence: Sentence) -> tuple[Sentence, str]:
        """``sentence`` (sentence ``index`` of object ``ev_id``) as read in its document:
        its dates written out and a leading pronoun replaced by its name; and what was
        added (``""`` when nothing was)."""
        name = self.antecedent(ev_id, index, sentence)
        if not name:
            dated = _dated(sentence.text) if self.date_forms else None
            return dated or sentence, ""
        key = (ev_id, index)
        if key not in self._read:
            text = _with_name(sentence, name)
            if self.date_forms:
                text = normalize_dates(text)
            self._read[key] = (
                build_sentence(text) or sentence,
                f"{sentence.toks[0]!r} = {name!r}",
            )
        return self._read[key]

    def dated_failure(
        self, ev_id: str, first: int, sents: Sequence[Sentence], dated: frozenset[str]
    ) -> tuple[str, str]:
        """``("", where)`` when the nearest dateline before a passage holds the date
        ``dated`` and the passage gives no date of its own; else ``(reason, "")``."""
        if any(dates_itself(x.text) for x in sents):
            return "ANCHOR_MISMATCH: the passage dates its event itself", ""
        keys = self.dateline(ev_id, first)
        if not keys:
            return "NOT_LOCALLY_SUPPORTED: no dateline before the passage", ""
        missing = sorted(k.split(":", 1)[1] for k in dated - keys)
        if missing:
            return f"ANCHOR_MISMATCH: {missing} not in the dateline before the passage", ""
        return "", "date from the dateline before it"

"""Evidence objects and the density-rank spotlight.

Each evidence text becomes one :class:`EvidenceObject` with two identities:

* ``pointer_id`` — the short prompt-facing tag (``E1``, ``E2``, … in input order). The model
  only ever sees these.
* ``evidence_id`` — content-addressed: ``"E"`` + the first 8 hex digits of
  ``evidence_hash``, the full lower-case sha256 of the UTF-8 bytes of ``text``. It is
  stable across runs and across reorderings, so the cache and the run DAG use it.

The object also carries its canonical form and match form (see
:mod:`aborist.verify.text.textcanon`), computed once at construction so that verifying many answers
against the same evidence does not re-canonicalize 60 KB each time. Both are derived
deterministically from ``text`` and are not part of equality.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from aborist.errors import InputError
from aborist.verify.rules import locality
from aborist.verify.rules.locality import Passage, build_sentences
from aborist.verify.text import textcanon
from aborist.verify.text.textcanon import (
    canonical_tokens,
    canonicalize,
    content_tokens,
    match_form,
    token_spans,
    tokens,
)

__all__ = [
    "DEFAULT_SOURCE_ROLE",
    "DEFAULT_SPOTLIGHT_WINDOW",
    "EvidenceObject",
    "build_evidence",
    "clear_memo",
    "evidence_id_for",
    "spotlight",
]

DEFAULT_SOURCE_ROLE = "primary"
DEFAULT_SPOTLIGHT_WINDOW = 400


def evidence_id_for(evidence_hash: str) -> str:
    """``E`` + 8 lower-case hex digits of the sha256 (content address)."""
    return "E" + evidence_hash[:8]


def clear_memo() -> None:
    """Drop every memo the verifier keeps (benchmarks measure cold calls with it)."""
    _derived.cache_clear()
    textcanon.clear_memo()
    locality.clear_memo()


@lru_cache(maxsize=1024)
def _derived(text: str) -> tuple[str, str, tuple[str, ...], str, frozenset[str], Passage]:
    """Everything an evidence object derives from its text: sha256, canonical text, tokens,
    match form, token set, sentence index (:class:`aborist.verify.rules.locality.Passage`). A
    pure function of the text, remembered for the last 1,024 texts: the same chunks come
    back run after run (a batch, ``replay --deep``), and tokenizing them again was most of
    a deep re-execution's time."""
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    canon = canonicalize(text)
    toks = tuple(canonical_tokens(canon))
    passage = Passage(build_sentences(text))
    return digest, canon, toks, match_form(list(toks)), frozenset(toks), passage


@dataclass(frozen=True)
class EvidenceObject:
    """One piece of evidence as the verifier sees it."""

    pointer_id: str
    text: str
    source_uri: str = ""
    title: str = ""
    source_role: str = DEFAULT_SOURCE_ROLE
    evidence_hash: str = ""
    evidence_id: str = ""
    locator: Mapping[str, Any] | None = field(default=None, compare=False)
    """Where the text sits in its source (PDF page, heading path + paragraph, line;
    docs/corpus.md, "Locators"): carried to the records and the output, never read by
    the verifier."""
    canonical_text: str = field(default="", init=False, repr=False, compare=False)
    token_list: tuple[str, ...] = field(default=(), init=False, repr=False, compare=False)
    form: str = field(default=" ", init=False, repr=False, compare=False)
    token_set: frozenset[str] = field(default=frozenset(), init=False, repr=False, compare=False)
    passage: Passage = field(
        default_factory=lambda: Passage(()), init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        try:
            digest, canon, toks, form, token_set, passage = _derived(self.text)
        except UnicodeEncodeError as e:  # no UTF-8 bytes, so no content address
            code = ord(self.text[e.start])
            raise InputError(
                f"evidence {self.pointer_id}: holds a lone surrogate (U+{code:04X} at"
                f" {e.start}), not valid Unicode text"
            ) from None
        if self.evidence_hash and self.evidence_hash != digest:
            raise InputError(
                f"evidence {self.pointer_id}: evidence_hash {self.evidence_hash[:12]}… "
                f"does not match the text (expected {digest[:12]}…)"
            )
        object.__setattr__(self, "evidence_hash", digest)
        object.__setattr__(self, "evidence_id", evidence_id_for(digest))
        object.__setattr__(self, "canonical_text", canon)
        object.__setattr__(self, "token_list", toks)
        object.__setattr__(self, "form", form)
        object.__setattr__(self, "token_set", token_set)
        object.__setattr__(self, "passage", passage)

    def to_dict(self) -> dict[str, Any]:
        """Plain data for ledger payloads (the text itself travels as a blob by hash)."""
        return {
            "pointer_id": self.pointer_id,
            "evidence_id": self.evidence_id,
            "evidence_hash": self.evidence_hash,
            "source_uri": self.source_uri,
            "title": self.title,
            "source_role": self.source_role,
            **({} if self.locator is None else {"locator": dict(self.locator)}),
        }


def build_evidence(
    items: Iterable[str | Mapping[str, Any] | EvidenceObject],
) -> list[EvidenceObject]:
    """Number evidence ``E1, E2, …`` in input order.

    An item is a text, a mapping with ``text`` and optional ``source_uri``, ``title``,
    ``source_role``, ``locator``, or an existing :class:`EvidenceObject` (renumbered).
    """
    built: list[EvidenceObject] = []
    for n, item in enumerate(items, start=1):
        pointer = f"E{n}"
        if isinstance(item, EvidenceObject):
            built.append(
                EvidenceObject(
                    pointer_id=pointer,
                    text=item.text,
                    source_uri=item.source_uri,
                    title=item.title,
                    source_role=item.source_role,
                    locator=item.locator,
                )
            )
        elif isinstance(item, str):
            built.append(EvidenceObject(pointer_id=pointer, text=item))
        elif isinstance(item, Mapping):
            text = item.get("text")
            if not isinstance(text, str):
                raise InputError(f"evidence item {n}: 'text' must be a string")
            fields = {}
            for key in ("source_uri", "title", "source_role"):
                value = item.get(key)
                if value is not None and not isinstance(value, str):
                    raise InputError(f"evidence item {n}: {key!r} must be a string")
                if value is not None:
                    fields[key] = value
            locator = item.get("locator")
            if locator is not None and not isinstance(locator, Mapping):
                raise InputError(f"evidence item {n}: 'locator' must be an object")
            built.append(EvidenceObject(pointer_id=pointer, text=text, locator=locator, **fields))
        else:
            raise InputError(
                f"evidence item {n}: expected a text or an object, found {type(item).__name__}"
            )
    return built


def spotlight(text: str, claim: str, window: int = DEFAULT_SPOTLIGHT_WINDOW) -> str:
    """The load-bearing slice of ``text`` for ``claim``, by density rank.

    Find every occurrence of every content token of the claim; for each occurrence, count
    the *distinct* claim tokens occurring within ±``window``/2 characters of it; the
    excerpt is centred on the occurrence with the highest count (ties: the earliest). With
    no occurrence at all the excerpt is the first ``window`` characters. The cut is widened
    to whole tokens. Works on the canonical form of ``text``.
    """
    canon = canonicalize(text)
    if window <= 0 or len(canon) <= window:
        return canon
    wanted = set(content_tokens(tokens(claim)))
    spans = token_spans(canon)
    hits = [(tok, start) for tok, start, _end in spans if tok in wanted]
    half = window // 2
    if not hits:
        start, end = 0, window
    else:
        best_pos, best_count = hits[0][1], -1
        # A sliding window over the hits: ``counts`` holds the tokens of hits[lo:hi], the
        # hits within ±half of ``pos``; both ends only move forward.
        counts: dict[str, int] = {}
        lo = hi = 0
        for _tok, pos in hits:
            while hi < len(hits) and hits[hi][1] <= pos + half:
                counts[hits[hi][0]] = counts.get(hits[hi][0], 0) + 1
                hi += 1
            while hits[lo][1] < pos - half:
                left = hits[lo][0]
                counts[left] -= 1
                if not counts[left]:
                    del counts[left]
                lo += 1
            if len(counts) > best_count:
                best_pos, best_count = pos, len(counts)
        start = max(0, best_pos - half)
        end = min(len(canon), start + window)
        start = max(0, end - window)
    # widen to token boundaries
    while start > 0 and canon[start - 1].isalnum():
        start -= 1
    while end < len(canon) and canon[end].isalnum():
        end += 1
    return canon[start:end].strip()

"""Query repair: a question unit that no chunk of the requested shards holds is rewritten
before the search (docs/retrieval.md, step 1): letters and digits split, a phrase
relaxed to its words, a long word spelling-corrected against the shards' vocabulary, or
dropped. Each rewrite is recorded (:class:`~aborist.retrieval.records.QueryRewrite`)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from aborist.corpus.lexicon import STOPWORDS, light_stem
from aborist.corpus.shard_reader import ShardReader
from aborist.retrieval.fts import fts_string
from aborist.retrieval.records import QueryRewrite

__all__ = [
    "SPELLING_MIN_LETTERS",
    "SPELLING_WIDE_LETTERS",
    "SURFACE_COUNT_LIMIT",
    "count_hits",
    "repair_units",
    "unit_keys",
]

#: Only words of at least this many letters are spelling-corrected; at least
#: SPELLING_WIDE_LETTERS letters allow two edits instead of one.
SPELLING_MIN_LETTERS = 8
SPELLING_WIDE_LETTERS = 12
#: A corrected key's surface forms are compared by FTS5 hits counted up to this many.
SURFACE_COUNT_LIMIT = 1000


def count_hits(readers: list[ShardReader], expr: str, enough: int) -> int:
    found = 0
    for r in readers:
        found += r.count(expr, enough - found)
        if found >= enough:
            break
    return found


def _has_match(readers: list[ShardReader], unit: str) -> bool:
    return count_hits(readers, fts_string(unit), 1) > 0


def _spelling(readers: list[ShardReader], token: str) -> str | None:
    """The nearest word of the shards' vocabulary to ``token`` (module doc, step 1):
    fewest edits, then most chunks holding it, then alphabetical; only for alphabetic
    words of at least :data:`SPELLING_MIN_LETTERS` letters, one edit (two from
    :data:`SPELLING_WIDE_LETTERS`), same first letter. The vocabulary holds light-stemmed
    keys; the word returned is the key's surface form FTS5 finds most (:func:`_surface`)."""
    if len(token) < SPELLING_MIN_LETTERS or not token.isalpha():
        return None
    key = light_stem(token)
    limit = 2 if len(token) >= SPELLING_WIDE_LETTERS else 1
    found: dict[str, tuple[int, int]] = {}
    for r in readers:
        for other, distance, df in r.near_keys(key, limit):
            d0, df0 = found.get(other, (distance, 0))
            found[other] = (min(d0, distance), df0 + df)
    for other, _ in sorted(found.items(), key=lambda kv: (kv[1][0], -kv[1][1], kv[0])):
        word = _surface(readers, other)
        if word is not None:
            return word
    return None


def _surface(readers: list[ShardReader], key: str) -> str | None:
    """The inflection of ``key`` (``key``, ``key`` + e, s, es, ed, ing; y → ies) whose
    light stem is ``key`` and that FTS5 (Porter-stemmed) finds in the most chunks, counted
    up to :data:`SURFACE_COUNT_LIMIT`; None when none is found."""
    forms = [key, key + "e", key + "s", key + "es", key + "ed", key + "ing"]
    if key.endswith("y"):
        forms.append(key[:-1] + "ies")
    best, best_hits = None, 0
    for form in dict.fromkeys(f for f in forms if light_stem(f) == key):
        hits = count_hits(readers, fts_string(form), SURFACE_COUNT_LIMIT)
        if hits > best_hits:
            best, best_hits = form, hits
    return best


def _repair_unit(readers: list[ShardReader], unit: str, subject: bool) -> QueryRewrite:
    """What replaces a unit no chunk holds (:class:`QueryRewrite`); a relaxed phrase
    keeps its stopwords only if it is a kept keyword subject (``subject``)."""
    toks = unit.split()
    if len(toks) == 1 and any(c.isdigit() for c in unit) and not unit.isdigit():
        split = " ".join(re.findall(r"[^\W\d_]+|\d+", unit))
        if split != unit and _has_match(readers, split):
            return QueryRewrite(unit, "split", (split,))
    if len(toks) > 1:
        parts: list[str] = []
        for t in toks:
            if (t in STOPWORDS and not subject) or t in parts:
                continue
            if _has_match(readers, t):
                parts.append(t)
            elif (fixed := _spelling(readers, t)) is not None:
                parts.append(fixed)
        if parts:
            return QueryRewrite(unit, "relax", tuple(parts))
    elif (fixed := _spelling(readers, unit)) is not None:
        return QueryRewrite(unit, "spelling", (fixed,))
    return QueryRewrite(unit, "unmatched", ())


def unit_keys(units: Sequence[str]) -> set[str]:
    return {light_stem(t) for u in units for t in u.split()}


def repair_units(
    readers: list[ShardReader],
    units: Sequence[str],
    positions: Sequence[int],
    known: set[str],
    kept: Sequence[str] = (),
) -> tuple[list[str], list[int], list[QueryRewrite]]:
    """Units no chunk holds are rewritten (module doc, step 1). A one-word unit whose key
    is ``known`` (some shard's ``key_stats`` holds it) is taken to match without asking
    FTS5."""
    out: list[str] = []
    out_pos: list[int] = []
    rewrites: list[QueryRewrite] = []
    for unit, pos in zip(units, positions, strict=True):
        if (" " not in unit and light_stem(unit) in known) or _has_match(readers, unit):
            replaced: tuple[str, ...] = (unit,)
        else:
            rewrite = _repair_unit(readers, unit, unit in kept)
            rewrites.append(rewrite)
            replaced = rewrite.to
        for u in replaced:
            if u not in out:
                out.append(u)
                out_pos.append(pos)
    if not out:  # nothing matches at all: search what was asked, find nothing, say so
        return list(units), list(positions), rewrites
    return out, out_pos, rewrites

"""The cache key: eight dimensions plus the verifier policy (docs/pipeline.md).

::

    cache_key = sha256("aborist.cache_key.v1\\n" || source_root | question_hash |
                       model_profile_hash | conversation_hash | governance_policy_hash |
                       schema_version | canonicalization_version | chunking_version |
                       verifier_policy_hash)

Each dimension is a lower-hex hash or a version string; changing any one of them gives a
different key, so a cached answer is only ever served for the same corpus version, the
same question (in the chosen equivalence), the same model profile, conversation,
governance policy, event schema, canonicalization, chunking and verifier policy.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any, Literal

from aborist.errors import CacheKeyError
from ledger.canonical import canonical_json, sha256_hex

__all__ = [
    "CACHE_KEY_DOMAIN",
    "SCHEMA_VERSION",
    "KeyDimensions",
    "cache_key",
    "conversation_hash",
    "governance_policy_hash",
    "json_hash",
    "question_hash",
    "source_root_of",
]

CACHE_KEY_DOMAIN = b"aborist.cache_key.v1\n"
SCHEMA_VERSION = "aborist.events.v1"
QuestionHashMode = Literal["strict", "equivalence_class"]

_WS = re.compile(r"\s+")
_WORD = re.compile(r"\w+", re.UNICODE)


def json_hash(value: Any) -> str:
    """sha256 of the RFC 8785 canonical JSON of ``value``."""
    return sha256_hex(canonical_json(value))


def normalize_question(question: str) -> str:
    """NFC, trimmed, inner whitespace collapsed to one space: the ``strict`` form."""
    return _WS.sub(" ", unicodedata.normalize("NFC", question)).strip()


def equivalence_form(question: str) -> str:
    """Case-, punctuation-, whitespace- and order-insensitive form: the sorted multiset of
    case-folded word tokens (NFKC), joined by single spaces."""
    text = unicodedata.normalize("NFKC", question).casefold()
    return " ".join(sorted(_WORD.findall(text)))


def question_hash(question: str, mode: QuestionHashMode = "strict") -> str:
    if mode == "strict":
        form = normalize_question(question)
    elif mode == "equivalence_class":
        form = equivalence_form(question)
    else:
        raise CacheKeyError(f"question hash mode must be strict or equivalence_class, not {mode!r}")
    return json_hash({"mode": mode, "question": form})


def source_root_of(roots: Mapping[str, str]) -> str:
    """One root for a set of shards: the hash of the canonical ``{shard: source_root}``."""
    return json_hash({"shards": dict(roots)})


def conversation_hash(turns: Sequence[Mapping[str, str]] = ()) -> str:
    """Prior turns of the conversation (empty for a single question)."""
    return json_hash({"turns": [dict(t) for t in turns]})


def governance_policy_hash(policy: Mapping[str, Any]) -> str:
    """Every governance field (``repair_enabled``, ``repair_max_reprompts``, mode, …)."""
    return json_hash(dict(policy))


@dataclass(frozen=True, slots=True)
class KeyDimensions:
    source_root: str
    question_hash: str
    model_profile_hash: str
    conversation_hash: str
    governance_policy_hash: str
    schema_version: str
    canonicalization_version: str
    chunking_version: str
    verifier_policy_hash: str

    def to_dict(self) -> dict[str, str]:
        # Flat strings: no need for asdict's recursive deep copy (every hit and miss
        # builds this dict three times).
        return {name: getattr(self, name) for name in _DIMENSIONS}


_DIMENSIONS = tuple(f.name for f in fields(KeyDimensions))


def cache_key(dims: KeyDimensions) -> str:
    named = dims.to_dict()
    for name, value in named.items():
        if not isinstance(value, str) or not value or "|" in value:
            raise CacheKeyError(
                f"cache key dimension {name} must be a non-empty string without '|'"
            )
    return sha256_hex(CACHE_KEY_DOMAIN + "|".join(named.values()).encode("utf-8"))
